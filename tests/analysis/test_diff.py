"""Snapshot diffs against Spark: the added and removed files of any two snapshots equal the set
differences of Spark's ``files`` metadata tables at both, and only unshared manifests are read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _support.fuzz import DamagedFileIO
from _support.java_oracle import java_files

import icebook
from icebook.analysis.history.diff import SnapshotDiff, diff
from icebook.analysis.history.metadata_history import MetadataHistory
from icebook.display.registry import render_html, render_text
from icebook.io.fileio import ArrowFileIO
from icebook.scenarios import SCENARIOS
from icebook.table import Table
from icebook.table.opening import open_table

pytestmark = pytest.mark.spark

Key = tuple[str, int | None]
Facts = tuple[int, int, int, int]  # content, spec_id, record_count, file_size_in_bytes


@pytest.fixture(scope="module")
def tables(scenario_locations: dict[str, Path]) -> dict[str, Table]:
    return {name: icebook.open(path) for name, path in scenario_locations.items()}


class SparkFiles:
    """Spark's ``files`` table at a snapshot, keyed like icebook keys files (path, DV offset); for a table Spark
    cannot read (``Scenario.spark_reads``), Iceberg's Java manifest readers' listing of the same rows."""

    def __init__(self, spark: Any, location: Path | str | None = None) -> None:
        self.spark = spark
        self.location = location
        self.cache: dict[tuple[str, int], dict[Key, Facts]] = {}

    def at(self, fq: str, snapshot_id: int) -> dict[Key, Facts]:
        if (fq, snapshot_id) not in self.cache and self.location is not None:
            self.cache[(fq, snapshot_id)] = {
                (r["file_path"], r["content_offset"]): (
                    r["content"],
                    r["spec_id"],
                    r["record_count"],
                    r["file_size_in_bytes"],
                )
                for r in java_files(self.spark, self.location, snapshot_id)
            }
        if (fq, snapshot_id) not in self.cache:
            rows = self.spark.sql(
                "SELECT content, file_path, content_offset, spec_id, record_count, file_size_in_bytes "
                f"FROM {fq}.files VERSION AS OF {snapshot_id}"
            ).collect()
            self.cache[(fq, snapshot_id)] = {
                (r.file_path, r.content_offset): (r.content, r.spec_id, r.record_count, r.file_size_in_bytes)
                for r in rows
            }
        return self.cache[(fq, snapshot_id)]


def ours(frame: pd.DataFrame) -> dict[Key, Facts]:
    out: dict[Key, Facts] = {}
    for r in frame.itertuples(index=False):
        offset = None if pd.isna(r.content_offset) else int(r.content_offset)
        out[(r.file_path, offset)] = (int(r.content), int(r.spec_id), int(r.record_count), int(r.file_size_in_bytes))
    return out


def assert_matches_spark(d: SnapshotDiff, spark_files: SparkFiles, fq: str) -> None:
    assert d.a is not None and d.b is not None
    at_a = spark_files.at(fq, d.a.snapshot_id)
    at_b = spark_files.at(fq, d.b.snapshot_id)
    expected_added = {k: v for k, v in at_b.items() if k not in at_a}
    expected_removed = {k: v for k, v in at_a.items() if k not in at_b}
    what = f"{fq} {d.a.snapshot_id} -> {d.b.snapshot_id}"
    assert ours(d.added_files) == expected_added, f"{what}: added files differ from Spark's"
    assert ours(d.removed_files) == expected_removed, f"{what}: removed files differ from Spark's"
    assert len(d.added_files) == len(expected_added), f"{what}: a file listed twice"
    assert len(d.removed_files) == len(expected_removed), f"{what}: a file listed twice"


def pairs(t: Table) -> list[tuple[int, int]]:
    """Every parent -> child step, the whole history, and the same backwards."""
    snaps = t.snapshots
    known = {s.snapshot_id for s in snaps}
    out = [(s.parent_snapshot_id, s.snapshot_id) for s in snaps if s.parent_snapshot_id in known]
    first, current = snaps[0].snapshot_id, t.snapshot("main").snapshot_id
    out += [(first, current), (current, first)]
    return [(a, b) for a, b in out if a is not None]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_added_and_removed_files_equal_spark_set_differences(spark: Any, tables: dict[str, Table], name: str) -> None:
    t = tables[name]
    spark_files = SparkFiles(spark, None if SCENARIOS[name].spark_reads else t.location)
    checked = 0
    for a, b in pairs(t):
        d = diff(t, a, b, progress=False)
        assert_matches_spark(d, spark_files, SCENARIOS[name].table)
        checked += 1
    assert checked >= len(t.snapshots)


def test_across_branches_and_tags_equal_spark(spark: Any, tables: dict[str, Table]) -> None:
    t = tables["events"]
    spark_files = SparkFiles(spark)
    refs = {r.name: r.snapshot_id for r in spark.sql("SELECT name, snapshot_id FROM lake.db.events.refs").collect()}
    tag = refs["release-2024-01"]
    for a, b in [("main", "audit"), ("audit", "main"), ("release-2024-01", "audit"), ("audit", "release-2024-01")]:
        d = diff(t, a, b, progress=False)
        assert d.a is not None and d.b is not None
        assert (d.a.snapshot_id, d.b.snapshot_id) == (refs[a], refs[b])
        assert_matches_spark(d, spark_files, "lake.db.events")

    across = diff(t, "main", "audit", progress=False)
    # main and audit diverged at the tagged snapshot: one commit on main, two on the branch.
    assert across.path.relation == "diverged"
    assert across.path.common_ancestor == tag
    assert [s.operation for s in across.path.a_side] == ["append"]
    assert [s.operation for s in across.path.b_side] == ["append", "delete"]
    assert across.path.b_side[-1].snapshot_id == refs["audit"]

    forward = diff(t, "release-2024-01", "audit", progress=False)
    assert forward.path.relation == "a_before_b"
    assert [s.snapshot_id for s in forward.path.b_side][-1] == refs["audit"]
    backward = diff(t, "audit", "release-2024-01", progress=False)
    assert backward.path.relation == "b_before_a"
    assert ours(backward.added_files) == ours(forward.removed_files)
    assert ours(backward.removed_files) == ours(forward.added_files)


def test_points_in_time_resolve_like_refs(tables: dict[str, Table]) -> None:
    t = tables["events"]
    log = t.metadata.snapshot_log
    by_time = diff(t, _iso(log[0].timestamp_ms), _iso(log[-1].timestamp_ms), progress=False)
    by_id = diff(t, log[0].snapshot_id, log[-1].snapshot_id, progress=False)
    assert ours(by_time.added_files) == ours(by_id.added_files)
    assert by_time.a == by_id.a and by_time.b == by_id.b


def _iso(ms: int) -> str:
    return pd.Timestamp(ms, unit="ms", tz="UTC").isoformat()


class RecordingFileIO(ArrowFileIO):
    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    def open_input(self, path: str):  # type: ignore[no-untyped-def]
        self.opened.append(path)
        return super().open_input(path)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_reads_only_the_manifests_the_snapshots_do_not_share(scenario_locations: dict[str, Path], name: str) -> None:
    for a, b in pairs(icebook.open(scenario_locations[name])):
        io = RecordingFileIO()
        t = open_table(str(scenario_locations[name]), fileio=io)
        d = diff(t, a, b, read_history=False, progress=False)
        unshared = {m.manifest_path for m in (*d.added_manifests, *d.removed_manifests)}
        shared = {m.manifest_path for m in d.shared_manifests}
        assert t.store.reads == d.manifests_read
        read = {p for p in io.opened if p.endswith(".avro") and "snap-" not in p.rsplit("/", 1)[-1]}
        assert read <= unshared, f"{name} {a}->{b}: read {read - unshared} beyond the unshared manifests"
        assert not read & shared
        if t.metadata.snapshot_by_id(b).parent_snapshot_id == a:
            # parent -> child: only the manifests the child wrote (its ADDED and DELETED entries)
            assert read == {m.manifest_path for m in d.added_manifests}, f"{name} {a}->{b}"
        else:
            assert read == unshared


def test_a_commit_that_reuses_manifests_reads_few(
    tables: dict[str, Table], scenario_locations: dict[str, Path]
) -> None:
    # The second append of events reuses the first manifest: the diff reads only the new one.
    t = open_table(str(scenario_locations["events"]))
    first, second = t.snapshots[0], t.snapshots[1]
    d = diff(t, first.snapshot_id, second.snapshot_id, progress=False)
    assert len(d.shared_manifests) == 1 and len(d.removed_manifests) == 0
    assert t.store.reads == len(d.added_manifests) == 1
    assert len(d.added_files) == 3 and d.removed_files.empty


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_counts_agree_with_summary_totals(tables: dict[str, Table], name: str) -> None:
    # total-records counts data-file records; total-data-files / total-delete-files count live files.
    t = tables[name]
    for a, b in pairs(t):
        d = diff(t, a, b, progress=False)
        deltas = dict(zip(d.summary_deltas["metric"], d.summary_deltas["delta"], strict=True))
        c = d.counts()
        assert deltas["total-records"] == c["added_records"] - c["removed_records"]
        assert deltas["total-data-files"] == c["added_data_files"] - c["removed_data_files"]
        assert deltas["total-delete-files"] == c["added_delete_files"] - c["removed_delete_files"]
        assert deltas["total-files-size"] == c["added_bytes"] - c["removed_bytes"]
        per_partition = d.partition_changes
        assert per_partition["added_data_files"].sum() == c["added_data_files"]
        assert per_partition["removed_records"].sum() == c["removed_records"]


def test_files_are_shaped_like_inspect_files(tables: dict[str, Table]) -> None:
    t = tables["events"]
    d = diff(t, "main", "audit", progress=False)
    expected = t.inspect.files(at="main")
    assert list(d.added_files.columns) == list(expected.columns)
    assert list(d.added_files.dtypes) == list(expected.dtypes)
    frame = d.to_pandas()
    assert list(frame.columns) == ["change", *expected.columns]
    assert set(frame["change"]) == {"added", "removed"}


def test_schema_and_spec_changes_are_what_spark_did(spark: Any, tables: dict[str, Table]) -> None:
    t = tables["events"]
    first = t.snapshots[0].snapshot_id
    d = diff(t, first, "main", progress=False)
    kinds = {(c.kind, c.name, c.before, c.after) for c in d.schema_changes}
    assert ("renamed", "page", "payload", "page") in kinds
    assert {(c.kind, c.field_id) for c in d.schema_changes} == {("added", 7), ("renamed", 5), ("dropped", 4)}
    # The change list explains Spark's columns at both snapshots.
    before = spark.sql(f"SELECT * FROM lake.db.events VERSION AS OF {first}").columns
    after = spark.sql("SELECT * FROM lake.db.events").columns
    names = set(before)
    for c in d.schema_changes:
        if c.kind == "added":
            names.add(c.name)
        elif c.kind == "dropped":
            names.discard(c.name)
        elif c.kind == "renamed":
            names.discard(c.before)
            names.add(c.after)
    assert names == set(after)
    assert [(c.kind, c.name, c.after) for c in d.spec_changes] == [
        ("spec_now_used", "spec 1", str(t.metadata.partition_specs[1])),
        ("added", "ts_day", "day(ts)"),
    ]
    assert d.spec_ids == (frozenset({0}), frozenset({0, 1}))
    assert d.property_changes == () and d.sort_order_changes == ()
    assert d.notes == ()
    assert d.schema_ids == (0, 3)


def test_properties_and_html_escape_table_strings(tmp_path: Path, scenario_locations: dict[str, Path]) -> None:
    # A copy of the current metadata file with hostile names: every one must reach HTML escaped.
    source = icebook.open(scenario_locations["events"])
    obj = json.loads(Path(source.metadata_location).read_text())
    hostile = "<script>alert(1)</script>"
    obj["properties"][hostile] = "<b>bold</b>"
    obj["properties"]["write.delete.mode"] = "copy-on-write"
    obj["refs"][hostile] = {"type": "tag", "snapshot-id": obj["current-snapshot-id"]}
    for schema in obj["schemas"]:
        if schema["schema-id"] == obj["current-schema-id"]:
            schema["fields"][-1]["doc"] = '<img src=x onerror="alert(2)">'
    copy = tmp_path / "v99.metadata.json"
    copy.write_text(json.dumps(obj))
    t = icebook.open(copy)
    d = diff(t, "release-2024-01", hostile, progress=False)
    changed = {(c.kind, c.name, c.before, c.after) for c in d.property_changes}
    assert ("set", hostile, None, "<b>bold</b>") in changed
    assert ("changed", "write.delete.mode", "merge-on-read", "copy-on-write") in changed
    assert any(c.kind == "doc_changed" for c in d.schema_changes)
    page = render_html(d)
    assert "<script" not in page and "<b>bold" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    # Added rows green, removed red: by class, with the colours in the stylesheet the page carries.
    assert 'class="ib-added"' in page and ".ib-added { color: #1a7f37; }" in page
    assert 'class="ib-removed"' in page and ".ib-removed { color: #cf222e; }" in page
    assert hostile in render_text(d)
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_unknown_properties_are_said_to_be_unknown(tables: dict[str, Table]) -> None:
    t = tables["events"]
    d = diff(t, t.snapshots[0].snapshot_id, "main", read_history=False, progress=False)
    assert d.property_changes == ()
    assert any("unknown" in n for n in d.notes)


def test_a_damaged_committing_file_is_named_in_the_note(tables: dict[str, Table]) -> None:
    # The file that committed b exists but is not UTF-8: the note names it and why, not "deleted or never logged".
    t = tables["events"]
    first, b = t.snapshots[0], t.snapshots[-2]
    committing = MetadataHistory(t.metadata, t.fileio).committing(b)
    assert committing is not None and committing.file is not None and committing.state is not None
    data = Path(committing.file).read_bytes()
    damaged = open_table(t.metadata_location, fileio=DamagedFileIO(committing.file, b"\x9e" + data[1:]))
    clean = diff(t, first.snapshot_id, b.snapshot_id, progress=False)
    d = diff(damaged, first.snapshot_id, b.snapshot_id, progress=False)
    assert clean.notes == ()
    assert d.notes == (
        f"b: the metadata file that committed snapshot {b.snapshot_id} may be one that could not be read "
        f"(metadata {committing.file}: not valid UTF-8 at byte 0), so its default partition spec, sort order and "
        "table properties are unknown; only the current properties are known",
    )
    assert d.property_changes == () and f"note: {d.notes[0]}" in render_text(d)
    assert d.added_files.equals(clean.added_files) and d.schema_changes == clean.schema_changes


def test_same_snapshot_is_empty(tables: dict[str, Table]) -> None:
    t = tables["orders_cow"]
    d = diff(t, "main", "main", progress=False)
    assert d.path.relation == "same"
    assert d.added_files.empty and d.removed_files.empty and d.manifests_read == 0
    assert not d.added_manifests and not d.removed_manifests
    assert "SnapshotDiff" in repr(d) and "\n" not in repr(d)
    assert render_text(d).startswith("SnapshotDiff")
