"""One inheritance rule: the vectorised reader and the single-entry reader give, for every entry of
every manifest of every scenario table, what the named functions of ``icebook.spec.manifest`` give
(spec: "Sequence Number Inheritance", "First Row ID Inheritance", "Manifest Entry Fields")."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import fastavro
import pytest

import icebook
from icebook.io.avro import available_decoders, read_manifest_entries, read_manifest_entry
from icebook.io.avro_header import header_from_bytes
from icebook.io.avro_list import avro_records
from icebook.io.avro_schema import manifest_layout
from icebook.scenarios import SCENARIOS
from icebook.spec.manifest import (
    EntryStatus,
    ManifestFile,
    inherit_first_row_ids,
    inherit_sequence_numbers,
    inherit_snapshot_id,
)
from icebook.table import Table

pytestmark = pytest.mark.spark

FIELDS = ("snapshot_id", "sequence_number", "file_sequence_number", "first_row_id")


def _manifests(t: Table) -> list[ManifestFile]:
    seen: dict[str, ManifestFile] = {}
    for snapshot in t.snapshots:
        for m in t.store.manifest_list(snapshot):
            seen.setdefault(m.manifest_path, m)
    return list(seen.values())


def _by_named_functions(t: Table, m: ManifestFile) -> list[dict[str, Any]]:
    """Every entry of ``m`` as the named spec functions make it: values and whether each was inherited."""
    data = t.fileio.read_bytes(m.manifest_path)
    header = header_from_bytes(data, m.manifest_path)
    layout = manifest_layout(header)
    # "v1 manifests with no sequence number column": a file without the column follows v1's rule.
    if "sequence_number" not in layout.entry_names:
        version = 1
    else:
        version = header.format_version if header.format_version is not None else m.format_version
    entry, data_file = layout.entry_names, layout.data_file_names
    records = avro_records(data, m.manifest_path, "manifest")
    files = [r[entry["data_file"]] for r in records]
    first_row_ids, first_inherited = inherit_first_row_ids(
        [f.get(data_file.get("content", ""), 0) or 0 for f in files],
        [f[data_file["record_count"]] for f in files],
        [f.get(data_file.get("first_row_id", "")) for f in files],
        m,
    )
    out = []
    for record, first_row_id, first_flag in zip(records, first_row_ids, first_inherited, strict=True):
        snapshot_id, snapshot_note = inherit_snapshot_id(record.get(entry.get("snapshot_id", "")), m)
        seq, file_seq, notes = inherit_sequence_numbers(
            EntryStatus(record[entry["status"]]),
            record.get(entry.get("sequence_number", "")),
            record.get(entry.get("file_sequence_number", "")),
            m,
            format_version=version,
        )
        noted = {n.field for n in notes}
        out.append(
            {
                "snapshot_id": snapshot_id,
                "sequence_number": seq,
                "file_sequence_number": file_seq,
                "first_row_id": first_row_id,
                "snapshot_id_inherited": snapshot_note is not None,
                "sequence_number_inherited": "sequence_number" in noted,
                "file_sequence_number_inherited": "file_sequence_number" in noted,
                "first_row_id_inherited": first_flag,
            }
        )
    return out


def _assert_readers_equal_named_functions(t: Table, m: ManifestFile) -> list[dict[str, Any]]:
    expected = _by_named_functions(t, m)
    columns = [*FIELDS, *(f"{f}_inherited" for f in FIELDS)]
    for decoder in available_decoders():
        table = read_manifest_entries(t.fileio, m, columns=columns, decoder=decoder)
        assert table.select(columns).to_pylist() == expected, (decoder, m.manifest_path)
    for i, want in enumerate(expected):
        e = read_manifest_entry(t.fileio, m, i)
        got = {
            "snapshot_id": e.snapshot_id,
            "sequence_number": e.sequence_number,
            "file_sequence_number": e.file_sequence_number,
            "first_row_id": e.data_file.first_row_id,
        }
        assert got == {f: want[f] for f in FIELDS}, (m.manifest_path, i)
        assert {n.field for n in e.inherited} == {f for f in FIELDS if want[f"{f}_inherited"]}, (m.manifest_path, i)
        assert all(e.explain(n.field) for n in e.inherited)
    return expected


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_vectorised_and_single_entry_inheritance_equal_the_named_functions(
    scenario_locations: dict[str, Path], name: str
) -> None:
    t = icebook.open(scenario_locations[name])
    entries = 0
    for m in _manifests(t):
        entries += len(_assert_readers_equal_named_functions(t, m))
    assert entries, f"{name}: no manifest entry was read, nothing was compared"


def _with_writer_nulls(m: ManifestFile, folder: Path) -> ManifestFile:
    """A copy of ``m`` in which the writer left snapshot_id null on every other entry (when the schema
    allows it) and wrote first_row_id explicitly on every third data file (v3): what Spark never
    writes, but other writers may, and the rules say how to read."""
    with open(m.manifest_path, "rb") as f:
        reader = fastavro.reader(f)
        schema, metadata = reader.writer_schema, reader.metadata
        records: list[dict[str, Any]] = list(reader)  # type: ignore[arg-type]
    assert schema is not None
    optional = {fld["name"]: isinstance(fld["type"], list) for fld in schema["fields"]}
    for i, record in enumerate(records):
        if optional.get("snapshot_id") and i % 2 == 0:
            record["snapshot_id"] = None
        data_file = record["data_file"]
        if "first_row_id" in data_file and data_file.get("content", 0) == 0 and i % 3 == 0:
            data_file["first_row_id"] = 10_000 + i
    path = folder / Path(m.manifest_path).name
    with open(path, "wb") as out:
        keep = {k: v for k, v in metadata.items() if not k.startswith("avro.")}
        fastavro.writer(out, schema, records, metadata=keep, codec=metadata.get("avro.codec", "null"))
    return replace(m, manifest_path=str(path), manifest_length=path.stat().st_size)


def test_values_the_writer_left_null_or_wrote_follow_the_same_rules(
    scenario_locations: dict[str, Path], tmp_path: Path
) -> None:
    # Inherited and written values of every field occur here, so the equality is not vacuous.
    seen: Counter[tuple[str, bool]] = Counter()
    for name in SCENARIOS:
        t = icebook.open(scenario_locations[name])
        folder = tmp_path / name
        folder.mkdir()
        for m in _manifests(t):
            for row in _assert_readers_equal_named_functions(t, _with_writer_nulls(m, folder)):
                for f in FIELDS:
                    if row[f] is not None:
                        seen[f, row[f"{f}_inherited"]] += 1
    for f in FIELDS:
        assert seen[f, True] and seen[f, False], (f, seen)
