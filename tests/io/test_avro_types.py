"""The one Avro-to-Arrow type map (``io/avro_types.py``), as manifests and Avro data files use it.

Iceberg's writers name a decimal's fixed type ``decimal_P_S`` and a uuid's ``uuid_fixed``, and Avro
writes a named type once and then only its name: a second such column must read as the first.
A type Iceberg does not write is one ``MetadataError`` naming the file and the field, never a
foreign exception or a runaway recursion.
"""

from __future__ import annotations

import copy
import dataclasses
import io
import json
import uuid
from decimal import Decimal
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from _synthetic import SCHEMA as SYNTHETIC_SCHEMA

from icebook.errors import MetadataError
from icebook.io.avro_schema import manifest_layout
from icebook.io.avro_types import PARQUET_FIELD_ID, avro_arrow_type
from icebook.io.datafiles import field_id, read_avro_table
from icebook.spec.manifest import ManifestHeader

DECIMAL = {"type": "fixed", "name": "decimal_9_2", "size": 4, "logicalType": "decimal", "precision": 9, "scale": 2}
UUID = {"type": "fixed", "name": "uuid_fixed", "size": 16, "logicalType": "uuid"}
TWO_OF_EACH: dict[str, Any] = {  # as Avro writes it: each named type once, then only its name
    "type": "record",
    "name": "r",
    "fields": [
        {"name": "price", "field-id": 1, "type": ["null", DECIMAL]},
        {"name": "cost", "field-id": 2, "type": ["null", "decimal_9_2"]},
        {"name": "id", "field-id": 3, "type": UUID},
        {"name": "parent", "field-id": 4, "type": ["null", "uuid_fixed"]},
    ],
}


def _type(avro: Any) -> tuple[pa.DataType, bool]:
    return avro_arrow_type(avro, file="f.avro", where="c", kind="data file")


@pytest.mark.parametrize(
    ("avro", "expected"),
    [
        ("boolean", pa.bool_()),
        ("int", pa.int32()),
        ("long", pa.int64()),
        ("float", pa.float32()),
        ("double", pa.float64()),
        ("string", pa.string()),
        ("bytes", pa.binary()),
        ({"type": "int", "logicalType": "date"}, pa.date32()),
        ({"type": "long", "logicalType": "time-micros"}, pa.time64("us")),
        ({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": False}, pa.timestamp("us")),
        ({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": True}, pa.timestamp("us", tz="UTC")),
        ({"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": "true"}, pa.timestamp("us", tz="UTC")),
        ({"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": True}, pa.timestamp("ns", tz="UTC")),
        ({"type": "long", "logicalType": "timestamp-nanos"}, pa.timestamp("ns")),
        (DECIMAL, pa.decimal128(9, 2)),
        ({"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 10}, pa.decimal128(38, 10)),
        (UUID, pa.binary(16)),
        ({"type": "fixed", "name": "fixed_3", "size": 3}, pa.binary(3)),
        ({"type": "string", "logicalType": "uuid"}, pa.string()),  # the Avro type decides
        ({"type": "int", "logicalType": "timestamp-micros"}, pa.int32()),  # a logical type on another base
        ({"type": {"type": "long"}}, pa.int64()),
    ],
)
def test_primitives(avro: Any, expected: pa.DataType) -> None:
    assert _type("null") == (pa.null(), False)  # Iceberg's unknown type
    assert _type(avro) == (expected, False)
    assert _type(["null", avro]) == (expected, True)
    assert _type([avro, "null"]) == (expected, True)


def test_nested_types_keep_their_field_ids() -> None:
    record = {
        "type": "record",
        "name": "r1",
        "fields": [
            {"name": "tags", "field-id": 2, "type": {"type": "array", "element-id": 3, "items": ["null", "string"]}},
            {
                "name": "attrs",
                "field-id": 4,
                "type": ["null", {"type": "map", "key-id": 5, "value-id": 6, "values": "int"}],
            },
            {
                "name": "by_day",
                "field-id": 7,
                "type": {
                    "type": "array",
                    "logicalType": "map",
                    "items": {
                        "type": "record",
                        "name": "k8_v9",
                        "fields": [
                            {"name": "key", "type": {"type": "int", "logicalType": "date"}, "field-id": 8},
                            {"name": "value", "type": ["null", "long"], "field-id": 9},
                        ],
                    },
                },
            },
        ],
    }
    struct, nullable = _type(record)
    assert not nullable
    tags, attrs, by_day = (struct.field(i) for i in range(3))
    assert [field_id(f) for f in (tags, attrs, by_day)] == [2, 4, 7]
    assert not tags.nullable and attrs.nullable
    assert tags.type == pa.list_(pa.string()) and field_id(tags.type.value_field) == 3
    assert tags.type.value_field.nullable
    assert (attrs.type.key_type, attrs.type.item_type) == (pa.string(), pa.int32())
    assert (field_id(attrs.type.key_field), field_id(attrs.type.item_field)) == (5, 6)
    assert attrs.type.key_field.nullable is False and attrs.type.item_field.nullable is False
    assert (by_day.type.key_type, by_day.type.item_type) == (pa.date32(), pa.int64())
    assert (field_id(by_day.type.key_field), field_id(by_day.type.item_field)) == (8, 9)
    assert by_day.type.item_field.nullable
    assert tags.metadata == {PARQUET_FIELD_ID: b"2"}


def test_a_named_type_used_again_by_name() -> None:
    struct, _ = _type(TWO_OF_EACH)
    assert [struct.field(i).type for i in range(4)] == [pa.decimal128(9, 2)] * 2 + [pa.binary(16)] * 2


def _avro_file(schema: dict[str, Any], rows: list[dict[str, Any]]) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), rows)
    return out.getvalue()


def test_an_avro_data_file_with_two_decimal_and_two_uuid_columns() -> None:
    """Avro names each type once: the second decimal(9,2) and uuid columns are only names."""
    a, b = uuid.UUID(int=1), uuid.UUID(int=2**128 - 1)
    rows = [
        {"price": Decimal("1.25"), "cost": Decimal("-3.50"), "id": a.bytes, "parent": b.bytes},
        {"price": None, "cost": Decimal("0.01"), "id": b.bytes, "parent": None},
    ]
    table = read_avro_table(_avro_file(TWO_OF_EACH, rows), "two.avro")
    assert table.schema.types == [pa.decimal128(9, 2), pa.decimal128(9, 2), pa.binary(16), pa.binary(16)]
    assert [field_id(f) for f in table.schema] == [1, 2, 3, 4]
    assert table.column("cost").to_pylist() == [Decimal("-3.50"), Decimal("0.01")]
    assert table.column("parent").to_pylist() == [b.bytes, None]
    assert table.column("price").to_pylist() == [Decimal("1.25"), None]


def test_an_avro_data_file_with_nested_values() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [
            {
                "name": "info",
                "field-id": 1,
                "type": [
                    "null",
                    {"type": "record", "name": "r1", "fields": [{"name": "code", "type": "int", "field-id": 2}]},
                ],
            },
            {"name": "attrs", "field-id": 3, "type": {"type": "map", "key-id": 4, "value-id": 5, "values": "long"}},
            {
                "name": "counts",
                "field-id": 6,
                "type": {
                    "type": "array",
                    "logicalType": "map",
                    "items": {
                        "type": "record",
                        "name": "k7_v8",
                        "fields": [
                            {"name": "key", "type": "int", "field-id": 7},
                            {"name": "value", "type": ["null", "string"], "field-id": 8},
                        ],
                    },
                },
            },
        ],
    }
    rows = [
        {"info": {"code": 7}, "attrs": {"x": 1}, "counts": [{"key": 1, "value": "one"}, {"key": 2, "value": None}]},
        {"info": None, "attrs": {}, "counts": []},
    ]
    table = read_avro_table(_avro_file(schema, rows), "nested.avro")
    assert table.column("info").to_pylist() == [{"code": 7}, None]
    assert table.column("attrs").to_pylist() == [[("x", 1)], []]
    assert table.column("counts").to_pylist() == [[(1, "one"), (2, None)], []]


@pytest.mark.parametrize(
    ("avro", "field", "problem"),
    [
        (["null", "int", "string"], "c", "is not an Iceberg type"),
        ({"type": "enum", "name": "e", "symbols": ["A"]}, "c", "unknown Avro type 'enum'"),
        ("decimal_9_2", "c", "unknown Avro type 'decimal_9_2'"),
        ({"type": "fixed", "name": "f"}, "c", "malformed Avro type (KeyError"),
        ({"type": "fixed", "name": "f", "size": -1}, "c", "negative fixed size"),
        ({"type": "fixed", "name": "f", "size": 2**70}, "c", "malformed Avro type (OverflowError"),
        ({"type": "bytes", "logicalType": "decimal", "precision": 99}, "c", "malformed Avro type"),
        (
            {"type": "record", "name": "r", "fields": [{"name": "x", "type": {"type": "array", "items": ["a", "b"]}}]},
            "c.x.element",
            "is not an Iceberg type",
        ),
        ({"type": "record", "name": "r", "fields": [{"name": "me", "type": "r"}]}, "c.me", "contains itself"),
        ({"type": "record", "name": "r", "fields": [{"type": "int"}]}, "c", "malformed Avro type (KeyError"),
        (7, "c", "unsupported Avro type 7"),
    ],
)
def test_what_iceberg_never_writes_is_one_metadata_error(avro: Any, field: str, problem: str) -> None:
    with pytest.raises(MetadataError, match=r"data file f\.avro") as caught:
        _type(avro)
    assert caught.value.field == field
    assert problem in caught.value.problem


def test_deep_nesting_is_bounded() -> None:
    deep: Any = "int"
    for _ in range(5000):
        deep = {"type": "array", "items": deep}
    with pytest.raises(MetadataError, match="nested deeper than 64 levels"):
        _type(deep)
    # a type used twice at every level is converted once per name, not 2**depth times
    wide: Any = {"type": "fixed", "name": "f0", "size": 1}
    for level in range(1, 60):
        wide = {
            "type": "record",
            "name": f"r{level}",
            "fields": [{"name": "a", "type": wide}, {"name": "b", "type": wide["name"]}],
        }
    assert _type(wide)[0].num_fields == 2


def test_an_avro_data_file_whose_schema_iceberg_never_writes() -> None:
    schema = {
        "type": "record",
        "name": "r",
        "fields": [{"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A"]}}],
    }
    with pytest.raises(MetadataError, match=r"data file bad\.avro: e: unknown Avro type 'enum'"):
        read_avro_table(_avro_file(schema, [{"e": "A"}]), "bad.avro")


def test_a_manifest_partition_with_a_decimal_type_used_twice() -> None:
    fields = [{**f, "field-id": 1000 + i} for i, f in enumerate(TWO_OF_EACH["fields"][:2])]
    partition = {"type": "record", "name": "r102", "fields": fields}
    schema = copy.deepcopy(SYNTHETIC_SCHEMA)
    data_file = next(f for f in schema["fields"] if f["name"] == "data_file")
    next(f for f in data_file["type"]["fields"] if f["name"] == "partition")["type"] = partition
    header = ManifestHeader(
        path="m.avro",
        schema=None,
        schema_id=None,
        partition_spec=None,
        partition_spec_id=None,
        format_version=2,
        content=None,
        avro_schema=json.dumps(schema),
        codec="null",
    )
    layout = manifest_layout(header)
    assert [(p.name, p.field_id, p.arrow_type) for p in layout.partition_fields] == [
        ("price", 1000, pa.decimal128(9, 2)),
        ("cost", 1001, pa.decimal128(9, 2)),
    ]
    partition["fields"][1]["type"] = ["null", "int", "string"]
    broken = dataclasses.replace(header, avro_schema=json.dumps(schema))
    with pytest.raises(MetadataError, match=r"manifest m\.avro: data_file\.partition\.cost: Avro union"):
        manifest_layout(broken)
