"""Partition transforms: Appendix B hash test values, truncate examples, time transforms."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

import pytest

from icebook.errors import UnsupportedFeature
from icebook.spec import types as T
from icebook.spec.transforms import (
    DAY,
    HOUR,
    IDENTITY,
    MONTH,
    VOID,
    YEAR,
    BucketTransform,
    TruncateTransform,
    UnknownTransform,
    civil_from_days,
    hash_double,
    murmur3_32,
    parse_transform,
)

EPOCH = dt.datetime(1970, 1, 1)


def days(d: dt.date) -> int:
    return (d - dt.date(1970, 1, 1)).days


def micros(t: dt.datetime) -> int:
    delta = t - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


TS = micros(dt.datetime(2017, 11, 16, 22, 31, 8))


# ---------------------------------------------------------------- Appendix B


@pytest.mark.parametrize(
    ("value", "source", "expected"),
    [
        (34, T.INT, 2017239379),
        (34, T.LONG, 2017239379),
        (Decimal("14.20"), T.DecimalType(9, 2), -500754589),
        (days(dt.date(2017, 11, 16)), T.DATE, -653330422),
        ((22 * 3600 + 31 * 60 + 8) * 1_000_000, T.TIME, -662762989),
        (TS, T.TIMESTAMP, -2047944441),
        (TS + 1, T.TIMESTAMP, -1207196810),
        (TS, T.TIMESTAMPTZ, -2047944441),  # 2017-11-16T14:31:08-08:00 is the same instant
        (TS + 1, T.TIMESTAMPTZ, -1207196810),
        (TS * 1000, T.TIMESTAMP_NS, -2047944441),
        ((TS + 1) * 1000 + 1, T.TIMESTAMP_NS, -1207196810),  # ...08.000001001 -> micros first
        ((TS + 1) * 1000 + 1, T.TIMESTAMPTZ_NS, -1207196810),
        ("iceberg", T.STRING, 1210000089),
        (uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"), T.UUID, 1488055340),
        (bytes([0, 1, 2, 3]), T.FixedType(4), -188683207),
        (bytes([0, 1, 2, 3]), T.BINARY, -188683207),
        (True, T.BOOLEAN, 1392991556),
        (1.0, T.FLOAT, -142385009),
        (0.0, T.DOUBLE, 1669671676),
        (-0.0, T.DOUBLE, 1669671676),
    ],
)
def test_appendix_b_hash_values(value: Any, source: T.IcebergType, expected: int) -> None:
    assert BucketTransform.hash(value, source) == expected


def test_decimal_hash_uses_type_scale_not_value_scale() -> None:
    # "Hash results are not dependent on decimal scale, which is part of the type."
    assert BucketTransform.hash(Decimal("14.2"), T.DecimalType(9, 2)) == -500754589


def test_murmur3_tails_and_nan() -> None:
    assert murmur3_32(b"") == 0
    # every tail length exercises a different branch; hashes must be distinct and stable
    assert len({murmur3_32(b"abcd"[:n]) for n in range(1, 5)}) == 4
    assert hash_double(float("nan")) == hash_double(-float("nan"))


def test_bucket_apply() -> None:
    b16 = BucketTransform(16)
    assert b16.apply(34, T.INT) == (2017239379 & 0x7FFFFFFF) % 16
    assert b16.apply("iceberg", T.STRING) == 1210000089 % 16
    # negative hash: the sign bit is discarded before the modulo
    assert BucketTransform(100).apply(days(dt.date(2017, 11, 16)), T.DATE) == (-653330422 & 0x7FFFFFFF) % 100
    assert b16.apply(None, T.INT) is None
    assert b16.result_type(T.STRING) == T.INT
    with pytest.raises(UnsupportedFeature):
        b16.apply(1.0, T.DOUBLE)  # not a valid bucket source type


# ---------------------------------------------------------------- truncate


def test_truncate_spec_examples() -> None:
    t10 = TruncateTransform(10)
    assert t10.apply(1, T.INT) == 0
    assert t10.apply(-1, T.INT) == -10
    assert t10.apply(-1, T.LONG) == -10
    assert t10.apply(10, T.LONG) == 10
    assert TruncateTransform(50).apply(Decimal("10.65"), T.DecimalType(9, 2)) == Decimal("10.50")
    assert str(TruncateTransform(50).apply(Decimal("10.65"), T.DecimalType(9, 2))) == "10.50"
    assert TruncateTransform(50).apply(Decimal("-0.05"), T.DecimalType(9, 2)) == Decimal("-0.50")
    assert TruncateTransform(3).apply("iceberg", T.STRING) == "ice"
    assert TruncateTransform(3).apply(b"\x01\x02\x03\x04\x05", T.BINARY) == b"\x01\x02\x03"
    assert t10.result_type(T.DecimalType(9, 2)) == T.DecimalType(9, 2)


def test_truncate_strings_by_code_points() -> None:
    # 4-byte UTF-8 characters count as one code point each
    assert TruncateTransform(2).apply("😀😁😂", T.STRING) == "😀😁"
    assert TruncateTransform(5).apply("ab", T.STRING) == "ab"


def test_truncate_large_decimal_is_exact() -> None:
    v = Decimal("12345678901234567890123456789012.345678")  # 38 digits, beyond the default context
    assert TruncateTransform(1000).apply(v, T.DecimalType(38, 6)) == Decimal("12345678901234567890123456789012.345000")


def test_truncate_rejects_dates() -> None:
    with pytest.raises(UnsupportedFeature):
        TruncateTransform(2).result_type(T.DATE)


# ---------------------------------------------------------------- time transforms


@pytest.mark.parametrize(
    ("when", "year", "month", "day", "hour"),
    [
        (dt.datetime(2024, 1, 5, 13, 45), 54, 648, 19727, 19727 * 24 + 13),
        (dt.datetime(1970, 1, 1), 0, 0, 0, 0),
        (dt.datetime(1969, 12, 31, 23, 59, 59, 999999), -1, -1, -1, -1),
        (dt.datetime(1969, 1, 1), -1, -12, -365, -365 * 24),
        (dt.datetime(1968, 12, 31, 23), -2, -13, -366, -366 * 24 + 23),
        (dt.datetime(1900, 3, 1, 0, 30), -70, -70 * 12 + 2, days(dt.date(1900, 3, 1)), days(dt.date(1900, 3, 1)) * 24),
    ],
)
def test_time_transforms_on_timestamps(when: dt.datetime, year: int, month: int, day: int, hour: int) -> None:
    us = micros(when)
    for source, value in ((T.TIMESTAMP, us), (T.TIMESTAMPTZ, us), (T.TIMESTAMP_NS, us * 1000 + 999)):
        assert YEAR.apply(value, source) == year
        assert MONTH.apply(value, source) == month
        assert DAY.apply(value, source) == day
        assert HOUR.apply(value, source) == hour


def test_time_transforms_on_dates() -> None:
    d = days(dt.date(2024, 1, 5))
    assert (YEAR.apply(d, T.DATE), MONTH.apply(d, T.DATE), DAY.apply(d, T.DATE)) == (54, 648, d)
    pre = days(dt.date(1969, 12, 31))
    assert (YEAR.apply(pre, T.DATE), MONTH.apply(pre, T.DATE), DAY.apply(pre, T.DATE)) == (-1, -1, -1)
    with pytest.raises(UnsupportedFeature):
        HOUR.apply(d, T.DATE)


def test_result_types() -> None:
    assert YEAR.result_type(T.TIMESTAMP) == T.INT
    assert MONTH.result_type(T.DATE) == T.INT
    assert DAY.result_type(T.TIMESTAMPTZ) == T.DATE
    assert HOUR.result_type(T.TIMESTAMP_NS) == T.INT
    assert IDENTITY.result_type(T.STRING) == T.STRING
    assert VOID.result_type(T.LONG) == T.LONG
    with pytest.raises(UnsupportedFeature):
        IDENTITY.result_type(T.GeoType("geometry"))


def test_human_strings() -> None:
    assert DAY.to_human(days(dt.date(2024, 1, 5))) == "2024-01-05"
    assert MONTH.to_human(648) == "2024-01"
    assert MONTH.to_human(-1) == "1969-12"
    assert YEAR.to_human(54) == "2024"
    assert HOUR.to_human(19727 * 24 + 13) == "2024-01-05-13"
    assert HOUR.to_human(-1) == "1969-12-31-23"
    assert DAY.to_human(-1) == "1969-12-31"
    assert BucketTransform(4).to_human(3) == "3"
    assert VOID.to_human(None) == "null"
    assert DAY.to_human(None) == "null"
    us = micros(dt.datetime(2017, 12, 1, 10, 12, 55, 38194))
    assert IDENTITY.to_human(us, T.TIMESTAMP) == "2017-12-01T10:12:55.038194"
    assert IDENTITY.to_human(us, T.TIMESTAMPTZ) == "2017-12-01T10:12:55.038194Z"
    assert IDENTITY.to_human(micros(dt.datetime(2017, 12, 1, 10, 12)), T.TIMESTAMP) == "2017-12-01T10:12"
    assert IDENTITY.to_human(us * 1000 + 7, T.TIMESTAMP_NS) == "2017-12-01T10:12:55.038194007"
    assert IDENTITY.to_human(days(dt.date(2017, 11, 16)), T.DATE) == "2017-11-16"
    assert IDENTITY.to_human(b"\x01\x02", T.BINARY) == "AQI="
    assert IDENTITY.to_human(True, T.BOOLEAN) == "true"
    assert TruncateTransform(3).to_human("ice", T.STRING) == "ice"
    assert IDENTITY.to_human(Decimal("10.50"), T.DecimalType(9, 2)) == "10.50"


def test_civil_from_days_matches_datetime() -> None:
    for n in (-719162, -100000, -1, 0, 1, 11016, 19727, 2932896):
        d = dt.date(1970, 1, 1) + dt.timedelta(days=n)
        assert civil_from_days(n) == (d.year, d.month, d.day)


# ---------------------------------------------------------------- parsing


@pytest.mark.parametrize("text", ["identity", "bucket[16]", "truncate[20]", "year", "month", "day", "hour", "void"])
def test_parse_round_trip(text: str) -> None:
    assert str(parse_transform(text)) == text


def test_parse_parameters_and_unknown() -> None:
    assert parse_transform("bucket[ 8 ]") == BucketTransform(8)
    assert parse_transform("truncate[4]") == TruncateTransform(4)
    unknown = parse_transform("zorder[a,b]")
    assert unknown == UnknownTransform("zorder[a,b]")
    assert str(unknown) == "zorder[a,b]"
    assert isinstance(parse_transform("bucket[0]"), UnknownTransform)
    with pytest.raises(UnsupportedFeature):
        unknown.apply(1, T.INT)
    assert unknown.apply(None, T.INT) is None  # null in, null out, whatever the transform
    assert VOID.apply(5, T.INT) is None
    assert IDENTITY.apply(5, T.INT) == 5
