"""The teaching scenarios say what they claim, checked against Spark and the Iceberg Java API.

- Optimistic concurrency really races: a fresh table is raced here (two Java table handles on one
  metadata file); the retried commits carry attempt 2 in their manifest list names, the losers'
  conflicts come from the Java API with the expected exception class and message, and the files they
  leave behind are exactly what Spark's orphan-file action finds.
- Sort order and hidden partitioning: icebook's scan plans read the same files as the Java planner.
- History: time travel by time (across a rollback) agrees with Spark, a copy reads like the original,
  expiry on the copy leaves what Spark says, and the theta-sketch estimates are the exact counts.
- File provenance agrees with Spark's ``all_entries`` table.
"""

from __future__ import annotations

import datetime as dt
import itertools
from pathlib import Path
from typing import Any

import pytest

import icebook
from icebook.analysis.history.provenance import file_origin
from icebook.analysis.tables.statistics import table_statistics
from icebook.engines.spark_session import add_catalog
from icebook.scenarios import SCENARIOS
from icebook.scenarios.concurrent_writes import (
    CONCURRENT_WRITES,
    appends_race,
    compaction_delete_race,
    compaction_race,
    deletes_race,
    overwrite_race,
)
from icebook.spec.filenames import parse_manifest_list_name

pytestmark = pytest.mark.spark

VALIDATION = "org.apache.iceberg.exceptions.ValidationException"


def java_orphans(spark: Any, location: str) -> set[str]:
    """Spark's orphan-file action as a dry run: what it would delete goes into a Java stream builder."""
    jvm = spark._jvm
    real = str(Path(location).resolve())  # the table's own path, as its metadata records it
    table = jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration()).load(real)
    collected = jvm.java.util.stream.Stream.builder()
    result = (
        jvm.org.apache.iceberg.spark.actions.SparkActions.get(spark._jsparkSession)
        .deleteOrphanFiles(table)
        .olderThan(jvm.java.lang.System.currentTimeMillis() + 60_000)
        .deleteWith(collected)
        .execute()
    )
    return {str(p).removeprefix("file:") for p in result.orphanFileLocations()}


@pytest.fixture(scope="module")
def raced(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A fresh ``concurrent_writes`` table, raced in this test run, with every race's outcome."""
    warehouse = tmp_path_factory.mktemp("races")
    steps = [s for s in CONCURRENT_WRITES.steps if s.action is None]  # create and the two inserts
    add_catalog("races", warehouse)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS races.db")
    name = "races.db.races"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    for step in steps:
        spark.sql(step.sql.replace("{table}", name))
    outcomes = {fn.__name__: fn(spark, name) for fn in (appends_race, deletes_race, overwrite_race, compaction_race)}
    outcomes["compaction_delete_race"] = compaction_delete_race(spark, name)
    return {"outcomes": outcomes, "location": str(warehouse / "db" / "races"), "name": name}


def test_losing_append_is_retried_with_attempt_2(raced: dict[str, Any], spark: Any) -> None:
    outcome = raced["outcomes"]["appends_race"]
    assert outcome.writer_b_committed and outcome.error_class is None
    snapshots = {r.snapshot_id: r for r in spark.sql(f"SELECT * FROM {raced['name']}.snapshots").collect()}
    b = snapshots[outcome.writer_b_snapshot_id]
    assert b.parent_id == outcome.writer_a_snapshot_id != outcome.base_snapshot_id  # rebased on A's snapshot
    assert parse_manifest_list_name(b.manifest_list).attempt == 2
    assert parse_manifest_list_name(snapshots[outcome.writer_a_snapshot_id].manifest_list).attempt == 1
    table = icebook.open(raced["location"])
    assert parse_manifest_list_name(table.metadata.snapshot_by_id(b.snapshot_id).manifest_list or "").attempt == 2


def test_conflicting_commits_fail_validation_in_the_java_api(raced: dict[str, Any]) -> None:
    outcomes = raced["outcomes"]
    expected = {
        "deletes_race": "Missing required files to delete: ",
        "overwrite_race": 'Found conflicting files that can contain records matching ref(name="region") == "eu"',
        "compaction_delete_race": "Cannot commit, found new position delete for replaced data file",
    }
    for race, message in expected.items():
        outcome = outcomes[race]
        assert not outcome.writer_b_committed, race
        assert outcome.error_class == VALIDATION, race
        assert outcome.error_message is not None and outcome.error_message.startswith(message), outcome.error_message
    assert outcomes["compaction_race"].writer_b_committed  # untouched files: the compaction's retry commits


def test_losers_leave_orphans_that_spark_also_finds(raced: dict[str, Any], spark: Any) -> None:
    table = icebook.open(raced["location"])
    ours = {str(Path(p).resolve()) for p in table.maintenance.orphans(older_than=dt.timedelta(0)).paths}
    theirs = {str(Path(p).resolve()) for p in java_orphans(spark, raced["location"])}
    assert ours == theirs
    names = sorted(Path(p).name.rsplit("-", 5)[0] for p in ours)
    assert names == ["writer-b-compaction", "writer-b-overwrite"]


def test_built_concurrent_writes_table_matches_spark(spark: Any, scenario_locations: dict[str, Path]) -> None:
    table = icebook.open(str(scenario_locations["concurrent_writes"]))
    rows = spark.sql("SELECT snapshot_id, parent_id, manifest_list FROM lake.db.concurrent_writes.snapshots").collect()
    attempts = {r.snapshot_id: parse_manifest_list_name(r.manifest_list).attempt for r in rows}
    assert sorted(attempts.values()) == [1] * 7 + [2] * 2
    for s in table.snapshots:
        assert parse_manifest_list_name(s.manifest_list or "").attempt == attempts[s.snapshot_id]
    ours = {str(Path(p).resolve()) for p in table.maintenance.orphans(older_than=dt.timedelta(0)).paths}
    assert ours == {str(Path(p).resolve()) for p in java_orphans(spark, str(scenario_locations["concurrent_writes"]))}


def _java_planned(spark: Any, location: str, snapshot_id: int, column: str, op: str, value: Any) -> set[str]:
    jvm = spark._jvm
    expressions = jvm.org.apache.iceberg.expressions.Expressions
    table = jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration()).load(location)
    tasks = table.newScan().useSnapshot(snapshot_id).filter(getattr(expressions, op)(column, value)).planFiles()
    out = set()
    iterator = tasks.iterator()
    while iterator.hasNext():
        out.add(str(iterator.next().file().location()))
    tasks.close()
    return out


def test_sort_order_skipping_matches_the_java_planner(spark: Any, scenario_locations: dict[str, Path]) -> None:
    location = str(scenario_locations["sort_order"])
    table = icebook.open(location)
    unsorted, compacted, _ = table.snapshots
    assert compacted.operation == "replace"
    read = {}
    for snapshot in table.snapshots:
        for op, sql_op, value in (("lessThan", "<", -150), ("greaterThanOrEqual", ">=", 500)):
            plan = table.scan(at=snapshot.snapshot_id, filter=f"temperature {sql_op} {value}")
            ours = {t.file.file_path for t in plan.tasks}
            assert ours == _java_planned(spark, location, snapshot.snapshot_id, "temperature", op, value)
            read[(snapshot.snapshot_id, op)] = len(ours)
    assert read[(unsorted.snapshot_id, "lessThan")] == 4 and read[(compacted.snapshot_id, "lessThan")] == 1


def test_hidden_partitioning_matches_the_java_planner(spark: Any, scenario_locations: dict[str, Path]) -> None:
    location = str(scenario_locations["transforms"])
    table = icebook.open(location)
    current = table.current_snapshot
    assert current is not None
    jvm = spark._jvm
    start = int(dt.datetime(2024, 3, 10, 5, tzinfo=dt.UTC).timestamp() * 1_000_000)
    cases = [
        ("id = 42", "equal", "id", jvm.java.lang.Long(42)),
        ("name = 'carol'", "equal", "name", "carol"),
        ("category = 'music'", "equal", "category", "music"),
        ("ts >= '2024-03-10 05:00:00'", "greaterThanOrEqual", "ts", jvm.java.lang.Long(start)),
    ]
    for where, op, column, value in cases:
        ours = {t.file.file_path for t in table.scan(filter=where).tasks}
        assert ours == _java_planned(spark, location, current.snapshot_id, column, op, value), where
    specs = {p.spec_id for p in table.scan(filter="ts >= '2024-03-10 05:00:00'").projections}
    assert specs == {0, 1, 2, 3}


def test_void_transform_in_v1_spec(spark: Any, scenario_locations: dict[str, Path]) -> None:
    table = icebook.open(str(scenario_locations["void_v1"]))
    transforms = {
        (s.spec_id, f.name): str(f.transform) for s in table.metadata.partition_specs.values() for f in s.fields
    }
    assert transforms[(1, "category")] == "void" and transforms[(0, "category")] == "identity"
    assert table.metadata_location.endswith(".gz.metadata.json")
    spark_parts = spark.sql("SELECT spec_id, partition.category AS c FROM lake.db.void_v1.files").collect()
    assert {(r.spec_id, r.c) for r in spark_parts if r.spec_id == 1} == {(1, None)}


def test_time_travel_across_the_rollback_matches_spark(spark: Any, scenario_locations: dict[str, Path]) -> None:
    table = icebook.open(str(scenario_locations["history"]))
    log = [(e.timestamp_ms, e.snapshot_id) for e in table.metadata.snapshot_log]
    tagged = table.refs["end-of-day-1"].snapshot_id
    assert [sid for _, sid in log].count(tagged) == 2  # committed, then current again after the rollback
    moments = [(a + b) // 2 for (a, _), (b, _) in itertools.pairwise(log)] + [log[-1][0] + 1000]
    counts = []
    for ms in moments:
        when = dt.datetime.fromtimestamp(ms / 1000, dt.UTC)
        ours = table.snapshot(when)
        stamp = when.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        theirs = spark.sql(f"SELECT count(*) AS n FROM lake.db.history TIMESTAMP AS OF '{stamp}'").collect()[0].n
        assert table.read(at=when).num_rows == theirs
        counts.append(theirs)
        assert ours.snapshot_id == [sid for ts, sid in log if ts <= ms][-1]
    assert counts == [100, 200, 300, 400, 200, 300]


def test_statistics_estimates_are_the_exact_distinct_counts(spark: Any, scenario_locations: dict[str, Path]) -> None:
    table = icebook.open(str(scenario_locations["history"]))
    stats = table_statistics(table.metadata, table.fileio)
    assert set(stats["blob_type"]) == {"apache-datasketches-theta-v1"}
    assert list(stats["column"]) == ["sale_id", "store", "units", "region"]
    snapshot = int(stats["snapshot_id"].iloc[0])
    exact = spark.sql(
        f"SELECT count(DISTINCT sale_id) a, count(DISTINCT store) b, count(DISTINCT units) c, count(DISTINCT region) d "
        f"FROM lake.db.history VERSION AS OF {snapshot}"
    ).collect()[0]
    assert list(stats["estimate"]) == [float(x) for x in exact]
    assert list(stats["ndv_property"]) == list(exact)
    registered = spark.sql("SELECT * FROM lake.db.history.snapshots").count()
    assert registered == len(table.snapshots) and snapshot == table.metadata.current_snapshot_id


def test_copy_then_expire_on_the_copy(spark: Any, scenario_locations: dict[str, Path], tmp_path: Path) -> None:
    original = icebook.open(str(scenario_locations["history"]))
    before_location = original.metadata_location
    copy = original.manage.copy_to(str(tmp_path / "db" / "history"))
    assert copy.location == str(tmp_path / "db" / "history")
    assert [s.snapshot_id for s in copy.snapshots] == [s.snapshot_id for s in original.snapshots]
    for s in original.snapshots:
        assert copy.read(at=s.snapshot_id).num_rows == original.read(at=s.snapshot_id).num_rows
    assert all(str(tmp_path) in f for f in copy.inspect.files()["file_path"])
    add_catalog("copies", tmp_path)
    newest = max(s.timestamp_ms for s in copy.snapshots) + 1000
    stamp = dt.datetime.fromtimestamp(newest / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
    spark.sql(f"CALL copies.system.expire_snapshots(table => 'db.history', older_than => TIMESTAMP '{stamp}')")
    after = copy.reopen()
    theirs = {r.snapshot_id for r in spark.sql("SELECT snapshot_id FROM copies.db.history.snapshots").collect()}
    assert {s.snapshot_id for s in after.snapshots} == theirs
    kept = theirs
    assert original.refs["end-of-day-1"].snapshot_id in kept and original.refs["backfill"].snapshot_id in kept
    assert len(kept) < len(original.snapshots)
    assert icebook.open(str(scenario_locations["history"])).metadata_location == before_location  # untouched


def test_file_origin_agrees_with_spark_entries(spark: Any, scenario_locations: dict[str, Path]) -> None:
    for name in ("events", "concurrent_writes"):
        table = icebook.open(str(scenario_locations[name]))
        added = spark.sql(
            f"SELECT data_file.file_path AS p, snapshot_id FROM {SCENARIOS[name].table}.all_entries WHERE status = 1"
        ).toPandas()
        seq = {snap.snapshot_id: snap.sequence_number or 0 for snap in table.snapshots}
        added["seq"] = added["snapshot_id"].map(seq)
        first = added.sort_values("seq").drop_duplicates("p").set_index("p")["snapshot_id"]
        compared = 0
        for path, snapshot_id in first.items():
            origin = file_origin(table, str(path))
            assert origin.snapshot_id == snapshot_id, path
            assert origin.names_agree, path
            compared += 1
        assert compared, f"{name}: Spark lists no added data file, no origin was compared"
