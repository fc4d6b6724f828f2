"""A scan plan's totals without its per-file columns: files, bytes, records, delete files, manifests kept and
skipped (spec: "Scan Planning").

``summarize_scan`` decides every manifest and live entry by the planner's own rules (``prune_snapshot``,
``scan_manifest``) and reduces each manifest to counts as it is read, not kept by the store; ``plan_summary``
reduces a ``ScanPlan``'s columns by the same ``manifest_totals``, so the two agree by construction.
Delete files here are those the plan keeps after pruning (the candidates); which of them apply to a data file
to read needs the data files' columns (``ScanPlan.delete_file_count``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields

import numpy as np

from icebook.analysis.expr.nodes import Expr
from icebook.analysis.scan.columns import ManifestScan, scan_manifest
from icebook.analysis.scan.planner import ScanPlan, bind_read, prune_snapshot
from icebook.analysis.store.manifests import read_ahead
from icebook.analysis.store.table_like import TableLike
from icebook.spec.manifest import FileContent, ManifestFile
from icebook.spec.schema import Schema
from icebook.spec.snapshots import Snapshot
from icebook.text import byte_size


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanTotals:
    """Live files of the scanned manifests, kept (to read) and skipped, and the kept data's size."""

    data_files: int = 0
    data_files_skipped: int = 0
    records: int = 0
    """Rows of the data files to read, before deletes."""
    bytes: int = 0
    """Bytes of the data files to read."""
    delete_files: int = 0
    """Delete files (and deletion vectors) kept after pruning."""
    delete_files_skipped: int = 0
    delete_records: int = 0

    def __add__(self, other: ScanTotals) -> ScanTotals:
        return ScanTotals(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanSummary:
    """What a read of ``snapshot_id`` with ``filter`` plans, in totals."""

    snapshot_id: int
    filter: Expr
    manifests: int
    manifests_kept: int
    manifests_skipped: int
    totals: ScanTotals

    def __repr__(self) -> str:
        t = self.totals
        return (
            f"<ScanSummary @ {self.snapshot_id}: {t.data_files:,} data files to read ({byte_size(t.bytes)}, "
            f"{t.records:,} records), {t.delete_files:,} delete files; "
            f"{self.manifests_kept} of {self.manifests} manifests kept>"
        )


def manifest_totals(scan: ManifestScan) -> ScanTotals:
    """One scanned manifest's live entries reduced to totals (kept or skipped, data or deletes)."""
    kept = scan.kept
    data = scan.content == int(FileContent.DATA)
    if not len(kept):
        return ScanTotals()
    records = np.asarray(scan.entries.column("record_count").fill_null(0).to_numpy(zero_copy_only=False))
    sizes = np.asarray(scan.entries.column("file_size_in_bytes").fill_null(0).to_numpy(zero_copy_only=False))
    read = kept & data
    applied = kept & ~data
    return ScanTotals(
        data_files=int(read.sum()),
        data_files_skipped=int((data & ~kept).sum()),
        records=int(records[read].sum()),
        bytes=int(sizes[read].sum()),
        delete_files=int(applied.sum()),
        delete_files_skipped=int((~data & ~kept).sum()),
        delete_records=int(records[applied].sum()),
    )


def _summary(
    snapshot_id: int, bound: Expr, manifests: Sequence[ManifestFile], kept: np.ndarray, scans: Iterable[ManifestScan]
) -> ScanSummary:
    total = ScanTotals()
    for scan in scans:
        total += manifest_totals(scan)
    return ScanSummary(
        snapshot_id=snapshot_id,
        filter=bound,
        manifests=len(manifests),
        manifests_kept=int(kept.sum()),
        manifests_skipped=len(manifests) - int(kept.sum()),
        totals=total,
    )


def plan_summary(plan: ScanPlan) -> ScanSummary:
    """The totals of a plan already made, from its columns."""
    return _summary(plan.snapshot_id, plan.filter, plan.manifests, plan.manifest_kept, plan.scans)


def summarize_scan(
    table: TableLike, snapshot: Snapshot, filter: Expr | str | None = None, *, schema: Schema | None = None
) -> ScanSummary:
    """The totals ``plan_scan(table, snapshot, filter)`` would give, each manifest reduced as it is read and
    dropped: memory holds a few manifests, not the plan's files."""
    metadata, store = table.metadata, table.store
    schema, bound, row_filter = bind_read(metadata, snapshot, filter, schema)
    manifests = store.manifest_list(snapshot)
    projected, kept, _ = prune_snapshot(metadata, manifests, row_filter)

    def one(m: ManifestFile) -> ManifestScan:
        partition_filter = projected[m.partition_spec_id].expr
        return scan_manifest(store, metadata, m, schema, row_filter, partition_filter, keep=False)

    chosen = [m for m, k in zip(manifests, kept, strict=True) if k]
    summary = _summary(snapshot.snapshot_id, bound, manifests, kept, read_ahead(one, chosen))
    store.verify_snapshot(snapshot)
    return summary
