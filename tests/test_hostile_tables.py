"""Broken and hostile tables: each gives a clear IcebookError naming the file (and the field), within
a time limit, through the public surface; none hangs, crashes, or answers with less than the table has.

Damaged Avro files are served by a FileIO that leaves the real files alone; damaged metadata JSON is
written into a private copy of a scenario table.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _support.damaged import ServingFileIO, rewrite_avro, with_edited_entry

import icebook
from icebook.display.registry import render_html, render_text
from icebook.errors import EnvironmentProblem, IcebookError, MetadataError, UnsupportedFeature
from icebook.io.avro_header import parse_container_header
from icebook.table.opening import open_table

LIMIT = 60.0  # seconds: anything slower is treated as a hang


def within_limit(call: Callable[[], Any]) -> Any:
    """``call()``'s result, re-raising what it raised; fails the test if it does not end in time."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = call()
        except BaseException as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(LIMIT)
    assert not thread.is_alive(), f"did not end within {LIMIT} s"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def copy_table(src: Path, dst: Path) -> Path:
    """A private copy whose metadata JSON points at the copy (Avro files still name the original's)."""
    shutil.copytree(src, dst)
    for path in dst.rglob("*"):
        if path.suffix in {".json", ".text"}:
            path.write_text(path.read_text().replace(str(src), str(dst)))
    return dst


def edit_metadata(table: Path, edit: Callable[[dict[str, Any]], None]) -> Path:
    current = Path(icebook.open(table).metadata_location)
    doc = json.loads(current.read_text())
    edit(doc)
    current.write_text(json.dumps(doc))
    return current


def header_only(path: str) -> bytes:
    """The file cut right after its Avro header: valid Avro with no records."""
    data = Path(path).read_bytes()
    return data[: parse_container_header(data)[2]]


# ------------------------------------------------------------------ parent cycles


def _make_cycle(table: Path) -> tuple[list[int], Path]:
    """Point the first snapshot's parent at the third: 1st -> 3rd -> 2nd -> 1st."""
    ids: list[int] = []

    def edit(doc: dict[str, Any]) -> None:
        snaps = doc["snapshots"]
        assert snaps[2]["parent-snapshot-id"] == snaps[1]["snapshot-id"]
        assert snaps[1]["parent-snapshot-id"] == snaps[0]["snapshot-id"]
        ids.extend(s["snapshot-id"] for s in snaps[:3])
        snaps[0]["parent-snapshot-id"] = snaps[2]["snapshot-id"]

    current = edit_metadata(table, edit)
    return ids, current


@pytest.mark.spark
def test_a_parent_cycle_is_an_error_in_changes_and_diff_and_shown_in_lineage(
    scenario_locations: dict[str, Path], tmp_path: Path
) -> None:
    table = copy_table(scenario_locations["events"], tmp_path / "events")
    (first, second, third), current = _make_cycle(table)
    t = icebook.open(table)
    pattern = rf"metadata {current}: snapshots\[\d\]\.parent-snapshot-id: the parent links form a cycle"
    assert t.current_snapshot is not None
    newest = t.current_snapshot.snapshot_id
    with pytest.raises(MetadataError, match=pattern):  # the walk from `third` never meets `newest`
        within_limit(lambda: t.changes(newest, third))
    with pytest.raises(MetadataError, match=pattern):
        within_limit(lambda: t.changes(first, third))
    with pytest.raises(MetadataError, match=pattern):
        within_limit(lambda: t.changes(None, third))
    with pytest.raises(MetadataError, match=pattern):
        within_limit(lambda: t.diff(first, third))
    assert [c.snapshot_ids for c in t.metadata.parent_cycles] == [(first, third, second)]
    lineage = within_limit(t.lineage)
    looped = [sid for sid, node in lineage.nodes.items() if node.parent_cycle]
    assert sorted(looped) == sorted((first, second, third))
    assert "parent links loop" in render_text(lineage) and "parent links loop" in render_html(lineage)
    # Reading a snapshot needs no walk through history.
    assert within_limit(lambda: t.read()).num_rows > 0


# ------------------------------------------------------------------ truncations and cross-checks


@pytest.mark.spark
def test_a_manifest_list_cut_after_its_header_is_not_an_empty_table(scenario_locations: dict[str, Path]) -> None:
    location = scenario_locations["orders_cow"]
    snapshot = icebook.open(location).current_snapshot
    assert snapshot is not None and snapshot.manifest_list is not None
    assert int((snapshot.summary or {})["total-records"]) > 0
    io_ = ServingFileIO({snapshot.manifest_list: header_only(snapshot.manifest_list)})
    t = open_table(str(location), fileio=io_)
    message = rf"manifest list {snapshot.manifest_list}: summary\.total-data-files: snapshot {snapshot.snapshot_id}"
    with pytest.raises(MetadataError, match=message):
        within_limit(t.read)
    with pytest.raises(MetadataError, match=message):
        within_limit(t.inspect.files)


@pytest.mark.spark
def test_a_manifest_cut_after_its_header_is_caught_by_its_entry_counts(scenario_locations: dict[str, Path]) -> None:
    location = scenario_locations["orders_cow"]
    victim = icebook.open(location).inspect.manifests()["path"].iloc[0]
    t = open_table(str(location), fileio=ServingFileIO({victim: header_only(victim)}))
    with pytest.raises(MetadataError, match=rf"manifest {victim}: added_files_count: the manifest list records \d+"):
        within_limit(t.read)


@pytest.mark.spark
def test_without_entry_counts_a_cut_manifest_is_caught_by_its_length(scenario_locations: dict[str, Path]) -> None:
    location = scenario_locations["legacy_v1"]
    snapshot = icebook.open(location).current_snapshot
    assert snapshot is not None and snapshot.manifest_list is not None
    victim = icebook.open(location).inspect.manifests()["path"].iloc[0]

    def v1_style(records: list[dict[str, Any]]) -> list[dict[str, Any]]:  # v1 lists may omit them
        for r in records:
            r["added_files_count"] = r["existing_files_count"] = r["deleted_files_count"] = None
        return records

    files = {snapshot.manifest_list: rewrite_avro(snapshot.manifest_list, v1_style), victim: header_only(victim)}
    t = open_table(str(location), fileio=ServingFileIO(files))
    with pytest.raises(MetadataError, match=rf"manifest {victim}: manifest_length: the manifest list records \d+"):
        within_limit(t.read)


@pytest.mark.spark
def test_a_whole_manifest_with_a_stale_length_reads_like_spark(scenario_locations: dict[str, Path]) -> None:
    # Spark's rewrite_table_path (Iceberg 1.10) keeps the old manifest_length in copied manifest lists.
    location = scenario_locations["orders_cow"]
    snapshot = icebook.open(location).current_snapshot
    assert snapshot is not None and snapshot.manifest_list is not None

    def stale(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for r in records:
            r["manifest_length"] += 7
        return records

    t = open_table(
        str(location), fileio=ServingFileIO({snapshot.manifest_list: rewrite_avro(snapshot.manifest_list, stale)})
    )
    assert within_limit(t.read).num_rows == icebook.open(location).read().num_rows


@pytest.mark.spark
def test_entry_counts_of_the_manifest_list_are_checked(scenario_locations: dict[str, Path]) -> None:
    location = scenario_locations["orders_cow"]
    snapshot = icebook.open(location).current_snapshot
    assert snapshot is not None and snapshot.manifest_list is not None

    def lie(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        records[0]["added_files_count"] += 1
        return records

    io_ = ServingFileIO({snapshot.manifest_list: rewrite_avro(snapshot.manifest_list, lie)})
    t = open_table(str(location), fileio=io_)
    with pytest.raises(MetadataError, match=r"added_files_count: the manifest list records \d+ but the manifest holds"):
        within_limit(t.inspect.files)


def _unassigned_bound(data_file: dict[str, Any]) -> None:
    data_file["lower_bounds"][0]["key"] = 9_999


def _negative_null_count(data_file: dict[str, Any]) -> None:
    data_file["null_value_counts"][0]["value"] = -1


@pytest.mark.spark
@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (_unassigned_bound, r"data_file\.lower_bounds: field id 9999 was never assigned \(last-column-id is \d+\)"),
        (_negative_null_count, r"data_file\.null_value_counts: negative count -1"),
    ],
)
def test_metric_maps_are_checked_whether_or_not_a_read_needs_them(
    scenario_locations: dict[str, Path], damage: Callable[[dict[str, Any]], None], says: str
) -> None:
    """A plan without a filter is sent no metric maps, only their facts: it fails like a listing does."""
    location = scenario_locations["orders_cow"]
    for read in (lambda t: t.scan(), lambda t: t.inspect.files(), lambda t: t.scan(filter="total > 0")):
        t = open_table(str(location), fileio=with_edited_entry(location, 0, damage))
        with pytest.raises(MetadataError, match=says):
            within_limit(lambda t=t, read=read: read(t))


@pytest.mark.spark
def test_summary_totals_are_checked_against_what_was_read(scenario_locations: dict[str, Path], tmp_path: Path) -> None:
    table = copy_table(scenario_locations["orders_cow"], tmp_path / "orders")
    records: list[str] = []

    def edit(doc: dict[str, Any]) -> None:
        current = next(s for s in doc["snapshots"] if s["snapshot-id"] == doc["current-snapshot-id"])
        records.append(current["summary"]["total-records"])
        current["summary"]["total-records"] = str(int(current["summary"]["total-records"]) + 1)

    edit_metadata(table, edit)
    t = icebook.open(table)
    with pytest.raises(MetadataError, match=rf"summary\.total-records: .*records {int(records[0]) + 1} but its"):
        within_limit(t.read)


# ------------------------------------------------------------------ deletion vectors


def _with_dv_entry(location: Path, edit: Callable[[dict[str, Any]], None]) -> ServingFileIO:
    """Serve the current delete manifest of dv_v3 with its first entry edited (and the manifest list
    re-written with the edited manifest's length)."""
    return with_edited_entry(location, 1, edit)


@pytest.mark.spark
def test_a_negative_deletion_vector_offset_is_a_metadata_error(scenario_locations: dict[str, Path]) -> None:
    location = scenario_locations["dv_v3"]

    def negative(df: dict[str, Any]) -> None:
        df["content_offset"] = -20

    t = open_table(str(location), fileio=_with_dv_entry(location, negative))
    with pytest.raises(MetadataError, match=r"puffin file .*\.puffin: content_offset/content_size_in_bytes: "):
        within_limit(t.read)


@pytest.mark.spark
def test_a_huge_deletion_vector_size_is_a_metadata_error_not_a_memory_error(
    scenario_locations: dict[str, Path],
) -> None:
    location = scenario_locations["dv_v3"]

    def huge(df: dict[str, Any]) -> None:
        df["content_size_in_bytes"] = 2**40

    t = open_table(str(location), fileio=_with_dv_entry(location, huge))
    with pytest.raises(MetadataError):  # the summary's total-files-size or the Puffin range: both name the file
        within_limit(t.read)


# ------------------------------------------------------------------ storage


@pytest.mark.spark
def test_a_manifest_path_naming_a_fifo_does_not_hang(scenario_locations: dict[str, Path], tmp_path: Path) -> None:
    location = scenario_locations["orders_cow"]
    victim = icebook.open(location).inspect.manifests()["path"].iloc[0]
    fifo = tmp_path / "manifest.avro"
    os.mkfifo(fifo)
    t = open_table(str(location), fileio=ServingFileIO(redirect={victim: str(fifo)}))
    with pytest.raises(MetadataError, match=rf"manifest {victim}: .*named pipe \(FIFO\), not a regular file"):
        within_limit(t.inspect.files)


@pytest.mark.spark
def test_a_manifest_schema_field_without_a_name_is_a_metadata_error(scenario_locations: dict[str, Path]) -> None:
    # Found by the fuzz test: one flipped byte in the header's schema JSON raised a bare KeyError.
    location = scenario_locations["orders_cow"]
    victim = icebook.open(location).inspect.manifests()["path"].iloc[0]
    data = Path(victim).read_bytes()
    assert b'"name":"data_file"' in data
    damaged = data.replace(b'"name":"data_file"', b'"nbme":"data_file"', 1)  # same length: the framing stays valid
    t = open_table(str(location), fileio=ServingFileIO({victim: damaged}))
    with pytest.raises(MetadataError, match=rf"manifest {victim}: avro.schema: malformed manifest schema"):
        within_limit(t.inspect.files)


@pytest.mark.spark
def test_a_manifest_path_with_a_nul_byte_is_a_metadata_error(
    scenario_locations: dict[str, Path], tmp_path: Path
) -> None:
    # Found by the fuzz test: a flipped byte in a manifest list's path made open() raise a bare ValueError.
    location = scenario_locations["orders_cow"]
    victim = icebook.open(location).inspect.manifests()["path"].iloc[0]
    t = open_table(str(location), fileio=ServingFileIO(redirect={victim: str(tmp_path / "mani\x00fest.avro")}))
    with pytest.raises(MetadataError, match=rf"manifest {victim}: .*a path cannot contain a NUL character"):
        within_limit(t.inspect.files)


@pytest.mark.parametrize(
    ("location", "error", "says"),
    [
        ("oss://bucket/db/table", EnvironmentProblem, "ossfs"),
        ("nosuchscheme://bucket/db/table", UnsupportedFeature, "no filesystem for 'nosuchscheme://'"),
        ("s3a://icebook-no-such-bucket-for-tests/db/table", IcebookError, "s3a://icebook-no-such-bucket-for-tests"),
    ],
)
def test_unknown_or_unreachable_uri_schemes_give_a_clear_error(location: str, error: type, says: str) -> None:
    with pytest.raises(error) as info:
        within_limit(lambda: icebook.open(location))
    assert says in str(info.value)


# ------------------------------------------------------------------ values out of range, nesting, summaries


def _broken(tmp_path: Path, scenario_locations: dict[str, Path], edit: Callable[[dict[str, Any]], None]) -> Path:
    table = copy_table(scenario_locations["events"], tmp_path / "events")
    return edit_metadata(table, edit)


@pytest.mark.spark
@pytest.mark.parametrize(
    ("field", "edit"),
    [
        ("snapshots[0].snapshot-id", lambda d: d["snapshots"][0].update({"snapshot-id": 2**70})),
        ("snapshots[0].timestamp-ms", lambda d: d["snapshots"][0].update({"timestamp-ms": 2**70})),
        ("snapshots[1].sequence-number", lambda d: d["snapshots"][1].update({"sequence-number": 2**70})),
        ("last-updated-ms", lambda d: d.update({"last-updated-ms": 2**63})),
        ("snapshot-log[0].timestamp-ms", lambda d: d["snapshot-log"][0].update({"timestamp-ms": -(2**62)})),
        ("schemas[0].fields[0].id", lambda d: d["schemas"][0]["fields"][0].update({"id": 2**40})),
        ("snapshots[2].summary.total-records", lambda d: d["snapshots"][2]["summary"].update({"total-records": "abc"})),
    ],
)
def test_values_out_of_range_name_the_file_and_the_json_path(
    scenario_locations: dict[str, Path], tmp_path: Path, field: str, edit: Callable[[dict[str, Any]], None]
) -> None:
    current = _broken(tmp_path, scenario_locations, edit)
    with pytest.raises(MetadataError) as info:
        icebook.open(current)
    assert str(info.value).startswith(f"metadata {current}: {field}: "), str(info.value)


@pytest.mark.spark
def test_far_but_representable_times_still_work(scenario_locations: dict[str, Path], tmp_path: Path) -> None:
    year_9999 = 253_402_300_799_000

    def edit(d: dict[str, Any]) -> None:
        d["snapshots"][0]["timestamp-ms"] = year_9999
        d["snapshots"][1]["timestamp-ms"] = -62_135_596_800_000  # 0001-01-01

    t = icebook.open(_broken(tmp_path, scenario_locations, edit))
    snapshots = t.inspect.snapshots()
    assert len(snapshots) == len(t.snapshots)
    assert "9999" in render_text(t.lineage()) and render_html(t)


def _nested(depth: int) -> dict[str, Any]:
    inner: dict[str, Any] = {
        "type": "struct",
        "fields": [{"id": 1000, "name": "leaf", "required": False, "type": "int"}],
    }
    for i in range(depth):
        inner = {"type": "struct", "fields": [{"id": 1001 + i, "name": f"n{i}", "required": False, "type": inner}]}
    return inner


def _add_nested_column(depth: int) -> Callable[[dict[str, Any]], None]:
    def edit(d: dict[str, Any]) -> None:
        schema = next(s for s in d["schemas"] if s["schema-id"] == d["current-schema-id"])
        schema["fields"].append({"id": 999, "name": "deep", "required": False, "type": _nested(depth)})
        d["last-column-id"] = 1001 + depth

    return edit


@pytest.mark.spark
def test_a_200_deep_schema_is_a_metadata_error(scenario_locations: dict[str, Path], tmp_path: Path) -> None:
    current = _broken(tmp_path, scenario_locations, _add_nested_column(200))
    with pytest.raises(MetadataError, match=rf"metadata {current}: schemas\[\d+\]\.deep(\.n\d+)+: types nested more"):
        icebook.open(current)


@pytest.mark.spark
def test_a_schema_at_the_nesting_limit_works_everywhere(scenario_locations: dict[str, Path], tmp_path: Path) -> None:
    t = icebook.open(_broken(tmp_path, scenario_locations, _add_nested_column(62)))
    assert "deep" in str(t.metadata.current_schema())
    assert render_html(t) and render_text(t.evolution()) and render_html(t.evolution())
    assert len(t.inspect.files()) > 0 and t.read().num_rows > 0


@pytest.mark.spark
def test_json_nested_10000_deep_is_a_metadata_error(scenario_locations: dict[str, Path], tmp_path: Path) -> None:
    table = copy_table(scenario_locations["events"], tmp_path / "events")
    current = Path(icebook.open(table).metadata_location)
    text = current.read_text()
    current.write_text(text[:-1] + ', "deep": ' + "[" * 10_000 + "]" * 10_000 + "}")
    with pytest.raises(MetadataError, match=rf"metadata {current}: JSON nested too deeply"):
        icebook.open(table)


@pytest.mark.spark
def test_an_unknown_key_nested_deeper_than_the_limit_names_its_path(
    scenario_locations: dict[str, Path], tmp_path: Path
) -> None:
    def edit(d: dict[str, Any]) -> None:
        value: Any = 1
        for _ in range(100):
            value = {"x": value}
        d["snapshots"][0]["vendor-extension"] = value

    current = _broken(tmp_path, scenario_locations, edit)
    with pytest.raises(
        MetadataError, match=rf"metadata {current}: snapshots\[0\]\.vendor-extension(\.x)+: nested more"
    ):
        icebook.open(current)


@pytest.mark.spark
def test_exploring_a_hostile_table_still_writes_nothing(scenario_locations: dict[str, Path]) -> None:
    location = scenario_locations["hostile"]
    before = {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in location.rglob("*")}
    t = icebook.open(location)
    t.inspect.files()
    t.read()
    render_html(t.lineage())
    render_html(t)
    after = {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in location.rglob("*")}
    assert before == after


@pytest.mark.spark
def test_a_deletion_vector_naming_no_data_file_is_one_error_in_diff_timelapse_and_health(
    scenario_locations: dict[str, Path],
) -> None:
    location = scenario_locations["dv_v3"]

    def unnamed(df: dict[str, Any]) -> None:
        df["referenced_data_file"] = None

    t = open_table(str(location), fileio=_with_dv_entry(location, unnamed))
    current = t.current_snapshot
    assert current is not None
    for view in (
        lambda: t.diff(t.snapshots[0].snapshot_id, current.snapshot_id),
        t.timelapse,
        lambda: t.maintenance.health(list_files=False),
    ):
        with pytest.raises(MetadataError) as raised:
            within_limit(view)
        assert raised.value.field == "referenced_data_file", raised.value
        assert raised.value.file.endswith(".puffin")


@pytest.mark.spark
def test_an_added_entry_naming_another_snapshot_is_caught(scenario_locations: dict[str, Path]) -> None:
    # A damaged snapshot_id varint decodes to another id without a framing error; the manifest list names
    # the snapshot that wrote the manifest, and its ADDED entries must name that snapshot too.
    location = scenario_locations["orders_cow"]
    t0 = icebook.open(location)
    victim = next(path for path, added in t0.inspect.manifests()[["path", "added_data_files_count"]].values if added)

    def other_writer(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for r in records:
            if r["status"] == 1:
                r["snapshot_id"] = 88_538
        return records

    t = open_table(str(location), fileio=ServingFileIO({victim: rewrite_avro(victim, other_writer)}))
    message = rf"manifest {victim}: snapshot_id: an ADDED or DELETED entry names snapshot 88538, but the manifest list"
    with pytest.raises(MetadataError, match=message):
        within_limit(t.inspect.files)
    with pytest.raises(MetadataError, match=message):
        within_limit(t.read)
