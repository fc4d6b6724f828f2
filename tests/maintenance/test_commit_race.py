"""A real race: Iceberg's Java client (in the Spark JVM, through Spark's JDBC catalog) and PyIceberg (its SQL
catalog, the same sqlite file) commit to one table from two threads, round after round, arranged so that one
writer must lose each round (``_support/race.py``). Every commit a library acknowledged is in the table's
history; every conflict was retried or reported; and icebook's commit forensics tell, from the table's files
alone, what the writers recorded: which commits were retried (and, for Java, after how many attempts), and
which files the losers left behind, which ``orphans()`` lists.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from _support.race import APPEND, JAVA, OVERWRITE, PY, JavaWriter, Log, PyIcebergWriter, Round, plain, race

import icebook
from icebook.engines import spark_catalogs

pytestmark = pytest.mark.spark

ROUNDS = 12
"""Rounds cycle through four arrangements (the winner, and what the loser does), three times each."""
ARRANGEMENTS = ((JAVA, APPEND), (PY, APPEND), (PY, OVERWRITE), (JAVA, OVERWRITE))


@pytest.fixture()
def race_table(spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Any, Path]:
    """A table in a SQL catalog of its own under ``tmp_path``, configured for PyIceberg as users do and in
    Spark under the same name (a fresh name: Spark keeps a catalog it loaded for the session's life)."""
    from pyiceberg.catalog import load_catalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import IntegerType, NestedField, StringType

    name = f"race{uuid.uuid4().hex[:8]}"  # no underscore: PyIceberg reads one in a variable as a dash
    props = {"type": "sql", "uri": f"sqlite:///{tmp_path}/catalog.db", "warehouse": f"file://{tmp_path}/wh"}
    for key, value in props.items():
        monkeypatch.setenv(f"PYICEBERG_CATALOG__{name.upper()}__{key.upper()}", value)
    catalog = load_catalog(name, **props)  # PyIceberg read its environment when imported
    catalog.create_namespace("db")
    schema = Schema(
        NestedField(1, "round", IntegerType(), required=False),
        NestedField(2, "writer", StringType(), required=False),
        NestedField(3, "n", IntegerType(), required=False),
    )
    # Short waits between retries: the loser's retry has no one left to race within its round.
    retry = {"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "10", "format-version": "2"}
    table = catalog.create_table("db.race", schema, properties=retry)
    spark_catalogs.ensure(spark, name, table_location=table.location())
    return name, catalog, tmp_path / "wh" / "db" / "race"


def test_two_writers_race_and_the_forensics_tell_what_they_did(spark: Any, race_table: tuple[str, Any, Path]) -> None:
    name, catalog, location = race_table
    rounds = [Round(i + 1, *ARRANGEMENTS[i % len(ARRANGEMENTS)]) for i in range(ROUNDS)]
    log = Log()
    race(JavaWriter(spark, f"{name}.db.race"), PyIcebergWriter(catalog, "db.race"), rounds, log)

    by_round: dict[int, list[Any]] = defaultdict(list)
    for a in log.attempts:
        by_round[a.round].append(a)
    for rnd in rounds:  # the arrangement held: the winner's one attempt, the loser's lost one and its retry
        (won,) = (a for a in by_round[rnd.number] if a.writer == rnd.winner)
        lost = [a for a in by_round[rnd.number] if a.writer != rnd.winner]
        assert won.outcome == "committed" and won.attempt == 1, won
        assert [a.outcome.split(":")[0] for a in lost] == [
            "lost the swap",
            "committed" if rnd.loser_does == APPEND else "failed",
        ], lost

    t = icebook.open(catalog.load_table("db.race").metadata_location)
    assert plain(t.location) == str(location)  # in the test's own folder, not the shared warehouse
    # Every acknowledged commit is in the history, on main's one line of ancestry.
    history = [s.snapshot_id for s in t.snapshots]
    acknowledged = [snapshot for _, _, snapshot in log.acknowledged]
    assert sorted(acknowledged) == sorted(history), "every acknowledged commit, and nothing else, is in the history"
    chain, at = [], t.current_snapshot
    while at is not None:
        chain.append(at.snapshot_id)
        at = t.metadata.snapshot_by_id(at.parent_snapshot_id) if at.parent_snapshot_id is not None else None
    assert sorted(chain) == sorted(history), "main's ancestry holds every commit: no retry lost another's"
    rows = sorted(row for snapshot in acknowledged for row in log.written_rows[snapshot])
    read = t.read()
    ours = sorted(zip(*(read.column(c).to_pylist() for c in ("round", "writer", "n")), strict=True))
    assert ours == rows
    spark.sql(f"REFRESH TABLE {name}.db.race")
    theirs = sorted(tuple(r) for r in spark.sql(f"SELECT round, writer, n FROM {name}.db.race").collect())
    assert theirs == rows

    orphans = t.maintenance.orphans(older_than=dt.timedelta(0))
    found = t.maintenance.commit_forensics(older_than=dt.timedelta(0))
    assert found.orphans.paths == orphans.paths
    evidence = {c.snapshot_id: c for c in found.commits}
    retried_by_writers = set()
    for attempts in by_round.values():
        for writer in (JAVA, PY):
            mine = [a for a in attempts if a.writer == writer]
            if not mine or mine[-1].outcome != "committed":
                continue
            seen = evidence[mine[-1].snapshot_id]
            if len(mine) > 1:
                retried_by_writers.add(seen.snapshot_id)
            if writer == JAVA:  # one commit UUID across attempts, each attempt counted in the list's name
                assert (seen.attempt, seen.commit_uuid) == (len(mine), mine[0].commit_uuid), (mine, seen)
                assert seen.lost_attempts == len(mine) - 1
            else:  # a new commit UUID each attempt; the data files keep the first one's
                assert seen.commit_uuid == mine[-1].commit_uuid, (mine, seen)
                assert seen.first_commit_uuids == tuple(a.commit_uuid for a in mine[:-1]), (mine, seen)
    print(f"\n{ROUNDS} rounds, {len(log.attempts)} attempts by the writers; forensics: {found.summary()}")
    assert {c.snapshot_id for c in found.retried} == retried_by_writers
    assert len(retried_by_writers) == ROUNDS // 2  # every appending loser retried

    # The losers' leftovers: what the failed attempts wrote and their libraries did not delete.
    failed = [a for a in log.attempts if a.outcome == "lost the swap" and _failed_after(log, a)]
    left = {f for a in failed for f in a.files if Path(f).exists()}
    assert left and left == {f for a in failed for f in a.files[:1]}, "a failed commit leaves its data file only"
    assert {plain(p) for p in orphans.paths} == left
    assert {plain(f.path) for f in found.leftovers} == left
    for a in failed:
        named = {plain(f.path) for f in found.leftovers_of(a.commit_uuid)} if a.commit_uuid else set()
        # PyIceberg names its data files by the commit UUID; the Java client's were named by the writer.
        assert named == ({a.files[0]} if a.writer == PY else set()), a
    # A retried attempt's superseded manifests and manifest lists are deleted by its library.
    superseded = [a for a in log.attempts if a.outcome == "lost the swap" and not _failed_after(log, a)]
    assert superseded and not any(Path(f).exists() for a in superseded for f in a.files[1:] if f not in _kept(log, a))


def _failed_after(log: Log, attempt: Any) -> bool:
    return any(
        a.writer == attempt.writer and a.round == attempt.round and a.outcome.startswith("failed") for a in log.attempts
    )


def _kept(log: Log, attempt: Any) -> set[str]:
    """Files of ``attempt`` that the committed attempt of the same commit still uses (Java reuses its manifest)."""
    final = [
        a for a in log.attempts if (a.writer, a.round) == (attempt.writer, attempt.round) and a.outcome == "committed"
    ]
    if not final:
        return set()
    return {f for f in attempt.files if f in _referenced(final[0])}


def _referenced(committed: Any) -> set[str]:
    import fastavro

    (manifest_list,) = (f for f in committed.files if f.rsplit("/", 1)[-1].startswith("snap-"))
    with open(manifest_list, "rb") as handle:
        return {plain(r["manifest_path"]) for r in fastavro.reader(handle)}
