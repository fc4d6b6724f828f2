"""``t.inspect``: a table's metadata tables as pandas DataFrames (or Arrow streams and polars LazyFrames for the
file listings), named and shaped like Spark's Iceberg metadata tables.

The tables are built in ``inspect`` (file-level tables), ``metadata_tables`` (from the table metadata and
manifest lists) and ``streams`` (the listings one manifest at a time); this module only chooses among them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Literal, TypeAlias, overload

import pyarrow as pa

from icebook.analysis.engine_choice import Engine, EngineName
from icebook.analysis.resolve import At, resolve_snapshot
from icebook.analysis.store.manifests import table_partition_type
from icebook.analysis.tables.inspect import (
    all_manifests_of,
    entries_arrow,
    files_arrow,
    files_listing_kind,
    manifest_entries_arrow,
    manifest_entries_table,
    manifest_files_arrow,
    sort_partitions,
    spark_shaped,
    to_pandas,
)
from icebook.analysis.tables.listing_size import ListingContent, ListingSize, listing_size, of_content, warn_if_large
from icebook.analysis.tables.metadata_tables import (
    history_arrow,
    manifests_arrow,
    metadata_log_entries_arrow,
    refs_arrow,
    snapshots_arrow,
)
from icebook.analysis.tables.streams import entries_batches, files_batches
from icebook.errors import EngineError, OptionError
from icebook.spec.manifest import ManifestFile
from icebook.spec.snapshots import Snapshot

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from icebook.analysis.store.table_like import TableLike

Listing: TypeAlias = "pd.DataFrame | pa.RecordBatchReader | pl.LazyFrame"

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
        from icebook.analysis.tables.position_deletes import position_deletes_arrow  # it reads Parquet and Puffin

        def unify(manifest: ManifestFile) -> pa.Table:
            return manifest_entries_table(self._store, manifest, live_only=True)

        return to_pandas(position_deletes_arrow(self._store, self._snapshot(at), unify=unify))
