"""``t.inspect``: a table's metadata tables as pandas DataFrames, named and shaped like Spark's Iceberg
metadata tables; the file and entry listings also as Arrow streams (``t.inspect.batches``) and polars
LazyFrames (``t.inspect.lazy``).

The tables are built in ``inspect`` (file-level tables), ``metadata_tables`` (from the table metadata and
manifest lists) and ``listings`` (the listings in their three forms); this module only chooses among them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pyarrow as pa

from icebook.analysis.engine_choice import Engine, EngineName
from icebook.analysis.resolve import At, resolve_snapshot
from icebook.analysis.store.manifests import table_partition_type
from icebook.analysis.tables.inspect import manifest_entries_table, sort_partitions, to_pandas
from icebook.analysis.tables.listings import Listings, ListingSource
from icebook.analysis.tables.metadata_tables import (
    history_arrow,
    manifests_arrow,
    metadata_log_entries_arrow,
    refs_arrow,
    snapshots_arrow,
)
from icebook.errors import EngineError
from icebook.spec.manifest import ManifestFile
from icebook.spec.snapshots import Snapshot

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from icebook.analysis.store.table_like import TableLike

SparkPartitions = Callable[[Snapshot | None], pa.Table]
"""Spark's ``partitions`` table at a snapshot (the engine layer's, handed in by the Table facade)."""


class Inspector(Listings["pd.DataFrame"]):
    """``t.inspect``: Spark-shaped metadata tables of one table, as pandas DataFrames. A listing of more than
    ``listing_size.warn_rows()`` rows is announced before it is built (``LargeListingWarning``); the same
    rows stream from ``batches`` and ``lazy``, never held whole."""

    batches: Listings[pa.RecordBatchReader]
    """The listings as ``pyarrow.RecordBatchReader``s: ``t.inspect.batches.files()``, one manifest at a time."""
    lazy: Listings[pl.LazyFrame]
    """The listings as ``polars.LazyFrame``s over those streams: ``t.inspect.lazy.files()``."""

    def __init__(self, table: TableLike, *, spark_partitions: SparkPartitions | None = None) -> None:
        source = ListingSource(table)
        super().__init__(source.frame)
        self.batches = Listings(source.batches)
        self.lazy = Listings(source.lazy)
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

    def position_deletes(self, at: At = None) -> pd.DataFrame:
        """Every position deleted by a snapshot's position delete files and deletion vectors."""
        from icebook.analysis.tables.position_deletes import position_deletes_arrow  # it reads Parquet and Puffin

        def unify(manifest: ManifestFile) -> pa.Table:
            return manifest_entries_table(self._store, manifest, live_only=True)

        return to_pandas(position_deletes_arrow(self._store, self._snapshot(at), unify=unify))
