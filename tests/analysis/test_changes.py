"""Row-level changelog: equal to Spark's create_changelog_view on copy-on-write orders_cow, and to the
difference of Spark's snapshot reads on tables with delete files (which Spark's changelog refuses)."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import icebook
from icebook.analysis.history.changes import changes, snapshot_path
from icebook.engines.arrow import read_live_rows
from icebook.errors import NotFound
from icebook.scenarios import SCENARIOS

pytestmark = pytest.mark.spark


def _norm(v: Any) -> Any:
    if v is None or (isinstance(v, float) and v != v):
        return None
    if isinstance(v, pd.Timestamp):
        v = v.to_pydatetime()
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(dt.UTC).replace(tzinfo=None)  # Spark's toPandas gives naive UTC wall times
    if isinstance(v, Decimal):
        return v.normalize()
    if hasattr(v, "item"):
        return v.item()
    return v


def _bag(df: pd.DataFrame, columns: list[str]) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(_norm(v) for v in row) for row in df[columns].itertuples(index=False, name=None))


def test_changes_equal_spark_changelog_view_on_copy_on_write(spark: Any, scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["orders_cow"])
    snaps = t.snapshots
    current = t.current_snapshot
    assert current is not None
    for start in (None, snaps[0].snapshot_id, snaps[2].snapshot_id):
        options = f"'end-snapshot-id', '{current.snapshot_id}'"
        if start is not None:
            options = f"'start-snapshot-id', '{start}', " + options
        view = spark.sql(
            f"CALL lake.system.create_changelog_view(table => 'db.orders_cow', options => map({options}))"
        ).collect()[0][0]
        theirs = spark.sql(f"SELECT * FROM {view}").toPandas()
        ours = changes(t, start, current, read=read_live_rows)
        assert list(ours.columns) == list(theirs.columns)
        columns = list(theirs.columns)
        assert _bag(ours, columns) == _bag(theirs, columns), f"from {start}"
        assert set(ours["_change_type"]) <= {"INSERT", "DELETE"}


def _spark_rows(spark: Any, table: str, snapshot_id: int | None, columns: list[str]) -> Counter[tuple[Any, ...]]:
    if snapshot_id is None:
        return Counter()
    df = spark.sql(f"SELECT {', '.join(columns)} FROM {table} VERSION AS OF {snapshot_id}").toPandas()
    return _bag(df, columns)


@pytest.mark.parametrize(
    ("name", "columns"),
    [
        ("events", ["event_id", "ts", "region", "amount"]),
        ("dv_v3", ["reading_id", "sensor", "reading", "taken_at"]),
        ("equality_deletes", ["id", "region", "name", "qty"]),
    ],
)
def test_changes_with_delete_files_equal_snapshot_differences(
    spark: Any, scenario_locations: dict[str, Path], name: str, columns: list[str]
) -> None:
    t = icebook.open(scenario_locations[name])
    current = t.current_snapshot
    assert current is not None
    ours = changes(t, None, current, read=read_live_rows)
    path = snapshot_path(t, None, current)
    assert sorted(set(ours["_change_ordinal"])) == sorted(
        {i for i, s in enumerate(path) if s.operation != "replace"} & set(ours["_change_ordinal"])
    )
    table = SCENARIOS[name].table
    for ordinal, snap in enumerate(path):
        before = _spark_rows(spark, table, snap.parent_snapshot_id, columns)
        after = _spark_rows(spark, table, snap.snapshot_id, columns)
        mine = ours[ours["_change_ordinal"] == ordinal]
        assert set(mine["_commit_snapshot_id"]) <= {snap.snapshot_id}
        deleted = _bag(mine[mine["_change_type"] == "DELETE"], columns)
        inserted = _bag(mine[mine["_change_type"] == "INSERT"], columns)
        assert deleted - inserted == before - after, f"{name} {snap.snapshot_id} ({snap.operation}) deletes"
        assert inserted - deleted == after - before, f"{name} {snap.snapshot_id} ({snap.operation}) inserts"
    assert (ours["_change_type"] == "DELETE").any()


def test_update_pairs_with_identifier_columns(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["equality_deletes"])
    snaps = t.snapshots
    upsert = next(s for s in snaps if s.operation == "overwrite")
    assert upsert.parent_snapshot_id is not None
    out = changes(t, upsert.parent_snapshot_id, upsert, read=read_live_rows, identifier_columns=["id"])
    kinds = dict(zip(out["_change_type"], out["qty"], strict=True))
    assert kinds == {"UPDATE_BEFORE": 4, "UPDATE_AFTER": 40}


def test_changes_need_an_ancestor(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    audit = t.snapshot("audit")
    main = t.current_snapshot
    assert main is not None
    with pytest.raises(NotFound, match="not an ancestor"):
        changes(t, audit, main, read=read_live_rows)
