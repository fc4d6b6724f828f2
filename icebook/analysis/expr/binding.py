"""Binding: a filter's column names resolved to field ids of a schema (spec: "Column Projection": columns
are identified by id, not by name) and every literal converted to the column's Iceberg type, in the
physical form ``icebook.spec.values`` uses (days for ``date``, microseconds for ``timestamp``, ``Decimal``
for ``decimal``)."""

from __future__ import annotations

import datetime as _dt
import uuid as _uuid
from decimal import Decimal, InvalidOperation
from typing import Any

from icebook.analysis.expr.nodes import (
    AlwaysTrue,
    Compare,
    Connective,
    Constant,
    Expr,
    FilterError,
    In,
    Not,
    Predicate,
    Ref,
    StartsWith,
    Unary,
    visitor,
)
from icebook.analysis.expr.parser import parse_filter
from icebook.spec.schema import Schema
from icebook.spec.types import (
    DOUBLE,
    FLOAT,
    NANOSECOND_TYPES,
    STRING,
    UTC_ADJUSTED_TYPES,
    DecimalType,
    FixedType,
    IcebergType,
    Primitive,
    PrimitiveType,
    is_primitive,
)
from icebook.text import EPOCH, EPOCH_DATE


def bind(expr: Expr | str | None, schema: Schema, *, case_sensitive: bool = False) -> Expr:
    """Resolve column names to field ids of ``schema`` and convert literals to the column types."""
    if expr is None:
        return AlwaysTrue()
    if isinstance(expr, str):
        expr = parse_filter(expr)
    return _bind(expr, schema, case_sensitive)


@visitor()
def _bind(expr: Expr, schema: Schema, case_sensitive: bool) -> Expr:
    raise AssertionError  # never runs: see ``visitor``


@_bind.register
def _(expr: Constant, schema: Schema, case_sensitive: bool) -> Expr:
    return expr


@_bind.register
def _(expr: Connective, schema: Schema, case_sensitive: bool) -> Expr:
    return type(expr)(_bind(expr.left, schema, case_sensitive), _bind(expr.right, schema, case_sensitive))


@_bind.register
def _(expr: Not, schema: Schema, case_sensitive: bool) -> Expr:
    return Not(_bind(expr.child, schema, case_sensitive))


@_bind.register
def _(expr: Compare, schema: Schema, case_sensitive: bool) -> Expr:
    return bind_predicate(_bind_ref(expr.ref, schema, case_sensitive), expr.op, expr.value)


@_bind.register
def _(expr: In, schema: Schema, case_sensitive: bool) -> Expr:
    op = "not_in" if expr.negated else "in"
    return bind_predicate(_bind_ref(expr.ref, schema, case_sensitive), op, expr.values)


@_bind.register
def _(expr: Unary, schema: Schema, case_sensitive: bool) -> Expr:
    return bind_predicate(_bind_ref(expr.ref, schema, case_sensitive), expr.op)


@_bind.register
def _(expr: StartsWith, schema: Schema, case_sensitive: bool) -> Expr:
    op = "not_starts_with" if expr.negated else "starts_with"
    return bind_predicate(_bind_ref(expr.ref, schema, case_sensitive), op, expr.prefix)


def bind_predicate(ref: Ref, op: str, value: Any = None) -> Predicate:
    """``ref op value`` on a bound column, ``value`` converted to the column's type as a filter's literal
    is (``in``/``not_in``: a list of them). ``op``: a comparison, ``is_null``, ``not_null``, ``is_nan``,
    ``not_nan``, ``in``, ``not_in``, ``starts_with`` or ``not_starts_with``."""
    t = _type(ref)
    if op in ("is_null", "not_null"):
        return Unary(op, ref)
    if op in ("is_nan", "not_nan"):
        if t not in (FLOAT, DOUBLE):
            raise FilterError(f"column {ref.name!r} is {t}: only float and double columns can be NaN")
        return Unary(op, ref)
    if op in ("in", "not_in"):
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise FilterError(f"{op.replace('_', ' ')} needs a list of values, not {value!r}")
        return In(ref, tuple(convert_literal(v, t, ref.name) for v in value), negated=op == "not_in")
    if op in ("starts_with", "not_starts_with"):
        if t != STRING:
            raise FilterError(f"column {ref.name!r} is {t}: 'starts with' needs a string column")
        return StartsWith(ref, str(value), negated=op == "not_starts_with")
    return Compare(op, ref, convert_literal(value, t, ref.name))


def _type(ref: Ref) -> IcebergType:
    assert ref.type is not None  # a bound reference always has one
    return ref.type


def _bind_ref(ref: Ref, schema: Schema, case_sensitive: bool) -> Ref:
    f = schema.find_field_by_name(ref.name, case_sensitive=case_sensitive)
    if f is None:
        names = [n for n in schema.id_to_name().values()]
        raise FilterError(f"unknown column {ref.name!r} in schema {schema.schema_id}; columns: {', '.join(names)}")
    if not is_primitive(f.type):
        raise FilterError(f"column {ref.name!r} is {f.type}: filters apply to primitive columns only")
    full = schema.find_column_name(f.field_id) or ref.name
    return Ref(full, f.field_id, f.type)


def convert_literal(value: Any, t: IcebergType, column: str = "?") -> Any:
    """``value`` as the physical representation of Iceberg type ``t`` (strings are parsed)."""
    problem = f"cannot use {value!r} as a value of column {column!r} ({t})"
    if value is None:
        raise FilterError(f"{problem}: compare with null using 'is null'")
    try:
        if isinstance(t, DecimalType):
            d = Decimal(str(value)) if not isinstance(value, Decimal) else value
            if not d.is_finite():
                raise FilterError(problem)
            return d
        if isinstance(t, FixedType):
            return value if isinstance(value, bytes) else str(value).encode()
        if not isinstance(t, PrimitiveType):
            raise FilterError(problem)
        match t.name:
            case Primitive.BOOLEAN:
                if isinstance(value, bool):
                    return value
                if isinstance(value, str) and value.lower() in ("true", "false"):
                    return value.lower() == "true"
                raise FilterError(problem)
            case Primitive.INT | Primitive.LONG:
                if isinstance(value, bool):
                    raise FilterError(problem)
                if isinstance(value, (int, str)) or (isinstance(value, Decimal) and value == value.to_integral_value()):
                    return int(value)
                raise FilterError(f"{problem}: not a whole number")
            case Primitive.FLOAT | Primitive.DOUBLE:
                return float(value)
            case Primitive.STRING:
                return value if isinstance(value, str) else str(value)
            case Primitive.DATE:
                if isinstance(value, _dt.datetime):
                    value = value.date()
                if isinstance(value, str):
                    value = _dt.date.fromisoformat(value.strip()[:10]) if len(value.strip()) >= 10 else None
                if isinstance(value, _dt.date):
                    return (value - EPOCH_DATE).days
                raise FilterError(problem)
            case Primitive.TIMESTAMP | Primitive.TIMESTAMPTZ | Primitive.TIMESTAMP_NS | Primitive.TIMESTAMPTZ_NS:
                micros = _timestamp_micros(value, zoned=t in UTC_ADJUSTED_TYPES)
                return micros * 1000 if t in NANOSECOND_TYPES else micros
            case Primitive.TIME:
                tv = _dt.time.fromisoformat(value) if isinstance(value, str) else value
                return ((tv.hour * 60 + tv.minute) * 60 + tv.second) * 1_000_000 + tv.microsecond
            case Primitive.UUID:
                return value if isinstance(value, _uuid.UUID) else _uuid.UUID(str(value))
            case Primitive.BINARY:
                return value if isinstance(value, bytes) else str(value).encode()
    except FilterError:
        raise
    except (ValueError, TypeError, InvalidOperation, AttributeError) as exc:
        raise FilterError(f"{problem}: {exc}") from None
    raise FilterError(problem)


def _timestamp_micros(value: Any, *, zoned: bool) -> int:
    """Timestamps without a zone are read as UTC (icebook's Spark session runs in UTC)."""
    if isinstance(value, str):
        text = value.strip().replace("Z", "+00:00")
        value = _dt.datetime.fromisoformat(text)
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        value = _dt.datetime(value.year, value.month, value.day)
    if not isinstance(value, _dt.datetime):
        raise TypeError(f"{type(value).__name__} is not a timestamp")
    if value.tzinfo is not None:
        value = value.astimezone(_dt.UTC).replace(tzinfo=None)
    delta = value - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


__all__ = ["bind", "bind_predicate", "convert_literal"]
