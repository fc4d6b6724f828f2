"""What a change did to deletion vectors and row ids, from entry tables made here: a vector replaced, added,
dropped or rewritten; v2 position deletes for one data file (named, or by equal ``file_path`` bounds) merged
into a vector; row-id ranges; a vector naming no data file is one ``MetadataError`` naming its file and the
field; the HTML escapes every path."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from icebook.analysis.history.v3_changes import (
    DvChangeKind,
    RowIdRange,
    dv_changes,
    merge_ranges,
    v3_changes,
)
from icebook.display.v3_changes_render import v3_html, v3_lines
from icebook.errors import MetadataError
from icebook.io.metric_facts import METRIC_MAP_TYPES
from icebook.spec.schema import DELETE_FILE_PATH_ID
from icebook.spec.snapshots import Snapshot

DATA_A = "s3://b/t/data/a.parquet"
DATA_B = "s3://b/t/data/b.parquet"


def files(*rows: dict[str, Any]) -> pa.Table:
    """An entry table with the columns the rules read (and ``file_path`` bounds)."""
    filled = [
        {
            "content": 0,
            "file_format": "PARQUET",
            "referenced_data_file": None,
            "content_offset": None,
            "first_row_id": None,
            "bounds": None,
            **row,
        }
        for row in rows
    ]
    bounds = [None if r["bounds"] is None else [(DELETE_FILE_PATH_ID, r["bounds"].encode())] for r in filled]
    return pa.table(
        {
            "content": pa.array([r["content"] for r in filled], pa.int32()),
            "file_path": pa.array([r["file_path"] for r in filled], pa.string()),
            "file_format": pa.array([r["file_format"] for r in filled], pa.string()),
            "record_count": pa.array([r["record_count"] for r in filled], pa.int64()),
            "referenced_data_file": pa.array([r["referenced_data_file"] for r in filled], pa.string()),
            "content_offset": pa.array([r["content_offset"] for r in filled], pa.int64()),
            "first_row_id": pa.array([r["first_row_id"] for r in filled], pa.int64()),
            "lower_bounds": pa.array(bounds, METRIC_MAP_TYPES["lower_bounds"]),
            "upper_bounds": pa.array(bounds, METRIC_MAP_TYPES["upper_bounds"]),
        }
    )


def dv(puffin: str, offset: int, data_file: str, rows: int) -> dict[str, Any]:
    return {
        "content": 1,
        "file_path": puffin,
        "file_format": "puffin",  # the format's case is the writer's: the rule reads it in upper case
        "referenced_data_file": data_file,
        "content_offset": offset,
        "record_count": rows,
    }


def test_a_vector_replaced_added_dropped_and_rewritten() -> None:
    removed = files(dv("p1.puffin", 4, DATA_A, 5), dv("p1.puffin", 90, DATA_B, 3), dv("p0.puffin", 4, "c", 2))
    added = files(dv("p2.puffin", 4, DATA_A, 9), dv("p2.puffin", 60, DATA_B, 3), dv("p2.puffin", 99, "d", 1))
    by_file = {c.data_file: c for c in dv_changes(added, removed)}

    replaced = by_file[DATA_A]
    assert replaced.kind == DvChangeKind.REPLACED
    assert (replaced.before_rows, replaced.after_rows) == (5, 9)
    assert replaced.text("a.parquet") == "DV for file a.parquet replaced: 5 → 9 deleted rows"
    assert by_file[DATA_B].text("b") == "DV for file b rewritten: the same 3 deleted rows"
    assert by_file["c"].kind == DvChangeKind.DROPPED and by_file["c"].after is None
    assert by_file["d"].kind == DvChangeKind.NEW and by_file["d"].before is None
    assert [c.data_file for c in dv_changes(added, removed)] == sorted(by_file)


def test_v2_position_deletes_for_one_data_file_merge_into_a_vector() -> None:
    removed = files(
        {"content": 1, "file_path": "pos-a.parquet", "record_count": 2, "referenced_data_file": DATA_A},
        {"content": 1, "file_path": "pos-b.parquet", "record_count": 4, "bounds": DATA_B},
    )
    added = files(dv("p.puffin", 4, DATA_A, 3), dv("p.puffin", 40, DATA_B, 7))
    changes = {c.data_file: c for c in dv_changes(added, removed)}
    assert {c.kind for c in changes.values()} == {DvChangeKind.REPLACED}
    assert changes[DATA_B].before is not None and not changes[DATA_B].before.is_vector
    assert changes[DATA_B].text("b") == "position deletes for file b merged into a DV: 4 → 7 deleted rows"
    # A position delete file for several data files names none of them: a vector for one of them is new.
    wide = files({"content": 1, "file_path": "pos.parquet", "record_count": 4})
    assert [c.kind for c in dv_changes(files(dv("p.puffin", 4, DATA_A, 3)), wide)] == [DvChangeKind.NEW]
    # A position delete file removed with no vector in its place is not a vector dropped.
    assert dv_changes(files(), removed) == ()


def test_row_ids_of_added_files_and_commits() -> None:
    added = files(
        {"file_path": DATA_B, "record_count": 10, "first_row_id": 50},
        {"file_path": DATA_A, "record_count": 50, "first_row_id": 0},
        {"file_path": "old.parquet", "record_count": 7},  # written before an upgrade: no row ids
        dv("p.puffin", 4, DATA_A, 1),
    )
    commit = Snapshot(snapshot_id=7, timestamp_ms=0, first_row_id=0, added_rows=60, summary={"operation": "append"})
    change = v3_changes(added, files(), [commit])
    assert [(r.file_path, r.first, r.last) for r in change.row_ids] == [(DATA_A, 0, 49), (DATA_B, 50, 59)]
    assert change.merged_row_ids() == (RowIdRange(0, 60),)
    assert change.commits[0].assigned == RowIdRange(0, 60)
    assert v3_lines(change) == [
        "1 new DV(s), 1 deleted rows",
        "snapshot 7 (append) assigned row ids 0–59 (first-row-id 0, added-rows 60)",
        "added data files hold row ids 0–59 (2 files)",
    ]
    frame = change.row_id_frame()
    assert list(frame.columns) == ["file_path", "first_row_id", "last_row_id", "records"]
    assert frame["last_row_id"].tolist() == [49, 59]


def test_ranges_merge_where_they_touch_or_overlap() -> None:
    assert merge_ranges([(10, 5), (0, 10), (20, 1), (18, 3)]) == (RowIdRange(0, 15), RowIdRange(18, 3))
    assert merge_ranges([]) == ()
    assert RowIdRange(5, 0).text() == "none at 5"


def test_a_vector_naming_no_data_file_is_one_error_naming_its_file_and_field() -> None:
    damaged = files(dv("s3://b/t/data/broken.puffin", 4, None, 3))  # type: ignore[arg-type]
    with pytest.raises(MetadataError) as raised:
        dv_changes(damaged, files())
    assert raised.value.file == "s3://b/t/data/broken.puffin"
    assert raised.value.field == "referenced_data_file"
    assert "content_offset 4" in str(raised.value)


def test_the_html_escapes_every_path() -> None:
    evil = "s3://b/t/<script>alert(1)</script>.parquet"
    change = v3_changes(
        files(dv("<img src=x onerror=alert(1)>.puffin", 4, evil, 9)),
        files(dv("p.puffin", 4, evil, 5)),
        [],
    )
    html = v3_html(change)
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html and "5 → 9 deleted rows" in html
    assert v3_html(v3_changes(files(), files(), [])) == ""
