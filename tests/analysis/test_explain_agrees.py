"""The explanation and the planner give the same keep/skip decision for every manifest and every file
of every snapshot of every scenario table, under equality, range, ``in``, ``is null``, ``starts with``
and ``and``/``or``/``not`` filters, on partition source columns (across partition evolution) and on
other columns.

Three ways of saying it, all checked:

- ``ScanPlan.explain()`` says KEEP/SKIP for exactly the planner's decisions, in order, with their reasons;
- ``explain_predicate`` (how one predicate becomes a partition predicate under each spec) states the
  projection the planner used, and re-deciding every manifest and file from that explanation alone
  gives the planner's partition-level decisions;
- the decisions are right: every data file with a live row matching the filter (rows as the Arrow
  engine reads them, held equal to Spark's by the engine tests) is kept.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from _support.filters import COMPOUND, LEAVES, Leaf, filter_text

import icebook
from icebook.analysis.expr.filter_arrow import to_arrow
from icebook.analysis.expr.nodes import AlwaysTrue, And, Expr
from icebook.analysis.expr.pruning import evaluate
from icebook.analysis.history.evolution import explain_predicate
from icebook.analysis.scan.plan_items import Evidence, Level
from icebook.analysis.scan.planner import (
    ScanPlan,
    partition_summary_stats,
    partition_value_stats,
    plan_scan,
)
from icebook.engines.arrow import read_live_rows
from icebook.scenarios import SCENARIOS
from icebook.table import Table

pytestmark = pytest.mark.spark


def _short(plan: ScanPlan, path: str) -> str:
    base = plan.location.rstrip("/") + "/"
    return path[len(base) :] if path.startswith(base) else path


def assert_explain_states_the_decisions(plan: ScanPlan) -> None:
    """``explain()`` lists every planner decision, in order, with the planner's verdict and reason."""
    lines = plan.explain().splitlines()
    stated = [line for line in lines if line.startswith(("  KEEP ", "  SKIP "))]
    assert len(stated) == len(plan.decisions)
    for line, d in zip(stated, plan.decisions, strict=True):
        assert line.startswith(f"  {'KEEP' if d.kept else 'SKIP'} {_short(plan, d.path)}"), (line, d)
        assert d.reason in line
    for level in (Level.MANIFEST, Level.DATA_FILE, Level.DELETE_FILE):
        items = [d for d in plan.decisions if d.level == level]
        kept = sum(d.kept for d in items)
        assert f"{level.capitalize()}s: {kept} kept, {len(items) - kept} skipped" in lines
    for projection in plan.projections:
        assert f"Partition filter for spec {projection.spec_id}: {projection.expr}" in lines
        for step in projection.fields:
            assert f"  {step.predicate} -> {step.text or 'no partition predicate'} ({step.reason})" in lines


def assert_explained_projection_decides_as_planned(t: Table, plan: ScanPlan, leaf: Leaf) -> None:
    """Re-decide every manifest and file from ``explain_predicate`` alone: the planner's partition verdicts."""
    explanation = explain_predicate(t.metadata, *leaf)
    partition_filters: dict[int, Expr] = {}
    for projection in plan.projections:
        rows = [p for p in explanation.projections if p.spec_id == projection.spec_id and p.partition_field]
        assert [(p.partition_field, p.predicate, p.projected, p.reason) for p in rows] == [
            (s.field.name, s.text, s.projected, s.reason) for s in projection.fields
        ], (leaf, projection.spec_id)
        expr: Expr = AlwaysTrue()
        for p in rows:
            if p.projected is not None:
                expr = p.projected if isinstance(expr, AlwaysTrue) else And(expr, p.projected)
        partition_filters[projection.spec_id] = expr
    manifests = {m.manifest_path: m for m in t.store.manifest_list(t.snapshot(plan.snapshot_id))}
    for d in plan.decisions:
        if d.evidence == Evidence.FILE_COUNTS:
            continue
        if d.level == Level.MANIFEST:
            m = manifests[d.path]
            expr = partition_filters[m.partition_spec_id]
            keep = m.partitions is None or evaluate(expr, partition_summary_stats(t.metadata, m)).might_match
            assert keep == (d.evidence != Evidence.PARTITION_SUMMARY), (leaf, d)
        else:
            assert d.file is not None
            keep = evaluate(partition_filters[d.file.spec_id], partition_value_stats(t.metadata, d.file)).might_match
            assert keep == (d.evidence != Evidence.PARTITION_VALUE), (leaf, d)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_explain_and_planner_agree_on_every_manifest_and_file(scenario_locations: dict[str, Path], name: str) -> None:
    t = icebook.open(scenario_locations[name])
    filters: list[tuple[str, Leaf | None]] = [(filter_text(*leaf), leaf) for leaf in LEAVES[name]]
    filters += [(text, None) for text in COMPOUND[name]]
    skipped_by: Counter[Evidence] = Counter()
    for snapshot in t.snapshots:
        live = read_live_rows(t, snapshot)
        for text, leaf in filters:
            plan = plan_scan(t, snapshot, text)
            assert_explain_states_the_decisions(plan)
            if leaf is not None:
                assert_explained_projection_decides_as_planned(t, plan, leaf)
            matching = set(live.filter(to_arrow(plan.filter)).column("_file").to_pylist())
            kept = {d.path for d in plan.decisions if d.level == Level.DATA_FILE and d.kept}
            assert matching <= kept, (snapshot.snapshot_id, text, matching - kept)
            skipped_by.update(d.evidence for d in plan.skipped if d.evidence is not None)
    # The filters prune, by partitions and by column stats, so the agreement is not vacuous.
    by_partition = skipped_by[Evidence.PARTITION_VALUE] + skipped_by[Evidence.PARTITION_SUMMARY]
    partitioned = any(spec.fields for spec in t.metadata.partition_specs.values())
    assert (by_partition or not partitioned) and skipped_by[Evidence.COLUMN_STATS], skipped_by
    if name == "events":
        assert skipped_by[Evidence.PARTITION_VALUE] and skipped_by[Evidence.PARTITION_SUMMARY], skipped_by
