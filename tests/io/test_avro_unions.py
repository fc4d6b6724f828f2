"""Optional values are read strictly by the columnar decoder: a union branch index no writer wrote is an
error, as the Avro spec and fastavro have it, never a value (``icebook/io/avro_unions.py``)."""

from __future__ import annotations

import io
from typing import Any

import fastavro
import pytest
from _support.damaged import ServingFileIO
from _synthetic import manifest_bytes, manifest_file

from icebook.errors import MetadataError
from icebook.io.avro import read_manifest_entries
from icebook.io.avro_decode import read_polars_avro
from icebook.io.avro_header import check_framing
from icebook.io.avro_unions import guard_unions

POINT = {"type": "record", "name": "point", "fields": [{"name": "x", "type": ["null", "double"]}]}
NESTED: dict[str, Any] = {
    "type": "record",
    "name": "row",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "first", "type": ["null", "long"]},
        {"name": "last", "type": ["string", "null"]},
        {"name": "where", "type": ["null", POINT]},
        {"name": "points", "type": ["null", {"type": "array", "items": "point"}]},
        {"name": "tags", "type": {"type": "map", "values": ["null", "int"]}},
        {"name": "both", "type": ["null", "long", "string"]},
    ],
}
ROWS = [
    {"id": 1, "first": 5, "last": "a", "where": {"x": 1.5}, "points": [{"x": None}, {"x": 2.0}], "tags": {"k": 1}},
    {"id": 2, "first": None, "last": None, "where": None, "points": None, "tags": {"k": None}, "both": "s"},
    {"id": 3, "first": -7, "last": None, "where": {"x": None}, "points": [], "tags": {}, "both": 4},
]


def _container(schema: dict[str, Any], rows: list[dict[str, Any]]) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), rows, codec="null")
    return out.getvalue()


def test_every_optional_value_gets_a_guard_and_no_other_union_does() -> None:
    guarded = guard_unions(NESTED)
    types = {f["name"]: f["type"] for f in guarded["fields"]}
    assert [b if isinstance(b, str) else b["type"] for b in types["first"]] == ["null", "long", "fixed"]
    assert types["last"][:2] == ["string", "null"] and types["last"][2]["size"] == 0
    assert types["where"][1]["fields"][0]["type"][2]["type"] == "fixed"  # inside an optional record
    assert types["tags"]["values"][2]["type"] == "fixed"  # a map's optional values
    assert types["both"] == ["null", "long", "string"]  # a general union is read strictly already
    names = [b["name"] for t in (types["first"], types["last"], types["where"]) for b in t if isinstance(b, dict)]
    assert len(names) == len(set(names))


def test_optional_values_read_as_fastavro_reads_them() -> None:
    data = _container(NESTED, ROWS)
    table = read_polars_avro(data, None)
    expected = list(fastavro.reader(io.BytesIO(data)))
    for got, want in zip(table.to_pylist(), expected, strict=True):
        got["tags"] = dict(got["tags"])  # Arrow's map rows are (key, value) pairs
        assert {k: v for k, v in got.items() if k != "both"} == {k: v for k, v in want.items() if k != "both"}
    assert table.schema.field("first").type == "int64"
    assert table.column("last").to_pylist() == ["a", None, None]
    both = table.column("both").combine_chunks()  # a general union: its branch and value as written
    assert [both[i].as_py() for i in range(3)] == [None, "s", 4]


def _at_last_union(value: int) -> bytes:
    """A one-row file whose last byte before the sync marker is an optional long's branch index, set to ``value``."""
    schema = {
        "type": "record",
        "name": "r",
        "fields": [{"name": "a", "type": "long"}, {"name": "b", "type": ["null", "long"]}],
    }
    damaged = bytearray(_container(schema, [{"a": 3, "b": None}]))
    index = len(damaged) - 16 - 1
    assert damaged[index] == 0  # the null branch
    damaged[index] = value
    return bytes(damaged)


@pytest.mark.parametrize("value", [0x04, 0x06, 0x38, 0x01])
def test_a_branch_index_no_writer_wrote_is_an_error(value: int) -> None:
    data = _at_last_union(value)
    with pytest.raises((IndexError, ValueError, EOFError)):  # the reference decoder rejects it
        list(fastavro.reader(io.BytesIO(data)))
    with pytest.raises(Exception):  # noqa: B017 - the reader's own error type, or DamagedUnion
        read_polars_avro(data, None)
    assert read_polars_avro(_at_last_union(0), None).to_pylist() == [{"a": 3, "b": None}]


def test_a_manifest_whose_optional_value_has_a_damaged_index_is_a_metadata_error() -> None:
    # The last field of the one entry is sort_order_id = 0: branch index 1 (0x02), then the value (0x00).
    # Index 2 used to read as the value branch, so the entry decoded whole, with no error.
    clean = manifest_bytes(1)
    block = check_framing(clean, "m.avro", kind="manifest").blocks[0]
    index = block.offset + block.size - 2
    assert clean[index : index + 2] == b"\x02\x00"
    damaged = bytearray(clean)
    damaged[index] = 0x04
    manifest = manifest_file(clean)  # the same length damaged
    assert read_manifest_entries(ServingFileIO({manifest.manifest_path: clean}), manifest).column(
        "sort_order_id"
    ).to_pylist() == [0]
    with pytest.raises(MetadataError, match=r"synthetic-m0\.avro"):
        read_manifest_entries(ServingFileIO({manifest.manifest_path: bytes(damaged)}), manifest)
