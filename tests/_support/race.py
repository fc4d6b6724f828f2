"""Two writers racing on one catalog table: Iceberg's Java API in the Spark JVM and PyIceberg, both through
one SQL catalog (PyIceberg's sqlite tables; Iceberg's ``JdbcCatalog`` on the same file in Spark).

Each round is arranged so that one writer must lose: both writers stage their change on the same base (a
barrier holds each until the other has staged), the round's winner commits, then the loser commits from
its stale base. The catalog's compare-and-swap refuses the loser's first attempt; the loser's library
retries on the winner's snapshot and either commits (an append) or fails the operation's validation (an
overwrite of the round's rows, with conflict detection, when the winner added a row of the round), which the
writer reports. Each writer records every attempt: its outcome, its snapshot, and the files it wrote, read from
what its own library handed back (the staged and the committed snapshot), never from icebook.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

JAVA = "java"
PY = "pyiceberg"
APPEND = "append"
OVERWRITE = "overwrite"
"""An overwrite of the round's rows with conflict detection: fails when the winner added rows of the round."""

SCHEMA_FIELDS = (("round", pa.int32()), ("writer", pa.string()), ("n", pa.int32()))


@dataclass(frozen=True, slots=True)
class Attempt:
    """One commit attempt as its writer saw it."""

    writer: str
    round: int
    attempt: int
    outcome: str
    """``lost the swap``, ``committed`` or ``failed: <exception class>``."""
    snapshot_id: int
    commit_uuid: str | None
    """The commit UUID the attempt wrote its manifest list under (None when it wrote no manifest list)."""
    files: tuple[str, ...]
    """Files this attempt wrote: data files, manifests, its manifest list."""


@dataclass(frozen=True, slots=True)
class Round:
    number: int
    winner: str
    loser_does: str


@dataclass(frozen=True, slots=True)
class Staged:
    """A change a writer staged on its base: its transaction, its snapshot and first manifest list, the files
    it wrote and the rows it holds."""

    tx: Any
    snapshot_id: int
    first_list: str
    files: tuple[str, ...]
    rows: list[tuple[int, str, int]]


@dataclass
class Log:
    attempts: list[Attempt] = field(default_factory=list)
    acknowledged: list[tuple[str, int, int]] = field(default_factory=list)
    """(writer, round, snapshot id) of every commit a library acknowledged."""
    written_rows: dict[int, list[tuple[int, str, int]]] = field(default_factory=dict)
    """Snapshot id -> the rows the writer committed in it."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, attempt: Attempt) -> None:
        with self.lock:
            self.attempts.append(attempt)


def plain(path: str) -> str:
    """A path without its ``file:`` scheme (Java writes ``file:/x``, PyIceberg ``file:///x``)."""
    for prefix in ("file://", "file:"):
        if path.startswith(prefix):
            return path[len(prefix) :]
    return path


# ------------------------------------------------------------------------------------------ the Java writer


class JavaWriter:
    """Iceberg's Java API over Spark's py4j gateway, on the table Spark's catalog loads by name."""

    name = JAVA

    def __init__(self, spark: Any, identifier: str) -> None:
        from icebook.scenarios.javaapi import jvm

        self.spark = spark
        self.iceberg = jvm(spark).org.apache.iceberg
        self.table = self.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, identifier)

    def stage(self, rnd: Round, kind: str) -> Staged:
        """Stage this round's change on the current base (written, not committed)."""
        from icebook.scenarios.javaapi import write_data_file

        self.table.refresh()
        rows = [{"round": rnd.number, "writer": JAVA, "n": rnd.number * 10 + 1}]
        data = write_data_file(self.spark, self.table, rows, partition=None, label=f"java-round-{rnd.number}")
        tx = self.table.newTransaction()
        if kind == APPEND:
            tx.newAppend().appendFile(data).commit()
        else:
            expressions = self.iceberg.expressions.Expressions
            mine = expressions.equal("round", rnd.number)
            (
                tx.newOverwrite()
                .overwriteByRowFilter(mine)
                .addFile(data)
                .validateFromSnapshot(self.table.currentSnapshot().snapshotId())
                .conflictDetectionFilter(mine)
                .validateNoConflictingData()
                .commit()
            )
        staged = tx.table().currentSnapshot()
        snapshot_id = int(staged.snapshotId())
        first_list = str(staged.manifestListLocation())
        manifests = [
            str(m.path()) for m in staged.allManifests(self.table.io()) if int(m.snapshotId() or 0) == snapshot_id
        ]
        files = (plain(str(data.location())), *map(plain, manifests), plain(first_list))
        return Staged(tx, snapshot_id, first_list, files, [(r["round"], r["writer"], r["n"]) for r in rows])

    def commit(self, rnd: Round, staged: Staged, log: Log, *, expect_loss: bool) -> None:
        from icebook.scenarios.javaapi import java_error

        tx, snapshot_id, first_list, files = staged.tx, staged.snapshot_id, staged.first_list, staged.files
        first = _list_uuid(first_list)
        try:
            tx.commitTransaction()
        except Exception as exc:
            error = java_error(exc)
            if error is None:
                raise
            log.record(Attempt(JAVA, rnd.number, 1, "lost the swap", snapshot_id, first, files))
            log.record(Attempt(JAVA, rnd.number, 2, f"failed: {error[0].rsplit('.', 1)[-1]}", snapshot_id, None, ()))
            return
        self.table.refresh()
        committed = str(self.table.snapshot(snapshot_id).manifestListLocation())
        if committed == first_list:  # the first attempt's swap went through
            assert not expect_loss, f"round {rnd.number}: Java's stale commit was not refused"
            log.record(Attempt(JAVA, rnd.number, 1, "committed", snapshot_id, first, files))
        else:
            log.record(Attempt(JAVA, rnd.number, 1, "lost the swap", snapshot_id, first, files))
            log.record(Attempt(JAVA, rnd.number, 2, "committed", snapshot_id, first, (plain(committed),)))
        with log.lock:
            log.acknowledged.append((JAVA, rnd.number, snapshot_id))
            log.written_rows[snapshot_id] = staged.rows


def _list_uuid(manifest_list: str) -> str:
    """The commit UUID of a manifest list ``snap-<id>-<attempt>-<uuid>.avro`` (read by the writer itself)."""
    name = manifest_list.rsplit("/", 1)[-1].removesuffix(".avro")
    return "-".join(name.split("-")[-5:])


# ------------------------------------------------------------------------------------ the PyIceberg writer


class PyIcebergWriter:
    name = PY

    def __init__(self, catalog: Any, identifier: str) -> None:
        self.catalog = catalog
        self.identifier = identifier

    def seed(self, rnd: Round, log: Log) -> None:
        """A row of the round in a file of its own, for the round's overwrite to replace."""
        table = self.catalog.load_table(self.identifier)
        rows = [(rnd.number, "seed", 0)]
        table.append(_rows(rows))
        snapshot = table.current_snapshot()
        assert snapshot is not None
        with log.lock:
            log.acknowledged.append((PY, rnd.number, snapshot.snapshot_id))
            log.written_rows[snapshot.snapshot_id] = rows

    def stage(self, rnd: Round, kind: str) -> Staged:
        from pyiceberg.expressions import EqualTo

        table = self.catalog.load_table(self.identifier)
        rows = [(rnd.number, PY, rnd.number * 10 + 2)]
        tx = table.transaction()
        if kind == APPEND:
            tx.append(_rows(rows))
        else:
            tx.overwrite(_rows(rows), overwrite_filter=EqualTo("round", rnd.number))
        staged = tx.table_metadata.current_snapshot()
        assert staged is not None
        snapshot_id = staged.snapshot_id
        files = _written(table.io, tx.table_metadata, snapshot_id)
        return Staged(tx, snapshot_id, staged.manifest_list, files, rows)

    def commit(self, rnd: Round, staged: Staged, log: Log, *, expect_loss: bool) -> None:
        from pyiceberg.exceptions import CommitFailedException, ValidationException

        tx, snapshot_id, first_list, files = staged.tx, staged.snapshot_id, staged.first_list, staged.files
        first = _list_uuid(first_list)
        try:
            table = tx.commit_transaction()
        except (CommitFailedException, ValidationException) as exc:
            log.record(Attempt(PY, rnd.number, 1, "lost the swap", snapshot_id, first, files))
            log.record(Attempt(PY, rnd.number, 2, f"failed: {type(exc).__name__}", snapshot_id, None, ()))
            return
        snapshot = table.metadata.snapshot_by_id(snapshot_id)
        assert snapshot is not None
        if snapshot.manifest_list == first_list:
            assert not expect_loss, f"round {rnd.number}: PyIceberg's stale commit was not refused"
            log.record(Attempt(PY, rnd.number, 1, "committed", snapshot_id, first, files))
        else:
            again = _written(table.io, table.metadata, snapshot_id, data=False)
            log.record(Attempt(PY, rnd.number, 1, "lost the swap", snapshot_id, first, files))
            log.record(Attempt(PY, rnd.number, 2, "committed", snapshot_id, _list_uuid(snapshot.manifest_list), again))
        with log.lock:
            log.acknowledged.append((PY, rnd.number, snapshot_id))
            log.written_rows[snapshot_id] = staged.rows


def _rows(rows: list[tuple[int, str, int]]) -> pa.Table:
    columns = list(zip(*rows, strict=True))
    return pa.table({name: pa.array(col, kind) for (name, kind), col in zip(SCHEMA_FIELDS, columns, strict=True)})


def _written(io: Any, metadata: Any, snapshot_id: int, *, data: bool = True) -> tuple[str, ...]:
    """The files PyIceberg's staged (or committed) snapshot ``snapshot_id`` wrote: the data files its own
    manifests add, those manifests, and its manifest list."""
    snapshot = metadata.snapshot_by_id(snapshot_id)
    own = [m for m in snapshot.manifests(io) if m.added_snapshot_id == snapshot_id]
    added = [
        e.data_file.file_path
        for m in own
        for e in m.fetch_manifest_entry(io, discard_deleted=True)
        if data and e.snapshot_id == snapshot_id and int(e.status) == 1
    ]
    return tuple(plain(p) for p in (*added, *(m.manifest_path for m in own), snapshot.manifest_list))


# ------------------------------------------------------------------------------------------- the rounds


def race(java: JavaWriter, py: PyIcebergWriter, rounds: list[Round], log: Log, timeout: float = 60.0) -> None:
    """Run ``rounds`` with each writer on a thread of its own; a writer's failure fails the race."""
    writers = {JAVA: java, PY: py}
    staged_both = threading.Barrier(2, timeout=timeout)
    round_over = threading.Barrier(2, timeout=timeout)
    winner_done = threading.Event()
    errors: list[BaseException] = []

    def run(me: str) -> None:
        writer = writers[me]
        try:
            for rnd in rounds:
                if me == rnd.winner:
                    winner_done.clear()
                if rnd.loser_does == OVERWRITE and me == PY:
                    py.seed(rnd, log)  # before either stages: both bases hold the seed row
                round_over.wait()
                kind = rnd.loser_does if me != rnd.winner else APPEND
                staged = writer.stage(rnd, kind)
                staged_both.wait()  # both writers staged on one base
                if me == rnd.winner:
                    writer.commit(rnd, staged, log, expect_loss=False)
                    winner_done.set()
                else:
                    if not winner_done.wait(timeout):
                        raise TimeoutError(f"round {rnd.number}: the winner did not commit")
                    writer.commit(rnd, staged, log, expect_loss=True)
                round_over.wait()
        except BaseException as exc:
            errors.append(exc)
            staged_both.abort()
            round_over.abort()
            winner_done.set()

    threads = [threading.Thread(target=run, args=(me,), name=f"writer-{me}") for me in writers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout * len(rounds))
    real = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
    if real or errors:
        raise (real or errors)[0]
    assert not any(t.is_alive() for t in threads), "a writer did not finish"
