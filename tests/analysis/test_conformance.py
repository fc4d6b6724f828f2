"""Conformance: icebook's metadata tables equal Spark's, for every snapshot of every scenario table.

Spark's Iceberg runtime is the reference implementation. Rows are compared as multisets after
normalising representation only (timestamps to epoch microseconds, missing values to None,
maps to dicts); values themselves are never adjusted.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
from _support.conformance import assert_same, spark_rows

import icebook
from icebook.scenarios import SCENARIOS

pytestmark = pytest.mark.spark

# Iceberg 1.10.2's Spark metadata tables fail on readable_metrics of a uuid column (ClassCastException:
# UUID to CharSequence in MetricsUtil), so for tables with one that column is not compared.
# Iceberg 1.12's Spark metadata tables fail on readable_metrics of a geometry or geography column with bounds
# (IllegalStateException "Unknown type for binary field ... GeospatialBound" in StructInternalRow); icebook
# shows those bounds as WKB points.
SPARK_FAILS_ON_METRICS = {"file_formats", "geo_v3"}
# Iceberg 1.10.2's position_deletes table fails on this table's delete files (ValidationException
# "Invalid partition field parent" in PositionDeletesRowReader), so Spark has no answer to compare with.
SPARK_FAILS_ON_POSITION_DELETES = {"file_formats"}
# Spark 4.1 cannot read some v3 tables at all, their metadata tables included (Scenario.spark_reads: types_v3's
# nanosecond timestamps); Iceberg's Java API is their reference (tests/_support/java_oracle.py).
SPARK_READ = [name for name, scenario in SCENARIOS.items() if scenario.spark_reads]


@pytest.fixture(scope="module")
def tables(scenario_locations: dict[str, Path]) -> dict[str, icebook.table.Table]:
    return {name: icebook.open(str(path)) for name, path in scenario_locations.items()}


@pytest.mark.parametrize("name", SPARK_READ)
def test_table_level_metadata_tables(spark: Any, tables: dict[str, Any], name: str) -> None:
    t = tables[name]
    fq = SCENARIOS[name].table
    for method in (
        "snapshots",
        "history",
        "refs",
        "metadata_log_entries",
        "all_manifests",
        "all_entries",
        "all_files",
        "all_data_files",
        "all_delete_files",
    ):
        ours = getattr(t.inspect, method)()
        select = "*"
        if name in SPARK_FAILS_ON_METRICS and "readable_metrics" in ours.columns:
            ours = ours.drop(columns=["readable_metrics"])
            select = ", ".join(ours.columns)
        columns, theirs = spark_rows(spark, f"SELECT {select} FROM {fq}.{method}")
        assert_same(ours, columns, theirs, f"{name}.{method}")


@pytest.mark.parametrize("name", SPARK_READ)
def test_snapshot_level_metadata_tables_at_every_snapshot(spark: Any, tables: dict[str, Any], name: str) -> None:
    t = tables[name]
    fq = SCENARIOS[name].table
    assert t.snapshots
    for snapshot in t.snapshots:
        sid = snapshot.snapshot_id
        methods = ["manifests", "entries", "files", "data_files", "delete_files", "partitions", "position_deletes"]
        if name in SPARK_FAILS_ON_POSITION_DELETES:
            methods.remove("position_deletes")
        for method in methods:
            ours = getattr(t.inspect, method)(at=sid)
            select = "*"
            if name in SPARK_FAILS_ON_METRICS and "readable_metrics" in ours.columns:
                ours = ours.drop(columns=["readable_metrics"])
                select = ", ".join(ours.columns)
            columns, theirs = spark_rows(spark, f"SELECT {select} FROM {fq}.{method} VERSION AS OF {sid}")
            assert_same(ours, columns, theirs, f"{name}.{method}@{sid}")


def test_refs_resolve_like_spark(spark: Any, tables: dict[str, Any]) -> None:
    # Spark 3.5 cannot read `files VERSION AS OF '<branch>'` on this table (it projects the branch with
    # the current schema and fails on the dropped column), so refs are resolved through Spark's refs table.
    t = tables["events"]
    spark_refs = {r.name: r.snapshot_id for r in spark.sql("SELECT * FROM lake.db.events.refs").collect()}
    assert set(spark_refs) == {"main", "audit", "release-2024-01"}
    for ref, sid in spark_refs.items():
        assert t.snapshot(ref).snapshot_id == sid
        columns, theirs = spark_rows(spark, f"SELECT * FROM lake.db.events.files VERSION AS OF {sid}")
        assert_same(t.inspect.files(at=ref), columns, theirs, f"events.files@{ref}")


def test_time_travel_as_of_time_matches_spark(spark: Any, tables: dict[str, Any]) -> None:
    # The snapshot icebook picks for a time reads exactly the rows Spark reads TIMESTAMP AS OF that time.
    t = tables["events"]
    for entry in t.metadata.snapshot_log:
        when = dt.datetime.fromtimestamp(entry.timestamp_ms / 1000, dt.UTC)
        stamp = when.strftime("%Y-%m-%d %H:%M:%S.%f")
        ours = t.snapshot(when)
        assert ours.snapshot_id == entry.snapshot_id
        assert t.snapshot(when.isoformat()).snapshot_id == entry.snapshot_id
        by_time = spark.sql(f"SELECT event_id FROM lake.db.events TIMESTAMP AS OF '{stamp}'").collect()
        by_id = spark.sql(f"SELECT event_id FROM lake.db.events VERSION AS OF {ours.snapshot_id}").collect()
        assert sorted(r.event_id for r in by_time) == sorted(r.event_id for r in by_id)
