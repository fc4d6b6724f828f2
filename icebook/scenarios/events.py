"""``events``: a merge-on-read v2 table that lives through most of what Iceberg can do."""

from __future__ import annotations

from icebook.scenarios.scenario import MERGE_ON_READ, Claims, Scenario, Step, create_table

EVENTS = Scenario(
    name="events",
    version=1,
    title="Click events: partition evolution, merge-on-read deletes, schema evolution, a branch and a tag",
    steps=(
        create_table(
            "Create a format-version 2 table partitioned by identity(region), deletes written as position-delete files (merge-on-read).",
            columns="event_id BIGINT NOT NULL, ts TIMESTAMP, region STRING, kind STRING, payload STRING, amount DECIMAL(10,2)",
            format_version=2,
            partitioned_by="region",
            properties={**MERGE_ON_READ, "app.team": "analytics"},
        ),
        Step(
            narrative="First append: one data file per region partition.",
            sql="""INSERT INTO {table} VALUES
                (1, TIMESTAMP '2024-01-01 09:00:00', 'us', 'click', 'home', 1.50),
                (2, TIMESTAMP '2024-01-01 09:05:00', 'us', 'view', 'cart', 0.00),
                (3, TIMESTAMP '2024-01-01 10:00:00', 'eu', 'click', 'home', 2.25),
                (4, TIMESTAMP '2024-01-01 11:30:00', 'eu', 'test', 'probe', 0.00),
                (5, TIMESTAMP '2024-01-01 12:00:00', 'apac', 'click', 'search', 3.10)""",
        ),
        Step(
            narrative="Second append on the next day: new files, the first manifest is reused as is.",
            sql="""INSERT INTO {table} VALUES
                (6, TIMESTAMP '2024-01-02 08:00:00', 'us', 'click', 'search', 4.00),
                (7, TIMESTAMP '2024-01-02 08:30:00', 'eu', 'view', 'home', 0.00),
                (8, TIMESTAMP '2024-01-02 09:45:00', 'apac', 'test', 'probe', 0.00),
                (9, TIMESTAMP '2024-01-02 13:15:00', 'apac', 'click', 'cart', 7.75)""",
        ),
        Step(
            narrative="Partition evolution: add days(ts). Old files keep spec 0; new writes use spec 1. No data is rewritten.",
            sql="ALTER TABLE {table} ADD PARTITION FIELD days(ts) AS ts_day",
        ),
        Step(
            narrative="Append under the new spec: files are partitioned by (region, ts_day).",
            sql="""INSERT INTO {table} VALUES
                (10, TIMESTAMP '2024-01-03 07:00:00', 'us', 'click', 'home', 1.00),
                (11, TIMESTAMP '2024-01-03 07:10:00', 'us', 'test', 'probe', 0.00),
                (12, TIMESTAMP '2024-01-04 16:20:00', 'eu', 'click', 'search', 5.50),
                (13, TIMESTAMP '2024-01-04 18:00:00', 'apac', 'view', 'home', 0.00)""",
        ),
        Step(
            narrative="Merge-on-read DELETE: test events are masked by position-delete files; data files stay untouched.",
            sql="DELETE FROM {table} WHERE kind = 'test'",
        ),
        Step(
            narrative="Merge-on-read UPDATE: matching rows are deleted by position and their new versions appended.",
            sql="UPDATE {table} SET amount = amount * 2 WHERE region = 'eu' AND kind = 'click'",
        ),
        Step(
            narrative="Schema evolution: add a column. Existing files have no such field id, so it reads as null.",
            sql="ALTER TABLE {table} ADD COLUMN device STRING COMMENT 'client device'",
        ),
        Step(
            narrative="Append rows that fill the new column.",
            sql="""INSERT INTO {table} VALUES
                (14, TIMESTAMP '2024-01-05 10:00:00', 'us', 'click', 'home', 2.00, 'ios'),
                (15, TIMESTAMP '2024-01-05 11:00:00', 'eu', 'view', 'cart', 0.00, 'web')""",
        ),
        Step(
            narrative="Schema evolution: rename payload to page. Only metadata changes; files are matched by field id.",
            sql="ALTER TABLE {table} RENAME COLUMN payload TO page",
        ),
        Step(
            narrative="Schema evolution: drop the kind column. Its data stays in old files but is no longer projected.",
            sql="ALTER TABLE {table} DROP COLUMN kind",
        ),
        Step(
            narrative="Tag the current snapshot as a release, kept for a year.",
            sql="ALTER TABLE {table} CREATE TAG `release-2024-01` RETAIN 365 DAYS",
        ),
        Step(
            narrative="Create a branch for an experiment, with its own retention.",
            sql="ALTER TABLE {table} CREATE BRANCH audit RETAIN 7 DAYS WITH SNAPSHOT RETENTION 2 SNAPSHOTS",
        ),
        Step(
            narrative="Commit to the branch only: main does not see these rows.",
            sql="""INSERT INTO {table}.branch_audit VALUES
                (100, TIMESTAMP '2024-01-06 09:00:00', 'us', 'audit', 9.99, 'cli'),
                (101, TIMESTAMP '2024-01-06 09:30:00', 'eu', 'audit', 8.88, 'cli')""",
        ),
        Step(
            narrative="A merge-on-read DELETE on the branch.",
            sql="DELETE FROM {table}.branch_audit WHERE event_id = 1",
        ),
        Step(
            narrative="Main moves on independently: the branch and main have diverged.",
            sql="""INSERT INTO {table} VALUES
                (16, TIMESTAMP '2024-01-07 12:00:00', 'apac', 'home', 6.60, 'android')""",
        ),
    ),
    claims=Claims(
        operations=(
            "append",
            "append",
            "append",
            "delete",
            "overwrite",
            "append",
            "append",
            "delete",
            "append",
        ),
        refs={"main": "BRANCH", "audit": "BRANCH", "release-2024-01": "TAG"},
        spec_ids=frozenset({0, 1}),
        delete_formats=frozenset({"PARQUET"}),
        format_version=2,
    ),
    tags=("partition-evolution", "merge-on-read", "schema-evolution", "branch", "tag"),
)
