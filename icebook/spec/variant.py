"""Variant values: Parquet's Variant binary encoding, which Iceberg v3 adopts for ``variant`` (spec:
"Semi-structured Types"; parquet-format ``VariantEncoding.md``).

A variant is two byte strings: the *metadata* (a header byte and a dictionary of the object keys) and
the *value* (a self-describing tree of primitives, arrays and objects whose keys are dictionary ids).
``decode`` turns them into Python values, ``to_json`` into the JSON text Spark's ``to_json(v)`` gives
(its number, decimal, date, timestamp and binary formats), ``check`` only walks them. Every bound is
checked: bytes cut short, an offset out of range, a key id outside the dictionary, an unknown type or
invalid UTF-8 is one ``VariantError`` saying which part is wrong and where, never an ``IndexError``.

==============================  ==========================================================
variant type (type id)          Python value
==============================  ==========================================================
null (0)                        None
boolean (1, 2)                  bool
int8/16/32/64 (3-6)             int
double (7), float (14)          float
decimal4/8/16 (8-10)            decimal.Decimal (the scale as stored)
date (11)                       datetime.date
timestamp (12) / ntz (13)       datetime.datetime, in UTC / without a time zone
timestamp_ns (18) / ntz (19)    ``NanoTimestamp`` (a datetime cannot hold nanoseconds)
time (17)                       datetime.time
binary (15)                     bytes
string (16, short strings)      str
uuid (20)                       uuid.UUID
array / object                  list / dict (keys in the encoding's order: sorted)
==============================  ==========================================================
"""

from __future__ import annotations

import base64
import datetime as _dt
import struct
import uuid as _uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from icebook.errors import MetadataError
from icebook.text import EPOCH, EPOCH_DATE

MAX_DEPTH = 200
"""Nesting deeper than this is refused (a hostile value cannot exhaust the stack)."""

_FIXED = {3: 1, 4: 2, 5: 4, 6: 8, 7: 8, 11: 4, 12: 8, 13: 8, 14: 4, 17: 8, 18: 8, 19: 8, 20: 16}
"""Primitive type id -> its fixed size in bytes after the header."""
_DECIMAL_SIZES = {8: 4, 9: 8, 10: 16}
PRIMITIVE_NAMES = {
    0: "null",
    1: "boolean",
    2: "boolean",
    3: "int8",
    4: "int16",
    5: "int32",
    6: "int64",
    7: "double",
    8: "decimal4",
    9: "decimal8",
    10: "decimal16",
    11: "date",
    12: "timestamp",
    13: "timestamp_ntz",
    14: "float",
    15: "binary",
    16: "string",
    17: "time",
    18: "timestamp_nanos",
    19: "timestamp_ntz_nanos",
    20: "uuid",
}


class VariantError(MetadataError):
    """A variant's metadata or value bytes are malformed; ``field`` says which part and where."""

    def __init__(self, part: str, problem: str) -> None:
        super().__init__(part, None, problem, kind="variant")


@dataclass(frozen=True, slots=True)
class NanoTimestamp:
    """A variant timestamp in nanoseconds since the epoch (UTC when ``utc``, else wall time)."""

    nanos: int
    utc: bool

    def __str__(self) -> str:
        return _timestamp_text(self.nanos, 9, self.utc)


@dataclass(frozen=True, slots=True)
class VariantMetadata:
    """A parsed metadata: the dictionary of object keys (``sorted_strings``: the writer says they are
    sorted and unique)."""

    keys: tuple[str, ...]
    sorted_strings: bool


def _uint(data: bytes, pos: int, size: int, part: str, what: str) -> int:
    """The ``size``-byte unsigned little-endian number at ``pos``; ``what`` names it in the error."""
    end = pos + size
    if end > len(data):
        raise VariantError(part, f"cut short: {what} at byte {pos} needs bytes up to {end - 1} of {len(data)}")
    return data[pos] if size == 1 else int.from_bytes(data[pos:end], "little")


def _need(value: bytes, pos: int, size: int, what: str) -> None:
    if pos + size > len(value):
        raise VariantError("value", f"cut short: {what} at byte {pos} needs {size} bytes of {len(value)}")


def parse_metadata(data: bytes) -> VariantMetadata:
    """The metadata's dictionary, every offset checked."""
    data = bytes(data)
    header = _uint(data, 0, 1, "metadata", "the header")
    if header & 0x0F != 1:
        raise VariantError("metadata", f"version {header & 0x0F}, only version 1 is defined")
    size = ((header >> 6) & 0x03) + 1
    count = _uint(data, 1, size, "metadata", "the dictionary size")
    start = 1 + size + (count + 1) * size
    if start > len(data):
        raise VariantError("metadata", f"cut short: {count} keys need {start} bytes of offsets, it has {len(data)}")
    offsets = [int.from_bytes(data[1 + size * (i + 1) : 1 + size * (i + 2)], "little") for i in range(count + 1)]
    keys = []
    for i in range(count):
        a, b = offsets[i], offsets[i + 1]
        if not 0 <= a <= b or start + b > len(data):
            raise VariantError("metadata", f"cut short: key {i} spans bytes {start + a}..{start + b} of {len(data)}")
        keys.append(_utf8(data[start + a : start + b], "metadata", f"key {i}"))
    return VariantMetadata(tuple(keys), bool(header & 0x10))


def _utf8(raw: bytes, part: str, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise VariantError(part, f"{what} is not valid UTF-8") from None


def _meta(metadata: bytes | VariantMetadata) -> VariantMetadata:
    return metadata if isinstance(metadata, VariantMetadata) else parse_metadata(metadata)


# ----------------------------------------------------------------------------------- the value tree


@dataclass(frozen=True, slots=True)
class _Container:
    """An array's or object's layout: element ``i`` starts at ``first + offsets[i]``."""

    ids: tuple[int, ...] | None  # object key ids (None for an array)
    offsets: tuple[int, ...]
    first: int


def _container(value: bytes, pos: int, header: int, basic: int) -> _Container:
    if basic == 2:
        offset_size, id_size, large = (header & 0x03) + 1, ((header >> 2) & 0x03) + 1, (header >> 4) & 0x01
    else:
        offset_size, id_size, large = (header & 0x03) + 1, 0, (header >> 2) & 0x01
    count_size = 4 if large else 1
    count = _uint(value, pos + 1, count_size, "value", "the element count")
    at = pos + 1 + count_size
    ids = None
    if basic == 2:
        if at + count * id_size > len(value):
            raise VariantError("value", f"cut short: {count} field ids at byte {at} overrun {len(value)} bytes")
        ids = _numbers(value, at, count, id_size)
        at += count * id_size
    end = at + (count + 1) * offset_size
    if end > len(value):
        raise VariantError("value", f"cut short: {count + 1} offsets at byte {at} overrun {len(value)} bytes")
    offsets = _numbers(value, at, count + 1, offset_size)
    if end + offsets[-1] > len(value):
        raise VariantError("value", f"cut short: elements at byte {end} need {offsets[-1]} bytes of {len(value)}")
    if max(offsets) > offsets[-1]:
        raise VariantError("value", f"an element offset at byte {at} lies past the container's end")
    return _Container(ids, offsets, end)


_UNPACK = {2: "H", 4: "I"}


def _numbers(value: bytes, at: int, count: int, size: int) -> tuple[int, ...]:
    """``count`` unsigned little-endian numbers of ``size`` bytes at ``at`` (bounds already checked)."""
    if size == 1:
        return tuple(value[at : at + count])
    if size in _UNPACK:
        return struct.unpack_from(f"<{count}{_UNPACK[size]}", value, at)
    return tuple(int.from_bytes(value[at + i * size : at + (i + 1) * size], "little") for i in range(count))


def _primitive(value: bytes, pos: int, type_id: int) -> Any:
    """The Python value of the primitive of ``type_id`` whose header byte is at ``pos``."""
    at = pos + 1
    if type_id == 0:
        return None
    if type_id in (1, 2):
        return type_id == 1
    if type_id in _DECIMAL_SIZES:
        scale = _uint(value, at, 1, "value", "a decimal's scale")
        if scale > 38:
            raise VariantError("value", f"decimal scale {scale} at byte {at} is above 38")
        size = _DECIMAL_SIZES[type_id]
        _need(value, at + 1, size, "a decimal")
        unscaled = int.from_bytes(value[at + 1 : at + 1 + size], "little", signed=True)
        return Decimal(unscaled).scaleb(-scale)
    if type_id in (15, 16):
        size = _uint(value, at, 4, "value", "a length")
        _need(value, at + 4, size, "a string or binary")
        raw = bytes(value[at + 4 : at + 4 + size])
        return raw if type_id == 15 else _utf8(raw, "value", f"the string at byte {pos}")
    if type_id not in _FIXED:
        raise VariantError("value", f"unknown primitive type {type_id} at byte {pos}")
    size = _FIXED[type_id]
    _need(value, at, size, PRIMITIVE_NAMES[type_id])
    raw = value[at : at + size]
    if type_id == 7:
        return struct.unpack("<d", raw)[0]
    if type_id == 14:
        return struct.unpack("<f", raw)[0]
    if type_id == 20:
        return _uuid.UUID(bytes=bytes(raw))
    number = int.from_bytes(raw, "little", signed=True)
    if type_id == 11:
        return _days(number, pos)
    if type_id in (12, 13):
        try:
            moment = EPOCH + _dt.timedelta(microseconds=number)
        except OverflowError:
            raise VariantError("value", f"timestamp {number} us at byte {pos} is outside years 1-9999") from None
        return moment.replace(tzinfo=_dt.UTC) if type_id == 12 else moment
    if type_id in (18, 19):
        return NanoTimestamp(number, type_id == 18)
    if type_id == 17:
        if not 0 <= number < 86_400_000_000:
            raise VariantError("value", f"time {number} us at byte {pos} is outside one day")
        return (EPOCH + _dt.timedelta(microseconds=number)).time()
    return number  # integers


def _days(number: int, pos: int) -> _dt.date:
    try:
        return EPOCH_DATE + _dt.timedelta(days=number)
    except OverflowError:
        raise VariantError("value", f"date {number} at byte {pos} is outside years 1-9999") from None


class _Walk:
    """One walk over a value: ``visit`` calls back per node; bounds checked as it goes."""

    def __init__(self, meta: VariantMetadata, value: bytes) -> None:
        self.meta = meta
        self.value = value

    def node(self, pos: int, depth: int) -> tuple[int, int, Any]:
        """(basic type, type id or header, payload) at ``pos``: payload a Python primitive or a container."""
        if depth > MAX_DEPTH:
            raise VariantError("value", f"nested deeper than {MAX_DEPTH} levels")
        first = _uint(self.value, pos, 1, "value", "a header")
        basic, header = first & 0x03, first >> 2
        if basic == 0:
            return basic, header, _primitive(self.value, pos, header)
        if basic == 1:
            _need(self.value, pos + 1, header, "a short string")
            return basic, 16, _utf8(bytes(self.value[pos + 1 : pos + 1 + header]), "value", f"the string at byte {pos}")
        container = _container(self.value, pos, header, basic)
        if container.ids is not None:
            for key in container.ids:
                if key >= len(self.meta.keys):
                    raise VariantError(
                        "value", f"field id {key} at byte {pos} is outside the dictionary of {len(self.meta.keys)}"
                    )
        return basic, header, container

    def python(self, pos: int, depth: int = 0) -> Any:
        basic, _, payload = self.node(pos, depth)
        if basic < 2:
            return payload
        if payload.ids is None:
            return [self.python(payload.first + o, depth + 1) for o in payload.offsets[:-1]]
        return {
            self.meta.keys[k]: self.python(payload.first + o, depth + 1)
            for k, o in zip(payload.ids, payload.offsets, strict=False)
        }

    def json(self, pos: int, out: list[str], depth: int = 0) -> None:
        basic, type_id, payload = self.node(pos, depth)
        if basic < 2:
            out.append(_json_primitive(type_id, payload))
            return
        if payload.ids is None:
            out.append("[")
            for i, o in enumerate(payload.offsets[:-1]):
                if i:
                    out.append(",")
                self.json(payload.first + o, out, depth + 1)
            out.append("]")
            return
        out.append("{")
        for i, (k, o) in enumerate(zip(payload.ids, payload.offsets, strict=False)):
            if i:
                out.append(",")
            out.append(json_string(self.meta.keys[k]))
            out.append(":")
            self.json(payload.first + o, out, depth + 1)
        out.append("}")


def decode(metadata: bytes | VariantMetadata, value: bytes) -> Any:
    """The variant as a Python value (see the module's table)."""
    return _Walk(_meta(metadata), bytes(value)).python(0)


def to_json(metadata: bytes | VariantMetadata, value: bytes) -> str:
    """The variant as the JSON text Spark's ``to_json`` gives (a session in UTC)."""
    out: list[str] = []
    _Walk(_meta(metadata), bytes(value)).json(0, out)
    return "".join(out)


def check(metadata: bytes | VariantMetadata, value: bytes) -> None:
    """Walk the whole value, checking every bound, key id, type id, decimal scale and string's UTF-8
    (raises ``VariantError``) without building its Python value."""
    meta = _meta(metadata)
    _check(bytes(value), 0, len(meta.keys), 0)


def _check(value: bytes, pos: int, keys: int, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise VariantError("value", f"nested deeper than {MAX_DEPTH} levels")
    if pos >= len(value):
        raise VariantError("value", f"cut short: a header at byte {pos} lies past the end ({len(value)} bytes)")
    first = value[pos]
    basic, header = first & 0x03, first >> 2
    if basic == 1:
        _need(value, pos + 1, header, "a short string")
        _utf8(value[pos + 1 : pos + 1 + header], "value", f"the string at byte {pos}")
    elif basic == 0:
        if header in (15, 16):
            size = _uint(value, pos + 1, 4, "value", "a length")
            _need(value, pos + 5, size, "a string or binary")
            if header == 16:
                _utf8(value[pos + 5 : pos + 5 + size], "value", f"the string at byte {pos}")
        elif header in _DECIMAL_SIZES:
            if _uint(value, pos + 1, 1, "value", "a decimal's scale") > 38:
                raise VariantError("value", f"decimal scale at byte {pos + 1} is above 38")
            _need(value, pos + 2, _DECIMAL_SIZES[header], "a decimal")
        elif header in _FIXED:
            _need(value, pos + 1, _FIXED[header], PRIMITIVE_NAMES[header])
        elif header > 2:
            raise VariantError("value", f"unknown primitive type {header} at byte {pos}")
    else:
        container = _container(value, pos, header, basic)
        if container.ids is not None and container.ids and max(container.ids) >= keys:
            raise VariantError("value", f"a field id at byte {pos} is outside the dictionary of {keys}")
        for offset in container.offsets[:-1]:
            _check(value, container.first + offset, keys, depth + 1)


def value_size(value: bytes, pos: int = 0) -> int:
    """The number of bytes of the value whose header is at ``pos`` (checked against ``value``)."""
    first = _uint(value, pos, 1, "value", "a header")
    basic, header = first & 0x03, first >> 2
    if basic == 1:
        size = 1 + header
    elif basic == 0:
        if header in (0, 1, 2):
            size = 1
        elif header in _DECIMAL_SIZES:
            size = 2 + _DECIMAL_SIZES[header]
        elif header in (15, 16):
            size = 5 + _uint(value, pos + 1, 4, "value", "a length")
        elif header in _FIXED:
            size = 1 + _FIXED[header]
        else:
            raise VariantError("value", f"unknown primitive type {header} at byte {pos}")
    else:
        container = _container(value, pos, header, basic)
        return container.first - pos + container.offsets[-1]
    if pos + size > len(value):
        raise VariantError("value", f"cut short: the value at byte {pos} needs {size} bytes, {len(value) - pos} left")
    return size


# ----------------------------------------------------------------------------------- JSON as Spark


def json_string(text: str) -> str:
    """A JSON string as Jackson writes it: ``"`` and ``\\`` escaped, control characters as ``\\n``-style or
    ``\\u00XX`` (upper-case hex), everything else as it is."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif code < 0x20:
            out.append(_SHORT_ESCAPES.get(ch) or f"\\u{code:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _json_primitive(type_id: int, value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if type_id in (7, 14):
        return java_float_text(value, single=type_id == 14)
    if isinstance(value, Decimal):
        text = format(value.normalize(), "f") if value else "0"  # Spark strips trailing zeros, plain notation
        return text
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json_string(value)
    if isinstance(value, bytes):
        return '"' + base64.b64encode(value).decode("ascii") + '"'
    if type_id == 11:
        return f'"{value.isoformat()}"'
    if type_id in (12, 13):
        micros = round((value.replace(tzinfo=None) - EPOCH) / _dt.timedelta(microseconds=1))
        return '"' + _timestamp_text(micros, 6, type_id == 12) + '"'
    if isinstance(value, NanoTimestamp):
        return f'"{value}"'
    if isinstance(value, _dt.time):
        return '"' + _time_text(value) + '"'
    return f'"{value}"'  # uuid


def _fraction(units: int, digits: int) -> str:
    """``.ffffff`` with trailing zeros dropped, nothing for zero (Java's ``appendFraction(_, 0, n, true)``)."""
    if not units:
        return ""
    return "." + str(units).rjust(digits, "0").rstrip("0")


def _timestamp_text(count: int, digits: int, utc: bool) -> str:
    """``yyyy-MM-dd HH:mm:ss[.f]`` (+ ``+00:00`` in UTC) of ``count`` units of 10^-digits s since the epoch."""
    per_second = 10**digits
    seconds, units = divmod(count, per_second)
    try:
        moment = EPOCH + _dt.timedelta(seconds=seconds)
    except OverflowError:
        raise VariantError("value", f"timestamp {count} is outside years 1-9999") from None
    text = moment.strftime("%Y-%m-%d %H:%M:%S").rjust(19, "0") + _fraction(units, digits)
    return text + "+00:00" if utc else text


def _time_text(value: _dt.time) -> str:
    return value.strftime("%H:%M:%S") + _fraction(value.microsecond, 6)


def java_float_text(value: float, *, single: bool = False) -> str:
    """``Double.toString`` (or ``Float.toString`` with ``single``): the shortest digits that read back,
    plain between 10^-3 and 10^7 with at least one decimal, else ``d.dddE±n``; NaN and infinities as
    Jackson quotes them."""
    if value != value:
        return '"NaN"'
    if value in (float("inf"), float("-inf")):
        return '"Infinity"' if value > 0 else '"-Infinity"'
    if value == 0:
        return "-0.0" if str(value).startswith("-") else "0.0"
    digits, exponent = _shortest(value, single)
    sign = "-" if value < 0 else ""
    # value = 0.<digits> * 10^exponent
    if 1e-3 <= abs(value) < 1e7:
        if exponent <= 0:
            return f"{sign}0.{'0' * -exponent}{digits}"
        whole, rest = digits[:exponent].ljust(exponent, "0"), digits[exponent:]
        return f"{sign}{whole}.{rest or '0'}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent - 1}"


def _shortest(value: float, single: bool) -> tuple[str, int]:
    """(significant digits, exponent) with ``abs(value) == 0.<digits> * 10^exponent``, fewest digits."""
    target = struct.unpack("<f", struct.pack("<f", value))[0] if single else value
    text = f"{abs(target):.16e}"
    for precision in range(1, 18):
        candidate = f"{abs(target):.{precision - 1}e}"
        back = float(candidate)
        if (struct.unpack("<f", struct.pack("<f", back))[0] if single else back) == abs(target):
            text = candidate
            break
    mantissa, exp = text.split("e")
    digits = mantissa.replace(".", "").rstrip("0") or "0"
    return digits, int(exp) + 1


__all__ = [
    "MAX_DEPTH",
    "NanoTimestamp",
    "VariantError",
    "VariantMetadata",
    "check",
    "decode",
    "java_float_text",
    "json_string",
    "parse_metadata",
    "to_json",
    "value_size",
]
