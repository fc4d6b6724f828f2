"""Appendix D binary single-value decoding, against bytes computed by hand from the spec."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal

import pytest

from icebook.errors import MetadataError, UnsupportedFeature
from icebook.spec.types import (
    BINARY,
    BOOLEAN,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    LONG,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMP_NS,
    TIMESTAMPTZ,
    TIMESTAMPTZ_NS,
    UUID,
    DecimalType,
    FixedType,
    ListType,
    NestedField,
    PrimitiveType,
)
from icebook.spec.values import decode_value, encode_value, to_human, to_python_object

CASES = [
    # (type, bytes as the spec describes them, decoded value, human text)
    (BOOLEAN, b"\x00", False, "false"),
    (BOOLEAN, b"\x01", True, "true"),
    (BOOLEAN, b"\x07", True, "true"),  # "non-zero byte for true"
    (INT, b"\x01\x00\x00\x00", 1, "1"),
    (INT, b"\xfb\xff\xff\xff", -5, "-5"),
    (LONG, b"\x00\xe4\x0b\x54\x02\x00\x00\x00", 10_000_000_000, "10000000000"),
    (LONG, b"\xff\xff\xff\xff\xff\xff\xff\xff", -1, "-1"),
    (FLOAT, b"\x00\x00\xc0\xbf", -1.5, "-1.5"),
    (DOUBLE, b"\x00\x00\x00\x00\x00\x00\x02\xc0", -2.25, "-2.25"),
    (DATE, b"\x47\x4d\x00\x00", 19783, "2024-03-01"),
    (DATE, b"\xff\xff\xff\xff", -1, "1969-12-31"),
    (TIME, (37_800_123_456).to_bytes(8, "little"), 37_800_123_456, "10:30:00.123456"),
    (TIMESTAMP, (1_705_314_600_000_000).to_bytes(8, "little"), 1_705_314_600_000_000, "2024-01-15T10:30:00"),
    (TIMESTAMPTZ, (1_705_314_600_000_000).to_bytes(8, "little"), 1_705_314_600_000_000, "2024-01-15T10:30:00+00:00"),
    (TIMESTAMPTZ, (-1).to_bytes(8, "little", signed=True), -1, "1969-12-31T23:59:59.999999+00:00"),
    (
        TIMESTAMP_NS,
        (1_705_314_600_123_456_789).to_bytes(8, "little"),
        1_705_314_600_123_456_789,
        "2024-01-15T10:30:00.123456789",
    ),
    (TIMESTAMPTZ_NS, (1_000_000_001).to_bytes(8, "little"), 1_000_000_001, "1970-01-01T00:00:01.000000001+00:00"),
    (STRING, "zürich".encode(), "zürich", "zürich"),
    (
        UUID,
        bytes.fromhex("f79c3e09677c4bbdb479c9aed42b29b1"),
        uuid.UUID("f79c3e09-677c-4bbd-b479-c9aed42b29b1"),
        "f79c3e09-677c-4bbd-b479-c9aed42b29b1",
    ),
    (FixedType(3), b"\x00\xff\x10", b"\x00\xff\x10", "0x00FF10"),
    (BINARY, b"\xff\xfe", b"\xff\xfe", "0xFFFE"),
    (DecimalType(10, 2), b"\x04\xd2", Decimal("12.34"), "12.34"),  # 1234 = 0x04D2
    (DecimalType(10, 2), b"\xfb\x2e", Decimal("-12.34"), "-12.34"),  # two's complement of 1234
    (DecimalType(10, 2), b"\x00", Decimal("0.00"), "0.00"),
    (DecimalType(38, 0), b"\x7f" + b"\xff" * 15, Decimal(2**127 - 1), str(2**127 - 1)),
    (
        DecimalType(30, 5),
        (1234567890123456789012345).to_bytes(11, "big", signed=True),
        Decimal("12345678901234567890.12345"),
        "12345678901234567890.12345",
    ),
]


@pytest.mark.parametrize(("type_", "raw", "value", "human"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_decode_and_human(type_: object, raw: bytes, value: object, human: str) -> None:
    got = decode_value(raw, type_)  # type: ignore[arg-type]
    assert got == value and type(got) is type(value)
    assert to_human(got, type_) == human  # type: ignore[arg-type]


@pytest.mark.parametrize(("type_", "raw", "value", "human"), [c for c in CASES if c[0] != BOOLEAN or c[1] != b"\x07"])
def test_encode_roundtrip(type_: object, raw: bytes, value: object, human: str) -> None:
    assert decode_value(encode_value(value, type_), type_) == value  # type: ignore[arg-type]


def test_promoted_bounds_are_read_at_their_written_width() -> None:
    """Spec "Schema Evolution": type promotion does not rewrite bounds; infer the write-time type by length."""
    assert decode_value((-7).to_bytes(4, "little", signed=True), LONG) == -7  # int -> long
    assert decode_value(b"\x00\x00\xc0\xbf", DOUBLE) == -1.5  # float -> double
    days = (19783).to_bytes(4, "little")
    assert decode_value(days, TIMESTAMP) == 19783 * 86_400_000_000  # date -> timestamp
    assert decode_value(days, TIMESTAMP_NS) == 19783 * 86_400_000_000_000  # date -> timestamp_ns
    assert to_human(decode_value(days, TIMESTAMP), TIMESTAMP) == "2024-03-01T00:00:00"
    assert decode_value(b"\x04\xd2", DecimalType(20, 2)) == Decimal("12.34")  # decimal(P', S), P' <= P


def test_truncated_string_and_binary_bounds_are_prefixes() -> None:
    # metrics mode truncate(16): a lower bound is a prefix, an upper bound an incremented prefix
    assert decode_value(b"zebra-long-strin", STRING) == "zebra-long-strin"
    assert decode_value(b"zebra-long-strio", STRING) == "zebra-long-strio"
    assert decode_value(b"\x00\x01", BINARY) == b"\x00\x01"


def test_python_objects_for_spark_comparison() -> None:
    assert to_python_object(19783, DATE) == dt.date(2024, 3, 1)
    assert to_python_object(37_800_000_000, TIME) == dt.time(10, 30)
    assert to_python_object(1_705_314_600_000_000, TIMESTAMP) == dt.datetime(2024, 1, 15, 10, 30)
    assert to_python_object(0, TIMESTAMPTZ) == dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
    assert to_python_object(1_500, TIMESTAMP_NS) == dt.datetime(1970, 1, 1, 0, 0, 0, 1)
    assert to_python_object(5, INT) == 5


@pytest.mark.parametrize(
    ("type_", "raw", "problem"),
    [
        (INT, b"\x01\x00", "int must be 4 bytes, found 2"),
        (LONG, b"\x01\x00\x00", "long must be 8 bytes (or 4 if promoted from int), found 3"),
        (DOUBLE, b"\x01\x00", "double must be 8 bytes (or 4 if promoted from float), found 2"),
        (BOOLEAN, b"", "boolean must be 1 byte, found 0"),
        (UUID, b"\x00" * 15, "uuid must be 16 bytes, found 15"),
        (STRING, b"\xff\xfe", "string bound is not valid UTF-8"),
        (DecimalType(9, 2), b"", "empty bytes for decimal(9,2)"),
        (TIMESTAMPTZ, b"\x00" * 4, "timestamptz must be 8 bytes, found 4"),
    ],
)
def test_errors_name_the_field(type_: object, raw: bytes, problem: str) -> None:
    with pytest.raises(MetadataError) as info:
        decode_value(raw, type_, field="lower_bounds[3]", file="/t/m0.avro")  # type: ignore[arg-type]
    assert info.value.file == "/t/m0.avro" and info.value.field == "lower_bounds[3]"
    assert problem in str(info.value)


def test_types_without_binary_serialization() -> None:
    with pytest.raises(UnsupportedFeature):
        decode_value(b"\x00", PrimitiveType("variant"))
    element = NestedField(field_id=2, name="element", required=True, type=INT)
    with pytest.raises(UnsupportedFeature):
        decode_value(b"\x00", ListType(element))


def test_geo_bound_points_as_wkb() -> None:
    from icebook.spec.values import point_wkb

    assert point_wkb((1.0, 2.0)) == bytes.fromhex("0101000000000000000000F03F0000000000000040")
    assert point_wkb((1.0, 2.0, 3.0))[1:5] == (1001).to_bytes(4, "little")  # POINT Z
    xym = point_wkb((1.0, 2.0, float("nan"), 4.0))  # x:y:NaN:m is an XYM point
    assert xym[1:5] == (2001).to_bytes(4, "little") and len(xym) == 5 + 3 * 8
    assert point_wkb((1.0, 2.0, 3.0, 4.0))[1:5] == (3001).to_bytes(4, "little")
