"""``t.maintenance``: a table's health and maintenance. The debt at a snapshot and what each Spark procedure
would do, computed from the metadata alone (each its own method and result type); then the procedures
themselves through Spark, each returning a ``MaintenanceResult``: the table re-opened and its before/after
diff. Every analysis here is called the same way, with the table first (``analysis/store/table_like.py``)."""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from icebook.analysis.engine_choice import Engine, EngineName
from icebook.analysis.resolve import At, to_epoch_ms
from icebook.display.registry import register

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
    """Health, maintenance previews and procedures of one ``Table`` (``t.maintenance``). A preview reads
    only; the procedure of the same name (``expire_preview`` and ``expire_snapshots``, ...) changes the
    table through Spark."""

    __slots__ = ("_table",)

    def __init__(self, table: Table) -> None:
        self._table = table

    def _at(self, at: At) -> Snapshot | None:
        t = self._table
        return t.current_snapshot if at is None else t.snapshot(at)

    # ------------------------------------------------------------------ reading only

    def health(self, at: At = None, *, list_files: bool = True) -> HealthReport:
        """Maintenance debt at ``at`` (default: current): file sizes and delete debt per partition,
        manifests, history against retention, stale refs and (with ``list_files``) orphan files;
        each finding names the Spark procedure that addresses it."""
        from icebook.analysis.maintenance.health import health

        t = self._table
        return health(t, self._at(at), identifier=t.identifier, list_files=list_files)

    def file_measures(self, at: At = None, *, engine: EngineName = "arrow") -> FilesHealth:
        """The files section of ``health(at)``: per partition, data files, bytes, records, small and large
        files (the compaction thresholds), delete files of each kind, delete debt; and the size histogram.

        ``engine="spark"``: aggregated by the attached Spark session over the ``files`` and ``entries``
        metadata tables, which delete files apply to which data files included (the delete index's scope
        and statistics rules as Spark SQL); one row per partition reaches Python, never one per file."""
        t, snapshot = self._table, self._at(at)
        if Engine.named(engine) == Engine.ARROW:
            from icebook.analysis.maintenance.health import file_measures

            return file_measures(t, snapshot)
        from icebook.engines import spark_aggregates

        return spark_aggregates.file_measures(t.metadata, t._spark_metadata_tables(snapshot))

    def why_kept(self, path: str, older_than: When = None, retain_last: int | None = None) -> WhyKept:
        """What keeps the file ``path`` (data, delete, manifest, manifest list, statistics, metadata file,
        orphan): ``.keepers`` (the snapshots reaching it, their refs and the retention rule keeping each,
        judged by ``expire_snapshots(older_than, retain_last)``, default the table's retention) and
        ``.removed_by`` (the call that would delete it, or what must happen first)."""
        from icebook.analysis.maintenance.why_kept import why_kept

        return why_kept(self._table, path, older_than_ms=when_ms(older_than), retain_last=retain_last)

    def expire_preview(
        self, older_than: When = None, retain_last: int | None = None, snapshot_ids: Collection[int] = ()
    ) -> ExpirePreview:
        """The snapshots ``expire_snapshots`` would expire (refs' and branches' retention honoured) and
        every file it would then delete. ``older_than`` defaults to the table's max snapshot age."""
        from icebook.analysis.maintenance.expire import expire_preview

        return expire_preview(
            self._table, older_than_ms=when_ms(older_than), retain_last=retain_last, snapshot_ids=snapshot_ids
        )

    def orphans(self, older_than: When = None, location: str | None = None) -> OrphanReport:
        """Files under the table location that nothing references, as ``remove_orphan_files`` finds
        them (older than ``older_than``, default three days ago): its preview."""
        from icebook.analysis.maintenance.orphans import find_orphans

        return find_orphans(self._table, older_than_ms=when_ms(older_than), location=location)

    def commit_forensics(self, older_than: When = None) -> CommitForensics:
        """How the table's commits went, from its files: which were retried after losing a race (the
        attempt in a manifest list's name, a PyIceberg data file named by an earlier commit UUID), and the
        files writers left behind (``orphans(older_than)``, each with the commit its name carries)."""
        from icebook.analysis.maintenance.commit_forensics import commit_forensics

        return commit_forensics(self._table, self.orphans(older_than))

    def compaction_preview(
        self, options: Mapping[str, Any] | None = None, where: str | None = None
    ) -> CompactionPreview:
        """The file groups ``rewrite_data_files`` (bin-pack) would rewrite in the current snapshot."""
        from icebook.analysis.maintenance.compaction import compaction_preview

        return compaction_preview(self._table, self._at(None), options, where=where)

    def manifest_rewrite_preview(self) -> ManifestRewritePreview:
        """The manifests ``rewrite_manifests`` would rewrite, and into how many."""
        from icebook.analysis.maintenance.rewrite_previews import manifest_rewrite_preview

        return manifest_rewrite_preview(self._table, self._at(None))

    def delete_rewrite_preview(self, options: Mapping[str, Any] | None = None) -> DeleteRewritePreview:
        """The position delete files ``rewrite_position_delete_files`` would rewrite (dangling ones dropped)."""
        from icebook.analysis.maintenance.rewrite_previews import delete_rewrite_preview

        return delete_rewrite_preview(self._table, self._at(None), options)

    # ------------------------------------------------------------------ changing the table (through Spark)

    def _maintained(self, procedure: str, output: Any, deleted: tuple[str, ...] = ()) -> MaintenanceResult:
        from icebook.analysis.maintenance.before_after import maintenance_diff

        before = self._table
        after = before.reopen()
        change = maintenance_diff(procedure, before, after, deleted_files=deleted)
        return MaintenanceResult(table=after, diff=change, output=output)

    def expire_snapshots(
        self, older_than: When = None, retain_last: int | None = None, snapshot_ids: Collection[int] = ()
    ) -> MaintenanceResult:
        """Run ``expire_snapshots`` through Spark (deletes files); ``expire_preview`` says what it would do."""
        from icebook.engines import spark_maintenance

        output = spark_maintenance.expire_snapshots(
            self._table._writable(),
            older_than_ms=when_ms(older_than),
            retain_last=retain_last,
            snapshot_ids=tuple(snapshot_ids),
        )
        return self._maintained("expire_snapshots", output)

    def remove_orphan_files(self, older_than: When = None, location: str | None = None) -> MaintenanceResult:
        """Run ``remove_orphan_files`` through Spark (deletes files; Spark refuses a cutoff under 24 hours
        ago); ``orphans`` lists what it would delete, without Spark."""
        from icebook.engines import spark_maintenance, spark_storage

        t = self._table
        deleted = spark_maintenance.remove_orphan_files(
            t._writable(),
            older_than_ms=when_ms(older_than),
            location=location,
            prefix_listing=spark_storage.on_object_store(location or t.location),
        )
        return self._maintained("remove_orphan_files", deleted, tuple(deleted))

    def rewrite_data_files(
        self, options: Mapping[str, Any] | None = None, where: str | None = None
    ) -> MaintenanceResult:
        """Run ``rewrite_data_files`` (bin-pack) through Spark; ``compaction_preview`` says what it would do."""
        from icebook.engines import spark_maintenance

        output = spark_maintenance.rewrite_data_files(self._table._writable(), options=options, where=where)
        return self._maintained("rewrite_data_files", output)

    def rewrite_manifests(self) -> MaintenanceResult:
        """Run ``rewrite_manifests`` through Spark; ``manifest_rewrite_preview`` says what it would do."""
        from icebook.engines import spark_maintenance

        output = spark_maintenance.rewrite_manifests(self._table._writable())
        return self._maintained("rewrite_manifests", output)

    def rewrite_position_delete_files(self, options: Mapping[str, Any] | None = None) -> MaintenanceResult:
        """Run ``rewrite_position_delete_files`` through Spark; ``delete_rewrite_preview`` says what it would do."""
        from icebook.engines import spark_maintenance

        output = spark_maintenance.rewrite_position_delete_files(self._table._writable(), options=options)
        return self._maintained("rewrite_position_delete_files", output)

    def __repr__(self) -> str:
        return f"<TableMaintenance of {self._table.location}>"


# How a MaintenanceResult is shown; registered here because the display layer cannot import this one.
def _result_text(result: MaintenanceResult) -> str:
    from icebook.display import maintenance_render

    return maintenance_render.result_text(result.diff, result.output)


def _result_html(result: MaintenanceResult) -> str:
    from icebook.display import maintenance_render

    return maintenance_render.result_html(result.diff, result.output)


register(MaintenanceResult, text=_result_text, html=_result_html)

__all__ = ["MaintenanceResult", "TableMaintenance", "When", "when_ms"]
