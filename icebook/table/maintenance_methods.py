"""The Table's health and maintenance: the debt at a snapshot, what each procedure would do (computed from
the metadata alone), and the procedures themselves through Spark, each returning the table re-opened with
its before/after diff. A mixin of ``icebook.table.Table``, the only class that uses it."""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from icebook.analysis.engine_choice import Engine, EngineName
from icebook.analysis.resolve import At, to_epoch_ms

if TYPE_CHECKING:
    from icebook.analysis.maintenance.before_after import MaintenanceDiff
    from icebook.analysis.maintenance.commit_forensics import CommitForensics
    from icebook.analysis.maintenance.compaction import CompactionPreview
    from icebook.analysis.maintenance.expire import ExpirePreview
    from icebook.analysis.maintenance.health import HealthReport
    from icebook.analysis.maintenance.health_sections import FilesHealth
    from icebook.analysis.maintenance.orphans import OrphanReport
    from icebook.analysis.maintenance.rewrite_previews import DeleteRewritePreview, ManifestRewritePreview
    from icebook.analysis.maintenance.why_kept import WhyKept
    from icebook.analysis.store.manifests import ManifestStore
    from icebook.analysis.store.table_like import TableLike
    from icebook.engines.spark_aggregates import SparkMetadataTables
    from icebook.io.fileio import FileIO
    from icebook.spec.metadata import TableMetadata
    from icebook.spec.snapshots import Snapshot
    from icebook.table import Table

When = int | str | _dt.datetime | _dt.date | _dt.timedelta | None


def when_ms(when: When) -> int | None:
    """ms since the epoch for a point in time: ms, a datetime or date, an ISO-8601 string, or a
    timedelta meaning that long ago."""
    if when is None:
        return None
    if isinstance(when, _dt.timedelta):
        return int((time.time() - when.total_seconds()) * 1000)
    if isinstance(when, int):
        return when
    return to_epoch_ms(when)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class MaintenanceResult:
    """A maintenance procedure's outcome: the table re-opened, the before/after diff, Spark's output."""

    table: Table
    diff: MaintenanceDiff
    output: Any
    """The procedure's result row (counts) as a dict, or the orphan file locations it reported."""

    def to_pandas(self) -> Any:
        return self.diff.to_pandas()

    def __repr__(self) -> str:
        return f"<MaintenanceResult {self.diff.summary()}>"


class TableMaintenance:
    """Health, maintenance previews and procedures of a ``Table``."""

    # What the Table provides (icebook/table/__init__.py).
    metadata: TableMetadata
    metadata_location: str
    fileio: FileIO
    identifier: str | None
    if TYPE_CHECKING:

        @property
        def store(self) -> ManifestStore: ...
        @property
        def current_snapshot(self) -> Snapshot | None: ...
        def snapshot(self, at: At) -> Snapshot: ...
        def reopen(self) -> Table: ...
        def _writable(self) -> str: ...
        def _spark_metadata_tables(self, snapshot: Snapshot | None) -> SparkMetadataTables: ...

    def _table(self) -> TableLike:
        return cast("TableLike", self)  # Table, the one class this is mixed into, is a TableLike

    def health(self, at: At = None, *, list_files: bool = True) -> HealthReport:
        """Maintenance debt at ``at`` (default: current): file sizes and delete debt per partition,
        manifests, history against retention, stale refs and (with ``list_files``) orphan files;
        each finding names the Spark procedure that addresses it."""
        from icebook.analysis.maintenance.health import health

        snapshot = self.snapshot(at) if at is not None else self.current_snapshot
        return health(
            self._table(),
            snapshot,
            metadata_location=self.metadata_location,
            fileio=self.fileio,
            identifier=self.identifier,
            list_files=list_files,
        )

    def file_measures(self, at: At = None, *, engine: EngineName = "arrow") -> FilesHealth:
        """The files section of ``health(at)``: per partition, data files, bytes, records, small and large
        files (the compaction thresholds), delete files of each kind, delete debt; and the size histogram.

        ``engine="spark"``: aggregated by the attached Spark session over the ``files`` and ``entries``
        metadata tables, which delete files apply to which data files included (the delete index's scope
        and statistics rules as Spark SQL); one row per partition reaches Python, never one per file."""
        chosen = Engine.named(engine)
        snapshot = self.snapshot(at) if at is not None else self.current_snapshot
        if chosen == Engine.ARROW:
            from icebook.analysis.maintenance.health import file_measures

            return file_measures(self._table(), snapshot)
        from icebook.engines import spark_aggregates

        return spark_aggregates.file_measures(self.metadata, self._spark_metadata_tables(snapshot))

    def expire_preview(
        self, older_than: When = None, retain_last: int | None = None, snapshot_ids: Collection[int] = ()
    ) -> ExpirePreview:
        """The snapshots ``expire_snapshots`` would expire (refs' and branches' retention honoured) and
        every file it would then delete. ``older_than`` defaults to the table's max snapshot age."""
        from icebook.analysis.maintenance.expire import expire_preview

        return expire_preview(
            self.metadata,
            self.store,
            older_than_ms=when_ms(older_than),
            retain_last=retain_last,
            snapshot_ids=snapshot_ids,
        )

    def why_kept(self, path: str, older_than: When = None, retain_last: int | None = None) -> WhyKept:
        """What keeps the file ``path`` (data, delete, manifest, manifest list, statistics, metadata file,
        orphan): ``.keepers`` (the snapshots reaching it, their refs and the retention rule keeping each,
        judged by ``expire_snapshots(older_than, retain_last)``, default the table's retention) and
        ``.removed_by`` (the call that would delete it, or what must happen first)."""
        from icebook.analysis.maintenance.why_kept import why_kept

        return why_kept(
            self._table(),
            path,
            metadata_location=self.metadata_location,
            fileio=self.fileio,
            older_than_ms=when_ms(older_than),
            retain_last=retain_last,
        )

    def orphans(self, older_than: When = None, location: str | None = None) -> OrphanReport:
        """Files under the table location that nothing references, as ``remove_orphan_files`` finds
        them (older than ``older_than``, default three days ago)."""
        from icebook.analysis.maintenance.orphans import find_orphans

        return find_orphans(
            self.metadata,
            self.metadata_location,
            self.store,
            self.fileio,
            older_than_ms=when_ms(older_than),
            location=location,
        )

    def commit_forensics(self, older_than: When = None) -> CommitForensics:
        """How the table's commits went, from its files: which were retried after losing a race (the
        attempt in a manifest list's name, a PyIceberg data file named by an earlier commit UUID), and the
        files writers left behind (``orphans(older_than)``, each with the commit its name carries)."""
        from icebook.analysis.maintenance.commit_forensics import commit_forensics

        return commit_forensics(self._table(), self.orphans(older_than))

    def compaction_preview(
        self, options: Mapping[str, Any] | None = None, where: str | None = None
    ) -> CompactionPreview:
        """The file groups ``rewrite_data_files`` (bin-pack) would rewrite in the current snapshot."""
        from icebook.analysis.maintenance.compaction import compaction_preview

        return compaction_preview(self._table(), self.current_snapshot, options, where=where)

    def manifest_rewrite_preview(self) -> ManifestRewritePreview:
        """The manifests ``rewrite_manifests`` would rewrite, and into how many."""
        from icebook.analysis.maintenance.rewrite_previews import manifest_rewrite_preview

        return manifest_rewrite_preview(self.metadata, self.store, self.current_snapshot)

    def delete_rewrite_preview(self, options: Mapping[str, Any] | None = None) -> DeleteRewritePreview:
        """The position delete files ``rewrite_position_delete_files`` would rewrite (dangling ones dropped)."""
        from icebook.analysis.maintenance.rewrite_previews import delete_rewrite_preview

        return delete_rewrite_preview(self._table(), self.current_snapshot, options)

    def _maintained(self, procedure: str, output: Any, deleted: tuple[str, ...] = ()) -> MaintenanceResult:
        from icebook.analysis.maintenance.before_after import maintenance_diff

        after = self.reopen()
        change = maintenance_diff(
            procedure, (self.metadata, self.store), (after.metadata, after.store), deleted_files=deleted
        )
        return MaintenanceResult(table=after, diff=change, output=output)

    def expire_snapshots(
        self,
        older_than: When = None,
        retain_last: int | None = None,
        snapshot_ids: Collection[int] = (),
        *,
        dry_run: bool = False,
    ) -> MaintenanceResult | ExpirePreview:
        """Run ``expire_snapshots`` through Spark (deletes files); ``dry_run`` returns the preview instead."""
        from icebook.engines import spark_maintenance

        if dry_run:
            return self.expire_preview(older_than, retain_last, snapshot_ids)
        output = spark_maintenance.expire_snapshots(
            self._writable(),
            older_than_ms=when_ms(older_than),
            retain_last=retain_last,
            snapshot_ids=tuple(snapshot_ids),
        )
        return self._maintained("expire_snapshots", output)

    def remove_orphan_files(
        self, older_than: When = None, location: str | None = None, *, dry_run: bool = False
    ) -> MaintenanceResult | OrphanReport:
        """Run ``remove_orphan_files`` through Spark (deletes files; Spark refuses a cutoff under 24
        hours ago); ``dry_run`` returns icebook's own list instead, without Spark."""
        from icebook.engines import spark_maintenance, spark_storage

        if dry_run:
            return self.orphans(older_than, location)
        deleted = spark_maintenance.remove_orphan_files(
            self._writable(),
            older_than_ms=when_ms(older_than),
            location=location,
            prefix_listing=spark_storage.on_object_store(location or self.metadata.location),
        )
        return self._maintained("remove_orphan_files", deleted, tuple(deleted))

    def rewrite_data_files(
        self, options: Mapping[str, Any] | None = None, where: str | None = None, *, dry_run: bool = False
    ) -> MaintenanceResult | CompactionPreview:
        """Run ``rewrite_data_files`` (bin-pack) through Spark; ``dry_run`` returns the preview instead."""
        from icebook.engines import spark_maintenance

        if dry_run:
            return self.compaction_preview(options, where)
        output = spark_maintenance.rewrite_data_files(self._writable(), options=options, where=where)
        return self._maintained("rewrite_data_files", output)

    def rewrite_manifests(self, *, dry_run: bool = False) -> MaintenanceResult | ManifestRewritePreview:
        """Run ``rewrite_manifests`` through Spark; ``dry_run`` returns the preview instead."""
        from icebook.engines import spark_maintenance

        if dry_run:
            return self.manifest_rewrite_preview()
        output = spark_maintenance.rewrite_manifests(self._writable())
        return self._maintained("rewrite_manifests", output)

    def rewrite_position_delete_files(
        self, options: Mapping[str, Any] | None = None, *, dry_run: bool = False
    ) -> MaintenanceResult | DeleteRewritePreview:
        """Run ``rewrite_position_delete_files`` through Spark; ``dry_run`` returns the preview instead."""
        from icebook.engines import spark_maintenance

        if dry_run:
            return self.delete_rewrite_preview(options)
        output = spark_maintenance.rewrite_position_delete_files(self._writable(), options=options)
        return self._maintained("rewrite_position_delete_files", output)
