"""Metadata tables as DataFrames, named and shaped like Spark's Iceberg metadata tables.

Each ``*_arrow`` function builds a ``pyarrow.Table`` column-wise (those read from the table metadata and
manifest lists alone are in ``metadata_tables.py``); ``Inspector`` exposes the pandas forms as
``t.inspect.<name>()``. Column names and meanings follow Spark's
``<table>.snapshots``, ``.history``, ``.refs``, ``.metadata_log_entries``, ``.manifests``,
``.all_manifests``, ``.entries``, ``.files``, ``.data_files``, ``.delete_files``, ``.partitions``,
``.all_entries``, ``.all_files``, ``.all_data_files``, ``.all_delete_files`` and ``.position_deletes``.

The ``all_*`` tables read every manifest reachable from any valid snapshot, once per manifest path,
so a file listed by several manifests (added by one, carried as EXISTING by a rewritten one)
appears once per manifest, as in Spark.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, overload

import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.engine_choice import Engine, EngineName
from icebook.analysis.resolve import At, resolve_snapshot
from icebook.analysis.store.entries import Entries
from icebook.analysis.store.manifests import (
    ManifestStore,
    parallel_map,
    table_partition_type,
    unify_partition,
)
from icebook.analysis.store.metrics import Origin, RowFiles, readable_metrics
from icebook.analysis.store.reachable import unique_manifests
from icebook.analysis.tables.listing_size import (
    ListingContent,
    ListingSize,
    listing_size,
    of_content,
    warn_if_large,
)
from icebook.analysis.tables.metadata_tables import (
    history_arrow,
    manifests_arrow,
    metadata_log_entries_arrow,
    refs_arrow,
    snapshots_arrow,
)
from icebook.analysis.tables.position_deletes import position_deletes_arrow
from icebook.errors import EngineError, IcebookError, OptionError
from icebook.io.arrow_columns import single_array
from icebook.io.avro import ENTRY_COLUMNS
from icebook.spec.manifest import ManifestFile
from icebook.spec.metadata import TableMetadata
from icebook.spec.snapshots import Snapshot

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from icebook.analysis.store.table_like import TableLike

Listing: TypeAlias = "pd.DataFrame | pa.RecordBatchReader | pl.LazyFrame"
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
    from icebook.io.avro import entries_schema

    unified = arrow_type(table_partition_type(store.metadata))
    schema = entries_schema(unified)
    table = schema.empty_table().select(list(DATA_FILE_COLUMNS))
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


SparkPartitions = Callable[[Snapshot | None], pa.Table]
"""Spark's ``partitions`` table at a snapshot (the engine layer's, handed in by the Table facade)."""


class Inspector:
    """``t.inspect``: Spark-shaped metadata tables of one table, as pandas DataFrames."""

    def __init__(self, table: TableLike, *, spark_partitions: SparkPartitions | None = None) -> None:
        self._metadata = table.metadata
        self._location = table.metadata_location
        self._store = table.store
        self._spark_partitions = spark_partitions

    def _snapshot(self, at: At) -> Snapshot | None:
        return resolve_snapshot(self._metadata, at)

    def snapshots(self) -> pd.DataFrame:
        """Every valid snapshot: committed_at, snapshot_id, parent_id, operation, manifest_list, summary."""
        return to_pandas(snapshots_arrow(self._metadata))

    def history(self) -> pd.DataFrame:
        """The snapshot log: when each snapshot became current on main, and whether it is an ancestor now."""
        return to_pandas(history_arrow(self._metadata))

    def refs(self) -> pd.DataFrame:
        """Branches and tags with their retention settings."""
        return to_pandas(refs_arrow(self._metadata))

    def metadata_log_entries(self) -> pd.DataFrame:
        """Previous metadata files and the current one, with the snapshot current at each."""
        return to_pandas(metadata_log_entries_arrow(self._metadata, self._location))

    def manifests(self, at: At = None) -> pd.DataFrame:
        """The manifests of one snapshot's manifest list (default: current)."""
        snapshot = self._snapshot(at)
        manifests = self._store.manifest_list(snapshot) if snapshot else ()
        return to_pandas(manifests_arrow(self._metadata, manifests))

    def all_manifests(self) -> pd.DataFrame:
        """The manifests of every valid snapshot, with ``reference_snapshot_id`` and then the manifest's
        ``key_metadata`` (Iceberg's column order)."""
        parts = []
        for snapshot in self._metadata.snapshots:
            listed = self._store.manifest_list(snapshot)
            table = manifests_arrow(self._metadata, listed)
            table = table.append_column(
                "reference_snapshot_id", pa.array([snapshot.snapshot_id] * len(table), pa.int64())
            )
            parts.append(table.append_column("key_metadata", pa.array([m.key_metadata for m in listed], pa.binary())))
        if not parts:
            empty = manifests_arrow(self._metadata, ())
            empty = empty.append_column("reference_snapshot_id", pa.array([], pa.int64()))
            parts = [empty.append_column("key_metadata", pa.array([], pa.binary()))]
        return to_pandas(pa.concat_tables(parts))

    @overload
    def entries(
        self, at: At = None, *, batches: Literal[False] = False, lazy: Literal[False] = False
    ) -> pd.DataFrame: ...
    @overload
    def entries(
        self, at: At = None, *, batches: Literal[True], lazy: Literal[False] = False
    ) -> pa.RecordBatchReader: ...
    @overload
    def entries(self, at: At = None, *, batches: Literal[False] = False, lazy: Literal[True]) -> pl.LazyFrame: ...
    def entries(self, at: At = None, *, batches: bool = False, lazy: bool = False) -> Listing:
        """Every manifest entry of a snapshot, with status, sequence numbers and the data_file struct.
        ``batches=True``: a ``pyarrow.RecordBatchReader`` of the same rows and types, one manifest at a time;
        ``lazy=True``: a ``polars.LazyFrame`` over that stream. A DataFrame of more than
        ``listing_size.warn_rows()`` rows is announced first (``LargeListingWarning``)."""
        return self._listing("entries", at, ListingContent.ENTRIES, None, batches, lazy)

    @overload
    def files(
        self, at: At = None, *, batches: Literal[False] = False, lazy: Literal[False] = False
    ) -> pd.DataFrame: ...
    @overload
    def files(self, at: At = None, *, batches: Literal[True], lazy: Literal[False] = False) -> pa.RecordBatchReader: ...
    @overload
    def files(self, at: At = None, *, batches: Literal[False] = False, lazy: Literal[True]) -> pl.LazyFrame: ...
    def files(self, at: At = None, *, batches: bool = False, lazy: bool = False) -> Listing:
        """Live data and delete files of a snapshot (``batches``, ``lazy``: as for ``entries``: never the
        whole listing in memory)."""
        return self._listing("files", at, ListingContent.FILES, None, batches, lazy)

    @overload
    def data_files(
        self, at: At = None, *, batches: Literal[False] = False, lazy: Literal[False] = False
    ) -> pd.DataFrame: ...
    @overload
    def data_files(
        self, at: At = None, *, batches: Literal[True], lazy: Literal[False] = False
    ) -> pa.RecordBatchReader: ...
    @overload
    def data_files(self, at: At = None, *, batches: Literal[False] = False, lazy: Literal[True]) -> pl.LazyFrame: ...
    def data_files(self, at: At = None, *, batches: bool = False, lazy: bool = False) -> Listing:
        """Live data files of a snapshot (``batches``, ``lazy``: as for ``entries``)."""
        return self._listing("data_files", at, ListingContent.DATA, None, batches, lazy)

    @overload
    def delete_files(
        self, at: At = None, *, batches: Literal[False] = False, lazy: Literal[False] = False
    ) -> pd.DataFrame: ...
    @overload
    def delete_files(
        self, at: At = None, *, batches: Literal[True], lazy: Literal[False] = False
    ) -> pa.RecordBatchReader: ...
    @overload
    def delete_files(self, at: At = None, *, batches: Literal[False] = False, lazy: Literal[True]) -> pl.LazyFrame: ...
    def delete_files(self, at: At = None, *, batches: bool = False, lazy: bool = False) -> Listing:
        """Live position and equality delete files (and deletion vectors) of a snapshot (``batches``,
        ``lazy``: as for ``entries``)."""
        return self._listing("delete_files", at, ListingContent.DELETES, None, batches, lazy)

    def _listing(
        self,
        method: str,
        at: At,
        content: ListingContent,
        manifests: list[ManifestFile] | None,
        batches: bool,
        lazy: bool,
    ) -> Listing:
        """One listing in the form asked for; ``manifests``: those of the ``all_*`` tables (else the
        snapshot's)."""
        from icebook.analysis.tables.streams import entries_batches, files_batches

        if batches and lazy:
            raise OptionError(f"inspect.{method}: batches=True and lazy=True are two forms of one stream; ask for one")
        snapshot = self._snapshot(at) if manifests is None else None

        def reader(columns: Sequence[str] | None = None) -> pa.RecordBatchReader:
            if content == ListingContent.ENTRIES:
                return entries_batches(self._store, snapshot, manifests=manifests)
            return files_batches(self._store, snapshot, content=content, manifests=manifests, columns=columns)

        if batches:
            return reader()
        if lazy:
            from icebook.analysis.tables.lazy import lazy_frame

            return lazy_frame(method, reader().schema, reader)
        entries = content == ListingContent.ENTRIES
        if not entries and manifests is None and snapshot is not None:
            # A warm start: the whole listing from the disk cache, without decoding the manifest list.
            cached = self._store.cached_snapshot_table(files_listing_kind(content), snapshot)
            if cached is not None:
                warn_if_large(method, at, ListingSize(cached.num_rows, exact=True))
                return to_pandas(spark_shaped(self._metadata, cached))
        chosen = manifests if manifests is not None else self._store.manifest_list(snapshot) if snapshot else ()
        warn_if_large(method, at, listing_size(chosen if entries else of_content(chosen, content), deleted=entries))
        if manifests is not None:
            built = (
                manifest_entries_arrow(self._store, manifests)
                if entries
                else manifest_files_arrow(self._store, manifests, content=content)
            )
        else:
            built = (
                entries_arrow(self._store, snapshot) if entries else files_arrow(self._store, snapshot, content=content)
            )
        return to_pandas(spark_shaped(self._metadata, built))

    def partitions(self, at: At = None, *, engine: EngineName = "arrow") -> pd.DataFrame:
        """Per partition: record, file and delete counts, size, and the snapshot that last updated it;
        rows by spec, then partition values. ``engine="spark"``: Spark's ``partitions`` metadata table at
        the same snapshot, aggregated on the attached Spark session (same columns, types and rows); the
        default streams the snapshot's manifests and keeps one row per partition."""
        from icebook.analysis.tables.aggregates import partitions_streamed

        chosen = Engine.named(engine)
        snapshot = self._snapshot(at)
        if chosen == Engine.SPARK:
            if self._spark_partitions is None:
                raise EngineError("this inspector has no Spark route: use icebook.open(...).inspect")
            table = self._spark_partitions(snapshot)
        else:
            table = partitions_streamed(self._store, snapshot)
        if not table_partition_type(self._metadata).fields:  # Spark: one row, no partition or spec_id
            table = table.drop_columns([c for c in ("partition", "spec_id") if c in table.column_names])
        return to_pandas(sort_partitions(table))

    @overload
    def all_entries(self, *, batches: Literal[False] = False, lazy: Literal[False] = False) -> pd.DataFrame: ...
    @overload
    def all_entries(self, *, batches: Literal[True], lazy: Literal[False] = False) -> pa.RecordBatchReader: ...
    @overload
    def all_entries(self, *, batches: Literal[False] = False, lazy: Literal[True]) -> pl.LazyFrame: ...
    def all_entries(self, *, batches: bool = False, lazy: bool = False) -> Listing:
        """Every entry of every manifest reachable from any valid snapshot (once per manifest;
        ``batches``, ``lazy``: as for ``entries``)."""
        return self._listing("all_entries", None, ListingContent.ENTRIES, all_manifests_of(self._store), batches, lazy)

    @overload
    def all_files(self, *, batches: Literal[False] = False, lazy: Literal[False] = False) -> pd.DataFrame: ...
    @overload
    def all_files(self, *, batches: Literal[True], lazy: Literal[False] = False) -> pa.RecordBatchReader: ...
    @overload
    def all_files(self, *, batches: Literal[False] = False, lazy: Literal[True]) -> pl.LazyFrame: ...
    def all_files(self, *, batches: bool = False, lazy: bool = False) -> Listing:
        """Live data and delete files of every manifest reachable from any valid snapshot."""
        return self._listing("all_files", None, ListingContent.FILES, all_manifests_of(self._store), batches, lazy)

    @overload
    def all_data_files(self, *, batches: Literal[False] = False, lazy: Literal[False] = False) -> pd.DataFrame: ...
    @overload
    def all_data_files(self, *, batches: Literal[True], lazy: Literal[False] = False) -> pa.RecordBatchReader: ...
    @overload
    def all_data_files(self, *, batches: Literal[False] = False, lazy: Literal[True]) -> pl.LazyFrame: ...
    def all_data_files(self, *, batches: bool = False, lazy: bool = False) -> Listing:
        """Live data files of every data manifest reachable from any valid snapshot."""
        return self._listing("all_data_files", None, ListingContent.DATA, all_manifests_of(self._store), batches, lazy)

    @overload
    def all_delete_files(self, *, batches: Literal[False] = False, lazy: Literal[False] = False) -> pd.DataFrame: ...
    @overload
    def all_delete_files(self, *, batches: Literal[True], lazy: Literal[False] = False) -> pa.RecordBatchReader: ...
    @overload
    def all_delete_files(self, *, batches: Literal[False] = False, lazy: Literal[True]) -> pl.LazyFrame: ...
    def all_delete_files(self, *, batches: bool = False, lazy: bool = False) -> Listing:
        """Live delete files of every delete manifest reachable from any valid snapshot."""
        return self._listing(
            "all_delete_files", None, ListingContent.DELETES, all_manifests_of(self._store), batches, lazy
        )

    def position_deletes(self, at: At = None) -> pd.DataFrame:
        """Every position deleted by a snapshot's position delete files and deletion vectors."""

        def unify(manifest: ManifestFile) -> pa.Table:
            return manifest_entries_table(self._store, manifest, live_only=True)

        return to_pandas(position_deletes_arrow(self._store, self._snapshot(at), unify=unify))
