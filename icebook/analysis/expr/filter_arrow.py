"""Bound filter expressions as pyarrow compute expressions, with SQL's three-valued logic: a row whose
predicate is null is filtered out, as in Spark's ``WHERE``."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.arrow_types import arrow_type
from icebook.analysis.expr.expressions import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    Compare,
    Expr,
    FilterError,
    In,
    Not,
    Or,
    Ref,
    StartsWith,
    Unary,
)
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

    def col(ref: Ref) -> pc.Expression:
        name = (names or {}).get(ref.field_id or -1, ref.name)
        return pc.field(name)

    def lit(value: Any, ref: Ref) -> Any:
        assert ref.type is not None
        return arrow_literal(value, ref.type)

    if isinstance(expr, AlwaysTrue):
        return pc.scalar(True)
    if isinstance(expr, AlwaysFalse):
        return pc.scalar(False)
    if isinstance(expr, And):
        return to_arrow(expr.left, names) & to_arrow(expr.right, names)
    if isinstance(expr, Or):
        return to_arrow(expr.left, names) | to_arrow(expr.right, names)
    if isinstance(expr, Not):
        return ~to_arrow(expr.child, names)
    if isinstance(expr, Compare):
        c, v = col(expr.ref), lit(expr.value, expr.ref)
        ops = {"<": c < v, "<=": c <= v, ">": c > v, ">=": c >= v, "=": c == v, "!=": c != v}
        return ops[expr.op]
    if isinstance(expr, In):
        c = col(expr.ref)
        assert expr.ref.type is not None
        values = pa.array([arrow_literal(v, expr.ref.type).as_py() for v in expr.values], arrow_type(expr.ref.type))
        hit = pc.is_in(c, value_set=values)
        # SQL: a null column value gives null (not false), so `not in` drops it too.
        hit = pc.if_else(c.is_valid(), hit, pc.scalar(pa.scalar(None, pa.bool_())))
        return ~hit if expr.negated else hit
    if isinstance(expr, Unary):
        c = col(expr.ref)
        if expr.op == "is_null":
            return c.is_null()
        if expr.op == "not_null":
            return c.is_valid()
        nan = pc.is_nan(c)
        return nan if expr.op == "is_nan" else ~nan
    if isinstance(expr, StartsWith):
        hit = pc.starts_with(col(expr.ref), pattern=expr.prefix)
        return ~hit if expr.negated else hit
    raise FilterError(f"not a filter expression: {expr!r}")


__all__ = ["arrow_literal", "to_arrow"]
