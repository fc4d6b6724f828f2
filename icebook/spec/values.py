"""Single values in their binary form (spec: Appendix D "Binary single-value serialization").

Lower and upper bounds in manifests, and partition summaries in manifest lists, are
stored as bytes. ``decode_value`` turns them into plain Python values:

==================  =====================================================
Iceberg type        Python value
==================  =====================================================
boolean             bool
int, long           int
float, double       float
decimal(P,S)        decimal.Decimal
date                int (days from 1970-01-01)
time                int (microseconds from midnight)
timestamp[tz]       int (microseconds from 1970-01-01 [UTC])
timestamp[tz]_ns    int (nanoseconds from 1970-01-01 [UTC])
string              str
uuid                uuid.UUID
fixed(L), binary    bytes
geometry/geography  tuple of floats (x, y[, z[, m]]) (spec: "Bound serialization")
==================  =====================================================

``to_human`` renders a decoded value as text like Spark's ``readable_metrics`` shows it,
and ``to_python_object`` gives date/time/datetime objects for comparison with Spark.

Two spec rules shape decoding:

* Type promotion does not rewrite bounds (spec: "Schema Evolution"): a ``long`` bound
  may be 4 bytes (written as ``int``), a ``double`` bound 4 bytes (``float``), a
  ``timestamp``/``timestamp_ns`` bound 4 bytes (``date``), and a decimal bound any
  width. The original type is inferred from the length, as the spec's table says.
* String and binary bounds may be truncated by writers (metrics mode ``truncate(N)``):
  a bound is then a prefix (lower) or an incremented prefix (upper), not a real value.
"""

from __future__ import annotations

import datetime as _dt
import struct
import uuid as _uuid
from collections.abc import Callable, Mapping
from decimal import Context, Decimal
from typing import Any

from icebook.errors import MetadataError, UnsupportedFeature
from icebook.spec.types import DecimalType, FixedType, GeoType, IcebergType, Primitive, PrimitiveType
from icebook.text import EPOCH, EPOCH_DATE

MICROS_PER_DAY = 86_400_000_000
NANOS_PER_DAY = 86_400_000_000_000

FIXED_WIDTH: Mapping[Primitive, tuple[int, str]] = {
    Primitive.BOOLEAN: (1, "u1"),
    Primitive.INT: (4, "<i4"),
    Primitive.DATE: (4, "<i4"),
    Primitive.LONG: (8, "<i8"),
    Primitive.TIME: (8, "<i8"),
    Primitive.TIMESTAMP: (8, "<i8"),
    Primitive.TIMESTAMPTZ: (8, "<i8"),
    Primitive.TIMESTAMP_NS: (8, "<i8"),
    Primitive.TIMESTAMPTZ_NS: (8, "<i8"),
    Primitive.FLOAT: (4, "<f4"),
    Primitive.DOUBLE: (8, "<f8"),
}
"""The fixed-width types: bytes of a value of the type itself, and the numpy dtype that reads them
(little-endian). A bound written before a type promotion may be narrower (see ``decode_value``)."""
_EXACT_WIDTH = {
    name: FIXED_WIDTH[name][0]
    for name in (
        Primitive.INT,
        Primitive.DATE,
        Primitive.FLOAT,
        Primitive.TIME,
        Primitive.TIMESTAMPTZ,
        Primitive.TIMESTAMPTZ_NS,
    )
}
"""Widths no promotion changes (boolean checks its own)."""


def _fail(file: str, field: str, problem: str) -> MetadataError:
    return MetadataError(file, field, problem, kind="bound in")


# Decoders of the primitive types without parameters: (bytes, their length, type name, file, field) -> value.
# Dispatch is by table: matching an enum member per case costs an attribute lookup each (hot path).
_Decoder = Callable[[bytes, int, Primitive, str, str], Any]


def _little_endian(raw: bytes, n: int, name: Primitive, file: str, field: str) -> int:
    return int.from_bytes(raw, "little", signed=True)


def _boolean(raw: bytes, n: int, name: Primitive, file: str, field: str) -> bool:
    if n != 1:
        raise _fail(file, field, f"boolean must be 1 byte, found {n}")
    return raw != b"\x00"


def _long(raw: bytes, n: int, name: Primitive, file: str, field: str) -> int:
    # 4 bytes: written as int before int -> long promotion (spec: "Schema Evolution").
    if n not in (4, 8):
        raise _fail(file, field, f"long must be 8 bytes (or 4 if promoted from int), found {n}")
    return int.from_bytes(raw, "little", signed=True)


def _timestamp(raw: bytes, n: int, name: Primitive, file: str, field: str) -> int:
    if n == 4:  # written as date before date -> timestamp promotion (v3)
        days = int.from_bytes(raw, "little", signed=True)
        return days * (MICROS_PER_DAY if name is Primitive.TIMESTAMP else NANOS_PER_DAY)
    if n != 8:
        raise _fail(file, field, f"{name} must be 8 bytes (or 4 if promoted from date), found {n}")
    return int.from_bytes(raw, "little", signed=True)


def _float(raw: bytes, n: int, name: Primitive, file: str, field: str) -> float:
    return float(struct.unpack("<f", raw)[0])


def _double(raw: bytes, n: int, name: Primitive, file: str, field: str) -> float:
    if n == 4:  # written as float before float -> double promotion
        return float(struct.unpack("<f", raw)[0])
    if n != 8:
        raise _fail(file, field, f"double must be 8 bytes (or 4 if promoted from float), found {n}")
    return float(struct.unpack("<d", raw)[0])


def _string(raw: bytes, n: int, name: Primitive, file: str, field: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(file, field, f"string bound is not valid UTF-8: {exc}") from None


def _uuid_value(raw: bytes, n: int, name: Primitive, file: str, field: str) -> _uuid.UUID:
    if n != 16:
        raise _fail(file, field, f"uuid must be 16 bytes, found {n}")
    return _uuid.UUID(bytes=raw)


def _binary(raw: bytes, n: int, name: Primitive, file: str, field: str) -> bytes:
    return raw


_DECODERS: dict[Primitive, _Decoder] = {
    Primitive.BOOLEAN: _boolean,
    Primitive.INT: _little_endian,
    Primitive.DATE: _little_endian,
    Primitive.TIME: _little_endian,
    Primitive.TIMESTAMPTZ: _little_endian,
    Primitive.TIMESTAMPTZ_NS: _little_endian,
    Primitive.LONG: _long,
    Primitive.TIMESTAMP: _timestamp,
    Primitive.TIMESTAMP_NS: _timestamp,
    Primitive.FLOAT: _float,
    Primitive.DOUBLE: _double,
    Primitive.STRING: _string,
    Primitive.UUID: _uuid_value,
    Primitive.BINARY: _binary,
}


def decode_value(raw: bytes, type_: IcebergType, *, field: str = "bound", file: str = "<value>") -> Any:
    """Decode one Appendix D binary value of ``type_``; errors name ``file`` and ``field``."""
    if not isinstance(raw, (bytes, bytearray, memoryview)):
        raise _fail(file, field, f"expected bytes, found {type(raw).__name__}")
    raw = bytes(raw)
    n = len(raw)
    if isinstance(type_, DecimalType):
        # "unscaled value as two's-complement big-endian binary, using the minimum number of bytes";
        # after precision widening the stored width may be that of a smaller precision: any width is valid.
        if n == 0:
            raise _fail(file, field, f"empty bytes for {type_}")
        unscaled = int.from_bytes(raw, "big", signed=True)
        return Decimal(f"{unscaled}E-{type_.scale}") if type_.scale else Decimal(unscaled)
    if isinstance(type_, FixedType):
        # Returned as stored; a length differing from L is kept visible rather than rejected.
        return raw
    if isinstance(type_, GeoType):
        if n not in (16, 24, 32):
            raise _fail(file, field, f"{type_} bound must be 16, 24 or 32 bytes (x:y[:z[:m]]), found {n}")
        return struct.unpack(f"<{n // 8}d", raw)
    name = type_.name if isinstance(type_, PrimitiveType) else None
    decoder = None if name is None else _DECODERS.get(name)
    if name is None or decoder is None:
        raise UnsupportedFeature(f"{file}: {field}: no binary single-value serialization for {type_}")
    width = _EXACT_WIDTH.get(name)
    if width is not None and n != width:
        raise _fail(file, field, f"{name} must be {width} bytes, found {n}")
    return decoder(raw, n, name, file, field)


def point_wkb(coordinates: tuple[float, ...]) -> bytes:
    """A geo bound's point (x, y[, z[, m]], z NaN when only m is set) as ISO WKB (little-endian), the form
    the row reads give ``geometry``/``geography`` values (Appendix G): POINT, POINT Z, POINT M or POINT ZM."""
    x, y, *rest = coordinates
    z = rest[0] if rest else None
    m = rest[1] if len(rest) > 1 else None
    if z is not None and z != z and m is not None:  # x:y:NaN:m is an XYM point
        z = None
    values = [x, y] + ([z] if z is not None else []) + ([m] if m is not None else [])
    kind = 1 + (1000 if z is not None else 0) + (2000 if m is not None else 0)
    return struct.pack(f"<BI{len(values)}d", 1, kind, *values)


def _micros_to_datetime(micros: int) -> _dt.datetime:
    return EPOCH + _dt.timedelta(microseconds=micros)


def _nanos_iso(nanos: int, tz: bool) -> str:
    seconds, frac = divmod(nanos, 1_000_000_000)
    text = (EPOCH + _dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%S")
    if frac:
        text += f".{frac:09d}"
    return text + ("+00:00" if tz else "")


_PYTHON_OBJECTS: dict[Primitive, Callable[[int], Any]] = {
    Primitive.DATE: lambda v: EPOCH_DATE + _dt.timedelta(days=v),
    Primitive.TIME: lambda v: (EPOCH + _dt.timedelta(microseconds=v)).time(),
    Primitive.TIMESTAMP: _micros_to_datetime,
    Primitive.TIMESTAMPTZ: lambda v: _micros_to_datetime(v).replace(tzinfo=_dt.UTC),
    Primitive.TIMESTAMP_NS: lambda v: _micros_to_datetime(v // 1000),
    Primitive.TIMESTAMPTZ_NS: lambda v: _micros_to_datetime(v // 1000).replace(tzinfo=_dt.UTC),
}


def to_python_object(value: Any, type_: IcebergType) -> Any:
    """``value`` as Spark/PySpark would hand it back: dates, times and datetimes as objects.

    Timestamps become naive ``datetime`` (``timestamptz`` in UTC, tz-aware); nanosecond
    timestamps are truncated to microseconds, the finest unit of ``datetime``.
    """
    if value is None or not isinstance(type_, PrimitiveType):
        return value
    convert = _PYTHON_OBJECTS.get(type_.name)
    return value if convert is None else convert(value)


_HUMAN: dict[Primitive, Callable[[Any], str]] = {
    Primitive.BOOLEAN: lambda v: "true" if v else "false",
    Primitive.DATE: lambda v: _PYTHON_OBJECTS[Primitive.DATE](v).isoformat(),
    Primitive.TIME: lambda v: _PYTHON_OBJECTS[Primitive.TIME](v).isoformat(),
    Primitive.TIMESTAMP: lambda v: _micros_to_datetime(v).isoformat(),
    Primitive.TIMESTAMPTZ: lambda v: _micros_to_datetime(v).isoformat() + "+00:00",
    Primitive.TIMESTAMP_NS: lambda v: _nanos_iso(v, False),
    Primitive.TIMESTAMPTZ_NS: lambda v: _nanos_iso(v, True),
    Primitive.FLOAT: lambda v: repr(float(v)),
    Primitive.DOUBLE: lambda v: repr(float(v)),
    Primitive.BINARY: lambda v: "0x" + bytes(v).hex().upper(),
}


def to_human(value: Any, type_: IcebergType) -> str:
    """Text for a decoded value, in the form Spark's ``readable_metrics`` shows it (ISO dates/times)."""
    if value is None:
        return "null"
    if isinstance(type_, GeoType):
        return "POINT (" + " ".join(repr(c) for c in value) + ")"
    if isinstance(type_, PrimitiveType) and (human := _HUMAN.get(type_.name)) is not None:
        return human(value)
    if isinstance(type_, FixedType):
        return "0x" + bytes(value).hex().upper()
    return str(value)


def _eight_bytes(value: Any) -> bytes:
    return int(value).to_bytes(8, "little", signed=True)


_ENCODERS: dict[Primitive, Callable[[Any], bytes]] = {
    Primitive.BOOLEAN: lambda v: b"\x01" if v else b"\x00",
    Primitive.INT: lambda v: int(v).to_bytes(4, "little", signed=True),
    Primitive.DATE: lambda v: int(v).to_bytes(4, "little", signed=True),
    Primitive.LONG: _eight_bytes,
    Primitive.TIME: _eight_bytes,
    Primitive.TIMESTAMP: _eight_bytes,
    Primitive.TIMESTAMPTZ: _eight_bytes,
    Primitive.TIMESTAMP_NS: _eight_bytes,
    Primitive.TIMESTAMPTZ_NS: _eight_bytes,
    Primitive.FLOAT: lambda v: struct.pack("<f", v),
    Primitive.DOUBLE: lambda v: struct.pack("<d", v),
    Primitive.STRING: lambda v: str(v).encode("utf-8"),
    Primitive.UUID: lambda v: v.bytes if isinstance(v, _uuid.UUID) else _uuid.UUID(str(v)).bytes,
    Primitive.BINARY: bytes,
}


def encode_value(value: Any, type_: IcebergType) -> bytes:
    """Inverse of ``decode_value`` for the canonical width (used by tests and the tree's examples)."""
    if isinstance(type_, DecimalType):
        # exact: the default context (28 digits) would round a 38-digit decimal
        unscaled = int(Decimal(value).scaleb(type_.scale, context=Context(prec=80)).to_integral_value())
        length = max(1, (unscaled.bit_length() + 8) // 8)
        return unscaled.to_bytes(length, "big", signed=True)
    if isinstance(type_, FixedType):
        return bytes(value)
    encode = _ENCODERS.get(type_.name) if isinstance(type_, PrimitiveType) else None
    if encode is None:
        raise UnsupportedFeature(f"cannot encode {type_}")
    return encode(value)


__all__ = ["FIXED_WIDTH", "decode_value", "encode_value", "to_human", "to_python_object"]
