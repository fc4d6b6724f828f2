"""``history``: snapshot log vs metadata log, a rollback, refs with retention, and table statistics.

Spec ("Table Metadata Fields": ``snapshot-log``, ``metadata-log``, ``statistics``; "Snapshot
Retention Policy"; "Point in Time Reads"): the snapshot log records which snapshot became current
when (a rollback adds an entry for an older snapshot), the metadata log records every earlier
metadata file. Expiry uses the table's ``history.expire.*`` properties and each ref's retention.
The last step computes table statistics: a Puffin file of Apache DataSketches theta sketches.
"""

from __future__ import annotations

from typing import Any

from icebook.scenarios.scenario import Claims, Scenario, Step, create_table, fill

_BATCH = """INSERT INTO {table}
    SELECT id, concat('store-', CAST(id % {stores} AS STRING)), CAST(id % 7 AS INT) + 1,
           IF(id % 2 = 0, 'north', 'south')
    FROM range({start}, {stop})"""


def _batch(start: int, stop: int, stores: int = 10) -> str:
    return fill(_BATCH, start=start, stop=stop, stores=stores)


def rollback_to_tag(spark: Any, table_name: str) -> str:
    """Roll main back to the snapshot tagged ``end-of-day-1`` (Spark's rollback_to_snapshot)."""
    tagged = spark.sql(f"SELECT snapshot_id FROM {table_name}.refs WHERE name = 'end-of-day-1'").collect()[0][0]
    spark.sql(f"CALL lake.system.rollback_to_snapshot(table => '{table_name}', snapshot_id => {tagged})")
    return f"main rolled back to snapshot {tagged}"


def compute_statistics(spark: Any, table_name: str) -> str:
    """Spark's compute_table_stats: theta sketches of every column, in a Puffin statistics file."""
    path = spark.sql(f"CALL lake.system.compute_table_stats(table => '{table_name}')").collect()[0][0]
    return f"statistics file {path}"


HISTORY = Scenario(
    name="history",
    version=1,
    title="Daily sales: snapshot and metadata logs, a rollback, tag and branch retention, theta-sketch statistics",
    steps=(
        create_table(
            "Create a v2 table partitioned by region, with the table-wide expiry policy: snapshots older "
            "than an hour may go, but main always keeps its last 2.",
            columns="sale_id BIGINT, store STRING, units INT, region STRING",
            format_version=2,
            partitioned_by="region",
            properties={
                "history.expire.max-snapshot-age-ms": "3600000",
                "history.expire.min-snapshots-to-keep": "2",
                "history.expire.max-ref-age-ms": "604800000",
            },
        ),
        Step(narrative="Day 1, morning load: 100 sales.", sql=_batch(0, 100)),
        Step(narrative="Day 1, evening load: 100 more.", sql=_batch(100, 200)),
        Step(
            narrative="Tag the end of day 1, kept for 30 days whatever the expiry policy says.",
            sql="ALTER TABLE {table} CREATE TAG `end-of-day-1` RETAIN 30 DAYS",
        ),
        Step(narrative="Day 2, a bad load: 100 sales with wrong stores.", sql=_batch(200, 300, 3)),
        Step(narrative="Day 2, another load on top of the bad one.", sql=_batch(300, 400)),
        Step(
            narrative="Roll main back to the tag: the two day-2 snapshots leave main's history (the snapshot log "
            "records the tagged snapshot as current again) but stay in the table until expired.",
            action=rollback_to_tag,
        ),
        Step(
            narrative="Create a branch for a backfill that keeps at least 3 snapshots and lives 7 days.",
            sql="ALTER TABLE {table} CREATE BRANCH backfill RETAIN 7 DAYS WITH SNAPSHOT RETENTION 3 SNAPSHOTS",
        ),
        Step(
            narrative="Commit the backfill to the branch only.",
            sql=_batch(1000, 1050).replace("INSERT INTO {table}", "INSERT INTO {table}.branch_backfill"),
        ),
        Step(narrative="Day 2, the corrected load on main.", sql=_batch(400, 500)),
        Step(
            narrative="Compute table statistics: one Apache DataSketches theta sketch per column, in a Puffin file "
            "listed under the metadata's statistics.",
            action=compute_statistics,
        ),
    ),
    claims=Claims(
        operations=("append", "append", "append", "append", "append", "append"),
        refs={"main": "BRANCH", "end-of-day-1": "TAG", "backfill": "BRANCH"},
        spec_ids=frozenset({0}),
        delete_formats=frozenset(),
        format_version=2,
    ),
    tags=("snapshot-log", "metadata-log", "rollback", "retention", "statistics", "puffin"),
)
