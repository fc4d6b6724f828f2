"""Filtered reads equal Spark's ``WHERE`` on the same snapshot, with pruning in play."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _arrow_compare import assert_same, spark_arrow

import icebook
from icebook.analysis.scan.planner import plan_scan
from icebook.engines.arrow import read
from icebook.scenarios import SCENARIOS

pytestmark = pytest.mark.spark

# (table, icebook filter, Spark WHERE clause)
FILTERS = [
    ("events", "ts >= '2024-01-04' and region = 'eu'", "ts >= TIMESTAMP '2024-01-04 00:00:00' AND region = 'eu'"),
    ("events", "event_id in (1, 2, 3) or not (page is null)", "event_id IN (1, 2, 3) OR NOT (page IS NULL)"),
    ("events", "page starts with 'se'", "startswith(page, 'se')"),
    ("events", "device is null", "device IS NULL"),
    ("events", "device != 'ios'", "device != 'ios'"),
    ("events", "amount > 2.5 and amount <= 11", "amount > 2.5 AND amount <= 11"),
    ("events", "not (region in ('us', 'eu'))", "NOT (region IN ('us', 'eu'))"),
    ("events", "ts < '2024-01-02T00:00:00Z' or event_id > 14", "ts < TIMESTAMP '2024-01-02 00:00:00' OR event_id > 14"),
    ("orders_cow", "order_date >= '2024-03-01'", "order_date >= DATE '2024-03-01'"),
    (
        "orders_cow",
        "order_date < '2024-02-11' and status = 'placed'",
        "order_date < DATE '2024-02-11' AND status = 'placed'",
    ),
    ("legacy_v1", "sku starts with 'ab'", "startswith(sku, 'ab')"),
    ("legacy_v1", "sku < 'cd-150' and in_stock = true", "sku < 'cd-150' AND in_stock = true"),
    ("legacy_v1", "price >= 12 or qty = 0", "price >= 12 OR qty = 0"),
    ("dv_v3", "reading_id > 30 and sensor = 'north'", "reading_id > 30 AND sensor = 'north'"),
    ("dv_v3", "taken_at >= '2024-05-01 00:00:30'", "taken_at >= TIMESTAMP_NTZ '2024-05-01 00:00:30'"),
    ("dv_v3", "reading not in (1.5, 3.0)", "reading NOT IN (1.5, 3.0)"),
    ("equality_deletes", "name = 'x'", "name = 'x'"),
    ("equality_deletes", "id is null or qty >= 5", "id IS NULL OR qty >= 5"),
    ("equality_deletes", "region = 'eu' and id < 10", "region = 'eu' AND id < 10"),
]


@pytest.mark.parametrize(("name", "ours", "where"), FILTERS, ids=[f"{f[0]}: {f[1]}" for f in FILTERS])
def test_filter_equals_spark_where(
    spark: Any, scenario_locations: dict[str, Path], name: str, ours: str, where: str
) -> None:
    t = icebook.open(scenario_locations[name])
    compared = []
    for snapshot in (t.snapshots[len(t.snapshots) // 2], t.current_snapshot):
        assert snapshot is not None
        sid = snapshot.snapshot_id
        schema_names = {f.name for f in t.metadata.schemas[snapshot.schema_id or 0].columns}
        if not all(word in schema_names for word in _columns_in(ours)):
            continue  # the column did not exist yet at this snapshot
        theirs = spark_arrow(spark, f"SELECT * FROM {SCENARIOS[name].table} VERSION AS OF {sid} WHERE {where}")
        assert_same(read(t, snapshot, ours), theirs, f"{name} @ {sid} WHERE {where}")
        compared.append(sid)
    assert compared, f"{name}: no snapshot read has the columns of {ours!r}, so nothing was compared"


def _columns_in(text: str) -> list[str]:
    from icebook.analysis.expr.nodes import referenced_names
    from icebook.analysis.expr.parser import parse_filter

    return referenced_names(parse_filter(text))


def test_filter_columns_need_not_be_selected(spark: Any, scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    ours = read(t, t.current_snapshot, "region = 'us' and device is null", ["event_id"])  # type: ignore[arg-type]
    theirs = spark_arrow(
        spark, f"SELECT event_id FROM {SCENARIOS['events'].table} WHERE region = 'us' AND device IS NULL"
    )
    assert_same(ours, theirs, "projection without filter columns")


def test_pruned_plan_reads_fewer_files(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    snapshot = t.current_snapshot
    assert snapshot is not None
    assert len(plan_scan(t, snapshot, "region = 'apac'").tasks) < len(plan_scan(t, snapshot).tasks)
