"""Conformance: icebook's metadata tables equal Spark's, for every snapshot of every scenario table.

Spark's Iceberg runtime is the reference implementation. Rows are compared as multisets after
normalising representation only (timestamps to epoch microseconds, missing values to None,
maps to dicts); values themselves are never adjusted.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _support.conformance import assert_same, norm, spark_readable, spark_rows, without_bounds
from _support.java_oracle import java_file_facts, java_table

import icebook
from icebook.scenarios import SCENARIOS
from icebook.spec.types import GeoType

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


JAVA_HELD = ["geo_v3", *(n for n, s in SCENARIOS.items() if not s.spark_reads)]
"""Scenarios whose ``files`` Spark cannot (wholly) show: geometry bounds, or a table Spark cannot read."""


def _geo_columns(t: Any) -> list[str]:
    """The current schema's geometry/geography columns: Spark 4.1 cannot show their bounds (``without_bounds``),
    which ``test_geo_bounds_are_points_equal_to_the_java_api`` holds to Iceberg's Java API instead."""
    schema = t.metadata.current_schema()
    return [f.name for f in schema.columns if isinstance(f.type, GeoType)]


def _compare(spark: Any, t: Any, ours: Any, select: str, source: str, what: str) -> None:
    frame, ours = without_bounds(spark.sql(f"SELECT {select} FROM {source}"), ours, _geo_columns(t))
    theirs = [{k: norm(v) for k, v in r.asDict(recursive=False).items()} for r in frame.collect()]
    assert_same(ours, frame.columns, theirs, what)


@pytest.fixture(scope="module")
def tables(scenario_locations: dict[str, Path]) -> dict[str, icebook.table.Table]:
    return {name: icebook.open(str(path)) for name, path in scenario_locations.items()}


@pytest.mark.parametrize("name", spark_readable(SCENARIOS))
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
        _compare(spark, t, ours, select, f"{fq}.{method}", f"{name}.{method}")


@pytest.mark.parametrize("name", spark_readable(SCENARIOS))
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
            _compare(spark, t, ours, select, f"{fq}.{method} VERSION AS OF {sid}", f"{name}.{method}@{sid}")


@pytest.mark.parametrize("name", JAVA_HELD)
def test_files_equal_the_java_api_at_every_snapshot(spark: Any, tables: dict[str, Any], name: str) -> None:
    """Where Spark cannot answer (a geometry bound; a table it cannot read), ``files`` is held to Iceberg's Java
    API: the live data files, their counts, sizes and first row ids, and every column's bounds (a geo bound as
    the WKB point of its ``GeospatialBound``; a nanosecond timestamp as its integer)."""
    t = tables[name]
    checked = 0
    for snapshot in t.snapshots:
        sid = snapshot.snapshot_id
        java = java_file_facts(spark, t.location, sid)
        files = t.inspect.data_files(at=sid)
        assert set(files["file_path"]) == set(java), (name, sid)
        for row in files.to_dict("records"):
            facts = java[row["file_path"]]
            assert (row["record_count"], row["file_size_in_bytes"], row["first_row_id"]) == (
                facts["record_count"],
                facts["file_size_in_bytes"],
                facts["first_row_id"],
            ), (name, sid, row["file_path"])
            ours = {}
            for column, m in row["readable_metrics"].items():
                for side in ("lower", "upper"):
                    value = m[f"{side}_bound"]
                    if value is not None:
                        ours[f"{column}.{side}"] = _as_java(value)
            assert ours == facts["bounds"], (name, sid, row["file_path"])
            checked += len(ours)
    assert checked, name


@pytest.mark.parametrize("name", [n for n, s in SCENARIOS.items() if not s.spark_reads])
def test_snapshots_and_manifests_equal_the_java_api_where_spark_cannot_read(
    spark: Any, tables: dict[str, Any], name: str
) -> None:
    """``snapshots``, ``history``, ``refs`` and ``manifests`` at every snapshot of a table Spark cannot read,
    held to the same facts from Iceberg's Java API."""
    t, java = tables[name], java_table(spark, tables[name].location)
    snapshots = {
        int(s.snapshotId()): (
            None if s.parentId() is None else int(s.parentId()),
            str(s.operation()),
            str(s.manifestListLocation()),
            int(s.timestampMillis()),
            dict(s.summary()),
        )
        for s in java.snapshots()
    }
    ours = {
        int(r["snapshot_id"]): (
            None if pd.isna(r["parent_id"]) else int(r["parent_id"]),
            r["operation"],
            r["manifest_list"],
            int(r["committed_at"].value // 1_000_000),
            dict(r["summary"]),
        )
        for r in t.inspect.snapshots().to_dict("records")
    }
    assert ours == snapshots
    history = {(int(h.snapshotId()), int(h.timestampMillis())) for h in java.history()}
    assert {
        (int(r.snapshot_id), int(r.made_current_at.value // 1_000_000)) for r in t.inspect.history().itertuples()
    } == history
    refs = {str(k): (str(v.type()), int(v.snapshotId())) for k, v in dict(java.refs()).items()}
    assert {r.name: (r.type, int(r.snapshot_id)) for r in t.inspect.refs().itertuples()} == refs
    for sid in snapshots:
        manifests = {
            str(m.path()): (int(m.length()), int(m.partitionSpecId()), int(m.snapshotId()), int(m.addedFilesCount()))
            for m in java.snapshot(sid).allManifests(java.io())
        }
        frame = t.inspect.manifests(at=sid)
        counts = frame["added_data_files_count"] + frame["added_delete_files_count"]
        mine = {
            r.path: (int(r.length), int(r.partition_spec_id), int(r.added_snapshot_id), int(n))
            for r, n in zip(frame.itertuples(), counts, strict=True)
        }
        assert mine == manifests, (name, sid)


def _as_java(value: Any) -> Any:
    """A bound as ``java_file_facts`` gives it: a WKB point as its coordinates, a timestamp as its integer."""
    import struct

    if isinstance(value, bytes) and len(value) >= 21 and value[0] == 1:
        kind = struct.unpack_from("<I", value, 1)[0]
        n = {1: 2, 1001: 3, 2001: 3, 3001: 4}[kind]
        coords = struct.unpack_from(f"<{n}d", value, 5)
        return (coords[0], coords[1], float("nan"), coords[2]) if kind == 2001 else coords
    if isinstance(value, pd.Timestamp):
        return value.value
    return value


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
    compared = 0
    for entry in t.metadata.snapshot_log:
        when = dt.datetime.fromtimestamp(entry.timestamp_ms / 1000, dt.UTC)
        stamp = when.strftime("%Y-%m-%d %H:%M:%S.%f")
        ours = t.snapshot(when)
        assert ours.snapshot_id == entry.snapshot_id
        assert t.snapshot(when.isoformat()).snapshot_id == entry.snapshot_id
        by_time = spark.sql(f"SELECT event_id FROM lake.db.events TIMESTAMP AS OF '{stamp}'").collect()
        by_id = spark.sql(f"SELECT event_id FROM lake.db.events VERSION AS OF {ours.snapshot_id}").collect()
        assert sorted(r.event_id for r in by_time) == sorted(r.event_id for r in by_id)
        compared += 1
    assert compared, "events has an empty snapshot log: no time was compared with Spark"
