"""``dv_lifecycle_v3``: one data file's deletion vector replaced three times, then a dangling vector."""

from __future__ import annotations

from typing import Any

from icebook.scenarios.javaapi import fresh_handle, jvm
from icebook.scenarios.scenario import MERGE_ON_READ, Claims, Scenario, Step, create_table


def _vectors(table: Any) -> list[tuple[Any, Any]]:
    """(data file, its deletion vector) for every live data file that has one."""
    found = []
    tasks = table.newScan().planFiles()
    iterator = tasks.iterator()
    while iterator.hasNext():
        task = iterator.next()
        for delete in task.deletes():
            found.append((task.file(), delete))
    tasks.close()
    return sorted(found, key=lambda pair: str(pair[0].location()))


def unvalidated_vector(spark: Any, table_name: str) -> str:
    """Remove the data file of the newest batch, then commit its old deletion vector again, unvalidated.

    Iceberg drops a vector with its data file; a writer that skips ``validateDataFilesExist`` can still
    commit one for a file that is gone, and readers must ignore it.
    """
    table = fresh_handle(spark, table_name)
    expressions = jvm(spark).org.apache.iceberg.expressions.Expressions
    late = [(data, dv) for data, dv in _vectors(table) if data.recordCount() == 10]
    if len(late) != 1:
        raise RuntimeError(f"expected one vector on the 10-row data file, found {len(late)}")
    data_file, vector = late[0]
    table.newDelete().deleteFromRowFilter(expressions.greaterThanOrEqual("reading_id", 50)).commit()
    table.refresh()
    # validating from the current snapshot only: the check for a newer vector of the same file passes
    table.newRowDelta().validateFromSnapshot(table.currentSnapshot().snapshotId()).addDeletes(vector).commit()
    return f"deletion vector {vector.location()} now names the removed {data_file.location()}"


DV_LIFECYCLE_V3 = Scenario(
    name="dv_lifecycle_v3",
    version=1,
    title="Meter readings in format version 3: a deletion vector replaced three times, then one left dangling",
    steps=(
        create_table(
            "Create an unpartitioned format-version 3 merge-on-read table.",
            columns="reading_id BIGINT NOT NULL, meter STRING, kwh DOUBLE",
            format_version=3,
            properties={**MERGE_ON_READ, "write.distribution-mode": "none"},
        ),
        Step(
            narrative="Append 50 readings in one data file.",
            sql="""INSERT INTO {table}
                SELECT /*+ COALESCE(1) */ id, concat('m', id % 3), id * 0.1 FROM range(0, 50) AS r(id)""",
        ),
        Step(
            narrative="Append 10 later readings in a second data file.",
            sql="INSERT INTO {table} SELECT /*+ COALESCE(1) */ id, 'm9', id * 0.1 FROM range(50, 60) AS r(id)",
        ),
        Step(
            narrative="DELETE two readings: the first data file gets a deletion vector of 2 positions.",
            sql="DELETE FROM {table} WHERE reading_id IN (1, 2)",
        ),
        Step(
            narrative="DELETE two more: a new vector of 4 positions replaces the first (one vector per file).",
            sql="DELETE FROM {table} WHERE reading_id IN (3, 10)",
        ),
        Step(
            narrative="DELETE a run of readings: the vector is replaced again, now holding the range 20-24.",
            sql="DELETE FROM {table} WHERE reading_id BETWEEN 20 AND 24",
        ),
        Step(
            narrative="DELETE one more: the third replacement of the same file's vector.",
            sql="DELETE FROM {table} WHERE reading_id = 40",
        ),
        Step(
            narrative="DELETE a late reading: the second data file gets its own vector.",
            sql="DELETE FROM {table} WHERE reading_id = 55",
        ),
        Step(
            narrative="A writer removes the second data file, then commits its vector again without validation.",
            action=unvalidated_vector,
        ),
    ),
    claims=Claims(
        operations=("append", "append", "delete", "delete", "delete", "delete", "delete", "delete", "delete"),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0}),
        delete_formats=frozenset({"PUFFIN"}),
        format_version=3,
    ),
    tags=("format-v3", "deletion-vectors"),
)
