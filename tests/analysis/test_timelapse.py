"""The time-lapse equals a full listing at every snapshot of every scenario table: its totals equal
the aggregates of ``inspect.files(at=...)`` and of Spark's ``files`` table, its per-partition state equals
``inspect.partitions(at=...)``, and what each commit changed equals the commit's summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _support.java_oracle import java_files

import icebook
from icebook.analysis.history.timelapse import STATE_COLUMNS, Timelapse
from icebook.scenarios import SCENARIOS
from icebook.table import Table

pytestmark = pytest.mark.spark

# The frame columns that aggregate live files, with how to compute each from a files listing.
TOTALS = (
    "data_files",
    "records",
    "bytes",
    "position_delete_files",
    "position_deletes",
    "equality_delete_files",
    "equality_deletes",
    "delete_files",
    "delete_bytes",
    "partitions",
)


@pytest.fixture(scope="module")
def tables(scenario_locations: dict[str, Path]) -> dict[str, Table]:
    return {name: icebook.open(str(path)) for name, path in scenario_locations.items()}


JAVA_COLUMNS = ["content", "file_size_in_bytes", "content_size_in_bytes", "record_count", "partition"]


def totals_of_listing(files: pd.DataFrame, partitioned: bool) -> dict[str, int]:
    """The frame totals, from ``inspect.files(at=...)``."""
    content = files["content"].astype(int)
    data, pos, eq = files[content == 0], files[content == 1], files[content == 2]
    deletes = files[content != 0]
    sizes = deletes["content_size_in_bytes"].fillna(deletes["file_size_in_bytes"]).astype("int64")
    if partitioned:
        partitions = len({repr(sorted(dict(p).items())) for p in data["partition"]})
    else:
        partitions = 1 if len(data) else 0
    return {
        "data_files": len(data),
        "records": int(data["record_count"].sum()),
        "bytes": int(data["file_size_in_bytes"].sum()),
        "position_delete_files": len(pos),
        "position_deletes": int(pos["record_count"].sum()),
        "equality_delete_files": len(eq),
        "equality_deletes": int(eq["record_count"].sum()),
        "delete_files": len(deletes),
        "delete_bytes": int(sizes.sum()),
        "partitions": partitions,
    }


def totals_of_spark(spark: Any, fq: str, snapshot_id: int, partitioned: bool) -> dict[str, int]:
    """The frame totals, from Spark's ``files`` metadata table at the snapshot."""
    rows = spark.sql(
        "SELECT content, count(*) AS files, coalesce(sum(record_count), 0) AS records, "
        "coalesce(sum(file_size_in_bytes), 0) AS bytes, "
        "coalesce(sum(coalesce(content_size_in_bytes, file_size_in_bytes)), 0) AS content_bytes "
        f"FROM {fq}.files VERSION AS OF {snapshot_id} GROUP BY content"
    ).collect()
    by = {r.content: r for r in rows}

    def get(content: int, what: str) -> int:
        return int(getattr(by[content], what)) if content in by else 0

    if partitioned:
        partitions = (
            spark.sql(
                f"SELECT count(DISTINCT partition) AS n FROM {fq}.files VERSION AS OF {snapshot_id} WHERE content = 0"
            )
            .collect()[0]
            .n
        )
    else:
        partitions = 1 if get(0, "files") else 0
    return {
        "data_files": get(0, "files"),
        "records": get(0, "records"),
        "bytes": get(0, "bytes"),
        "position_delete_files": get(1, "files"),
        "position_deletes": get(1, "records"),
        "equality_delete_files": get(2, "files"),
        "equality_deletes": get(2, "records"),
        "delete_files": get(1, "files") + get(2, "files"),
        "delete_bytes": get(1, "content_bytes") + get(2, "content_bytes"),
        "partitions": int(partitions),
    }


def partition_state(frame: pd.DataFrame, partitioned: bool) -> dict[str, tuple[int, ...]]:
    columns = [c for c in STATE_COLUMNS if c != "delete_file_size_in_bytes"]
    out = {}
    for row in frame.to_dict("records"):
        key = repr(sorted(dict(row["partition"]).items())) if partitioned else "()"
        out[key] = tuple(int(row[c]) for c in columns)
    return out


def summary_changes(summary: dict[str, str]) -> dict[str, int] | None:
    if "added-data-files" not in summary and "deleted-data-files" not in summary and "added-records" not in summary:
        return None
    get = lambda key: int(summary.get(key, "0"))  # noqa: E731
    return {
        "added_data_files": get("added-data-files"),
        "removed_data_files": get("deleted-data-files"),
        "added_delete_files": get("added-delete-files"),
        "removed_delete_files": get("removed-delete-files"),
        "added_records": get("added-records"),
        "removed_records": get("deleted-records"),
    }


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_every_frame_equals_a_full_listing_and_spark(spark: Any, tables: dict[str, Table], name: str) -> None:
    t = tables[name]
    lapse = t.timelapse()
    frames = lapse.to_pandas()
    assert list(frames["snapshot_id"]) == [
        s.snapshot_id for s in sorted(t.snapshots, key=lambda s: (s.timestamp_ms, s.sequence_number or 0))
    ]
    assert len(frames) == len(t.snapshots) > 0
    fq = SCENARIOS[name].table
    for index, frame in frames.iterrows():
        sid = int(frame["snapshot_id"])
        where = f"{name}@{sid}"
        ours = {k: int(frame[k]) for k in TOTALS}
        assert ours == totals_of_listing(t.inspect.files(at=sid), lapse.partitioned), where
        if SCENARIOS[name].spark_reads:
            assert ours == totals_of_spark(spark, fq, sid, lapse.partitioned), where
        else:  # Spark cannot read this table: Iceberg's Java manifest readers list the files instead
            assert not lapse.partitioned, where  # java_files gives a partition as text only
            java = pd.DataFrame(java_files(spark, t.location, sid), columns=JAVA_COLUMNS)
            assert ours == totals_of_listing(java, lapse.partitioned), where
        expected = partition_state(t.inspect.partitions(at=sid), lapse.partitioned)
        assert partition_state(lapse.partitions_at(int(index)), lapse.partitioned) == expected, where
        changes = summary_changes(dict(t.snapshot(sid).summary or {}))
        if changes is not None:
            assert {k: int(frame[k]) for k in changes} == changes, where


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_a_refs_time_lapse_is_its_ancestry_with_the_same_frames(tables: dict[str, Table], name: str) -> None:
    t = tables[name]
    whole = t.timelapse().to_pandas().set_index("snapshot_id")
    for ref in t.refs:
        lapse = t.timelapse(ref=ref).to_pandas()
        head = t.snapshot(ref).snapshot_id
        assert int(lapse["snapshot_id"].iloc[-1]) == head
        parents = list(lapse["parent_id"].iloc[1:])
        assert [int(p) for p in parents] == [int(s) for s in lapse["snapshot_id"].iloc[:-1]]
        mine = lapse.set_index("snapshot_id")[list(TOTALS)]
        assert mine.equals(whole.loc[mine.index, list(TOTALS)]), f"{name}:{ref}"


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_frames_from_the_manifest_lists_alone_agree(tables: dict[str, Table], name: str) -> None:
    t = tables[name]
    full = t.timelapse().to_pandas()
    lists = t.timelapse(manifests=False)
    assert lists.from_lists and lists.partitions.num_rows == 0 and lists.manifests_read == 0
    frames = lists.to_pandas()
    assert list(frames["snapshot_id"]) == list(full["snapshot_id"])
    for column in ("data_files", "delete_files", "records", "manifests", "schema_id"):
        assert frames[column].equals(full[column]), f"{name}: {column}"
    assert frames["bytes"].isna().all() and frames["added_data_files"].isna().all()


def test_a_frame_whose_parent_is_outside_starts_afresh_and_says_so(tables: dict[str, Table]) -> None:
    t = tables["events"]
    whole = t.timelapse().to_pandas()
    third = int(whole["snapshot_id"].iloc[2])
    lapse = t.timelapse(since=third)
    frames = lapse.to_pandas()
    assert int(frames["snapshot_id"].iloc[0]) == third
    assert bool(frames["afresh"].iloc[0])
    assert "not in this time-lapse (committed before since)" in frames["afresh_reason"].iloc[0]
    assert not frames["afresh"].iloc[1:].any()
    totals = frames.set_index("snapshot_id")[list(TOTALS)]
    assert totals.equals(whole.set_index("snapshot_id").loc[totals.index, list(TOTALS)])
    until = int(whole["snapshot_id"].iloc[4])
    assert list(t.timelapse(until=until).to_pandas()["snapshot_id"]) == list(whole["snapshot_id"].iloc[:5])


def test_an_expired_parent_starts_afresh(tables: dict[str, Table], tmp_path: Path) -> None:
    """A metadata file whose oldest snapshots were expired: the first remaining frame reads all of its manifests."""
    import json

    t = tables["events"]
    source = Path(t.metadata_location)
    obj = json.loads(source.read_text())
    oldest = min(obj["snapshots"], key=lambda s: s["timestamp-ms"])
    obj["snapshots"] = [s for s in obj["snapshots"] if s["snapshot-id"] != oldest["snapshot-id"]]
    obj["snapshot-log"] = [e for e in obj["snapshot-log"] if e["snapshot-id"] != oldest["snapshot-id"]]
    trimmed = tmp_path / source.name
    trimmed.write_text(json.dumps(obj))
    lapse: Timelapse = icebook.open(str(trimmed)).timelapse()
    frames = lapse.to_pandas()
    assert frames["afresh"].tolist() == [True] + [False] * (len(frames) - 1)
    assert frames["afresh_reason"].iloc[0] == f"parent {oldest['snapshot-id']} expired"
    whole = t.timelapse().to_pandas().set_index("snapshot_id")
    mine = frames.set_index("snapshot_id")[list(TOTALS)]
    assert mine.equals(whole.loc[mine.index, list(TOTALS)])
