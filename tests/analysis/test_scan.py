"""Scan planning: pruning by partition summaries, partition values and column bounds, delete matching
by sequence numbers, and the explain text that says why."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

import icebook
from icebook.analysis.expr.binding import bind
from icebook.analysis.expr.projection import project
from icebook.analysis.expr.pruning import Stats, evaluate, value_stats
from icebook.analysis.scan.planner import plan_scan
from icebook.spec.partitioning import PartitionField, PartitionSpec
from icebook.spec.schema import Schema
from icebook.spec.transforms import parse_transform
from icebook.spec.types import DATE, INT, LONG, STRING, TIMESTAMP, DecimalType, NestedField, StructType

SCHEMA = Schema(
    schema_id=0,
    fields=StructType(
        (
            NestedField(field_id=1, name="id", required=False, type=LONG),
            NestedField(field_id=2, name="ts", required=False, type=TIMESTAMP),
            NestedField(field_id=3, name="s", required=False, type=STRING),
            NestedField(field_id=4, name="d", required=False, type=DATE),
            NestedField(field_id=5, name="n", required=False, type=INT),
            NestedField(field_id=6, name="m", required=False, type=DecimalType(9, 2)),
        )
    ),
)


def _spec(*fields: tuple[int, str, str]) -> PartitionSpec:
    return PartitionSpec(
        spec_id=0,
        fields=tuple(
            PartitionField(source_id=s, source_ids=(s,), field_id=1000 + i, name=n, transform=parse_transform(t))
            for i, (s, n, t) in enumerate(fields)
        ),
    )


def _projected(text: str, spec: PartitionSpec) -> str:
    return str(project(bind(text, SCHEMA), spec).expr)


def test_inclusive_projection_through_transforms() -> None:
    assert _projected("id = 34", _spec((1, "b", "bucket[16]"))) == "b = 3"
    assert _projected("id > 34", _spec((1, "b", "bucket[16]"))) == "true"
    assert _projected("id in (34, 35)", _spec((1, "b", "bucket[16]"))).startswith("b in (")
    assert _projected("n < 10", _spec((5, "t", "truncate[10]"))) == "t <= 0"
    assert _projected("n >= 15", _spec((5, "t", "truncate[10]"))) == "t >= 10"
    assert _projected("s starts with 'abc'", _spec((3, "t", "truncate[2]"))) == "t = 'ab'"
    assert _projected("s starts with 'a'", _spec((3, "t", "truncate[2]"))) == "t starts with 'a'"
    assert _projected("s < 'abz'", _spec((3, "t", "truncate[2]"))) == "t <= 'ab'"
    assert _projected("m > 1.05", _spec((6, "t", "truncate[10]"))) == "t >= 1.00"
    assert _projected("d < '2024-03-01'", _spec((4, "mo", "month"))) == "mo <= 649"
    assert _projected("ts >= '2024-01-01 05:30:00'", _spec((2, "h", "hour"))) == f"h >= {473352 + 5}"
    assert _projected("ts > '2023-12-31 23:59:59.999999'", _spec((2, "y", "year"))) == "y >= 54"
    assert _projected("ts = '2024-01-05T10:00:00'", _spec((2, "dd", "day"))) == "dd = '2024-01-05'"
    assert _projected("id != 3", _spec((1, "i", "identity"))) == "i != 3"
    assert _projected("id != 3", _spec((1, "b", "bucket[4]"))) == "true"
    assert _projected("id is null or s = 'x'", _spec((1, "b", "bucket[4]"))) == "true"
    assert _projected("id is null and s = 'x'", _spec((1, "b", "bucket[4]"))) == "b is null"
    assert _projected("not (id is null)", _spec((1, "i", "identity"))) == "i is not null"


def test_inclusive_evaluation_of_bounds() -> None:
    e = bind("id = 5", SCHEMA)
    assert not evaluate(e, {1: Stats(lower=6, upper=9)}).might_match
    assert evaluate(e, {1: Stats(lower=1, upper=9)}).might_match
    assert evaluate(e, {}).might_match  # no stats: might match
    assert not evaluate(e, {1: Stats(all_null=True)}).might_match
    assert not evaluate(bind("id is null", SCHEMA), {1: Stats(may_null=False)}).might_match
    assert not evaluate(bind("id != 5", SCHEMA), {1: value_stats(5)}).might_match
    assert evaluate(bind("id != 5", SCHEMA), {1: Stats(lower=5, upper=5)}).might_match  # bounds are not exact
    assert not evaluate(bind("s starts with 'b'", SCHEMA), {3: Stats(lower="c", upper="d")}).might_match
    assert evaluate(bind("s starts with 'c'", SCHEMA), {3: Stats(lower="ca", upper="cz")}).might_match
    assert not evaluate(bind("m < 1.00", SCHEMA), {6: Stats(lower=Decimal("1.00"), upper=Decimal("3"))}).might_match
    verdict = evaluate(bind("id < 3 or id > 10", SCHEMA), {1: Stats(lower=4, upper=9)})
    assert not verdict.might_match and "lower bound" in verdict.reason and "upper bound" in verdict.reason


@pytest.mark.spark
def test_events_explain_shows_summary_bounds_and_sequence_reasons(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    snapshot = t.current_snapshot
    assert snapshot is not None
    plan = plan_scan(t, snapshot, "ts >= '2024-01-04' and region = 'eu'")
    text = plan.explain()
    assert "Partition filter for spec 1: (ts_day >= '2024-01-04' and region = 'eu')" in text
    # a manifest skipped by its partition summary
    assert "SKIP metadata/" in text and "partition summary region in ['apac', 'apac']" in text
    # data files skipped by partition value and by column bounds
    assert "region = 'eu': partition value region = 'us'" in text
    assert "ts >= '2024-01-04T00:00Z': column stats upper bound ts = '2024-01-02T08:30Z'" in text
    # delete files: the sequence-number rule, both ways
    assert "delete seq 5 >= data seq 3: applies" in text
    full = plan_scan(t, snapshot).explain()
    assert "delete seq 5 >= data seq 1: applies" in full
    assert "delete seq 5 >= data seq 5, but its file_path bounds exclude this file: does not apply" in full
    df = plan.to_pandas()
    assert {"manifest", "data file", "delete file", "delete match"} <= set(df["level"])
    skipped = df[~df["kept"] & (df["level"] != "delete match")]
    assert len(skipped) == len(plan.skipped) and len(plan.skipped) > 0
    assert all(plan.skipped[i].reason for i in range(len(plan.skipped)))
    assert len(plan.tasks) == 3


@pytest.mark.spark
def test_equality_delete_scope_rules(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["equality_deletes"])
    snapshot = t.current_snapshot
    assert snapshot is not None
    plan = plan_scan(t, snapshot)
    text = plan.explain()
    assert "global (unpartitioned) delete, delete seq 3 > data seq 1: applies" in text
    assert "global (unpartitioned) delete, delete seq 3 <= data seq 5: does not apply" in text
    assert "delete seq 6 <= data seq 6: does not apply" in text  # the upsert's own row survives
    assert "delete seq 6 > data seq 2: applies" in text
    by_file = {task.file.file_path: task for task in plan.tasks}
    spec0 = [task for task in by_file.values() if task.file.spec_id == 0]
    assert spec0 and all(
        {d.file_path.rsplit("/", 1)[-1] for d in task.equality_deletes} == {"global-eq-deletes.parquet"}
        for task in spec0
    )  # the partition-scoped delete (spec 1) never reaches spec-0 files
    eu = [task for task in by_file.values() if task.file.partition == (("region", "eu"),)]
    assert any("eu-names-eq-deletes.parquet" in d.file_path for task in eu for d in task.deletes)


@pytest.mark.spark
def test_dv_matching_v3(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["dv_v3"])
    snapshot = t.current_snapshot
    assert snapshot is not None
    plan = plan_scan(t, snapshot)
    with_dv = [task for task in plan.tasks if task.deletion_vectors]
    assert with_dv
    for task in with_dv:
        assert all(dv.referenced_data_file == task.file.file_path for dv in task.deletion_vectors)
        assert len(task.deletion_vectors) == 1  # the newer vector replaced the older one
    assert "deletion vector" in plan.explain()


@pytest.mark.spark
@pytest.mark.parametrize(
    ("name", "text", "skips"),
    [
        ("orders_cow", "order_date >= '2024-03-01'", True),
        ("legacy_v1", "sku starts with 'ab'", True),
        ("dv_v3", "reading_id > 1000", True),
        ("events", "event_id is null", True),
    ],
)
def test_pruning_happens_on_every_kind_of_table(
    scenario_locations: dict[str, Path], name: str, text: str, skips: bool
) -> None:
    t = icebook.open(scenario_locations[name])
    snapshot = t.current_snapshot
    assert snapshot is not None
    plan = plan_scan(t, snapshot, text)
    assert bool(plan.skipped) == skips, plan.explain()


@pytest.mark.spark
def test_partition_summary_without_bounds_is_not_all_null(scenario_locations: dict[str, Path]) -> None:
    from dataclasses import replace

    from icebook.analysis.scan.planner import partition_summary_stats
    from icebook.spec.manifest import PartitionFieldSummary

    t = icebook.open(scenario_locations["events"])
    snapshot = t.current_snapshot
    assert snapshot is not None
    m = next(m for m in t.store.manifest_list(snapshot) if m.partition_spec_id == 0)
    region = bind("region = 'eu'", t.metadata.current_schema())
    spec_filter = project(region, t.metadata.spec_by_id(0)).expr
    cases = {
        # "lower_bound: null if all values are null or NaN": with contains_null false, bounds were omitted
        (False, None): True,
        (True, b"\xff"): True,  # an undecodable bound loses pruning, never rows
        (True, None): False,  # every value null: no row has region = 'eu'
    }
    for (contains_null, raw), might_match in cases.items():
        summary = PartitionFieldSummary(contains_null=contains_null, lower_bound=raw, upper_bound=raw)
        stats = partition_summary_stats(t.metadata, replace(m, partitions=(summary,)))
        assert evaluate(spec_filter, stats).might_match == might_match, (contains_null, raw)
