"""Default values of fields (v3; spec: "Default values", Appendix D "JSON single-value serialization").

``initial-default`` fills a field for rows written before the field existed; ``write-default`` is what a
writer writes when a row leaves the field out. Both are kept in the schema JSON in the single-value JSON
form of the field's type: ``parse_default`` reads one into a Python value of that type, and a value of
another type (a string for an ``int``, a number for a ``date``) is one ``MetadataError`` naming the
metadata file and the field. The value has the one form icebook gives a single value of a type, the
form of ``spec.values`` (Appendix D's physical values, as bounds decode): ``int``, ``float``, ``bool``,
``str``, ``Decimal``, a date as days and a time as microseconds, timestamps as microseconds (nanoseconds
for the ``_ns`` types) since the epoch, ``uuid.UUID``, ``bytes`` for ``binary``/``fixed``; a dict by field
name for a struct, a list, a map as a list of (key, value) pairs.

A struct's default is null or an empty object; each of its fields then takes its own default. Fields of
type ``unknown``, ``variant``, ``geometry`` and ``geography`` default to null only.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import uuid as _uuid
from decimal import Decimal, InvalidOperation
from typing import Any

from icebook.errors import MetadataError
from icebook.spec.types import (
    DecimalType,
    FixedType,
    GeoType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    Primitive,
    PrimitiveType,
    StructType,
)
from icebook.text import EPOCH, EPOCH_DATE

_INT_RANGE = {Primitive.INT: 2**31, Primitive.LONG: 2**63}
_NULL_ONLY = {Primitive.UNKNOWN, Primitive.VARIANT}
_TIMESTAMP = re.compile(r"^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(\+00:00)?$")
_TIME = re.compile(r"^(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$")
_HEX = re.compile(r"^(?:[0-9a-fA-F]{2})*$")


class _Wrong(ValueError):
    """A default that is not a value of its field's type."""


def parse_default(raw: Any, t: IcebergType, *, file: str, field: str) -> Any:
    """``raw`` (a default as the schema JSON holds it) as a Python value of type ``t``; one
    ``MetadataError`` naming ``file`` and ``field`` when it is not one."""
    try:
        return _value(raw, t)
    except _Wrong as exc:
        problem = f"default {_short(raw)} is not a value of type {t}: {exc}"
        raise MetadataError(file, field, problem, kind="metadata") from None


def check_defaults(fields: tuple[NestedField, ...], *, file: str, where: str) -> None:
    """Every default of ``fields`` (and of their nested fields) is a value of its field's type."""
    for f in fields:
        for key, present, raw in (
            ("initial-default", f.has_initial_default, f.initial_default),
            ("write-default", f.has_write_default, f.write_default),
        ):
            if present:
                parse_default(raw, f.type, file=file, field=f"{where}.{f.name}.{key}")
        for child_where, children in _children(f, where):
            check_defaults(children, file=file, where=child_where)


def default_text(f: NestedField) -> str:
    """The field's defaults as the schema JSON writes them (``initial-default 7 · write-default 9``); empty
    when it has none."""
    parts = [
        f"{key} {json.dumps(raw)}"
        for key, present, raw in (
            ("initial-default", f.has_initial_default, f.initial_default),
            ("write-default", f.has_write_default, f.write_default),
        )
        if present
    ]
    return " · ".join(parts)


def _children(f: NestedField, where: str) -> list[tuple[str, tuple[NestedField, ...]]]:
    t = f.type
    if isinstance(t, StructType):
        return [(f"{where}.{f.name}", t.fields)]
    if isinstance(t, ListType):
        return [(f"{where}.{f.name}", (t.element,))]
    if isinstance(t, MapType):
        return [(f"{where}.{f.name}", (t.key, t.value))]
    return []


def _short(raw: Any) -> str:
    text = repr(raw)
    return text if len(text) <= 80 else text[:77] + "..."


def _value(raw: Any, t: IcebergType) -> Any:
    if raw is None:
        return None
    if isinstance(t, StructType):
        if not isinstance(raw, dict) or raw:
            raise _Wrong("a struct's default is null or {} (each field takes its own default)")
        return {}
    if isinstance(t, ListType):
        if not isinstance(raw, list):
            raise _Wrong("a list's default is a JSON array")
        return [_value(v, t.element.type) for v in raw]
    if isinstance(t, MapType):
        if not isinstance(raw, dict) or set(raw) != {"keys", "values"}:
            raise _Wrong('a map\'s default is {"keys": [...], "values": [...]}')
        keys, values = raw["keys"], raw["values"]
        if not isinstance(keys, list) or not isinstance(values, list) or len(keys) != len(values):
            raise _Wrong("a map's keys and values are two arrays of one length")
        return [(_value(k, t.key.type), _value(v, t.value.type)) for k, v in zip(keys, values, strict=True)]
    if isinstance(t, GeoType):
        raise _Wrong(f"a {t.kind} field defaults to null only")
    if isinstance(t, DecimalType):
        return _decimal(raw, t)
    if isinstance(t, FixedType):
        value = _hex(raw)
        if len(value) != t.length:
            raise _Wrong(f"{len(value)} bytes, not {t.length}")
        return value
    assert isinstance(t, PrimitiveType)
    return _primitive(raw, t.name)


def _primitive(raw: Any, name: Primitive) -> Any:
    if name in _NULL_ONLY:
        raise _Wrong(f"a {name} field defaults to null only")
    if name == Primitive.BOOLEAN:
        if not isinstance(raw, bool):
            raise _Wrong("expected true or false")
        return raw
    if name in _INT_RANGE:
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise _Wrong("expected a JSON integer")
        bound = _INT_RANGE[name]
        if not -bound <= raw < bound:
            raise _Wrong(f"out of the {name} range")
        return raw
    if name in (Primitive.FLOAT, Primitive.DOUBLE):
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            raise _Wrong("expected a JSON number")
        return float(raw)
    if not isinstance(raw, str):
        raise _Wrong("expected a JSON string")
    if name == Primitive.STRING:
        return raw
    if name == Primitive.BINARY:
        return _hex(raw)
    if name == Primitive.UUID:
        try:
            return _uuid.UUID(raw)
        except ValueError:
            raise _Wrong("expected a uuid string") from None
    if name == Primitive.DATE:
        try:
            day = _dt.date.fromisoformat(raw) if len(raw) == 10 else _bad("expected YYYY-MM-DD")
        except ValueError:
            raise _Wrong("expected an ISO-8601 date (YYYY-MM-DD)") from None
        return (day - EPOCH_DATE).days
    if name == Primitive.TIME:
        return _time(raw)
    return _timestamp(raw, name)


def _bad(why: str) -> Any:
    raise _Wrong(why)


def _decimal(raw: Any, t: DecimalType) -> Decimal:
    if not isinstance(raw, str):
        raise _Wrong("expected a JSON string")
    try:
        value = Decimal(raw)
    except InvalidOperation:
        raise _Wrong("expected a decimal string") from None
    exponent = value.as_tuple().exponent
    if not value.is_finite() or not isinstance(exponent, int) or -exponent != t.scale:
        raise _Wrong(f"a decimal with scale {t.scale} is written with {t.scale} digits after the point")
    if len(value.as_tuple().digits) > t.precision:
        raise _Wrong(f"more than {t.precision} digits")
    return value


def _hex(raw: Any) -> bytes:
    if not isinstance(raw, str) or not _HEX.match(raw):
        raise _Wrong("expected a hexadecimal string")
    return bytes.fromhex(raw)


def _time(raw: str) -> int:
    """Microseconds from midnight."""
    m = _TIME.match(raw)
    if m is None:
        raise _Wrong("expected an ISO-8601 time (HH:MM:SS.ffffff)")
    hour, minute, second = int(m[1]), int(m[2]), int(m[3])
    if hour > 23 or minute > 59 or second > 59:
        raise _Wrong("expected an ISO-8601 time (HH:MM:SS.ffffff)")
    return ((hour * 60 + minute) * 60 + second) * 1_000_000 + int((m[4] or "0").ljust(6, "0"))


def _timestamp(raw: str, name: Primitive) -> int:
    """Microseconds (nanoseconds for the ``_ns`` types) since the epoch; a zone offset, ``+00:00``, exactly
    for the ``tz`` types."""
    nanos = name in (Primitive.TIMESTAMP_NS, Primitive.TIMESTAMPTZ_NS)
    zoned = name in (Primitive.TIMESTAMPTZ, Primitive.TIMESTAMPTZ_NS)
    m = _TIMESTAMP.match(raw)
    if m is None or bool(m[4]) != zoned:
        offset = "with the offset +00:00" if zoned else "without a zone offset"
        raise _Wrong(f"expected an ISO-8601 timestamp {offset}")
    fraction = m[3] or ""
    if len(fraction) > (9 if nanos else 6):
        raise _Wrong("more fractional digits than the type holds")
    try:
        moment = _dt.datetime.fromisoformat(f"{m[1]}T{m[2]}")
    except ValueError:
        raise _Wrong("not a valid date and time") from None
    seconds = (moment - EPOCH) // _dt.timedelta(seconds=1)
    scale = 1_000_000_000 if nanos else 1_000_000
    return seconds * scale + int(fraction.ljust(9 if nanos else 6, "0") or 0)


__all__ = ["check_defaults", "default_text", "parse_default"]
