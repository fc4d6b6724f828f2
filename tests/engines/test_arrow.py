"""The Arrow engine reads every snapshot of every scenario table exactly as Spark does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from _arrow_compare import assert_same, spark_arrow
from _support.java_oracle import java_rows

import icebook
from icebook.engines.arrow import read, read_live_rows
from icebook.errors import NotFound
from icebook.io.fileio import ArrowFileIO
from icebook.scenarios import SCENARIOS
from icebook.table.opening import open_table

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_snapshot_reads_like_spark(spark: Any, scenario_locations: dict[str, Path], name: str) -> None:
    t = icebook.open(scenario_locations[name])
    assert t.snapshots
    for snapshot in t.snapshots:
        ours = read(t, snapshot)
        if SCENARIOS[name].spark_reads:
            theirs = spark_arrow(spark, f"SELECT * FROM {SCENARIOS[name].table} VERSION AS OF {snapshot.snapshot_id}")
        else:  # a type Spark lacks: Iceberg's Java reader is the reference
            theirs = java_rows(spark, scenario_locations[name], snapshot.snapshot_id)
        assert_same(ours, theirs, f"{name} @ {snapshot.snapshot_id} ({snapshot.operation})")


# Spark 4.1 cannot read every v3 scenario (Scenario.spark_reads: types_v3's nanosecond timestamps): for those,
# Iceberg's Java reader is the reference.
V3_TABLES = sorted(name for name, s in SCENARIOS.items() if s.claims.format_version == 3)
LINEAGE = ["_row_id", "_last_updated_sequence_number"]


@pytest.mark.parametrize("name", V3_TABLES)
def test_every_snapshot_reads_row_lineage_like_spark(
    spark: Any, scenario_locations: dict[str, Path], name: str
) -> None:
    # Spark's metadata columns on the table itself, at each snapshot, beside every column.
    t = icebook.open(scenario_locations[name])
    for snapshot in t.snapshots:
        schema = t.read_schema(snapshot.snapshot_id)
        columns = [*LINEAGE, *(f.name for f in schema.columns)]
        ours = read(t, snapshot, columns=columns, schema=schema)
        # Spark reads every column: Iceberg 1.12 fails on shredded variant files read without their column.
        query = f"SELECT {', '.join(LINEAGE)}, * FROM {SCENARIOS[name].table} VERSION AS OF {snapshot.snapshot_id}"
        if SCENARIOS[name].spark_reads:
            theirs = spark_arrow(spark, query)
        else:  # a type Spark lacks: Iceberg's Java reader, with the lineage columns, is the reference
            theirs = java_rows(spark, scenario_locations[name], snapshot.snapshot_id, lineage=True)
        assert_same(ours, theirs, f"{name} @ {snapshot.snapshot_id} ({snapshot.operation})")


def test_refs_read_like_spark(spark: Any, scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    for ref in ("audit", "release-2024-01", "main"):
        theirs = spark_arrow(spark, f"SELECT * FROM {SCENARIOS['events'].table} VERSION AS OF '{ref}'")
        assert_same(read(t, t.snapshot(ref)), theirs, f"events @ {ref}")


def test_schema_evolution_by_field_id(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    first, last = t.snapshots[0], t.current_snapshot
    assert last is not None
    old = read(t, first)
    assert old.column_names == ["event_id", "ts", "region", "kind", "payload", "amount"]
    new = read(t, last)
    # payload renamed to page (same field id), kind dropped, device added (null in old files)
    assert new.column_names == ["event_id", "ts", "region", "page", "amount", "device"]
    by_id = {r["event_id"]: r for r in new.to_pylist()}
    assert by_id[1]["page"] == "home" and by_id[1]["device"] is None
    assert by_id[14]["device"] == "ios"
    assert new.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    assert new.schema.field("amount").type == pa.decimal128(10, 2)
    assert not new.schema.field("event_id").nullable


def test_columns_projection_keeps_requested_order(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    out = read(t, t.current_snapshot, columns=["device", "event_id"])  # type: ignore[arg-type]
    assert out.column_names == ["device", "event_id"]
    assert out.num_rows == read(t, t.current_snapshot).num_rows  # type: ignore[arg-type]


def test_equality_deletes_follow_sequence_numbers(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["equality_deletes"])
    rows = {(r["id"], r["region"], r["name"]): r["qty"] for r in read(t, t.current_snapshot).to_pylist()}  # type: ignore[arg-type]
    assert (2, "eu", "bob") in rows and rows[(2, "eu", "bob")] == 9  # appended after the global delete of id 2
    assert (8, "eu", "gus") not in rows  # global delete reaches the spec-1 file
    assert not any(k[0] is None for k in rows)  # null-safe equality deleted the null id
    assert (5, "us", "x") in rows and (11, "apac", "x") in rows  # partition-scoped delete: eu only
    assert (10, "eu", "x") not in rows and (12, "eu", "x") in rows
    assert rows[(6, "us", "eve")] == 40  # upsert: the delete does not apply to its own commit's row


def test_live_rows_carry_file_and_position(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["dv_v3"])
    live = read_live_rows(t, t.current_snapshot)  # type: ignore[arg-type]
    assert live.column_names[-2:] == ["_file", "_pos"]
    assert live.num_rows == read(t, t.current_snapshot).num_rows  # type: ignore[arg-type]
    pairs = set(zip(live.column("_file").to_pylist(), live.column("_pos").to_pylist(), strict=True))
    assert len(pairs) == live.num_rows


class MissingFileIO(ArrowFileIO):
    """A FileIO that pretends some paths do not exist (the shared warehouse is never touched)."""

    def __init__(self, missing: set[str]) -> None:
        super().__init__()
        self.missing = missing

    def open_input(self, path: str) -> Any:
        if path in self.missing:
            raise NotFound(f"file not found: {path}")
        return super().open_input(path)

    def exists(self, path: str) -> bool:
        return path not in self.missing and super().exists(path)


@pytest.mark.parametrize(
    ("name", "kind"),
    [("events", "data"), ("events", "position"), ("equality_deletes", "equality"), ("dv_v3", "dv")],
)
def test_missing_file_is_not_found_naming_it(scenario_locations: dict[str, Path], name: str, kind: str) -> None:
    plain = icebook.open(scenario_locations[name])
    snapshot = plain.current_snapshot
    assert snapshot is not None
    plan = plain.inspect.files()
    if kind == "data":
        victim = plan[plan["content"] == 0]["file_path"].iloc[0]
    elif kind == "dv":
        victim = plan[plan["file_format"] == "PUFFIN"]["file_path"].iloc[0]
    else:
        content = 1 if kind == "position" else 2
        victim = plan[(plan["content"] == content) & (plan["file_format"] == "PARQUET")]["file_path"].iloc[0]
    t = open_table(str(scenario_locations[name]), fileio=MissingFileIO({victim}))
    with pytest.raises(NotFound) as info:
        read(t, t.snapshot(snapshot.snapshot_id))
    assert victim in str(info.value)
    assert "nothing was returned" in str(info.value)
