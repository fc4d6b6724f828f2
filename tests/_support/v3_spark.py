"""What Spark says of a format version 3 table's changes, to hold icebook's diff and time-lapse against: each
data file's delete file at a snapshot (``delete_files``), the data files' row ids (``data_files`` with
``first_row_id``) and a snapshot's assigned ids (the Iceberg Java API's ``Snapshot.firstRowId``/``addedRows``)."""

from __future__ import annotations

from typing import Any

from _support.java_oracle import java_files, java_table
from icebook.analysis.history.diff import diff
from icebook.analysis.history.v3_changes import DvChange, DvChangeKind, V3Changes
from icebook.spec.schema import DELETE_FILE_PATH_ID
from icebook.table import Table

Ref = tuple[str, int | None, int]  # path, offset (vectors only), deleted rows
Facts = tuple[str, str, Ref | None, Ref | None]  # kind, data file, before, after


class SparkSide:
    """What Spark says of one table at a snapshot: each data file's delete file (a vector first, else a
    position delete file for it alone), the live data files' row ids, and a snapshot's assigned ids."""

    def __init__(self, spark: Any, fq: str, location: str | None = None) -> None:
        """With ``location``, a table Spark cannot read: Iceberg's Java manifest readers answer instead."""
        self.spark, self.fq, self.location = spark, fq, location
        if location is not None:
            self.table = java_table(spark, location)
        else:
            self.table = spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, fq)
        self._deletes: dict[int, dict[str, tuple[Ref, bool]]] = {}
        self._data: dict[int, dict[str, tuple[int | None, int]]] = {}

    def deletes(self, sid: int) -> dict[str, tuple[Ref, bool]]:
        if sid not in self._deletes and self.location is not None:
            listed = [r for r in java_files(self.spark, self.location, sid) if r["content"] != 0]
            assert not listed, "java_files gives no referenced data file: a table with deletes needs Spark"
            self._deletes[sid] = {}
        if sid not in self._deletes:
            rows = self.spark.sql(
                "SELECT file_path, upper(file_format) = 'PUFFIN' AS vector, referenced_data_file, content_offset, "
                f"record_count, lower_bounds[{DELETE_FILE_PATH_ID}] AS low, upper_bounds[{DELETE_FILE_PATH_ID}] AS high "
                f"FROM {self.fq}.delete_files VERSION AS OF {sid} WHERE content = 1"
            ).collect()
            out: dict[str, tuple[Ref, bool]] = {}
            for r in rows:
                target = r.referenced_data_file
                if target is None and not r.vector and r.low is not None and r.low == r.high:
                    target = bytes(r.low).decode()
                if target is None:
                    continue
                ref = (r.file_path, r.content_offset if r.vector else None, r.record_count)
                if target not in out or r.vector:
                    out[target] = (ref, bool(r.vector))
            self._deletes[sid] = out
        return self._deletes[sid]

    def data(self, sid: int) -> dict[str, tuple[int | None, int]]:
        if sid not in self._data and self.location is not None:
            rows = [r for r in java_files(self.spark, self.location, sid) if r["content"] == 0]
            self._data[sid] = {r["file_path"]: (r["first_row_id"], r["record_count"]) for r in rows}
        if sid not in self._data:
            rows = self.spark.sql(
                f"SELECT file_path, first_row_id, record_count FROM {self.fq}.data_files VERSION AS OF {sid}"
            ).collect()
            self._data[sid] = {r.file_path: (r.first_row_id, r.record_count) for r in rows}
        return self._data[sid]

    def assigned(self, sid: int) -> tuple[int | None, int | None]:
        snapshot = self.table.snapshot(sid)
        return snapshot.firstRowId(), snapshot.addedRows()

    def dv_changes(self, a: int, b: int) -> set[Facts]:
        before, after = self.deletes(a), self.deletes(b)
        out: set[Facts] = set()
        for data_file in before.keys() | after.keys():
            old = before.get(data_file)
            new = after.get(data_file)
            gone = old if old is not None and old[0] not in {r for r, _ in after.values()} else None
            came = new if new is not None and new[1] and new[0] not in {r for r, _ in before.values()} else None
            if came is not None:
                kind = DvChangeKind.REPLACED if gone is not None else DvChangeKind.NEW
                out.add((kind.value, data_file, gone[0] if gone else None, came[0]))
            elif gone is not None and gone[1]:
                out.add((DvChangeKind.DROPPED.value, data_file, gone[0], None))
        return out

    def row_ids(self, a: int | None, b: int) -> set[tuple[str, int, int]]:
        before = self.data(a) if a is not None else {}
        return {
            (path, first, count)
            for path, (first, count) in self.data(b).items()
            if path not in before and first is not None
        }


def ours(changes: tuple[DvChange, ...]) -> set[Facts]:
    def ref(r: Any) -> Ref | None:
        return None if r is None else (r.path, r.offset, r.deleted_rows)

    return {(c.kind.value, c.data_file, ref(c.before), ref(c.after)) for c in changes}


def assert_v3_matches_spark(v3: V3Changes, side: SparkSide, a: int | None, b: int, commits: list[int]) -> None:
    what = f"{side.fq} {a} -> {b}"
    if a is not None:
        assert ours(v3.dv_changes) == side.dv_changes(a, b), f"{what}: deletion vectors differ from Spark's"
    assert {(r.file_path, r.first, r.count) for r in v3.row_ids} == side.row_ids(a, b), f"{what}: row ids"
    expected = [(sid, *side.assigned(sid)) for sid in commits if side.assigned(sid)[0] is not None]
    assert [(c.snapshot_id, c.first_row_id, c.added_rows) for c in v3.commits] == expected, f"{what}: commits"


def check_diffs(side: SparkSide, t: Table) -> int:
    """Every parent -> child diff and the whole history's equal Spark; the vectors replaced, counted."""
    known = {s.snapshot_id for s in t.snapshots}
    replaced = 0
    for s in t.snapshots:
        if s.parent_snapshot_id not in known:
            continue
        d = diff(t, s.parent_snapshot_id, s.snapshot_id, progress=False)
        assert_v3_matches_spark(d.v3, side, s.parent_snapshot_id, s.snapshot_id, [s.snapshot_id])
        replaced += len(d.v3.replacements)
    first, last = t.snapshots[0], t.snapshot("main")
    whole = diff(t, first.snapshot_id, last.snapshot_id, progress=False)
    assert_v3_matches_spark(
        whole.v3, side, first.snapshot_id, last.snapshot_id, [s.snapshot_id for s in whole.path.b_side]
    )
    return replaced


def check_timelapse(side: SparkSide, t: Table) -> None:
    """Each frame's v3 facts equal Spark's and the diff of the commit with its parent."""
    lapse = t.timelapse()
    frames = lapse.frames.to_pylist()
    assert len(lapse.v3) == len(frames)
    known = {s.snapshot_id for s in t.snapshots}
    for f, commit in zip(frames, lapse.v3, strict=True):
        sid, parent = f["snapshot_id"], f["parent_id"]
        if parent is not None and parent not in known:
            continue  # Spark cannot read an expired parent: nothing to compare the commit with
        assert (f["first_row_id"], f["added_rows"]) == side.assigned(sid)
        assert f["dv_replacements"] == len(commit.replacements)
        assert_v3_matches_spark(commit, side, parent, sid, [sid])
        if parent is not None:
            d = diff(t, parent, sid, progress=False)
            assert (ours(d.v3.dv_changes), d.v3.row_ids, d.v3.commits) == (
                ours(commit.dv_changes),
                commit.row_ids,
                commit.commits,
            )
    listed = t.timelapse(manifests=False).frames.to_pylist()
    assert [f["first_row_id"] for f in listed] == [f["first_row_id"] for f in frames]
    assert {f["dv_replacements"] for f in listed} == {None}
