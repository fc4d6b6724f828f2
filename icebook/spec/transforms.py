"""Partition transforms (spec: "Partition Transforms", "Bucket/Truncate Transform Details", Appendix B).

Values use the spec's physical representation: ``int`` days since 1970-01-01 for ``date``,
``int`` microseconds from midnight for ``time``, ``int`` microseconds (``timestamp``,
``timestamptz``) or nanoseconds (``timestamp_ns``, ``timestamptz_ns``) since the epoch,
``Decimal``, ``str``, ``bytes``, ``uuid.UUID``. Because an ``int`` alone does not say
whether it is days, micros or nanos, ``apply`` takes the source type.

``to_human`` gives the partition-path string the reference implementation (and so Spark)
shows, e.g. day ``2024-01-05``, month ``2024-01``, hour ``2024-01-05-13``.
"""

from __future__ import annotations

import base64
import math
import re
import struct
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from icebook.errors import UnsupportedFeature
from icebook.spec.types import (
    BINARY,
    DATE,
    INT,
    LONG,
    NANOSECOND_TYPES,
    STRING,
    TIME,
    TIMESTAMP_TYPES,
    UNKNOWN,
    UTC_ADJUSTED_TYPES,
    UUID,
    VARIANT,
    DecimalType,
    FixedType,
    IcebergType,
    Primitive,
    PrimitiveType,
)

# ---------------------------------------------------------------- Murmur3 (Appendix B)

_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_M32 = 0xFFFFFFFF


def _rotl32(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _M32


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """32-bit Murmur3 hash, x86 variant (signed result, like Java's ``int``)."""
    h = seed & _M32
    n_blocks = len(data) // 4
    for (k,) in struct.iter_unpack("<I", data[: n_blocks * 4]):
        k = (k * _C1) & _M32
        k = _rotl32(k, 15)
        k = (k * _C2) & _M32
        h ^= k
        h = _rotl32(h, 13)
        h = (h * 5 + 0xE6546B64) & _M32
    tail = data[n_blocks * 4 :]
    k = 0
    if len(tail) >= 3:
        k ^= tail[2] << 16
    if len(tail) >= 2:
        k ^= tail[1] << 8
    if len(tail) >= 1:
        k ^= tail[0]
        k = (k * _C1) & _M32
        k = _rotl32(k, 15)
        k = (k * _C2) & _M32
        h ^= k
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return h - (1 << 32) if h & 0x80000000 else h


def hash_long(v: int) -> int:
    """``hashLong``: Murmur3 of the 8-byte little-endian value. ``int`` values hash the same way
    (Appendix B note 1: int and long results must be identical)."""
    return murmur3_32(struct.pack("<q", v))


def hash_bytes(b: bytes) -> int:
    return murmur3_32(b)


def hash_double(v: float) -> int:
    """``hashLong(doubleToLongBits(v))`` with NaN and -0.0 canonicalised (Appendix B note 5)."""
    if math.isnan(v):
        return murmur3_32(struct.pack("<q", 0x7FF8000000000000))
    return murmur3_32(struct.pack("<d", 0.0 if v == 0 else v))


def min_big_endian(n: int) -> bytes:
    """Minimum-length two's-complement big-endian bytes of ``n`` (Appendix B note 2)."""
    bits = n.bit_length() if n >= 0 else (~n).bit_length()
    return n.to_bytes(bits // 8 + 1, "big", signed=True)


def unscaled(value: Decimal, scale: int | None = None) -> int:
    """The unscaled integer of ``value`` at ``scale`` (the type's scale; the value's own if None)."""
    sign, digits, exp = value.as_tuple()
    if not isinstance(exp, int):
        raise ValueError(f"cannot take the unscaled value of {value}")
    n = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    if scale is None:
        scale = -exp
    shift = exp + scale
    if shift >= 0:
        return n * int(10**shift)
    q, r = divmod(n, int(10 ** (-shift)))
    if r:
        raise ValueError(f"{value} has more than {scale} digits after the point")
    return q


def decimal_from_unscaled(n: int, scale: int) -> Decimal:
    """Exact Decimal with unscaled value ``n`` and ``scale`` (no context rounding)."""
    return Decimal((1 if n < 0 else 0, tuple(int(c) for c in str(abs(n))), -scale))


# ---------------------------------------------------------------- calendar arithmetic (proleptic Gregorian)

_MICROS_PER_HOUR = 3_600_000_000
_MICROS_PER_DAY = 86_400_000_000


def civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) of ``days`` since 1970-01-01, valid far outside datetime's range."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + 1 if m <= 2 else y), m, d


def _to_micros(value: int, source: IcebergType) -> int:
    """Nanosecond timestamps are converted to micros by flooring (as the reference does)."""
    return value // 1000 if _is_ns(source) else value


def _names(types: Iterable[PrimitiveType]) -> frozenset[Primitive]:
    return frozenset(t.name for t in types)


def _of(t: IcebergType | None, family: frozenset[Primitive]) -> bool:
    """Whether ``t`` is a primitive type of ``family`` (by name: hashing a type is slower, and these run
    once per value)."""
    return isinstance(t, PrimitiveType) and t.name in family


_NANOS = _names(NANOSECOND_TYPES)
_TIMESTAMPS = _names(TIMESTAMP_TYPES)
_UTC = _names(UTC_ADJUSTED_TYPES)
_INTEGERS = _names((INT, LONG))
_STRINGS = _names((STRING,))


def _is_ns(t: IcebergType | None) -> bool:
    return _of(t, _NANOS)


def _days_of(value: int, source: IcebergType) -> int:
    if source in (DATE, INT):
        return value
    return _to_micros(value, source) // _MICROS_PER_DAY


def _year_str(y: int) -> str:
    # java.time.LocalDate: 4 digits, sign for negative years, '+' beyond 9999.
    if y > 9999:
        return f"+{y}"
    return f"-{-y:04d}" if y < 0 else f"{y:04d}"


def human_date(days: int) -> str:
    y, m, d = civil_from_days(days)
    return f"{_year_str(y)}-{m:02d}-{d:02d}"


def _human_time_of_day(nanos: int) -> str:
    # java.time.LocalTime.toString: HH:mm[:ss[.SSS|.SSSSSS|.SSSSSSSSS]]
    secs, frac = divmod(nanos, 1_000_000_000)
    h, rem = divmod(secs, 3600)
    mi, s = divmod(rem, 60)
    out = f"{h:02d}:{mi:02d}"
    if s or frac:
        out += f":{s:02d}"
        if frac:
            if frac % 1_000_000 == 0:
                out += f".{frac // 1_000_000:03d}"
            elif frac % 1000 == 0:
                out += f".{frac // 1000:06d}"
            else:
                out += f".{frac:09d}"
    return out


def human_time(micros: int) -> str:
    return _human_time_of_day(micros * 1000)


def human_timestamp(value: int, *, nanos: bool = False, zoned: bool = False) -> str:
    per_day = _MICROS_PER_DAY * (1000 if nanos else 1)
    days, rem = divmod(value, per_day)
    text = f"{human_date(days)}T{_human_time_of_day(rem if nanos else rem * 1000)}"
    return text + "Z" if zoned else text


def human_value(value: Any, source: IcebergType | None) -> str:
    """The reference implementation's human string of a value of type ``source``."""
    if value is None:
        return "null"
    if isinstance(value, int) and not isinstance(value, bool):
        if _of(source, _DATES):
            return human_date(value)
        if _of(source, _TIMES):
            return human_time(value)
        if _of(source, _TIMESTAMPS):
            return human_timestamp(value, nanos=_is_ns(source), zoned=_of(source, _UTC))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
    return str(value)


# ---------------------------------------------------------------- transforms

# Source types each transform accepts (spec: "Partition Transforms", the "Source types" column).
_BUCKET_SOURCES = _names((INT, LONG, DATE, TIME, *TIMESTAMP_TYPES, STRING, UUID, BINARY))
_TIME_SOURCES = _names((DATE, *TIMESTAMP_TYPES))
_TRUNCATE_SOURCES = _names((INT, LONG, STRING, BINARY))
_DATES = _names((DATE,))
_TIMES = _names((TIME,))


class Transform(ABC):
    """A function from a source column value to a partition (or sort) value.

    All transforms return null for a null input (spec: "Partition Transforms").
    """

    @abstractmethod
    def __str__(self) -> str: ...

    @abstractmethod
    def can_transform(self, source: IcebergType) -> bool:
        """Whether the spec allows this transform on a column of type ``source``."""

    @abstractmethod
    def _result_type(self, source: IcebergType) -> IcebergType: ...

    @abstractmethod
    def _apply(self, value: Any, source: IcebergType) -> Any: ...

    def result_type(self, source: IcebergType) -> IcebergType:
        """The type of the transform's output for a ``source`` column (spec table "Result type")."""
        if not self.can_transform(source):
            raise UnsupportedFeature(f"transform {self} cannot be applied to type {source}")
        return self._result_type(source)

    def apply(self, value: Any, source: IcebergType) -> Any:
        """Transform one value given in the physical representation of ``source``."""
        if value is None:
            return None
        if not self.can_transform(source):
            raise UnsupportedFeature(f"transform {self} cannot be applied to type {source}")
        return self._apply(value, source)

    def to_human(self, value: Any, source: IcebergType | None = None) -> str:
        """The human string of a transform *result* (as in partition paths and Spark output)."""
        return human_value(value, source)

    @property
    def is_void(self) -> bool:
        return False


@dataclass(frozen=True, slots=True)
class IdentityTransform(Transform):
    """identity: source value, unmodified; any primitive except geometry and geography."""

    def __str__(self) -> str:
        return "identity"

    def can_transform(self, source: IcebergType) -> bool:
        if isinstance(source, (DecimalType, FixedType)):
            return True
        return isinstance(source, PrimitiveType) and source != VARIANT

    def _result_type(self, source: IcebergType) -> IcebergType:
        return source

    def _apply(self, value: Any, source: IcebergType) -> Any:
        return value


def _uuid_hash(value: Any) -> int:
    b = value.bytes if isinstance(value, uuid.UUID) else uuid.UUID(str(value)).bytes
    return hash_bytes(b)  # 16 bytes, big endian (Appendix B note 4)


# Appendix B hashes of the types that are not hashed as a long.
_HASHES: dict[Primitive, Callable[[Any], int]] = {
    Primitive.STRING: lambda v: hash_bytes(v.encode("utf-8")),
    Primitive.UUID: _uuid_hash,
    Primitive.BINARY: lambda v: hash_bytes(bytes(v)),
    Primitive.BOOLEAN: lambda v: hash_long(1 if v else 0),
    Primitive.FLOAT: lambda v: hash_double(float(v)),
    Primitive.DOUBLE: lambda v: hash_double(float(v)),
}


@dataclass(frozen=True, slots=True)
class BucketTransform(Transform):
    """bucket[N]: ``(murmur3_x86_32_hash(v) & Integer.MAX_VALUE) % N``; result type int."""

    num_buckets: int

    def __post_init__(self) -> None:
        if self.num_buckets <= 0:
            raise ValueError(f"bucket count must be positive, not {self.num_buckets}")

    def __str__(self) -> str:
        return f"bucket[{self.num_buckets}]"

    def can_transform(self, source: IcebergType) -> bool:
        return isinstance(source, (DecimalType, FixedType)) or _of(source, _BUCKET_SOURCES)

    def _result_type(self, source: IcebergType) -> IcebergType:
        return INT

    def _apply(self, value: Any, source: IcebergType) -> Any:
        return (self.hash(value, source) & 0x7FFFFFFF) % self.num_buckets

    @staticmethod
    def hash(value: Any, source: IcebergType) -> int:
        """The Appendix B 32-bit hash of ``value`` for type ``source``."""
        if isinstance(source, DecimalType):
            return hash_bytes(min_big_endian(unscaled(value, source.scale)))
        if isinstance(source, FixedType):
            return hash_bytes(bytes(value))
        by_type = _HASHES.get(source.name) if isinstance(source, PrimitiveType) else None
        if by_type is not None:
            return by_type(value)
        return hash_long(_to_micros(int(value), source))  # ints, longs, dates, times, timestamps

    def to_human(self, value: Any, source: IcebergType | None = None) -> str:
        return "null" if value is None else str(value)


@dataclass(frozen=True, slots=True)
class TruncateTransform(Transform):
    """truncate[W]: ints/longs/decimals ``v - (v % W)`` (positive remainder); strings to W code
    points; binary to W bytes. Result type is the source type."""

    width: int

    def __post_init__(self) -> None:
        if self.width <= 0:
            raise ValueError(f"truncate width must be positive, not {self.width}")

    def __str__(self) -> str:
        return f"truncate[{self.width}]"

    def can_transform(self, source: IcebergType) -> bool:
        return isinstance(source, DecimalType) or _of(source, _TRUNCATE_SOURCES)

    def _result_type(self, source: IcebergType) -> IcebergType:
        return source

    def _apply(self, value: Any, source: IcebergType) -> Any:
        w = self.width
        if isinstance(source, DecimalType):
            u = unscaled(value, source.scale)
            return decimal_from_unscaled(u - (u % w), source.scale)  # Python's % is non-negative for w > 0
        if _of(source, _INTEGERS):
            return value - (value % w)
        if _of(source, _STRINGS):
            return value[:w]  # str indexes by code point
        return bytes(value)[:w]


def _floor_years_months(days: int) -> tuple[int, int]:
    y, m, _ = civil_from_days(days)
    return y - 1970, (y - 1970) * 12 + (m - 1)


@dataclass(frozen=True, slots=True)
class _TimeTransform(Transform):
    """year, month, day and hour: a date or timestamp as whole units from 1970-01-01 (``int``, or
    ``date`` for days). Each names itself, its sources and its result type; ``_apply`` and
    ``to_human`` say how it counts."""

    _name: ClassVar[str]
    _sources: ClassVar[frozenset[Primitive]] = _TIME_SOURCES
    _result: ClassVar[IcebergType] = INT

    def __str__(self) -> str:
        return self._name

    def can_transform(self, source: IcebergType) -> bool:
        return _of(source, self._sources)

    def _result_type(self, source: IcebergType) -> IcebergType:
        return self._result


@dataclass(frozen=True, slots=True)
class YearTransform(_TimeTransform):
    """year: a date or timestamp year, as years from 1970; result type int."""

    _name = "year"

    def _apply(self, value: Any, source: IcebergType) -> Any:
        return _floor_years_months(_days_of(value, source))[0]

    def to_human(self, value: Any, source: IcebergType | None = None) -> str:
        return "null" if value is None else f"{1970 + value:04d}"


@dataclass(frozen=True, slots=True)
class MonthTransform(_TimeTransform):
    """month: a date or timestamp month, as months from 1970-01-01; result type int."""

    _name = "month"

    def _apply(self, value: Any, source: IcebergType) -> Any:
        return _floor_years_months(_days_of(value, source))[1]

    def to_human(self, value: Any, source: IcebergType | None = None) -> str:
        if value is None:
            return "null"
        y, m = divmod(value, 12)
        return f"{1970 + y:04d}-{m + 1:02d}"


@dataclass(frozen=True, slots=True)
class DayTransform(_TimeTransform):
    """day: a date or timestamp day, as days from 1970-01-01; result type date (readers also
    accept int day values)."""

    _name = "day"
    _result = DATE

    def _apply(self, value: Any, source: IcebergType) -> Any:
        return _days_of(value, source)

    def to_human(self, value: Any, source: IcebergType | None = None) -> str:
        return "null" if value is None else human_date(value)


@dataclass(frozen=True, slots=True)
class HourTransform(_TimeTransform):
    """hour: a timestamp hour, as hours from 1970-01-01 00:00:00; result type int."""

    _name = "hour"
    _sources = _TIMESTAMPS

    def _apply(self, value: Any, source: IcebergType) -> Any:
        return _to_micros(value, source) // _MICROS_PER_HOUR

    def to_human(self, value: Any, source: IcebergType | None = None) -> str:
        if value is None:
            return "null"
        days, h = divmod(value, 24)
        return f"{human_date(days)}-{h:02d}"


@dataclass(frozen=True, slots=True)
class VoidTransform(Transform):
    """void: always produces null; used to drop a partition field in v1 tables."""

    def __str__(self) -> str:
        return "void"

    def can_transform(self, source: IcebergType) -> bool:
        return True

    def _result_type(self, source: IcebergType) -> IcebergType:
        return source

    def _apply(self, value: Any, source: IcebergType) -> Any:
        return None

    def to_human(self, value: Any, source: IcebergType | None = None) -> str:
        return "null"

    @property
    def is_void(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class UnknownTransform(Transform):
    """A transform this reader does not know; kept as written. Readers ignore such fields when
    filtering (required in v3); its values cannot be computed and its result type is unknown."""

    text: str

    def __str__(self) -> str:
        return self.text

    def can_transform(self, source: IcebergType) -> bool:
        return True

    def _result_type(self, source: IcebergType) -> IcebergType:
        return UNKNOWN

    def _apply(self, value: Any, source: IcebergType) -> Any:
        raise UnsupportedFeature(f"cannot apply unknown transform {self.text!r}")


IDENTITY = IdentityTransform()
YEAR = YearTransform()
MONTH = MonthTransform()
DAY = DayTransform()
HOUR = HourTransform()
VOID = VoidTransform()

_SIMPLE: dict[str, Transform] = {
    "identity": IDENTITY,
    "year": YEAR,
    "month": MONTH,
    "day": DAY,
    "hour": HOUR,
    "void": VOID,
}
_PARAM = re.compile(r"^(bucket|truncate)\[\s*(\d+)\s*\]$")


def parse_transform(text: str) -> Transform:
    """Parse a transform string (Appendix C); anything unrecognised becomes ``UnknownTransform``."""
    t = text.strip()
    if t in _SIMPLE:
        return _SIMPLE[t]
    m = _PARAM.match(t)
    if m and int(m.group(2)) > 0:
        n = int(m.group(2))
        return BucketTransform(n) if m.group(1) == "bucket" else TruncateTransform(n)
    return UnknownTransform(text)


__all__ = [
    "DAY",
    "HOUR",
    "IDENTITY",
    "MONTH",
    "VOID",
    "YEAR",
    "BucketTransform",
    "DayTransform",
    "HourTransform",
    "IdentityTransform",
    "MonthTransform",
    "Transform",
    "TruncateTransform",
    "UnknownTransform",
    "VoidTransform",
    "YearTransform",
    "civil_from_days",
    "hash_bytes",
    "hash_double",
    "hash_long",
    "human_date",
    "human_time",
    "human_timestamp",
    "human_value",
    "min_big_endian",
    "murmur3_32",
    "parse_transform",
    "unscaled",
]
