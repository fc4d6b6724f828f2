"""``Table.compare_plans`` on every scenario table: for predicates on partition source columns (identity and
transformed), data columns with statistics, nulls, strings, dates and timestamps, icebook's column equals
Spark's (the files of the Iceberg scan Spark plans), and every row where PyIceberg differs has a reason.

Predicates are made from each table's own values (the middle value of the column at the current state), so
they select some files and not others."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _support.conformance import spark_readable
from _support.java_oracle import java_table
from _support.predicates import predicates

import icebook
from icebook.analysis.scan.plan_items import Level
from icebook.analysis.scan.planner import plan_scan
from icebook.scenarios import SCENARIOS

pytestmark = pytest.mark.spark


JAVA_PREDICATES = [
    ("probe_id > 10", "greaterThan", "probe_id", 10),
    ("probe_id < 2", "lessThan", "probe_id", 2),
    ("seen_ns is null", "isNull", "seen_ns", None),
    ("seen_ns >= '2024-05-01T12:00:00'", "greaterThanOrEqual", "seen_ns", "2024-05-01T12:00:00"),
    ("seen_tz_ns < '2024-05-01T00:00:00+00:00'", "lessThan", "seen_tz_ns", "2024-05-01T00:00:00+00:00"),
]
"""(icebook filter, the same as an Iceberg Java ``Expressions`` call) on ``types_v3``'s columns."""


@pytest.mark.parametrize("name", [n for n, s in SCENARIOS.items() if not s.spark_reads])
def test_icebook_plans_what_the_java_api_plans_where_spark_cannot_read(
    spark: Any, scenario_locations: dict[str, Path], name: str
) -> None:
    t = icebook.open(str(scenario_locations[name]))
    java = java_table(spark, scenario_locations[name])
    expressions = spark._jvm.org.apache.iceberg.expressions.Expressions
    pruned = 0
    for text, call, column, value in JAVA_PREDICATES:
        args = (column,) if value is None else (column, value)
        tasks = java.newScan().filter(getattr(expressions, call)(*args)).planFiles()
        theirs: set[str] = set()
        iterator = tasks.iterator()
        while iterator.hasNext():
            theirs.add(str(iterator.next().file().location()))
        tasks.close()
        plan = plan_scan(t, t.current_snapshot, text)
        ours = {d.path for d in plan.decisions if d.level == Level.DATA_FILE and d.kept}
        assert ours == theirs, text
        pruned += len({d.path for d in plan.decisions if d.level == Level.DATA_FILE}) - len(ours)
    assert pruned, "no predicate pruned a file: the comparison would be vacuous"


@pytest.mark.parametrize("name", spark_readable(sorted(SCENARIOS)))
def test_icebook_plans_what_spark_plans(spark: Any, scenario_locations: dict[str, Path], name: str) -> None:
    t = icebook.open(str(scenario_locations[name]))
    if t.current_snapshot is None:
        pytest.fail(f"scenario {name} has no snapshot: nothing to plan")
    compared = 0
    for predicate in predicates(t):
        result = t.compare_plans(predicate)
        assert "spark" not in result.unavailable, result.unavailable
        frame = result.files
        assert frame["icebook"].equals(frame["spark"]), (predicate, result.summary())
        if "pyiceberg" in result.unavailable:
            assert "\n" not in result.unavailable["pyiceberg"]
        else:
            differs = frame["pyiceberg"] != frame["icebook"]
            assert (frame.loc[differs, "reason"] != "").all(), predicate
        compared += len(frame)
    assert compared
