"""Commit forensics over a table two PyIceberg writers raced on (a SQL catalog in a temporary folder): a
retried append, an overwrite whose retry failed validation, and a writer that staged and never committed.
The race with Iceberg's Java client (attempt numbers in manifest list names) is in ``test_commit_race``."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icebook
from icebook.analysis.maintenance.commit_forensics import commit_forensics


def _rows(n: int) -> pa.Table:
    return pa.table({"round": pa.array([n], pa.int32()), "n": pa.array([n * 10], pa.int64())})


@pytest.fixture()
def catalog(tmp_path: Path) -> Any:
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import IntegerType, LongType, NestedField

    cat = SqlCatalog("forensics", uri=f"sqlite:///{tmp_path}/catalog.db", warehouse=f"file://{tmp_path}/wh")
    cat.create_namespace("db")
    schema = Schema(NestedField(1, "round", IntegerType()), NestedField(2, "n", LongType()))
    cat.create_table("db.t", schema, properties={"commit.retry.min-wait-ms": "1", "commit.retry.max-wait-ms": "2"})
    return cat


def _plain(path: str) -> str:
    return path.removeprefix("file://")


def test_forensics_show_a_retried_commit_a_failed_one_and_an_abandoned_one(catalog: Any) -> None:
    from pyiceberg.exceptions import ValidationException
    from pyiceberg.expressions import EqualTo

    catalog.load_table("db.t").append(_rows(1))
    # A retried append: B stages on the base, A commits, B's swap is refused and PyIceberg retries.
    b = catalog.load_table("db.t").transaction()
    b.append(_rows(2))
    b_staged = b.table_metadata.current_snapshot()
    catalog.load_table("db.t").append(_rows(3))
    b_table = b.commit_transaction()
    b_committed = b_table.metadata.snapshot_by_id(b_staged.snapshot_id)
    assert b_committed.manifest_list != b_staged.manifest_list  # a second attempt committed
    first_uuid = "-".join(b_staged.manifest_list.removesuffix(".avro").split("-")[-5:])
    # A failed overwrite: C replaces round 1, A adds a round-1 row first; C's retry fails validation.
    c = catalog.load_table("db.t").transaction()
    c.overwrite(_rows(1), overwrite_filter=EqualTo("round", 1))
    c_staged = c.table_metadata.current_snapshot()
    io = catalog.load_table("db.t").io
    c_files = {
        e.data_file.file_path
        for m in c_staged.manifests(io)
        for e in m.fetch_manifest_entry(io)
        if e.snapshot_id == c_staged.snapshot_id and int(e.status) == 1  # ADDED by C
    }
    catalog.load_table("db.t").append(_rows(1))
    with pytest.raises(ValidationException):
        c.commit_transaction()
    c_uuid = "-".join(c_staged.manifest_list.removesuffix(".avro").split("-")[-5:])
    c_left = {p for p in c_files if Path(_plain(p)).exists()}
    assert c_left  # the data file C wrote stays
    # An abandoned writer: D stages (writes its data file, manifest and manifest list) and stops.
    d = catalog.load_table("db.t").transaction()
    d.append(_rows(4))
    d_staged = d.table_metadata.current_snapshot()
    d_uuid = "-".join(d_staged.manifest_list.removesuffix(".avro").split("-")[-5:])

    t = icebook.open(catalog.load_table("db.t").metadata_location)
    found = commit_forensics(t, t.maintenance.orphans(older_than=dt.timedelta(0)))
    assert [c.snapshot_id for c in found.retried] == [b_staged.snapshot_id]
    (retried,) = found.retried
    assert retried.first_commit_uuids == (first_uuid,) and retried.commit_uuid != first_uuid
    assert retried.attempt == 0 and retried.lost_attempts is None  # PyIceberg does not count attempts
    assert len(found.commits) == len(t.snapshots) and all(not c.retried for c in found.commits if c is not retried)
    assert {f.path for f in found.leftovers} == set(t.maintenance.orphans(older_than=dt.timedelta(0)).paths)
    assert {_plain(f.path) for f in found.leftovers_of(c_uuid)} == {_plain(p) for p in c_left}
    abandoned = {f.kind: f for f in found.leftovers_of(d_uuid)}
    assert set(abandoned) == {"data", "manifest", "manifest list"}
    assert abandoned["manifest list"].snapshot_id == d_staged.snapshot_id
    assert _plain(abandoned["manifest list"].path) == _plain(d_staged.manifest_list)
    assert len(found.leftovers) == len(c_left) + 3
    frame = found.to_pandas()
    assert frame.loc[frame["retried"], "snapshot_id"].tolist() == [b_staged.snapshot_id]
    assert set(found.leftovers_frame()["kind"]) == {"data", "manifest", "manifest list"}
    assert "1 retried" in repr(found)


@pytest.mark.spark
def test_the_lessons_race_table_forensics(scenario_locations: dict[str, Path]) -> None:
    """The optimistic-concurrency lesson's table (a Hadoop table raced through the Java API): the retried append
    and compaction (attempt 2), and the two data files the writers that failed validation left."""
    t = icebook.open(str(scenario_locations["concurrent_writes"]))
    found = t.maintenance.commit_forensics(older_than=dt.timedelta(0))
    assert sorted(c.operation or "" for c in found.retried) == ["append", "replace"]
    assert all(c.attempt == 2 and c.lost_attempts == 1 and not c.first_commit_uuids for c in found.retried)
    assert [c.snapshot_id for c in found.commits] == [s.snapshot_id for s in t.snapshots]
    assert len(found.leftovers) == 2 and all("writer-b-" in f.path and f.kind == "data" for f in found.leftovers)
    assert all(f.commit_uuid is None for f in found.leftovers)  # named by the writer, not by a convention
