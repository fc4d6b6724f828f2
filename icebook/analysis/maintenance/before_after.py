"""Before and after a maintenance procedure: what the table holds, which snapshots and refs went or
came, which files the metadata no longer references, and (when the current snapshot moved) the
snapshot diff of the commit the procedure made.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from icebook.analysis._frames import frame
from icebook.analysis.history.diff import SnapshotDiff, diff
from icebook.analysis.store.entries import Entries
from icebook.analysis.store.manifests import ManifestStore
from icebook.analysis.store.reachable import TableFile, reachable
from icebook.analysis.store.table_like import TableLike
from icebook.spec.manifest import ManifestContent
from icebook.spec.metadata import TableMetadata


@dataclass(frozen=True, slots=True, kw_only=True)
class TableFigures:
    """Headline figures of a table: its current snapshot's files and manifests, and its history."""

    current_snapshot_id: int | None
    snapshots: int
    refs: tuple[str, ...]
    data_files: int
    delete_files: int
    records: int
    data_bytes: int
    delete_bytes: int
    manifests: int
    manifest_bytes: int
    metadata_log_entries: int
    referenced_files: int
    """Files any snapshot references (manifest lists, manifests, data and delete files, statistics)."""
    referenced_bytes: int


def table_figures(metadata: TableMetadata, store: ManifestStore, *, progress: bool = False) -> TableFigures:
    current = metadata.current_snapshot()
    manifests = store.manifest_list(current) if current is not None else ()
    data_files = delete_files = records = data_bytes = delete_bytes = 0
    for m, entries in zip(manifests, store.many_entries(manifests, progress=progress), strict=True):
        live = Entries(entries).alive().table
        sizes = live.column("file_size_in_bytes").to_pylist()
        if m.effective_content == ManifestContent.DATA:
            data_files += live.num_rows
            records += sum(live.column("record_count").to_pylist())
            data_bytes += sum(sizes)
        else:
            delete_files += live.num_rows
            delete_bytes += sum(sizes)
    everything = reachable(metadata, store, None, progress=progress)
    return TableFigures(
        current_snapshot_id=None if current is None else current.snapshot_id,
        snapshots=len(metadata.snapshots),
        refs=tuple(sorted(metadata.refs)),
        data_files=data_files,
        delete_files=delete_files,
        records=records,
        data_bytes=data_bytes,
        delete_bytes=delete_bytes,
        manifests=len(manifests),
        manifest_bytes=sum(m.manifest_length for m in manifests),
        metadata_log_entries=len(metadata.metadata_log),
        referenced_files=len(everything.files),
        referenced_bytes=sum(f.size_in_bytes or 0 for f in everything.files.values()),
    )


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class MaintenanceDiff:
    """What a procedure changed, seen from the metadata before and after."""

    procedure: str
    before: TableFigures
    after: TableFigures
    removed_snapshots: tuple[int, ...]
    added_snapshots: tuple[int, ...]
    removed_refs: tuple[str, ...]
    unreferenced_files: tuple[TableFile, ...]
    """Files referenced before and not after (what an expiry deletes, what a rewrite replaces)."""
    newly_referenced_files: tuple[TableFile, ...]
    snapshot_diff: SnapshotDiff | None
    """The current snapshot before -> after, when the procedure committed a new one."""
    deleted_files: tuple[str, ...] = ()
    """Files the procedure reports it deleted that no metadata referenced (orphans)."""

    def to_pandas(self) -> pd.DataFrame:
        """One row per measure: before, after, change."""
        rows = []
        for name in (
            "snapshots",
            "data_files",
            "delete_files",
            "records",
            "data_bytes",
            "delete_bytes",
            "manifests",
            "manifest_bytes",
            "metadata_log_entries",
            "referenced_files",
            "referenced_bytes",
        ):
            a, b = getattr(self.before, name), getattr(self.after, name)
            rows.append({"measure": name, "before": a, "after": b, "change": b - a})
        return frame(rows, ["measure", "before", "after", "change"], ints=["before", "after", "change"])

    def summary(self) -> str:
        parts = [f"{self.procedure}:"]
        if self.added_snapshots:
            parts.append(f"committed {len(self.added_snapshots)} snapshot(s)")
        if self.removed_snapshots:
            parts.append(f"expired {len(self.removed_snapshots)} snapshots")
        if self.removed_refs:
            parts.append(f"removed refs {', '.join(self.removed_refs)}")
        b, a = self.before, self.after
        parts.append(
            f"data files {b.data_files} -> {a.data_files}, delete files {b.delete_files} -> {a.delete_files}, "
            f"manifests {b.manifests} -> {a.manifests}, referenced files {b.referenced_files} -> {a.referenced_files}"
        )
        if self.deleted_files:
            parts.append(f"deleted {len(self.deleted_files)} unreferenced files")
        return " ".join(parts[:1]) + " " + "; ".join(parts[1:])

    def __repr__(self) -> str:
        return f"<MaintenanceDiff {self.summary()}>"


def maintenance_diff(
    procedure: str,
    before: TableLike,
    after: TableLike,
    *,
    deleted_files: tuple[str, ...] = (),
    progress: bool = False,
) -> MaintenanceDiff:
    """What ``procedure`` changed from the table ``before`` it ran to the table re-opened ``after``."""
    (meta_a, store_a), (meta_b, store_b) = (before.metadata, before.store), (after.metadata, after.store)
    ids_a = {s.snapshot_id for s in meta_a.snapshots}
    ids_b = {s.snapshot_id for s in meta_b.snapshots}
    reach_a = reachable(meta_a, store_a, None, progress=progress)
    reach_b = reachable(meta_b, store_b, None, progress=progress)
    current_a, current_b = meta_a.current_snapshot_id, meta_b.current_snapshot_id
    snapshot_diff = None
    if current_a != current_b and current_a in ids_b and current_b is not None:
        snapshot_diff = diff(after, current_a, current_b, read_history=False, progress=progress)
    return MaintenanceDiff(
        procedure=procedure,
        before=table_figures(meta_a, store_a),
        after=table_figures(meta_b, store_b),
        removed_snapshots=tuple(s.snapshot_id for s in meta_a.snapshots if s.snapshot_id not in ids_b),
        added_snapshots=tuple(s.snapshot_id for s in meta_b.snapshots if s.snapshot_id not in ids_a),
        removed_refs=tuple(sorted(set(meta_a.refs) - set(meta_b.refs))),
        unreferenced_files=tuple(reach_a.minus(reach_b)),
        newly_referenced_files=tuple(reach_b.minus(reach_a)),
        snapshot_diff=snapshot_diff,
        deleted_files=deleted_files,
    )


__all__ = ["MaintenanceDiff", "TableFigures", "maintenance_diff", "table_figures"]
