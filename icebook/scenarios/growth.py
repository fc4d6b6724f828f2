"""``growth``: a table's life in commits, for the time-lapse: appends, deletes, a schema change, a partition
change and a compaction, in the order tables usually live through them."""

from __future__ import annotations

from icebook.scenarios.scenario import MERGE_ON_READ, Claims, Scenario, Step, create_table, fill

_DAY = """INSERT INTO {table}
    SELECT id, TIMESTAMP '{day} 00:00:00' + make_interval(0, 0, 0, 0, 0, CAST(id % 1440 AS INT), 0),
           element_at(array('us', 'eu', 'apac'), CAST(id % 3 AS INT) + 1), CAST(id % 97 AS INT){extra}
    FROM range({start}, {stop}, 1, {tasks})"""


def _day(day: str, start: int, stop: int, tasks: int = 3, extra: str = "") -> str:
    return fill(_DAY, day=day, start=start, stop=stop, tasks=tasks, extra=extra)


GROWTH = Scenario(
    name="growth",
    version=1,
    title="Orders over a week: appends, merge-on-read deletes, a new column, a new partition field, a compaction",
    steps=(
        create_table(
            "Create a v2 table partitioned by region; deletes write position-delete files (merge-on-read).",
            columns="order_id BIGINT, ts TIMESTAMP, region STRING, qty INT",
            format_version=2,
            partitioned_by="region",
            properties={
                **MERGE_ON_READ,
                "write.spark.advisory-partition-size-bytes": "4096",
                "commit.manifest.min-count-to-merge": "4",
            },
        ),
        Step(narrative="Monday's orders: one append, files in every region.", sql=_day("2024-03-04", 0, 600)),
        Step(narrative="Tuesday's orders.", sql=_day("2024-03-05", 600, 1200)),
        Step(narrative="Wednesday's orders.", sql=_day("2024-03-06", 1200, 1800)),
        Step(
            narrative="Cancelled orders are deleted: position-delete files mask rows; no data file is rewritten.",
            sql="DELETE FROM {table} WHERE qty = 13",
        ),
        Step(
            narrative="Schema change: a channel column. Files written before it hold no such field id.",
            sql="ALTER TABLE {table} ADD COLUMN channel STRING",
        ),
        Step(narrative="Thursday's orders, with a channel.", sql=_day("2024-03-07", 1800, 2400, extra=", 'web'")),
        Step(
            narrative="Partition change: add days(ts). Older files keep spec 0; new ones are written with spec 1.",
            sql="ALTER TABLE {table} ADD PARTITION FIELD days(ts) AS ts_day",
        ),
        Step(narrative="Friday's orders, under the new spec.", sql=_day("2024-03-08", 2400, 3000, extra=", 'app'")),
        Step(narrative="Saturday's orders.", sql=_day("2024-03-09", 3000, 3600, extra=", 'web'")),
        Step(
            narrative="More cancellations: more position deletes, across both specs.",
            sql="DELETE FROM {table} WHERE qty = 42",
        ),
        Step(
            narrative="Compaction: rewrite every data file with its deletes applied, by the current spec, and drop the "
            "delete files no data file needs any more (operation replace).",
            sql="""CALL lake.system.rewrite_data_files(table => '{table}',
                options => map('rewrite-all', 'true', 'remove-dangling-deletes', 'true',
                               'target-file-size-bytes', '16384'))""",
        ),
        Step(narrative="Sunday's orders, after the compaction.", sql=_day("2024-03-10", 3600, 4200, extra=", 'app'")),
    ),
    claims=Claims(
        # The compaction commits twice: the rewrite, then the removal of dangling delete files.
        operations=(
            "append",
            "append",
            "append",
            "delete",
            "append",
            "append",
            "append",
            "delete",
            "replace",
            "replace",
            "append",
        ),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0, 1}),
        delete_formats=frozenset({"PARQUET"}),
        format_version=2,
    ),
    tags=("time-lapse", "merge-on-read", "schema-evolution", "partition-evolution", "compaction"),
)
