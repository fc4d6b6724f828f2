"""``concurrent_writes``: optimistic concurrency, with two writers really racing on one table.

Spec ("Optimistic Concurrency", "File System Tables"): a writer builds new metadata from the
version it read and commits by swapping the table's pointer to its new metadata file; for a
Hadoop table that is the atomic rename to ``v<N+1>.metadata.json``. When another writer got there
first the swap fails, and the writer retries on the new version, re-applying its change only if
the operation's rules still hold: an append always can; a delete or a rewrite only while the
files it removes are still there (and no new delete touches them); an overwrite with conflict
detection only when no concurrent commit added matching data.

Each race uses two independent handles loaded from the same metadata file (the Iceberg Java API
over Spark's py4j gateway). Writer B prepares its commit in a transaction on that base, writer A
commits, then B commits: its rename fails, and the Java client refreshes and re-applies B's
change on A's snapshot (a new manifest list, attempt 2 in its name) or fails validation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from icebook.scenarios.javaapi import (
    data_files,
    fresh_handle,
    java_error,
    jvm,
    load_handle,
    table_location,
    write_data_file,
    write_position_deletes,
)
from icebook.scenarios.scenario import MERGE_ON_READ, Claims, Scenario, Step, create_table


@dataclass(frozen=True, slots=True, kw_only=True)
class RaceOutcome:
    """What happened when writer B committed after writer A, both starting from one base snapshot."""

    race: str
    base_snapshot_id: int
    writer_a_snapshot_id: int
    writer_b_snapshot_id: int | None
    """B's committed snapshot, or None when its commit failed."""
    error_class: str | None = None
    """The Java exception B's commit raised (e.g. ``org.apache.iceberg.exceptions.ValidationException``)."""
    error_message: str | None = None

    @property
    def writer_b_committed(self) -> bool:
        return self.writer_b_snapshot_id is not None

    def summary(self) -> str:
        head = f"{self.race}: writer A committed snapshot {self.writer_a_snapshot_id}; "
        if self.writer_b_snapshot_id is not None:
            return head + f"writer B retried on it and committed snapshot {self.writer_b_snapshot_id}"
        return head + f"writer B failed: {self.error_class}: {self.error_message}"


Stage = Callable[[Any, Any, Any], None]
"""``stage(spark, handle, transaction)``: writer B prepares its change inside ``transaction``."""
Commit = Callable[[Any, Any], None]
"""``commit(spark, handle)``: writer A commits its change directly."""


def race(spark: Any, table_name: str, name: str, *, stage_b: Stage, commit_a: Commit) -> RaceOutcome:
    """Writer B stages on base; writer A commits; writer B commits (retrying, or failing validation)."""
    location = table_location(spark, table_name)
    writer_a = load_handle(spark, location)
    writer_b = load_handle(spark, location)  # both handles now hold the same metadata file
    base = writer_b.currentSnapshot().snapshotId()
    transaction = writer_b.newTransaction()
    stage_b(spark, writer_b, transaction)
    commit_a(spark, writer_a)
    a_id = int(writer_a.currentSnapshot().snapshotId())
    error: tuple[str, str] | None = None
    try:
        transaction.commitTransaction()
    except Exception as exc:  # py4j raises Py4JJavaError or a pyspark-converted exception
        error = java_error(exc)
        if error is None:
            raise
    finally:
        # a race run on its own, not as a build step that refreshes after it, leaves Spark current too
        spark.sql(f"REFRESH TABLE {table_name}")
    if error is not None:
        return RaceOutcome(
            race=name,
            base_snapshot_id=int(base),
            writer_a_snapshot_id=a_id,
            writer_b_snapshot_id=None,
            error_class=error[0],
            error_message=error[1],
        )
    writer_b.refresh()
    return RaceOutcome(
        race=name,
        base_snapshot_id=int(base),
        writer_a_snapshot_id=a_id,
        writer_b_snapshot_id=int(writer_b.currentSnapshot().snapshotId()),
    )


# ---------------------------------------------------------------- the five races


def _append_file(spark: Any, handle: Any, target: Any, region: str, rows: list[dict[str, Any]], label: str) -> None:
    """Append one new data file of ``rows`` in ``region`` through ``target``: ``handle`` or a transaction on it."""
    target.newAppend().appendFile(
        write_data_file(spark, handle, rows, partition={"region": region}, label=label)
    ).commit()


def _append(region: str, rows: list[dict[str, Any]], label: str) -> Commit:
    def commit(spark: Any, handle: Any) -> None:
        _append_file(spark, handle, handle, region, rows, label)

    return commit


def appends_race(spark: Any, table_name: str) -> RaceOutcome:
    """Two appends from one base: B's commit loses the rename, is retried on A's snapshot, and succeeds."""

    def stage(spark: Any, handle: Any, tx: Any) -> None:
        _append_file(spark, handle, tx, "us", [{"id": 6, "region": "us", "qty": 1}], "writer-b-append")

    return race(
        spark,
        table_name,
        "append vs append",
        stage_b=stage,
        commit_a=_append("apac", [{"id": 7, "region": "apac", "qty": 4}], "writer-a-append"),
    )


def deletes_race(spark: Any, table_name: str) -> RaceOutcome:
    """Both writers delete the same data file; B validates that the files it deletes still exist."""
    (target,) = data_files(spark, fresh_handle(spark, table_name), region="apac", id=3)

    def stage(spark: Any, handle: Any, tx: Any) -> None:
        tx.newDelete().deleteFile(target).validateFilesExist().commit()

    def commit(spark: Any, handle: Any) -> None:
        handle.newDelete().deleteFile(target).commit()

    return race(spark, table_name, "delete vs delete", stage_b=stage, commit_a=commit)


def overwrite_race(spark: Any, table_name: str) -> RaceOutcome:
    """B overwrites region 'eu' with conflict detection; A appends an 'eu' row first: B must fail."""

    def stage(spark: Any, handle: Any, tx: Any) -> None:
        expressions = jvm(spark).org.apache.iceberg.expressions.Expressions
        eu = expressions.equal("region", "eu")
        rows = [{"id": 2, "region": "eu", "qty": 30}, {"id": 4, "region": "eu", "qty": 60}]
        new_file = write_data_file(spark, handle, rows, partition={"region": "eu"}, label="writer-b-overwrite")
        (
            tx.newOverwrite()
            .overwriteByRowFilter(eu)
            .addFile(new_file)
            .validateFromSnapshot(handle.currentSnapshot().snapshotId())
            .conflictDetectionFilter(eu)
            .validateNoConflictingData()
            .validateNoConflictingDeletes()
            .commit()
        )

    return race(
        spark,
        table_name,
        "overwrite vs append",
        stage_b=stage,
        commit_a=_append("eu", [{"id": 8, "region": "eu", "qty": 9}], "writer-a-append"),
    )


def _compaction(region: str, rows: list[dict[str, Any]], label: str) -> Stage:
    """A compaction (RewriteFiles): replace every data file of ``region`` by one file with ``rows``."""

    def stage(spark: Any, handle: Any, tx: Any) -> None:
        snapshot = handle.currentSnapshot()
        rewrite = tx.newRewrite().validateFromSnapshot(snapshot.snapshotId())
        # Compaction keeps the rewritten rows' data sequence number, as Spark's rewrite does, so
        # that deletes committed meanwhile would still apply to them.
        rewrite = rewrite.dataSequenceNumber(snapshot.sequenceNumber())
        for old in data_files(spark, handle, region=region):
            rewrite = rewrite.deleteFile(old)
        rewrite.addFile(write_data_file(spark, handle, rows, partition={"region": region}, label=label)).commit()

    return stage


def compaction_race(spark: Any, table_name: str) -> RaceOutcome:
    """B compacts region 'eu' while A appends to 'apac': B's files are untouched, so its retry commits."""
    rows = [
        {"id": 2, "region": "eu", "qty": 3},
        {"id": 4, "region": "eu", "qty": 6},
        {"id": 8, "region": "eu", "qty": 9},
    ]
    return race(
        spark,
        table_name,
        "compaction vs append",
        stage_b=_compaction("eu", rows, "writer-b-compaction"),
        commit_a=_append("apac", [{"id": 9, "region": "apac", "qty": 1}], "writer-a-append"),
    )


def compaction_delete_race(spark: Any, table_name: str) -> RaceOutcome:
    """B compacts region 'us' while A deletes a row of one of those files by position: B must fail."""
    rows = [
        {"id": 1, "region": "us", "qty": 5},
        {"id": 5, "region": "us", "qty": 2},
        {"id": 6, "region": "us", "qty": 1},
    ]

    def commit(spark: Any, handle: Any) -> None:
        (target,) = data_files(spark, handle, region="us", id=5)  # holds only row id 5, at position 0
        deletes = write_position_deletes(
            spark, handle, target, [0], partition={"region": "us"}, label="writer-a-delete-id-5-deletes"
        )
        handle.newRowDelta().addDeletes(deletes).commit()

    return race(
        spark,
        table_name,
        "compaction vs delete",
        stage_b=_compaction("us", rows, "writer-b-compaction"),
        commit_a=commit,
    )


def _step(fn: Callable[[Any, str], RaceOutcome]) -> Callable[[Any, str], str]:
    def run(spark: Any, table_name: str) -> str:
        return fn(spark, table_name).summary()

    run.__name__ = fn.__name__
    return run


CONCURRENT_WRITES = Scenario(
    name="concurrent_writes",
    version=1,
    title="Two writers racing: a retried append, and the delete, overwrite and compaction conflicts that fail",
    steps=(
        create_table(
            "Create a v2 table partitioned by region; row-level deletes are merge-on-read.",
            columns="id INT, region STRING, qty INT",
            format_version=2,
            partitioned_by="region",
            properties=MERGE_ON_READ,
        ),
        Step(
            narrative="Append one row per region: three data files.",
            sql="INSERT INTO {table} VALUES (1, 'us', 5), (2, 'eu', 3), (3, 'apac', 7)",
        ),
        Step(
            narrative="Append to us and eu: each now has two data files.",
            sql="INSERT INTO {table} VALUES (4, 'eu', 6), (5, 'us', 2)",
        ),
        Step(
            narrative="Race 1, append vs append: A commits first; B's rename fails, B re-applies its append on "
            "A's snapshot and commits with attempt 2 in its manifest list name.",
            action=_step(appends_race),
        ),
        Step(
            narrative="Race 2, delete vs delete: both delete the file holding id 3; A wins, and B's retry fails "
            "because a file it must delete is gone.",
            action=_step(deletes_race),
        ),
        Step(
            narrative="Race 3, overwrite vs append: B overwrites region eu with conflict detection; A appended an "
            "eu row first, so B fails and its new data file is left behind unreferenced.",
            action=_step(overwrite_race),
        ),
        Step(
            narrative="Race 4, compaction vs append: B rewrites the eu files into one (a replace); A appends to "
            "apac; B's files are still there, so B's retry commits (attempt 2).",
            action=_step(compaction_race),
        ),
        Step(
            narrative="Race 5, compaction vs delete: B rewrites the us files; A deletes a row of one of them by "
            "position; B fails, leaving its compacted file behind.",
            action=_step(compaction_delete_race),
        ),
    ),
    claims=Claims(
        operations=("append", "append", "append", "append", "delete", "append", "append", "replace", "delete"),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0}),
        delete_formats=frozenset({"PARQUET"}),
        format_version=2,
    ),
    tags=("optimistic-concurrency", "commit-retry", "replace", "orphan-files"),
)
