"""The columnar planner equals the scalar rules it vectorises, on every manifest and file of every
snapshot of every scenario table:

- file verdicts (partition values, then column bounds and counts) and manifest verdicts (partition
  summaries) of ``pruning_arrow.evaluate_columns`` equal ``pruning.evaluate`` row by row;
- the delete join (``delete_matching``) applies exactly the delete files that ``scan.match_deletes``
  (the scope rules one pair at a time) applies, and considers the same ones;
- on synthetic stats, every predicate kind and edge (NaN, all-null, empty ``in``, non-ASCII prefixes);
- a plan from the planner's own projection of the entries (no metric maps without a filter) equals a
  plan from whole entries: the same tasks, decisions, delete matches and reasons.
"""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from test_explain_agrees import COMPOUND, LEAVES, filter_text

import icebook
from icebook.analysis.expr.binding import bind
from icebook.analysis.expr.nodes import push_not, referenced_ids
from icebook.analysis.expr.pruning import Stats, evaluate, value_stats
from icebook.analysis.expr.pruning_arrow import StatsColumns, comparable, evaluate_columns, exact_stats
from icebook.analysis.scan.columns import row_column_stats
from icebook.analysis.scan.planner import (
    Evidence,
    Level,
    match_deletes,
    partition_summary_stats,
    partition_value_stats,
    plan_scan,
)
from icebook.analysis.store.manifests import ManifestStore
from icebook.scenarios import SCENARIOS
from icebook.spec.manifest import FileContent
from icebook.spec.schema import Schema
from icebook.spec.types import DATE, DOUBLE, LONG, STRING, DecimalType, NestedField, StructType


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_columnar_verdicts_equal_the_scalar_evaluator(scenario_locations: dict[str, Path], name: str) -> None:
    t = icebook.open(scenario_locations[name])
    filters = [filter_text(*leaf) for leaf in LEAVES[name]] + COMPOUND[name]
    checked = Evidence.__members__.values()
    seen: dict[Evidence | None, int] = dict.fromkeys([None, *checked], 0)
    for snapshot in t.snapshots:
        manifests = {m.manifest_path: m for m in t.store.manifest_list(snapshot)}
        for text in filters:
            plan = plan_scan(t, snapshot, text)
            projected = {p.spec_id: p.expr for p in plan.projections}
            row_filter = push_not(plan.filter)
            ids = referenced_ids(plan.filter)
            scans = {s.manifest.manifest_path: s for s in plan.scans}
            positions: dict[str, int] = {}
            for d in plan.decisions:
                seen[d.evidence] += 1
                if d.level == Level.MANIFEST:
                    m = manifests[d.path]
                    if d.evidence == Evidence.FILE_COUNTS:
                        assert not m.added_files_count and not m.existing_files_count
                        continue
                    keep = (
                        m.partitions is None
                        or evaluate(projected[m.partition_spec_id], partition_summary_stats(t.metadata, m)).might_match
                    )
                    assert keep == d.kept, (snapshot.snapshot_id, text, d)
                    continue
                assert d.file is not None and d.manifest_path is not None
                scan = scans[d.manifest_path]
                row = positions.setdefault(d.manifest_path, 0)
                while scan.entries.column("file_path")[row].as_py() != d.path:
                    row += 1
                positions[d.manifest_path] = row + 1
                verdict = evaluate(projected[d.file.spec_id], partition_value_stats(t.metadata, d.file))
                evidence = None if verdict.might_match else Evidence.PARTITION_VALUE
                if verdict.might_match and d.file.content != FileContent.POSITION_DELETES:
                    stats = row_column_stats(scan.entries, row, plan.schema, ids, d.manifest_path)
                    if not evaluate(row_filter, stats).might_match:
                        evidence = Evidence.COLUMN_STATS
                assert (evidence is None) == d.kept and evidence == d.evidence, (snapshot.snapshot_id, text, d)
                assert d.reason, d
    # every kind of decision was exercised somewhere (partition pruning only where there are partitions)
    assert seen[None], seen
    if any(not spec.is_unpartitioned for spec in t.metadata.partition_specs.values()):
        assert seen[Evidence.PARTITION_VALUE] + seen[Evidence.PARTITION_SUMMARY], seen


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_delete_join_equals_the_scope_rules(scenario_locations: dict[str, Path], name: str) -> None:
    t = icebook.open(scenario_locations[name])
    for snapshot in t.snapshots:
        for text in (None, *COMPOUND[name][:2]):
            plan = plan_scan(t, snapshot, text)
            kept = [d.file for d in plan.decisions if d.kept and d.file is not None]
            data = [f for f in kept if f.content == FileContent.DATA]
            deletes = [f for f in kept if f.content != FileContent.DATA]
            expected = match_deletes(data, deletes, t.metadata)
            tasks = plan.tasks
            assert [task.file for task in tasks] == [task.file for task in expected]
            for got, want in zip(tasks, expected, strict=True):
                assert got.deletes == want.deletes, (snapshot.snapshot_id, got.file.file_path)
                assert [(m.delete, m.applies, m.reason) for m in got.matches] == [
                    (m.delete, m.applies, m.reason) for m in want.matches
                ]
            assert plan.applied_deletes() == {
                task.file.file_path: frozenset(d.file_path for d in task.deletes) for task in expected
            }
            assert plan.delete_file_count == len({d.file_path for task in expected for d in task.deletes})
            assert plan.explain_line_count() == len(plan.explain().splitlines())


SCHEMA = Schema(
    schema_id=0,
    fields=StructType(
        (
            NestedField(field_id=1, name="id", required=False, type=LONG),
            NestedField(field_id=2, name="s", required=False, type=STRING),
            NestedField(field_id=3, name="x", required=False, type=DOUBLE),
            NestedField(field_id=4, name="d", required=False, type=DATE),
            NestedField(field_id=5, name="m", required=False, type=DecimalType(9, 2)),
        )
    ),
)

ROWS: dict[int, list[Stats]] = {
    1: [
        Stats(lower=1, upper=5),
        Stats(lower=6, upper=9, may_null=False),
        Stats(all_null=True, may_null=True),
        Stats(lower=None, upper=4),
        Stats(lower=3, upper=None, may_null=True),
    ],
    2: [
        Stats(lower="apple", upper="azure"),
        Stats(lower="b", upper="ba"),
        Stats(lower="é", upper="éz", may_null=False),
        Stats(all_null=True),
        Stats(lower="a", upper="ab"),
    ],
    3: [
        Stats(lower=1.0, upper=2.0, may_nan=False),
        Stats(lower=1.0, upper=2.0, may_nan=True),
        Stats(lower=None, upper=None, may_nan=True, all_null=False),
        Stats(lower=-1.0, upper=0.0),
        Stats(all_null=True, may_nan=False),
    ],
    4: [Stats(lower=19000, upper=19010), Stats(lower=19011, upper=19020), Stats(), Stats(lower=0, upper=0), Stats()],
    5: [
        Stats(lower=Decimal("1.00"), upper=Decimal("3.50")),
        Stats(lower=Decimal("4.00"), upper=Decimal("4.00")),
        Stats(),
        Stats(lower=Decimal("-2.25"), upper=Decimal("0.00")),
        Stats(all_null=True),
    ],
}
ARROW = {1: pa.int64(), 2: pa.string(), 3: pa.float64(), 4: pa.date32(), 5: pa.decimal128(9, 2)}

FILTERS = [
    "id = 5",
    "id < 6",
    "id <= 5",
    "id > 5",
    "id >= 9",
    "id != 5",
    "id in (2, 7)",
    "id not in (2, 7)",
    "id is null",
    "id is not null",
    "s starts with 'a'",
    "s starts with 'az'",
    "s starts with 'é'",
    "s not starts with 'a'",
    "s < 'b'",
    "s = 'ba'",
    "x > 1.5",
    "x >= 2.5",
    "x < 1",
    "x is nan",
    "x != 1.0",
    "d >= '2022-01-10'",
    "d < '2022-01-01'",
    "m > 3.5",
    "m = 4",
    "not (id < 3 or s = 'b')",
    "id < 3 and s starts with 'a' or x > 1.5",
]


def _columns(rows: list[Stats], arrow_type: pa.DataType) -> StatsColumns:
    def opt(values: list[bool | None]) -> np.ndarray:
        return np.array([v is False for v in values], dtype=bool)

    return StatsColumns(
        lower=comparable(pa.array([r.lower for r in rows], arrow_type)),
        upper=comparable(pa.array([r.upper for r in rows], arrow_type)),
        no_null=opt([r.may_null for r in rows]),
        all_null=np.array([r.all_null for r in rows], dtype=bool),
        no_nan=opt([r.may_nan for r in rows]),
    )


@pytest.mark.parametrize("text", FILTERS)
def test_vectorised_evaluation_equals_scalar_on_synthetic_stats(text: str) -> None:
    expr = push_not(bind(text, SCHEMA))
    columns = {fid: _columns(rows, ARROW[fid]) for fid, rows in ROWS.items()}
    got = evaluate_columns(expr, columns, 5)
    want = [evaluate(expr, {fid: rows[i] for fid, rows in ROWS.items()}).might_match for i in range(5)]
    assert got.tolist() == want


@pytest.mark.parametrize("text", ["x = 1.0", "x != 1.0", "x > 0", "x is nan", "x is null", "x in (1.0, 2.0)"])
def test_exact_values_with_nan_and_null(text: str) -> None:
    values = [1.0, math.nan, None, 2.0]
    expr = push_not(bind(text, SCHEMA))
    got = evaluate_columns(expr, {3: exact_stats(pa.array(values, pa.float64()))}, 4)
    want = [evaluate(expr, {3: value_stats(v)}).might_match for v in values]
    assert got.tolist() == want


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_plan_from_projected_entries_equals_one_from_whole_entries(
    scenario_locations: dict[str, Path], name: str
) -> None:
    projected, whole = icebook.open(scenario_locations[name]), icebook.open(scenario_locations[name])
    projected.store = ManifestStore(projected.fileio, projected.metadata, disk_cache=False)
    whole.store = ManifestStore(whole.fileio, whole.metadata, disk_cache=False)
    filters = [None, *(filter_text(*leaf) for leaf in LEAVES[name]), *COMPOUND[name]]
    for snapshot in projected.snapshots:
        for m in whole.store.manifest_list(snapshot):
            whole.store.entries(m)  # every column, so its plans read whole tables
        for text in filters:
            ours, reference = plan_scan(projected, snapshot, text), plan_scan(whole, snapshot, text)
            assert ours.task_count == reference.task_count, (snapshot.snapshot_id, text)
            assert ours.to_pandas().equals(reference.to_pandas()), (snapshot.snapshot_id, text)
            assert ours.explain() == reference.explain(), (snapshot.snapshot_id, text)
    # Without a filter a plan asks for no metric map of a data manifest (filters above widened the store's).
    projected.store = ManifestStore(projected.fileio, projected.metadata, disk_cache=False)
    for scan in plan_scan(projected, projected.snapshots[-1]).scans:
        if scan.manifest.content == 0:
            assert "lower_bounds" not in scan.entries.column_names, scan.manifest.manifest_path
