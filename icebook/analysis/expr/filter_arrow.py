"""Bound filter expressions as pyarrow compute expressions, with SQL's three-valued logic: a row whose
predicate is null is filtered out, as in Spark's ``WHERE``."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.arrow_types import arrow_type
from icebook.analysis.expr import nodes
from icebook.analysis.expr.nodes import Constant, Expr, Ref, visitor
from icebook.spec.types import UUID, IcebergType


def arrow_literal(value: Any, t: IcebergType) -> pa.Scalar:
    """A physical value of Iceberg type ``t`` as an Arrow scalar of ``arrow_type(t)``."""
    target = arrow_type(t)
    if t == UUID:
        return pa.scalar(value.bytes, target)
    if pa.types.is_timestamp(target) or pa.types.is_date(target) or pa.types.is_time(target):
        storage = pa.int32() if pa.types.is_date32(target) else pa.int64()
        return pa.scalar(value, storage).cast(target)
    if pa.types.is_decimal(target):
        return pa.scalar(value)  # its own precision and scale: Arrow compares decimals across scales
    return pa.scalar(value, target)


def to_arrow(expr: Expr, names: dict[int, str] | None = None) -> pc.Expression:
    """A bound expression as a pyarrow compute expression over columns named by ``names``
    (field id -> column name; the bound name when absent). Null predicates filter rows out."""
    return _to_arrow(expr, names or {})


def _column(ref: Ref, names: dict[int, str]) -> pc.Expression:
    return pc.field(names.get(ref.field_id or -1, ref.name))


def _literal(value: Any, ref: Ref) -> pa.Scalar:
    assert ref.type is not None  # bound
    return arrow_literal(value, ref.type)


@visitor()
def _to_arrow(expr: Expr, names: dict[int, str]) -> pc.Expression:
    raise AssertionError  # never runs: see ``visitor``


@_to_arrow.register
def _(expr: Constant, names: dict[int, str]) -> pc.Expression:
    return pc.scalar(isinstance(expr, nodes.AlwaysTrue))


@_to_arrow.register
def _(expr: nodes.And, names: dict[int, str]) -> pc.Expression:
    return _to_arrow(expr.left, names) & _to_arrow(expr.right, names)


@_to_arrow.register
def _(expr: nodes.Or, names: dict[int, str]) -> pc.Expression:
    return _to_arrow(expr.left, names) | _to_arrow(expr.right, names)


@_to_arrow.register
def _(expr: nodes.Not, names: dict[int, str]) -> pc.Expression:
    return ~_to_arrow(expr.child, names)


@_to_arrow.register
def _(expr: nodes.Compare, names: dict[int, str]) -> pc.Expression:
    c, v = _column(expr.ref, names), _literal(expr.value, expr.ref)
    ops = {"<": c < v, "<=": c <= v, ">": c > v, ">=": c >= v, "=": c == v, "!=": c != v}
    return ops[expr.op]


@_to_arrow.register
def _(expr: nodes.In, names: dict[int, str]) -> pc.Expression:
    c = _column(expr.ref, names)
    assert expr.ref.type is not None  # bound
    values = pa.array([arrow_literal(v, expr.ref.type).as_py() for v in expr.values], arrow_type(expr.ref.type))
    hit = pc.is_in(c, value_set=values)
    # SQL: a null column value gives null (not false), so `not in` drops it too.
    hit = pc.if_else(c.is_valid(), hit, pc.scalar(pa.scalar(None, pa.bool_())))
    return ~hit if expr.negated else hit


@_to_arrow.register
def _(expr: nodes.Unary, names: dict[int, str]) -> pc.Expression:
    c = _column(expr.ref, names)
    if expr.op == "is_null":
        return c.is_null()
    if expr.op == "not_null":
        return c.is_valid()
    nan = pc.is_nan(c)
    return nan if expr.op == "is_nan" else ~nan


@_to_arrow.register
def _(expr: nodes.StartsWith, names: dict[int, str]) -> pc.Expression:
    hit = pc.starts_with(_column(expr.ref, names), pattern=expr.prefix)
    return ~hit if expr.negated else hit


__all__ = ["arrow_literal", "to_arrow"]
