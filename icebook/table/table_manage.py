"""``t.manage``: the changes to a table's refs and current snapshot, through Spark, grouped as PyIceberg groups
``table.manage_snapshots()``: branches and tags, fast-forward, cherry-pick, rollback, setting the current
snapshot, write-audit-publish, and copying the table elsewhere. Each asks Spark for one change and returns the
table re-opened (``copy_to``: the copy), so the object it was called on still shows the state before."""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any

from icebook.analysis.resolve import At, AtTime, parse_at
from icebook.errors import NotFound
from icebook.spec.metadata import MAIN_BRANCH
from icebook.spec.snapshots import Branch
from icebook.table.table_lookup import find_table

if TYPE_CHECKING:
    from icebook.table import Table


class TableManage:
    """Branches, tags, the current snapshot and write-audit-publish of one ``Table`` (``t.manage``); every
    method changes the table through Spark and returns it re-opened."""

    __slots__ = ("_table",)

    def __init__(self, table: Table) -> None:
        self._table = table

    def _snapshot_id(self, at: At) -> int | None:
        return None if at is None else self._table.snapshot(at).snapshot_id

    def _require_ref(self, name: str, kind: type | None) -> None:
        refs = self._table.refs
        ref = refs.get(name)
        if ref is None or (kind is not None and not isinstance(ref, kind)):
            label = "branch" if kind is Branch else "branch or tag"
            raise NotFound(f"no {label} named {name!r}", available=sorted(refs))

    # ------------------------------------------------------------------ branches and tags

    def create_branch(
        self,
        name: str,
        at: At = None,
        *,
        retain_ms: int | _dt.timedelta | None = None,
        min_snapshots_to_keep: int | None = None,
        max_snapshot_age_ms: int | _dt.timedelta | None = None,
        replace: bool = False,
    ) -> Table:
        """Create (or replace) branch ``name`` at ``at`` (default: current), with optional retention."""
        from icebook.engines import spark_ops

        spark_ops.create_branch(
            self._table._writable(),
            name,
            self._snapshot_id(at),
            replace=replace,
            retain_ms=retain_ms,
            min_snapshots_to_keep=min_snapshots_to_keep,
            max_snapshot_age_ms=max_snapshot_age_ms,
        )
        return self._table.reopen()

    def replace_branch(self, name: str, at: At, **retention: Any) -> Table:
        """Point branch ``name`` at ``at`` (retention as ``create_branch``)."""
        return self.create_branch(name, at, replace=True, **retention)

    def drop_branch(self, name: str) -> Table:
        """Drop branch ``name`` (NotFound, listing the refs, when there is none)."""
        from icebook.engines import spark_ops

        self._require_ref(name, Branch)
        spark_ops.drop_branch(self._table._writable(), name)
        return self._table.reopen()

    def create_tag(
        self, name: str, at: At = None, *, retain_ms: int | _dt.timedelta | None = None, replace: bool = False
    ) -> Table:
        """Create (or replace) tag ``name`` at ``at`` (default: current), kept for ``retain_ms``."""
        from icebook.engines import spark_ops

        spark_ops.create_tag(self._table._writable(), name, self._snapshot_id(at), replace=replace, retain_ms=retain_ms)
        return self._table.reopen()

    def replace_tag(self, name: str, at: At, *, retain_ms: int | _dt.timedelta | None = None) -> Table:
        """Point tag ``name`` at ``at``."""
        return self.create_tag(name, at, retain_ms=retain_ms, replace=True)

    def drop_tag(self, name: str) -> Table:
        """Drop tag ``name`` (NotFound, listing the refs, when there is no such ref)."""
        from icebook.engines import spark_ops

        self._require_ref(name, None)
        spark_ops.drop_tag(self._table._writable(), name)
        return self._table.reopen()

    def fast_forward(self, branch: str, to: str) -> Table:
        """Move ``branch`` forward to the head of ``to`` (``branch`` must be an ancestor)."""
        from icebook.engines import spark_ops

        self._require_ref(to, Branch)
        spark_ops.fast_forward(self._table._writable(), branch, to)
        return self._table.reopen()

    # ------------------------------------------------------------------ the current snapshot

    def cherry_pick(self, at: At) -> Table:
        """Apply the changes of one snapshot onto main as a new snapshot."""
        from icebook.engines import spark_ops

        t = self._table
        spark_ops.cherry_pick(t._writable(), t.snapshot(at).snapshot_id)
        return t.reopen()

    def rollback(self, at: At) -> Table:
        """Make main point at an earlier snapshot (an id or ref), or, for a time, at the newest ancestor
        of main committed strictly before it (Iceberg's ``rollback_to_timestamp`` rule)."""
        from icebook.engines import spark_ops

        t = self._table
        point = parse_at(at, t.refs)
        snapshot = t.snapshot(point)  # NotFound for unknown ids, refs and times before the first snapshot
        if isinstance(point, AtTime):
            spark_ops.rollback_to_time(t._writable(), point.timestamp_ms)
        else:
            spark_ops.rollback_to_snapshot(t._writable(), snapshot.snapshot_id)
        return t.reopen()

    def set_current_snapshot(self, at: At) -> Table:
        """Point main at any snapshot (not only an ancestor)."""
        from icebook.engines import spark_ops

        t = self._table
        spark_ops.set_current_snapshot(t._writable(), t.snapshot(at).snapshot_id)
        return t.reopen()

    # ------------------------------------------------------------------ write-audit-publish

    def wap_write(self, branch: str, query: str) -> Table:
        """Write-audit-publish, step 1: run a write (SQL naming this table as ``{table}``) into ``branch``,
        leaving main untouched. Inspect the branch, then ``publish(branch)``."""
        from icebook.engines import spark_engine, spark_ops

        t = self._table
        identifier = t._writable()
        if branch not in t.refs:
            spark_ops.create_branch(identifier, branch, self._snapshot_id(None))
        spark_ops.enable_wap(identifier)
        with spark_engine.wap_branch(branch):
            spark_engine.run(query.replace("{table}", identifier))
        return t.reopen()

    def publish(self, branch: str) -> Table:
        """Write-audit-publish, last step: fast-forward main to the audited branch."""
        return self.fast_forward(MAIN_BRANCH, branch)

    # ------------------------------------------------------------------ a copy elsewhere

    def copy_to(self, location: str) -> Table:
        """Copy this table (as of its newest metadata) to ``location`` and open the copy: Iceberg's
        ``rewrite_table_path`` rewrites the absolute paths in its metadata, then every file is copied.
        A place to try changes and maintenance (expiry, compaction) without touching the original."""
        from icebook.engines import spark_ops

        t = self._table
        spark_ops.copy_table(t._writable(), t.location, str(location))
        return t._from(find_table(str(location), fileio=t.fileio))

    def __repr__(self) -> str:
        return f"<TableManage of {self._table.location}>"


__all__ = ["TableManage"]
