"""The Table facade: opening is cheap, exploring never writes, bad tables give errors that name the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import icebook
from icebook.errors import IcebookError, MetadataError, NotFound, UnsupportedFeature
from icebook.io.fileio import ArrowFileIO
from icebook.table.opening import open_table


class FaultyFileIO(ArrowFileIO):
    """Serves some paths as missing or cut in half, without touching the files."""

    def __init__(self, *, missing: str = "", truncated: str = "") -> None:
        super().__init__()
        self.missing = missing
        self.truncated = truncated

    def read_bytes(self, path: str) -> bytes:
        if path == self.missing:
            raise NotFound(f"file not found: {path}")
        data = super().read_bytes(path)
        return data[: len(data) // 2] if path == self.truncated else data


class CountingFileIO(ArrowFileIO):
    """Records every path read, so tests can prove what was (not) touched."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[str] = []

    def open_input(self, path: str):  # type: ignore[no-untyped-def]
        self.read.append(path)
        return super().open_input(path)


def _copy_table(src: Path, dst: Path) -> Path:
    """A private copy whose metadata JSON points at the copy (Hadoop tables store absolute paths).

    Only the JSON files are rewritten: Avro files in the copy still name the original's manifests,
    so tests that damage the copy must damage JSON only.
    """
    shutil.copytree(src, dst)
    for path in dst.rglob("*"):
        if path.suffix in {".json", ".text"}:
            path.write_text(path.read_text().replace(str(src), str(dst)))
    return dst


@pytest.mark.spark
def test_open_and_list_snapshots_reads_no_manifest(scenario_locations: dict[str, Path]) -> None:
    io = CountingFileIO()
    t = open_table(str(scenario_locations["events"]), fileio=io)
    assert len(t.snapshots) == 9
    t.inspect.snapshots()
    t.inspect.history()
    t.inspect.refs()
    t.inspect.metadata_log_entries()
    assert t.snapshot("audit").snapshot_id == t.refs["audit"].snapshot_id
    assert not [p for p in io.read if p.endswith(".avro")], io.read
    t.inspect.files()
    assert [p for p in io.read if p.endswith(".avro")], "files() must read the manifest list and manifests"


@pytest.mark.spark
def test_a_manifest_is_read_once_per_table(scenario_locations: dict[str, Path]) -> None:
    io = CountingFileIO()
    t = open_table(str(scenario_locations["events"]), fileio=io)
    t.inspect.files()
    t.inspect.entries()
    t.inspect.partitions()
    manifests = [p for p in io.read if p.endswith(".avro") and not Path(p).name.startswith("snap-")]
    assert len(manifests) == len(set(manifests))


@pytest.mark.spark
def test_exploring_never_writes_into_the_table(scenario_locations: dict[str, Path]) -> None:
    location = scenario_locations["events"]
    before = {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in location.rglob("*")}
    t = icebook.open(location)
    for snapshot in t.snapshots:
        t.inspect.files(at=snapshot.snapshot_id)
        t.inspect.partitions(at=snapshot.snapshot_id)
    t.inspect.all_manifests()
    after = {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in location.rglob("*")}
    assert before == after


@pytest.mark.spark
def test_open_accepts_metadata_file_and_file_uri(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["legacy_v1"])
    by_file = icebook.open(t.metadata_location)
    by_uri = icebook.open("file://" + str(scenario_locations["legacy_v1"]))
    assert by_file.metadata == t.metadata == by_uri.metadata
    assert t.format_version == 1
    assert all(s.sequence_number is None for s in t.snapshots)  # v1: absent, read as 0 by a named rule


@pytest.mark.spark
def test_unknown_at_lists_what_exists(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    with pytest.raises(NotFound, match=r"no branch, tag or snapshot named 'nope'.*audit.*main.*release-2024-01"):
        t.snapshot("nope")
    with pytest.raises(NotFound, match=r"snapshot 42"):
        t.snapshot(42)
    with pytest.raises(NotFound, match=r"no snapshot was current at 2000-01-01"):
        t.snapshot("2000-01-01T00:00:00")


@pytest.mark.spark
def test_missing_manifest_names_the_file(scenario_locations: dict[str, Path]) -> None:
    victim = icebook.open(scenario_locations["orders_cow"]).inspect.manifests()["path"].iloc[0]
    t = open_table(str(scenario_locations["orders_cow"]), fileio=FaultyFileIO(missing=victim))
    with pytest.raises(NotFound, match=Path(victim).name):
        t.inspect.files()


@pytest.mark.spark
def test_missing_manifest_list_names_the_file(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["orders_cow"])
    victim = t.current_snapshot.manifest_list
    t = open_table(str(scenario_locations["orders_cow"]), fileio=FaultyFileIO(missing=victim))
    with pytest.raises(NotFound, match=Path(victim).name):
        t.inspect.manifests()


@pytest.mark.spark
def test_truncated_manifest_names_the_file(scenario_locations: dict[str, Path]) -> None:
    victim = icebook.open(scenario_locations["orders_cow"]).inspect.manifests()["path"].iloc[0]
    t = open_table(str(scenario_locations["orders_cow"]), fileio=FaultyFileIO(truncated=victim))
    with pytest.raises(MetadataError, match=Path(victim).name):
        t.inspect.files()


def _current_metadata(table: Path) -> Path:
    return Path(icebook.open(table).metadata_location)


@pytest.mark.spark
def test_corrupt_metadata_json_names_the_file(scenario_locations: dict[str, Path], tmp_path: Path) -> None:
    table = _copy_table(scenario_locations["dv_v3"], tmp_path / "dv_v3")
    current = _current_metadata(table)
    current.write_text(current.read_text()[:500])
    with pytest.raises(MetadataError, match=current.name):
        icebook.open(table)


@pytest.mark.spark
def test_unknown_format_version_is_unsupported(scenario_locations: dict[str, Path], tmp_path: Path) -> None:
    table = _copy_table(scenario_locations["dv_v3"], tmp_path / "dv_v3")
    current = _current_metadata(table)
    doc = json.loads(current.read_text())
    doc["format-version"] = 9
    current.write_text(json.dumps(doc))
    with pytest.raises(UnsupportedFeature, match=r"format-version.*9"):
        icebook.open(table)


@pytest.mark.spark
def test_ref_to_missing_snapshot_names_the_ref(scenario_locations: dict[str, Path], tmp_path: Path) -> None:
    table = _copy_table(scenario_locations["events"], tmp_path / "events")
    current = _current_metadata(table)
    doc = json.loads(current.read_text())
    doc["refs"]["audit"]["snapshot-id"] = 12345
    current.write_text(json.dumps(doc))
    with pytest.raises(MetadataError, match=r"refs.*audit"):
        icebook.open(table)


def test_not_a_table(tmp_path: Path) -> None:
    with pytest.raises(IcebookError, match=str(tmp_path)):
        icebook.open(tmp_path)
