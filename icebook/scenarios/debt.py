"""``debt``: a table that needs maintenance. Many small appends, merge-on-read deletes over them,
one manifest per commit, a stale tag, old metadata files, a crashed writer's file and history kept
past its retention: everything ``t.health()`` looks for, and what Spark's procedures fix.
"""

from __future__ import annotations

from typing import Any

from icebook.scenarios.javaapi import spark_table, write_data_file
from icebook.scenarios.scenario import MERGE_ON_READ, Claims, Scenario, Step, create_table

APPENDS = 10
REGIONS = ("us", "eu", "apac")
ROWS_PER_FILE = 3
# 'sa' gets one row in the first two appends only: too few files for compaction to bother with.
SPARSE_REGION_IDS = {0: 1004, 1: 1007}
STALE_TAG = "nightly-export"


def _append_sql(table_name: str, i: int) -> str:
    rows = []
    for r, region in enumerate(REGIONS):
        for k in range(ROWS_PER_FILE):
            row_id = i * len(REGIONS) * ROWS_PER_FILE + r * ROWS_PER_FILE + k + 1
            rows.append(f"({row_id}, '{region}', TIMESTAMP '2024-03-{i + 1:02d} {k + 8:02d}:00:00', {row_id}.5)")
    if i in SPARSE_REGION_IDS:
        row_id = SPARSE_REGION_IDS[i]
        rows.append(f"({row_id}, 'sa', TIMESTAMP '2024-03-{i + 1:02d} 12:00:00', {row_id}.5)")
    return f"INSERT INTO {table_name} VALUES " + ", ".join(rows)


def small_appends(spark: Any, table_name: str) -> None:
    """Ten appends of a few rows each: one small file per region and one new manifest per commit."""
    for i in range(APPENDS):
        spark.sql(_append_sql(table_name, i))


def stale_tag(spark: Any, table_name: str) -> None:
    """Tag the third append, kept for one second (SQL retention counts whole minutes, so the Java API)."""
    table = spark_table(spark, table_name)
    third = [r.snapshot_id for r in spark.sql(f"SELECT snapshot_id FROM {table_name}.snapshots").collect()][2]
    table.manageSnapshots().createTag(STALE_TAG, third).setMaxRefAgeMs(STALE_TAG, 1000).commit()


def crashed_writer(spark: Any, table_name: str) -> None:
    """Write a data file the way a writer does, then 'crash' before the commit: nothing references it."""
    write_data_file(
        spark,
        spark_table(spark, table_name),
        [{"id": 10_000_000_000, "region": "us"}],  # an id above 2**31, so py4j passes a Java long
        partition={"region": "us"},
        label="crashed-writer",
        file_name="00000-0-crashed-writer-00001.parquet",
    )  # the file is complete on storage; no snapshot ever lists it


DEBT = Scenario(
    name="debt",
    version=1,
    title="A table in need of maintenance: small files, delete debt, many manifests, orphans, stale history",
    steps=(
        create_table(
            "Create a v2 table partitioned by region. Deletes are merge-on-read; every commit keeps its "
            "own manifest (no manifest merging); the metadata log keeps five previous files (older ones stay on "
            "disk); snapshots are kept for one second, so by the time anyone looks, history is past retention.",
            columns="id BIGINT, region STRING, ts TIMESTAMP, amount DOUBLE",
            format_version=2,
            partitioned_by="region",
            properties={
                **MERGE_ON_READ,
                "commit.manifest-merge.enabled": "false",
                "write.metadata.previous-versions-max": "5",
                "history.expire.max-snapshot-age-ms": "1000",
            },
        ),
        Step(
            narrative="Ten small appends, as a micro-batch job writes them: a small file per region and a manifest "
            "per commit; region 'sa' gets a row in the first two only.",
            action=small_appends,
        ),
        Step(
            narrative=f"Tag the third append as '{STALE_TAG}', kept for one second: a ref soon past its max age.",
            action=stale_tag,
        ),
        Step(
            narrative="Merge-on-read DELETE of every third id: a position delete file next to every data file of "
            "us, eu and apac, masking a third of its rows.",
            sql="DELETE FROM {table} WHERE id % 3 = 0 AND id < 1000",
        ),
        Step(
            narrative="Merge-on-read UPDATE: more position deletes on the same files, new row versions in new "
            "small files.",
            sql="UPDATE {table} SET amount = amount + 1 WHERE id % 5 = 1 AND id < 1000",
        ),
        Step(
            narrative="A writer crashes after writing a data file, before committing: the file stays, orphaned.",
            action=crashed_writer,
        ),
    ),
    claims=Claims(
        operations=("append",) * APPENDS + ("delete", "overwrite"),
        refs={"main": "BRANCH", STALE_TAG: "TAG"},
        spec_ids=frozenset({0}),
        delete_formats=frozenset({"PARQUET"}),
        format_version=2,
    ),
    tags=("maintenance", "small-files", "merge-on-read", "orphans"),
)
