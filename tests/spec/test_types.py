"""Types (spec: "Schemas and Data Types", Appendix C) and the Schema model built on them."""

from __future__ import annotations

import pytest

from icebook.errors import MetadataError
from icebook.spec.schema import parse_schema
from icebook.spec.types import (
    DecimalType,
    FixedType,
    GeoType,
    ListType,
    MapType,
    PrimitiveType,
    StructType,
    parse_type,
    type_to_json,
)

NESTED_SCHEMA = {
    "type": "struct",
    "schema-id": 3,
    "identifier-field-ids": [1],
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "data", "required": False, "type": "string", "doc": "payload"},
        {
            "id": 3,
            "name": "loc",
            "required": False,
            "type": {
                "type": "struct",
                "fields": [
                    {"id": 4, "name": "lat", "required": True, "type": "double"},
                    {"id": 5, "name": "lon", "required": True, "type": "double"},
                ],
            },
        },
        {
            "id": 6,
            "name": "tags",
            "required": False,
            "type": {"type": "list", "element-id": 7, "element-required": True, "element": "string"},
        },
        {
            "id": 8,
            "name": "attrs",
            "required": False,
            "type": {
                "type": "map",
                "key-id": 9,
                "key": "string",
                "value-id": 10,
                "value-required": False,
                "value": {
                    "type": "struct",
                    "fields": [{"id": 11, "name": "v", "required": False, "type": "decimal(9, 2)"}],
                },
            },
        },
    ],
    "x-writer-note": "kept",
}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("int", PrimitiveType("int")),
        ("timestamptz_ns", PrimitiveType("timestamptz_ns")),
        ("unknown", PrimitiveType("unknown")),
        ("variant", PrimitiveType("variant")),
        ("decimal(9,2)", DecimalType(9, 2)),
        ("decimal( 38 , 10 )", DecimalType(38, 10)),
        ("fixed[16]", FixedType(16)),
        ("geometry(srid:4326)", GeoType("geometry", ("srid:4326",))),
        ("geography(srid:4326, spherical)", GeoType("geography", ("srid:4326", "spherical"))),
    ],
)
def test_parse_primitive_types(text: str, expected: object) -> None:
    assert parse_type(text) == expected


def test_canonical_type_strings() -> None:
    assert str(parse_type("decimal(9, 2)")) == "decimal(9,2)"
    assert str(parse_type("fixed[ 4 ]")) == "fixed[4]"


def test_nested_types_round_trip() -> None:
    raw = NESTED_SCHEMA["fields"][4]["type"]  # type: ignore[index]
    t = parse_type(raw)
    assert isinstance(t, MapType)
    assert t.key.field_id == 9 and t.key.required
    assert t.value.field_id == 10 and not t.value.required
    assert isinstance(t.value.type, StructType)
    assert type_to_json(t) == raw | {
        "value": {"type": "struct", "fields": [{"id": 11, "name": "v", "required": False, "type": "decimal(9,2)"}]}
    }


def test_unknown_type_names_file_and_field() -> None:
    with pytest.raises(MetadataError) as err:
        parse_type("int128", file="m.json", where="schemas[0].x")
    assert "m.json" in str(err.value) and "schemas[0].x" in str(err.value)


def test_list_missing_element_id() -> None:
    with pytest.raises(MetadataError, match=r"f\.element-id: missing"):
        parse_type({"type": "list", "element-required": True, "element": "int"}, file="m.json", where="f")


def test_schema_lookups() -> None:
    s = parse_schema(NESTED_SCHEMA, file="m.json")
    assert s.schema_id == 3
    assert s.identifier_field_ids == (1,)
    assert [f.name for f in s.columns] == ["id", "data", "loc", "tags", "attrs"]
    assert s.find_field(5) is not None and s.find_field(5).name == "lon"  # type: ignore[union-attr]
    assert s.find_field(99) is None
    assert s.find_column_name(4) == "loc.lat"
    assert s.find_column_name(7) == "tags.element"
    assert s.find_column_name(9) == "attrs.key"
    assert s.find_column_name(11) == "attrs.value.v"
    assert s.find_field_by_name("loc.lon").field_id == 5  # type: ignore[union-attr]
    assert s.find_field_by_name("LOC.LON") is None
    assert s.find_field_by_name("LOC.LON", case_sensitive=False).field_id == 5  # type: ignore[union-attr]
    assert s.find_type(11) == DecimalType(9, 2)
    assert isinstance(s.find_type(6), ListType)
    assert s.highest_field_id == 11
    assert s.name_to_id()["attrs.value"] == 10
    assert set(s.id_to_name()) == set(range(1, 12))
    assert s.extras == {"x-writer-note": "kept"}
    assert s.find_field(2).doc == "payload"  # type: ignore[union-attr]


def test_schema_errors() -> None:
    no_id = {k: v for k, v in NESTED_SCHEMA.items() if k != "schema-id"}
    with pytest.raises(MetadataError, match=r"schemas\[0\]\.schema-id: missing"):
        parse_schema(no_id, file="m.json", where="schemas[0]")
    assert parse_schema(no_id, file="m.json", default_schema_id=0).schema_id == 0
    bad_ident = NESTED_SCHEMA | {"identifier-field-ids": [42]}
    with pytest.raises(MetadataError, match="identifier-field-ids"):
        parse_schema(bad_ident, file="m.json")
    dup = NESTED_SCHEMA | {
        "fields": [
            {"id": 1, "name": "a", "required": True, "type": "int"},
            {"id": 1, "name": "b", "required": True, "type": "int"},
        ],
        "identifier-field-ids": [],
    }
    with pytest.raises(MetadataError, match="used twice"):
        parse_schema(dup, file="m.json")


def test_schema_field_missing_name() -> None:
    raw = {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "required": True, "type": "int"}]}
    with pytest.raises(MetadataError) as err:
        parse_schema(raw, file="/t/metadata/v1.metadata.json", where="schemas[0]")
    assert str(err.value) == "metadata /t/metadata/v1.metadata.json: schemas[0].fields[0].name: missing"


def test_default_values_kept() -> None:
    raw = {
        "type": "struct",
        "schema-id": 0,
        "fields": [{"id": 1, "name": "n", "required": True, "type": "int", "initial-default": 7, "write-default": 8}],
    }
    f = parse_schema(raw, file="m.json").find_field(1)
    assert f is not None and f.has_initial_default and f.initial_default == 7 and f.write_default == 8
