"""Default values (spec: "Default values", Appendix D "JSON single-value serialization"): each read into a
value of its field's type, a default of another type one MetadataError naming the metadata file and field."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from _support.metadata_examples import FILE, v3

from icebook.engines.arrow_defaults import default_column
from icebook.errors import MetadataError
from icebook.spec.defaults import default_text, parse_default
from icebook.spec.metadata import parse_table_metadata
from icebook.spec.types import NestedField, parse_type

GOOD = [
    ("boolean", True, True),
    ("int", 34, 34),
    ("long", -(2**63), -(2**63)),
    ("float", 1, 1.0),
    ("double", 1.5, 1.5),
    ("decimal(4,2)", "14.20", Decimal("14.20")),
    ("date", "2017-11-16", (dt.date(2017, 11, 16) - dt.date(1970, 1, 1)).days),
    ("time", "22:31:08.123456", ((22 * 60 + 31) * 60 + 8) * 1_000_000 + 123456),
    ("timestamp", "2017-11-16T22:31:08.123456", 1510871468123456),
    ("timestamptz", "2017-11-16T22:31:08.123456+00:00", 1510871468123456),
    ("timestamp_ns", "2017-11-16T22:31:08.123456789", 1510871468123456789),
    ("timestamptz_ns", "1969-12-31T23:59:59.5+00:00", -500_000_000),
    ("string", "iceberg", "iceberg"),
    ("uuid", "f79c3e09-677c-4bbd-a479-3f349cb785e7", uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")),
    ("fixed[4]", "000102ff", b"\x00\x01\x02\xff"),
    ("binary", "000102ff", b"\x00\x01\x02\xff"),
    ({"type": "list", "element-id": 5, "element": "int", "element-required": False}, [1, 2], [1, 2]),
    (
        {"type": "map", "key-id": 5, "key": "string", "value-id": 6, "value": "long", "value-required": False},
        {"keys": ["a"], "values": [1]},
        [("a", 1)],
    ),
    ({"type": "struct", "fields": [{"id": 5, "name": "x", "required": False, "type": "int"}]}, {}, {}),
]

BAD = [
    ("int", "7", "expected a JSON integer"),
    ("int", 2**31, "out of the int range"),
    ("long", 1.5, "expected a JSON integer"),
    ("boolean", 1, "expected true or false"),
    ("double", "1.0", "expected a JSON number"),
    ("decimal(4,2)", "14.2", "scale 2"),
    ("decimal(4,2)", 14.2, "expected a JSON string"),
    ("date", 17486, "expected a JSON string"),
    ("date", "2017-13-01", "ISO-8601 date"),
    ("timestamp", "2017-11-16T22:31:08+00:00", "without a zone offset"),
    ("timestamptz", "2017-11-16T22:31:08", "+00:00"),
    ("timestamp", "2017-11-16T22:31:08.1234567", "fractional digits"),
    ("binary", "0g", "hexadecimal"),
    ("fixed[4]", "00", "not 4"),
    ("uuid", "not-a-uuid", "uuid string"),
    ("variant", "x", "null only"),
    ("unknown", 1, "null only"),
    ("geometry", "POINT (30 10)", "null only"),
    ({"type": "struct", "fields": [{"id": 5, "name": "x", "required": False, "type": "int"}]}, {"5": 1}, "{}"),
]


@pytest.mark.parametrize(("type_", "raw", "value"), GOOD, ids=[str(g[0])[:30] for g in GOOD])
def test_every_type_reads_its_json_single_value(type_: Any, raw: Any, value: Any) -> None:
    assert parse_default(raw, parse_type(type_), file=FILE, field="f") == value


@pytest.mark.parametrize(("type_", "raw", "why"), BAD, ids=[f"{str(b[0])[:20]}-{b[1]!r}" for b in BAD])
def test_a_value_of_another_type_is_one_error(type_: Any, raw: Any, why: str) -> None:
    with pytest.raises(MetadataError) as err:
        parse_default(raw, parse_type(type_), file=FILE, field="schemas[0].n.initial-default")
    text = str(err.value)
    assert text.startswith(f"metadata {FILE}: schemas[0].n.initial-default: default ")
    assert why in text


def _with_defaults(**defaults: Any) -> dict[str, Any]:
    raw = v3()
    field = {"id": 40, "name": "n", "required": False, "type": "int", **defaults}
    for schema in raw["schemas"]:
        schema["fields"] = [*schema["fields"], field]
    raw["last-column-id"] = 40
    return raw


def test_a_string_default_of_an_int_field_in_table_metadata_names_the_file_and_field() -> None:
    with pytest.raises(MetadataError) as err:
        parse_table_metadata(_with_defaults(**{"initial-default": 7, "write-default": "9"}), file=FILE)
    assert str(err.value) == (
        f"metadata {FILE}: schemas[0].n.write-default: default '9' is not a value of type int: expected a JSON integer"
    )


def test_good_defaults_are_kept_as_written_and_shown() -> None:
    md = parse_table_metadata(_with_defaults(**{"initial-default": 7, "write-default": 9}), file=FILE)
    n = md.current_schema().columns[-1]
    assert (n.initial_default, n.write_default) == (7, 9)
    assert default_text(n) == "initial-default 7 · write-default 9"
    assert default_text(md.current_schema().columns[0]) == ""


def test_a_missing_column_is_filled_with_its_initial_default_in_its_arrow_type() -> None:
    def field(type_: Any, default: Any, fid: int = 9) -> NestedField:
        return NestedField(
            field_id=fid,
            name="c",
            required=False,
            type=parse_type(type_),
            initial_default=default,
            has_initial_default=True,
        )

    assert default_column(field("int", 7), 2) == pa.array([7, 7], pa.int32())
    assert default_column(field("date", "2024-01-05"), 1) == pa.array([dt.date(2024, 1, 5)], pa.date32())
    ts = default_column(field("timestamptz", "2024-01-05T01:02:03.000004+00:00"), 1)
    assert ts.type == pa.timestamp("us", tz="UTC") and ts[0].value == 1704416523000004
    assert default_column(field("decimal(4,2)", "14.20"), 1).to_pylist() == [Decimal("14.20")]
    assert default_column(field("int", None), 2) == pa.nulls(2, pa.int32())
    point = {
        "type": "struct",
        "fields": [
            {"id": 5, "name": "x", "required": False, "type": "int", "initial-default": 0},
            {"id": 6, "name": "y", "required": False, "type": "int"},
        ],
    }
    # "Default values": a struct defaulted to {} takes each field's own default; one defaulted to null is null.
    assert default_column(field(point, {}), 1).to_pylist() == [{"x": 0, "y": None}]
    assert default_column(field(point, None), 1).to_pylist() == [None]
