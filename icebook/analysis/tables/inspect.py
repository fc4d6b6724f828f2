"""The file-level metadata tables as Arrow, named and shaped like Spark's Iceberg metadata tables.

Each ``*_arrow`` function builds a ``pyarrow.Table`` column-wise (those read from the table metadata and
manifest lists alone are in ``metadata_tables.py``); ``Inspector`` (``inspector.py``) exposes the pandas
forms as ``t.inspect.<name>()``. Column names and meanings follow Spark's
``<table>.snapshots``, ``.history``, ``.refs``, ``.metadata_log_entries``, ``.manifests``,
``.all_manifests``, ``.entries``, ``.files``, ``.data_files``, ``.delete_files``, ``.partitions``,
``.all_entries``, ``.all_files``, ``.all_data_files``, ``.all_delete_files`` and ``.position_deletes``.

The ``all_*`` tables read every manifest reachable from any valid snapshot, once per manifest path,
so a file listed by several manifests (added by one, carried as EXISTING by a rewritten one)
appears once per manifest, as in Spark.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.store.entries import Entries
from icebook.analysis.store.manifests import (
    ManifestStore,
    parallel_map,
    table_partition_type,
    unify_partition,
)
from icebook.analysis.store.metrics import Origin, RowFiles, readable_metrics
from icebook.analysis.tables.listing_size import (
    ListingContent,
    of_content,
)
from icebook.errors import IcebookError
from icebook.io.arrow_columns import single_array
from icebook.io.entry_columns import ENTRY_COLUMNS, entries_schema
from icebook.spec.manifest import ManifestFile
from icebook.spec.metadata import TableMetadata
from icebook.spec.snapshots import Snapshot

if TYPE_CHECKING:
    import pandas as pd

DATA_FILE_COLUMNS = (
    "content",
    "file_path",
    "file_format",
    "spec_id",
    "partition",
    "record_count",
    "file_size_in_bytes",
    "column_sizes",
    "value_counts",
    "null_value_counts",
    "nan_value_counts",
    "lower_bounds",
    "upper_bounds",
    "key_metadata",
    "split_offsets",
    "equality_ids",
    "sort_order_id",
    "first_row_id",
    "referenced_data_file",
    "content_offset",
    "content_size_in_bytes",
)


def to_pandas(table: pa.Table) -> pd.DataFrame:
    """Flat columns become numpy-backed, nested ones stay Arrow-backed (no Python object per row). icebook
    imports pandas here, for the first answer that is a DataFrame (pyarrow 26 also imports it, when it is
    installed, at its first ``pa.array``: a streamed listing does not avoid it)."""
    import pandas as pd

    # Nullable pandas dtypes, so a missing id shows as <NA> rather than turning the column into floats.
    nullable: dict[pa.DataType, Any] = {
        pa.int32(): pd.Int32Dtype(),
        pa.int64(): pd.Int64Dtype(),
        pa.bool_(): pd.BooleanDtype(),
    }

    def mapper(t: pa.DataType) -> Any:
        if pa.types.is_nested(t):
            return pd.ArrowDtype(t)
        return nullable.get(t)

    return table.to_pandas(types_mapper=mapper)


# ------------------------------------------------------------------ file-level tables


def manifest_entries_table(
    store: ManifestStore,
    manifest: ManifestFile,
    *,
    live_only: bool,
    keep: bool = True,
    columns: Collection[str] | None = None,
) -> pa.Table:
    """One manifest's entries (only ADDED and EXISTING when ``live_only``), the partition re-shaped to
    the table-wide partition type so that manifests of every spec concatenate (``keep``, ``columns``: see
    ``ManifestStore.entries``)."""
    table = store.entries(manifest, columns, keep=keep).replace_schema_metadata(None)  # the decoder's facts
    if live_only:
        table = Entries(table).alive().table
    if "partition" not in table.column_names:  # not asked for, and not decoded
        return table
    own, unified = store.partition_types(manifest.partition_spec_id)
    partition = unify_partition(table.column("partition"), own, unified)
    return table.set_column(table.schema.get_field_index("partition"), "partition", partition)


def _concat(tables: list[pa.Table]) -> pa.Table | None:
    if not tables:
        return None
    return pa.concat_tables(tables, promote_options="permissive")


def files_arrow(
    store: ManifestStore,
    snapshot: Snapshot | None,
    *,
    content: ListingContent = ListingContent.FILES,
    progress: bool = True,
) -> pa.Table:
    """Live data and delete files of a snapshot (``content``: which of them); a snapshot's listing is kept in
    the disk cache (``ManifestStore.snapshot_table``)."""
    if snapshot is None:
        return manifest_files_arrow(store, (), content=content, progress=progress)

    def build(manifests: tuple[ManifestFile, ...]) -> pa.Table:
        table = manifest_files_arrow(store, manifests, content=content, progress=progress)
        store.verify_snapshot(snapshot)
        return table

    return store.snapshot_table(files_listing_kind(content), snapshot, build)


def files_listing_kind(content: ListingContent) -> str:
    """The name of a snapshot's files listing in the disk cache (``ManifestStore.snapshot_table``)."""
    return f"files:{content}"


def all_manifests_of(store: ManifestStore) -> list[ManifestFile]:
    """Every manifest of every valid snapshot, once per path."""
    from icebook.analysis.store.reachable import unique_manifests  # it reads manifest lists: not for a warm listing

    return unique_manifests(store, store.metadata.snapshots)


def manifest_files_arrow(
    store: ManifestStore,
    manifests: Iterable[ManifestFile],
    *,
    content: ListingContent = ListingContent.FILES,
    progress: bool = True,
) -> pa.Table:
    """Live data and delete files listed by ``manifests`` (``content``: which of them)."""

    def one_manifest(manifest: ManifestFile) -> pa.Table:
        # Decoding, reshaping and metrics per manifest, in the worker: the numpy and Arrow kernels
        # release the GIL, and nothing large is concatenated before the end.
        return manifest_live_files(store, manifest)

    chosen = of_content(manifests, content)
    store.prestart_decoders(chosen)
    table = _concat(parallel_map(one_manifest, chosen, progress=progress, label="manifests"))
    return empty_files_table(store) if table is None else table


def manifest_live_files(store: ManifestStore, manifest: ManifestFile, *, keep: bool = True) -> pa.Table:
    """The rows of the files table that one manifest gives: its live entries' files and their metrics."""
    files = manifest_entries_table(store, manifest, live_only=True, keep=keep).select(list(DATA_FILE_COLUMNS))
    metrics = readable_metrics(files, store.metadata.current_schema(), file=manifest.manifest_path)
    return files.append_column("readable_metrics", metrics)


def entries_arrow(store: ManifestStore, snapshot: Snapshot | None, *, progress: bool = True) -> pa.Table:
    """Every manifest entry (ADDED, EXISTING and DELETED) of a snapshot's manifests."""
    manifests = store.manifest_list(snapshot) if snapshot is not None else ()
    table = manifest_entries_arrow(store, manifests, progress=progress)
    if snapshot is not None:
        store.verify_snapshot(snapshot)
    return table


def manifest_entries_arrow(
    store: ManifestStore, manifests: Iterable[ManifestFile], *, progress: bool = True
) -> pa.Table:
    """Every entry (ADDED, EXISTING and DELETED) of ``manifests``."""
    metadata = store.metadata
    manifests = tuple(manifests)

    def one_manifest(manifest: ManifestFile) -> pa.Table:
        # Shaped manifest by manifest, as the files listing is: the Arrow and numpy kernels release the GIL,
        # and nothing is combined into one copy of every column.
        table = manifest_entries_table(store, manifest, live_only=False)
        return entries_shaped(metadata, table, origin=manifest.manifest_path)

    store.prestart_decoders(manifests)
    try:
        table = _concat(parallel_map(one_manifest, manifests, progress=progress, label="manifests"))
    except IcebookError as exc:
        if getattr(exc, "may_pass", False):  # a decoder's deadline or death: not tried again here
            raise
        # A bound that does not decode is named by its row in the whole listing: the shaping of the whole
        # table raises that error (a manifest that failed to decode raises its kept error again).
        parts = [manifest_entries_table(store, m, live_only=False) for m in manifests]
        origin = RowFiles.of([(m.manifest_path, part.num_rows) for m, part in zip(manifests, parts, strict=True)])
        entries_shaped(metadata, pa.concat_tables(parts, promote_options="permissive"), origin=origin)
        raise
    if table is None:
        empty = empty_files_table(store)
        data_file = pa.StructArray.from_arrays(
            [empty.column(c).combine_chunks() for c in DATA_FILE_COLUMNS], names=list(DATA_FILE_COLUMNS)
        )
        return pa.table(
            {
                "status": pa.array([], pa.int32()),
                "snapshot_id": pa.array([], pa.int64()),
                "sequence_number": pa.array([], pa.int64()),
                "file_sequence_number": pa.array([], pa.int64()),
                "data_file": data_file,
                "readable_metrics": empty.column("readable_metrics").combine_chunks(),
            }
        )
    return table


def entries_shaped(metadata: TableMetadata, table: pa.Table, *, origin: Origin = "<manifest>") -> pa.Table:
    """Manifest entries (``manifest_entries_table``) in the entries table's shape: status, snapshot id,
    sequence numbers, the ``data_file`` struct and ``readable_metrics``; ``origin`` names the manifest of
    each row (for the error of a bound that does not decode)."""
    data_file = pa.StructArray.from_arrays(
        [single_array(table.column(c)) for c in DATA_FILE_COLUMNS], names=list(DATA_FILE_COLUMNS)
    )
    metrics = readable_metrics(table, metadata.current_schema(), file=origin)
    out = table.select(list(ENTRY_COLUMNS))
    return out.append_column("data_file", data_file).append_column("readable_metrics", metrics)


def empty_files_table(store: ManifestStore) -> pa.Table:
    """A files table without rows (the columns of ``files_arrow``), for snapshots with no manifests."""
    from icebook.analysis.arrow_types import arrow_type

    unified = arrow_type(table_partition_type(store.metadata))
    schema = entries_schema(unified)
    # Not Schema.empty_table: that one imports pandas, which an Arrow listing never needs
    table = pa.Table.from_arrays([pa.nulls(0, f.type) for f in schema], schema=schema).select(list(DATA_FILE_COLUMNS))
    return table.append_column("readable_metrics", readable_metrics(table, store.metadata.current_schema()))


def spark_shaped(metadata: TableMetadata, files: pa.Table) -> pa.Table:
    """A files or entries table as Spark shows it: Iceberg's files and entries tables drop the
    ``partition`` column (field 102) when no partition spec has a field, an empty struct."""
    if table_partition_type(metadata).fields:
        return files
    if "partition" in files.column_names:
        files = files.drop_columns(["partition"])
    if "data_file" in files.column_names:
        data_file = single_array(files.column("data_file"))
        keep = [i for i in range(data_file.type.num_fields) if data_file.type.field(i).name != "partition"]
        slim = pa.StructArray.from_arrays(
            [data_file.field(i) for i in keep],
            fields=[data_file.type.field(i) for i in keep],
            mask=data_file.is_null() if data_file.null_count else None,
        )
        files = files.set_column(files.schema.get_field_index("data_file"), "data_file", slim)
    return files


def sort_partitions(table: pa.Table) -> pa.Table:
    """The ``partitions`` table in one order whichever engine built it: by spec, then by each partition
    field (nulls first)."""
    if not table.num_rows or "partition" not in table.column_names:
        return table
    part = table.column("partition").combine_chunks()
    keys = {"spec_id": table.column("spec_id")} | {f"p{i}": part.field(i) for i in range(part.type.num_fields)}
    order = pc.sort_indices(pa.table(keys), sort_keys=[(k, "ascending", "at_start") for k in keys])
    return table.take(order)
