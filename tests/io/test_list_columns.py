"""Many manifest lists read at once, column-wise (``icebook.io.list_columns``), give what the one-by-one
reader gives, for every snapshot of every scenario table, whether the workers read the files themselves or
are sent their bytes; a broken list among many is named."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import icebook
from icebook.analysis.store.reachable import listed_manifests, unique_manifests
from icebook.errors import MetadataError
from icebook.io.avro_header import parse_container_header
from icebook.io.fileio import ArrowFileIO
from icebook.io.list_columns import LIST_COLUMNS, read_list_columns
from icebook.scenarios import SCENARIOS
from icebook.table.opening import open_table

pytestmark = pytest.mark.spark


class BytesFileIO(ArrowFileIO):
    """The plain FileIO under another type: lists are read in the kernel and sent as bytes."""

    def __init__(self, replaced: dict[str, bytes] | None = None) -> None:
        super().__init__()
        self.replaced = replaced or {}

    def read_bytes(self, path: str) -> bytes:
        return self.replaced.get(path) or super().read_bytes(path)


def _expected(t: Any, paths: list[str]) -> list[dict[str, Any]]:
    rows = []
    for index, snapshot in enumerate(s for s in t.snapshots if s.manifest_list is not None):
        for m in t.store.manifest_list(snapshot):
            raw = {
                "partition_spec_id": m.partition_spec_id,
                "content": None if m.inherited and "content" in {i.field for i in m.inherited} else m.content,
                "added_files_count": m.added_files_count,
                "existing_files_count": m.existing_files_count,
                "added_rows_count": m.added_rows_count,
                "existing_rows_count": m.existing_rows_count,
            }
            rows.append({**{k: None if v is None else int(v) for k, v in raw.items()}, "list_index": index})
    return rows


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_bulk_lists_equal_the_one_by_one_reader(scenario_locations: dict[str, Path], name: str) -> None:
    t = icebook.open(scenario_locations[name])
    paths = [s.manifest_list for s in t.snapshots if s.manifest_list is not None]
    expected = _expected(t, paths)
    for fileio in (t.fileio, BytesFileIO()):
        table = read_list_columns(fileio, paths, progress=False)
        assert table.column_names == [*LIST_COLUMNS, "list_index"]
        assert table.to_pylist() == expected, type(fileio).__name__


def _damaged_lists(location: Path) -> tuple[list[str], str, bytes]:
    t = icebook.open(location)
    paths = [s.manifest_list for s in t.snapshots if s.manifest_list is not None]
    victim = paths[len(paths) // 2]
    return paths, victim, Path(victim).read_bytes()


def test_a_cut_list_among_many_is_named(scenario_locations: dict[str, Path]) -> None:
    paths, victim, data = _damaged_lists(scenario_locations["events"])
    fileio = BytesFileIO({victim: data[: len(data) - 7]})
    with pytest.raises(MetadataError, match=rf"manifest list {victim}: .*truncated"):
        read_list_columns(fileio, paths, progress=False)


def test_a_list_whose_spec_id_is_a_string_is_named_with_the_field(scenario_locations: dict[str, Path]) -> None:
    """A batch that does not decode as a whole is read again one list at a time, which names the file."""
    import fastavro

    paths, victim, data = _damaged_lists(scenario_locations["events"])
    meta, _, _ = parse_container_header(data)
    schema = json.loads(meta["avro.schema"])
    for f in schema["fields"]:
        if f["name"] == "partition_spec_id":
            f["type"] = "string"
    import io

    records = list(fastavro.reader(io.BytesIO(data)))
    for r in records:
        r["partition_spec_id"] = str(r["partition_spec_id"])
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records, metadata={"format-version": "2"})
    fileio = BytesFileIO({victim: out.getvalue()})
    with pytest.raises(MetadataError, match=rf"manifest list {victim}: partition_spec_id: expected an integer"):
        read_list_columns(fileio, paths, progress=False)


@pytest.mark.parametrize("field", ["added_rows_count", "partition_spec_id"])
def test_a_negative_count_or_spec_id_is_named_by_every_list_reader(
    scenario_locations: dict[str, Path], field: str
) -> None:
    """Found by the fuzz test: a flip inside a list's deflate block gave evolution a spec -56 and negative
    counts, read column-wise where the one-by-one reader failed on a string the columnar decode never reads."""
    import io

    import fastavro

    paths, victim, data = _damaged_lists(scenario_locations["events"])
    reader = fastavro.reader(io.BytesIO(data))
    records = list(reader)
    records[-1][field] = -56
    out = io.BytesIO()
    fastavro.writer(out, reader.writer_schema, records, metadata={"format-version": "2"})
    damaged = {victim: out.getvalue()}
    expected = rf"manifest list {victim}: {field}: negative value -56"
    with pytest.raises(MetadataError, match=expected):
        read_list_columns(BytesFileIO(damaged), paths, progress=False)
    t = open_table(str(scenario_locations["events"]), fileio=BytesFileIO(damaged))
    snapshot = next(s for s in t.snapshots if s.manifest_list == victim)
    with pytest.raises(MetadataError, match=expected):
        t.store.manifest_list(snapshot)


def _unique_rows(t: Any, snapshots: list[Any]) -> list[tuple[str, int]]:
    return [(m.manifest_path, m.manifest_length) for m in unique_manifests(t.store, snapshots)]


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_listed_manifests_equal_the_manifests_read_whole(scenario_locations: dict[str, Path], name: str) -> None:
    """Read column-wise (a fresh store), taken from the store where it holds a list, or every list read whole
    (``keep``), the manifests of every snapshot are those ``unique_manifests`` gives, in its order, each with
    the ``ManifestFile`` of the list first naming it."""
    snapshots = list(icebook.open(scenario_locations[name]).snapshots)
    expected = _unique_rows(icebook.open(scenario_locations[name]), snapshots)
    for case in ("cold", "some held", "keep"):
        t = icebook.open(scenario_locations[name])
        if case == "some held":
            for snapshot in snapshots[1::2]:
                if snapshot.manifest_list is not None:
                    t.store.manifest_list(snapshot)
        listed = listed_manifests(t.store, snapshots, keep=case == "keep")
        rows = list(zip(listed.paths(), listed.table.column("length").to_pylist(), strict=True))
        assert rows == expected, case
        whole = unique_manifests(t.store, snapshots)
        assert [listed.manifest(t.store, row) for row in range(len(whole))] == whole, case


def test_a_manifest_newer_than_its_list_is_named_column_wise(scenario_locations: dict[str, Path]) -> None:
    """The whole-list reader's check (no manifest added after the snapshot whose list names it) holds for the
    column-wise listing too."""
    import io

    import fastavro

    _paths, victim, data = _damaged_lists(scenario_locations["events"])
    reader = fastavro.reader(io.BytesIO(data))
    records = list(reader)
    records[-1]["sequence_number"] = 10**6
    out = io.BytesIO()
    fastavro.writer(out, reader.writer_schema, records, metadata={"format-version": "2"})
    t = open_table(str(scenario_locations["events"]), fileio=BytesFileIO({victim: out.getvalue()}))
    snapshot = next(s for s in t.snapshots if s.manifest_list == victim)
    expected = rf"manifest list {victim}: manifests\[{len(records) - 1}\]\.sequence_number: 1000000 is greater than"
    with pytest.raises(MetadataError, match=expected):
        listed_manifests(t.store, t.snapshots)
    with pytest.raises(MetadataError, match=expected):
        t.store.manifest_list(snapshot)
