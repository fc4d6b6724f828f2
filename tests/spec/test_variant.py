"""Variant values: decoding, Spark's JSON text, the encoder that rebuilds shredded values, and malformed
bytes as one ``VariantError`` (parquet-format ``VariantEncoding.md`` / ``VariantShredding.md``)."""

from __future__ import annotations

import datetime as dt
import random
import uuid
from decimal import Decimal

import pytest

from icebook.errors import IcebookError
from icebook.spec import variant_encode as enc
from icebook.spec.variant import (
    MAX_DEPTH,
    NanoTimestamp,
    VariantError,
    check,
    decode,
    java_float_text,
    parse_metadata,
    to_json,
)

metadata = enc.encode_metadata
EMPTY = metadata([])


def test_primitives_decode_and_print_as_spark() -> None:
    cases = [
        (enc.NULL, None, "null"),
        (enc.encode_scalar("bool", True), True, "true"),
        (enc.encode_scalar("bool", False), False, "false"),
        (enc.encode_int(-5, 1), -5, "-5"),
        (enc.encode_int(2**40, 8), 2**40, "1099511627776"),
        (enc.encode_scalar("double", 1e300), 1e300, "1.0E300"),
        (enc.encode_scalar("double", 0.1), 0.1, "0.1"),
        (enc.encode_scalar("double", 1234567.0), 1234567.0, "1234567.0"),
        (enc.encode_scalar("double", 12345678.9), 12345678.9, "1.23456789E7"),
        (enc.encode_scalar("double", 0.0001), 0.0001, "1.0E-4"),
        (enc.encode_scalar("float", 0.1), pytest.approx(0.1), "0.1"),
        (enc.encode_decimal(Decimal("3.10"), 10, 2), Decimal("3.10"), "3.1"),
        (enc.encode_decimal(Decimal("100"), 30, 0), Decimal("100"), "100"),
        (enc.encode_decimal(Decimal("-0.50"), 5, 2), Decimal("-0.50"), "-0.5"),
        (enc.encode_scalar("date", -1), dt.date(1969, 12, 31), '"1969-12-31"'),
        (
            enc.encode_scalar("timestamp", 1_704_164_645_123_456),
            dt.datetime(2024, 1, 2, 3, 4, 5, 123456, tzinfo=dt.UTC),
            '"2024-01-02 03:04:05.123456+00:00"',
        ),
        (
            enc.encode_scalar("timestamp_ntz", -1_000_000),
            dt.datetime(1969, 12, 31, 23, 59, 59),
            '"1969-12-31 23:59:59"',
        ),
        (
            enc.encode_scalar("timestamp_ntz", 120_000),
            dt.datetime(1970, 1, 1, 0, 0, 0, 120000),
            '"1970-01-01 00:00:00.12"',
        ),
        (
            enc.encode_scalar("timestamp_nanos", 1_000_000_001),
            NanoTimestamp(1_000_000_001, True),
            '"1970-01-01 00:00:01.000000001+00:00"',
        ),
        (enc.encode_scalar("time", 3_600_000_001), dt.time(1, 0, 0, 1), '"01:00:00.000001"'),
        (enc.encode_scalar("binary", b"\x01\x02\xff"), b"\x01\x02\xff", '"AQL/"'),
        (enc.encode_string('é "q" \\ \t\x01'), 'é "q" \\ \t\x01', '"é \\"q\\" \\\\ \\t\\u0001"'),
        (enc.encode_string("x" * 70), "x" * 70, '"' + "x" * 70 + '"'),
        (
            enc.encode_scalar("uuid", uuid.UUID(int=1)),
            uuid.UUID(int=1),
            '"00000000-0000-0000-0000-000000000001"',
        ),
    ]
    for value, python, text in cases:
        assert decode(EMPTY, value) == python, text
        assert to_json(EMPTY, value) == text


def test_objects_and_arrays() -> None:
    meta = metadata(["b", "a", "c"])
    inner = enc.encode_array([enc.encode_int(1, 1), enc.NULL, enc.encode_string("x")])
    obj = enc.encode_object(
        [(0, "b", inner), (1, "a", enc.encode_scalar("bool", True)), (2, "c", enc.encode_object([]))]
    )
    assert decode(meta, obj) == {"a": True, "b": [1, None, "x"], "c": {}}
    assert to_json(meta, obj) == '{"a":true,"b":[1,null,"x"],"c":{}}'  # keys sorted, as stored
    wide = [f"key{i:03d}" for i in range(300)]  # 2-byte sizes and offsets
    assert parse_metadata(enc.encode_metadata(wide, sorted_strings=True)).keys == tuple(wide)
    assert parse_metadata(enc.encode_metadata(wide, sorted_strings=True)).sorted_strings
    big = enc.encode_array([enc.encode_int(i, 2) for i in range(300)])  # is_large, 2-byte offsets
    assert decode(EMPTY, big) == list(range(300))
    assert enc.object_fields(meta, obj)[0] == (1, "a", enc.encode_scalar("bool", True))


def test_java_float_text() -> None:
    assert java_float_text(-0.0) == "-0.0"
    assert java_float_text(float("nan")) == '"NaN"'
    assert java_float_text(3.4e38, single=True) == "3.4E38"
    assert java_float_text(1e7) == "1.0E7"
    assert java_float_text(0.001) == "0.001"


def valid_value() -> tuple[bytes, bytes]:
    meta = metadata(["k", "list", "s"])
    value = enc.encode_object(
        [
            (0, "k", enc.encode_decimal(Decimal("1.5"), 20, 1)),
            (1, "list", enc.encode_array([enc.encode_string("a" * 80), enc.encode_scalar("date", 3)])),
            (2, "s", enc.encode_string("short")),
        ]
    )
    return meta, value


def test_every_cut_or_damaged_byte_is_one_variant_error() -> None:
    meta, value = valid_value()
    for n in range(len(value)):
        with pytest.raises(VariantError):
            decode(meta, value[:n])
        with pytest.raises(VariantError):
            check(meta, value[:n])
    for n in range(len(meta)):
        with pytest.raises(VariantError):
            to_json(meta[:n], value)
    rng = random.Random(7)
    for _ in range(3000):
        broken = bytearray(value)
        broken[rng.randrange(len(broken))] = rng.randrange(256)
        for walk in (to_json, check):
            try:
                walk(meta, bytes(broken))
            except VariantError as exc:
                assert isinstance(exc, IcebookError) and str(exc).startswith("variant ")


def test_malformed_pieces_are_named() -> None:
    with pytest.raises(VariantError, match="version 2"):
        parse_metadata(b"\x02\x00\x00")
    with pytest.raises(VariantError, match=r"field id 5 .* outside the dictionary"):
        decode(metadata(["a"]), enc.encode_object([(5, "z", enc.NULL)]))
    with pytest.raises(VariantError, match="unknown primitive type 40"):
        decode(EMPTY, bytes([40 << 2]))
    with pytest.raises(VariantError, match="not valid UTF-8"):
        decode(EMPTY, bytes([(2 << 2) | 1]) + b"\xff\xfe")
    deep = enc.NULL
    for _ in range(MAX_DEPTH + 2):
        deep = enc.encode_array([deep])
    with pytest.raises(VariantError, match="nested deeper"):
        decode(EMPTY, deep)
