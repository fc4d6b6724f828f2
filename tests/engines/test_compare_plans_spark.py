"""``Table.compare_plans`` on every scenario table: for predicates on partition source columns (identity and
transformed), data columns with statistics, nulls, strings, dates and timestamps, icebook's column equals
Spark's (the files of the Iceberg scan Spark plans), and every row where PyIceberg differs has a reason.

Predicates are made from each table's own values (the middle value of the column at the current state), so
they select some files and not others."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _support.predicates import predicates

import icebook
from icebook.scenarios import SCENARIOS

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("name", sorted(SCENARIOS))
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
