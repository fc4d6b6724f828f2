"""``transforms``: hidden partitioning with every transform, and a partition spec that evolves.

Spec ("Partitioning", "Partition Transforms", "Partition Evolution"): partition values are
derived from column values by a transform, so queries filter on ``ts`` and the planner derives
the partition predicate. The table starts with identity, bucket, truncate and year partitions,
then replaces year by month, day and hour in turn; files keep the spec they were written with.
The hour batch writes a couple of hundred partitions, as a busy table would.
"""

from __future__ import annotations

from icebook.scenarios.scenario import Claims, Scenario, Step, create_table, fill

_ROWS = """SELECT id,
               element_at(array('alice', 'bob', 'carol', 'dave'), CAST(id % 4 + 1 AS INT)) AS name,
               element_at(array('books', 'games', 'music'), CAST(id % 3 + 1 AS INT)) AS category,
               {ts} AS ts,
               CAST(id * 1.25 AS DECIMAL(10,2)) AS amount
           FROM range({start}, {stop})"""


def _rows(start: int, stop: int, ts: str) -> str:
    return "INSERT INTO {table} " + fill(_ROWS, ts=ts, start=start, stop=stop)


TRANSFORMS = Scenario(
    name="transforms",
    version=1,
    title="Sales: identity, bucket, truncate, year, month, day and hour partitions; the spec evolves",
    steps=(
        create_table(
            "Create a v2 table partitioned by identity(category), bucket(4, id), truncate(2, name) and "
            "years(ts) (spec 0). Queries never name these partition columns.",
            columns="id BIGINT, name STRING, category STRING, ts TIMESTAMP, amount DECIMAL(10,2)",
            format_version=2,
            partitioned_by="category, bucket(4, id), truncate(2, name), years(ts)",
        ),
        Step(
            narrative="Append 12 sales from 2022 to 2024 under spec 0 (yearly time partitions).",
            sql=_rows(1, 13, "TIMESTAMP '2022-01-15 08:00:00' + make_interval(0, CAST(id * 3 AS INT))"),
        ),
        Step(
            narrative="Partition evolution: replace years(ts) by months(ts) (spec 1). Nothing is rewritten.",
            sql="ALTER TABLE {table} REPLACE PARTITION FIELD ts_year WITH months(ts) AS ts_month",
        ),
        Step(
            narrative="Append 12 sales of early 2024 under spec 1 (monthly).",
            sql=_rows(13, 25, "TIMESTAMP '2024-01-01 10:00:00' + make_interval(0, 0, 0, CAST((id - 13) * 9 AS INT))"),
        ),
        Step(
            narrative="Replace months(ts) by days(ts) (spec 2).",
            sql="ALTER TABLE {table} REPLACE PARTITION FIELD ts_month WITH days(ts) AS ts_day",
        ),
        Step(
            narrative="Append 12 sales of early March 2024 under spec 2 (daily).",
            sql=_rows(
                25, 37, "TIMESTAMP '2024-03-01 00:30:00' + make_interval(0, 0, 0, 0, CAST((id - 25) * 7 AS INT))"
            ),
        ),
        Step(
            narrative="Replace days(ts) by hours(ts) (spec 3).",
            sql="ALTER TABLE {table} REPLACE PARTITION FIELD ts_day WITH hours(ts) AS ts_hour",
        ),
        Step(
            narrative="Append 200 hourly sales under spec 3: about 200 partitions, one small file each.",
            sql=_rows(37, 237, "TIMESTAMP '2024-03-10 00:15:00' + make_interval(0, 0, 0, 0, CAST(id - 37 AS INT))"),
        ),
    ),
    claims=Claims(
        operations=("append", "append", "append", "append"),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0, 1, 2, 3}),
        delete_formats=frozenset(),
        format_version=2,
    ),
    tags=("hidden-partitioning", "transforms", "partition-evolution"),
)

VOID_V1 = Scenario(
    name="void_v1",
    version=1,
    title="Format v1 partition evolution: a dropped partition field becomes a void transform",
    steps=(
        create_table(
            "Create a format-version 1 table partitioned by identity(category) and days(ts), with "
            "GZIP-compressed metadata files (v<N>.gz.metadata.json).",
            columns="id BIGINT, category STRING, ts TIMESTAMP",
            format_version=1,
            partitioned_by="category, days(ts)",
            properties={"write.metadata.compression-codec": "gzip"},
        ),
        Step(
            narrative="Append four rows under spec 0.",
            sql="""INSERT INTO {table} VALUES (1, 'books', TIMESTAMP '2024-05-01 10:00:00'),
                (2, 'games', TIMESTAMP '2024-05-01 11:00:00'), (3, 'books', TIMESTAMP '2024-05-02 09:00:00'),
                (4, 'music', TIMESTAMP '2024-05-02 12:00:00')""",
        ),
        Step(
            narrative="Drop the category partition field: v1 specs cannot lose fields, so it becomes void(category) "
            "(spec 1), which always produces null.",
            sql="ALTER TABLE {table} DROP PARTITION FIELD category",
        ),
        Step(
            narrative="Append two rows under spec 1: their category partition value is null.",
            sql="""INSERT INTO {table} VALUES (5, 'books', TIMESTAMP '2024-05-03 10:00:00'),
                (6, 'games', TIMESTAMP '2024-05-03 11:00:00')""",
        ),
    ),
    claims=Claims(
        operations=("append", "append"),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0, 1}),
        delete_formats=frozenset(),
        format_version=1,
    ),
    tags=("format-v1", "void-transform", "partition-evolution", "gzip-metadata"),
)
