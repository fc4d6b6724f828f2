"""The columnar planner equals the scalar rules it vectorises, on every manifest and file of every
snapshot of every scenario table:

- file verdicts (partition values, then column bounds and counts) and manifest verdicts (partition
  summaries) of ``pruning_arrow.evaluate_columns`` equal ``pruning.evaluate`` row by row;
- the delete index's join (``match_deletes_columns``) applies exactly the delete files that
  ``plan_items.delete_matches`` (the scope rules one data file at a time, in words) applies, and considers the
  same ones; its statistics rule in columns (``DeleteJoin.disjoint``) rules out exactly the equality
  deletes that ``equality_disjoint`` (the same rule over ``pruning.Stats``, in words) rules out;
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
from _support.filters import COMPOUND, LEAVES, filter_text

import icebook
from icebook.analysis.expr.binding import bind
from icebook.analysis.expr.nodes import push_not, referenced_ids
from icebook.analysis.expr.pruning import Stats, evaluate, value_stats
from icebook.analysis.expr.pruning_arrow import StatsColumns, comparable, evaluate_columns, exact_stats
from icebook.analysis.scan.columns import row_column_stats
from icebook.analysis.scan.delete_index import (
    EQUALITY,
    GLOBAL_EQUALITY,
    equality_disjoint,
)
from icebook.analysis.scan.plan_items import Evidence, Level, ScanFile, delete_matches
from icebook.analysis.scan.planner import (
    partition_summary_stats,
    partition_value_stats,
    plan_scan,
)
from icebook.analysis.scan.tasks import files_at
from icebook.analysis.store.manifests import ManifestStore
from icebook.scenarios import SCENARIOS
from icebook.spec.manifest import FileContent
from icebook.spec.schema import Schema
from icebook.spec.types import DATE, DOUBLE, LONG, STRING, DecimalType, NestedField, StructType


@pytest.mark.spark
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


@pytest.mark.spark
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_delete_join_equals_the_scope_rules(scenario_locations: dict[str, Path], name: str) -> None:
    t = icebook.open(scenario_locations[name])
    for snapshot in t.snapshots:
        for text in (None, *COMPOUND[name][:2]):
            plan = plan_scan(t, snapshot, text)
            kept = [d.file for d in plan.decisions if d.kept and d.file is not None]
            data = [f for f in kept if f.content == FileContent.DATA]
            deletes = [f for f in kept if f.content != FileContent.DATA]
            unpartitioned = {s for s, spec in t.metadata.partition_specs.items() if spec.is_unpartitioned}
            expected = {f.file_path: delete_matches(f, deletes, unpartitioned) for f in data}
            tasks = plan.tasks
            assert [task.file for task in tasks] == data
            for got in tasks:
                want = expected[got.file.file_path]
                assert got.deletes == tuple(m.delete for m in want if m.applies), (snapshot.snapshot_id, got.file)
                assert [(m.delete, m.applies, m.reason) for m in got.matches] == [
                    (m.delete, m.applies, m.reason) for m in want
                ]
            applied = {
                path: frozenset(m.delete.file_path for m in want if m.applies) for path, want in expected.items()
            }
            assert plan.applied_deletes() == applied
            assert plan.delete_file_count == len(frozenset().union(*applied.values()))
            assert plan.explain_line_count() == len(plan.explain().splitlines())


@pytest.mark.spark
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_equality_statistics_rule_in_columns_equals_it_in_words(scenario_locations: dict[str, Path], name: str) -> None:
    """Every equality delete the scope rules apply to every data file of every snapshot: the columnar
    statistics rule and the one in words agree, and ``reference_tasks`` attaches the rest."""
    t = icebook.open(scenario_locations[name])
    schema = t.metadata.current_schema()
    checked = ruled_out = 0
    for snapshot in t.snapshots:
        plan = plan_scan(t, snapshot, equality_stats=True)
        join = plan.join
        assert join is not None and join.disjoint is not None
        deletes: dict[int, ScanFile] = {}
        for p in np.flatnonzero(join.applies & np.isin(join.kind, [EQUALITY, GLOBAL_EQUALITY])):
            d, x = int(join.data_index[p]), int(join.delete_index[p])
            if x not in deletes:
                deletes[x] = files_at(plan, join.deletes, np.array([x]))[0]
            fields = [f for i in deletes[x].equality_ids or () if (f := schema.find_field(i)) is not None]
            ids = {f.field_id for f in fields}
            words = equality_disjoint(join.data.stats(d, schema, ids), join.deletes.stats(x, schema, ids), fields)
            assert (words is not None) == bool(join.disjoint[p]), (snapshot.snapshot_id, p, words)
            checked += 1
            ruled_out += words is not None
        for task, reference in zip(plan.tasks, plan.reference_tasks, strict=True):
            assert reference.file == task.file and reference.candidates == task.candidates
            assert reference.deletes == tuple(d for d in task.deletes if d.file_path not in reference.ruled_out)
            not_attached = [m for m in reference.matches if m.delete.file_path in reference.ruled_out]
            assert all(not m.applies and "column statistics rule it out" in m.reason for m in not_attached)
    if name == "equality_deletes":  # statistics rule some of this scenario's deletes out
        assert checked and ruled_out, (checked, ruled_out)


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


@pytest.mark.spark
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
    data_manifests = 0
    for scan in plan_scan(projected, projected.snapshots[-1]).scans:
        if scan.manifest.content == 0:
            assert "lower_bounds" not in scan.entries.column_names, scan.manifest.manifest_path
            data_manifests += 1
    assert data_manifests, f"{name}: the plan read no data manifest, no column set was checked"
