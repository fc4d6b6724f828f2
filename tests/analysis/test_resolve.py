"""``at``: one parser turns user text and values into a typed point; every bad ``at`` is one clear line."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

import icebook
from icebook.analysis.resolve import (
    AtError,
    AtRef,
    AtSnapshot,
    AtTime,
    parse_at,
    snapshot_id_from_text,
)
from icebook.errors import IcebookError, NotFound

REFS = ("main", "audit", "2024-01-05", "123")


@pytest.mark.parametrize(
    ("at", "expected"),
    [
        (None, None),
        (42, AtSnapshot(42)),
        ("42", AtSnapshot(42)),
        (" -7 ", AtSnapshot(-7)),
        ("+9", AtSnapshot(9)),
        ("123", AtSnapshot(123)),  # a whole number is an id first, as Spark's VERSION AS OF reads it
        (AtRef("123"), AtRef("123")),  # ... so a ref with a numeric name is asked for by type
        ("audit", AtRef("audit")),
        ("2024-01-05", AtRef("2024-01-05")),  # a ref name wins over the time it looks like
        ("2024-01-06", AtTime(1704499200000)),
        ("2024-01-06T01:00:00Z", AtTime(1704502800000)),
        ("2024-01-06T02:00:00+01:00", AtTime(1704502800000)),
        (dt.date(2024, 1, 6), AtTime(1704499200000)),
        (dt.datetime(2024, 1, 6, 1, tzinfo=dt.UTC), AtTime(1704502800000)),
        (AtTime(5), AtTime(5)),
    ],
)
def test_parse_at(at: Any, expected: Any) -> None:
    assert parse_at(at, REFS) == expected


@pytest.mark.parametrize(
    ("at", "error", "message"),
    [
        ("²", NotFound, "no branch, tag or snapshot named '²'"),  # '²'.isdigit() is True, int('²') fails
        ("٣", NotFound, "no branch, tag or snapshot named '٣'"),
        ("99999999999999999999", NotFound, "no branch, tag or snapshot named '99999999999999999999'"),
        ("nope", NotFound, "no branch, tag or snapshot named 'nope'; available: 123, 2024-01-05, audit, main"),
        ("", AtError, "an empty text is not a snapshot id, branch, tag or ISO-8601 time"),
        ("   ", AtError, "an empty text"),
        (True, AtError, "True is not a snapshot id"),
        (1.5, AtError, "1.5 (float) is not a snapshot id"),
        ([1], AtError, "[1] (list) is not a snapshot id"),
    ],
)
def test_bad_at_is_one_line(at: Any, error: type[IcebookError], message: str) -> None:
    with pytest.raises(error) as info:
        parse_at(at, REFS)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_snapshot_id_from_text() -> None:
    assert snapshot_id_from_text("9223372036854775807") == 2**63 - 1
    assert snapshot_id_from_text("9223372036854775808") is None  # beyond a long
    assert snapshot_id_from_text("1e3") is None
    assert snapshot_id_from_text("0x10") is None
    assert snapshot_id_from_text("²") is None


@pytest.mark.spark
def test_every_table_entry_point_reads_at_the_same_way(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    audit = t.refs["audit"].snapshot_id
    first = t.snapshots[0]
    assert t.snapshot(str(audit)) == t.snapshot(audit) == t.snapshot(AtSnapshot(audit)) == t.snapshot("audit")
    assert t.spark_point("audit").branch == "audit"
    assert t.spark_point(str(audit)).snapshot_id == audit
    when = dt.datetime.fromtimestamp(first.timestamp_ms / 1000, dt.UTC)
    assert t.spark_point(when.isoformat()).as_of_timestamp_ms == first.timestamp_ms
    assert t.snapshot(when) == first
    assert t.inspect.files(at=str(first.snapshot_id)).equals(t.inspect.files(at=first.snapshot_id))
    for bad in ("²", "", True):
        for entry_point in (t.snapshot, t.spark_point, t.manage.rollback, t.scan, t.inspect.files, t.tree):
            with pytest.raises(IcebookError) as info:
                entry_point(bad)
            assert "\n" not in str(info.value), entry_point
