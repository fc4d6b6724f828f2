"""The same filter through three planners: which data files icebook, Spark (Iceberg's own planner in the
session) and PyIceberg (``plan_files``) keep, one row per live data file, each difference in words.

icebook's side comes from its plan (``scan.planner``), which says for every file what skipped it: the
manifest's partition summary, the file's partition value or its column bounds. Where another planner
keeps a file icebook skips, the reason names that evidence; where another planner skips a file icebook
keeps, it says what icebook found (no evidence rules the file out), so that the other planner's rule can
be looked for. A planner that cannot run has one line in ``unavailable`` and a null column.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from icebook.analysis.scan.plan_items import Decision, Level
from icebook.analysis.scan.planner import ScanPlan

PLANNERS = ("icebook", "spark", "pyiceberg")
NAMES = {"icebook": "icebook", "spark": "Spark", "pyiceberg": "PyIceberg"}
COLUMNS = ["file_path", *PLANNERS, "reason"]


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class PlanComparison:
    """Which planner keeps which data file for one filter at one snapshot."""

    snapshot_id: int
    filter: str
    files: pd.DataFrame
    """``file_path``, ``icebook``, ``spark``, ``pyiceberg`` (nullable bool: null when that planner could not
    run) and ``reason`` (each difference in words; empty where all agree)."""
    unavailable: Mapping[str, str] = field(default_factory=dict)
    """Planner -> why it could not run, in one line."""

    def to_pandas(self) -> pd.DataFrame:
        return self.files

    @property
    def differences(self) -> pd.DataFrame:
        return self.files[self.files["reason"] != ""]

    def summary(self) -> str:
        kept = {p: int(self.files[p].sum()) for p in PLANNERS if p not in self.unavailable}
        counts = ", ".join(f"{NAMES[p]} keeps {n:,}" for p, n in kept.items())
        lines = [
            f"plans for {self.filter} @ {self.snapshot_id}: {len(self.files):,} data files; {counts}; "
            f"{len(self.differences):,} differ"
        ]
        lines += [f"  {NAMES[p]} could not plan: {why}" for p, why in self.unavailable.items()]
        for row in self.differences.head(20).itertuples():
            lines.append(f"  {row.file_path}: {row.reason}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<PlanComparison {self.summary().splitlines()[0]}>"


def _icebook_reasons(plan: ScanPlan, everything: ScanPlan) -> dict[str, tuple[bool, Decision | None]]:
    """Every live data file of the snapshot -> (icebook keeps it, the decision that skipped it)."""
    files: dict[str, tuple[bool, Decision | None]] = {}
    manifests = {d.path: d for d in plan.decisions if d.level == Level.MANIFEST}
    for d in plan.decisions:
        if d.level == Level.DATA_FILE:
            files[d.path] = (d.kept, None if d.kept else d)
    for task in everything.tasks:  # files of manifests the filter skipped whole
        f = task.file
        if f.file_path not in files:
            files[f.file_path] = (False, manifests.get(f.manifest_path))
    return files


def _reason(path: str, icebook: bool, skipped_by: Decision | None, others: Mapping[str, bool | None]) -> str:
    parts = []
    for planner, keeps in others.items():
        if keeps is None or keeps == icebook:
            continue
        name = NAMES[planner]
        if keeps:
            how = f"by its {skipped_by.evidence.value}" if skipped_by and skipped_by.evidence else ""
            why = skipped_by.reason if skipped_by else "no decision recorded"
            level = "its manifest" if skipped_by and skipped_by.level == Level.MANIFEST else "the file"
            parts.append(f"{name} keeps it; icebook skips {level} {how}: {why}".replace("  ", " "))
        else:
            parts.append(
                f"{name} skips it; icebook keeps it: neither its manifest's partition summary, its partition "
                f"value nor its column bounds rule it out for this filter"
            )
    return "; ".join(parts)


def compare_plans(plan: ScanPlan, everything: ScanPlan, others: Mapping[str, set[str] | str]) -> PlanComparison:
    """icebook's ``plan`` (and ``everything``, the unfiltered plan of the same snapshot, for the files
    whose manifests the filter skipped) beside the files each other planner kept (or why it could not run)."""
    ours = _icebook_reasons(plan, everything)
    planned = {p: v for p, v in others.items() if not isinstance(v, str)}
    unavailable = {p: v for p, v in others.items() if isinstance(v, str)}
    paths = sorted(set(ours).union(*planned.values()))
    rows: list[dict[str, Any]] = []
    for path in paths:
        kept, skipped_by = ours.get(path, (False, None))
        verdicts: dict[str, bool | None] = {p: (path in planned[p]) if p in planned else None for p in PLANNERS[1:]}
        reason = _reason(path, kept, skipped_by, verdicts)
        if path not in ours:
            reason = "not a live data file of this snapshot to icebook; " + reason
        rows.append({"file_path": path, "icebook": kept, **verdicts, "reason": reason})
    frame = pd.DataFrame(rows, columns=COLUMNS)
    for p in PLANNERS:
        frame[p] = frame[p].astype("boolean")
    frame["reason"] = frame["reason"].astype(object)
    return PlanComparison(snapshot_id=plan.snapshot_id, filter=str(plan.filter), files=frame, unavailable=unavailable)


__all__ = ["COLUMNS", "PLANNERS", "PlanComparison", "compare_plans"]
