"""Inclusive projection: how a row predicate becomes a predicate on partition values (hidden
partitioning). The scan planner and every explanation use this module, so they cannot disagree.

Spec ("Scan Planning"): "Scan predicates are converted to partition predicates using an
*inclusive projection*: if a scan predicate matches a row, then the partition predicate must
match that row's partition." A projection may keep partitions without matching rows, never drop
one with them. Rules per transform, for ``col op v``:

- identity: the same predicate on the partition value (every operator, ``in``, ``starts with``).
- ``is null`` / ``is not null``: every transform maps null to null, so they project as they are.
- bucket[N]: ``=`` and ``in`` map to the values' buckets; a range of hashes means nothing.
- truncate[W] and year/month/day/hour (order-preserving): ``=`` -> ``= T(v)``; ``<=``/``>=`` ->
  ``<= T(v)``/``>= T(v)``; ``<`` -> ``<= T(v - 1)`` and ``>`` -> ``>= T(v + 1)`` where the type
  has a next value (integers, dates, times, timestamps, decimals by their scale), else
  ``<= T(v)``/``>= T(v)``; ``in`` -> ``in`` of the transformed values; ``starts with`` on
  truncated strings -> ``starts with`` (prefix within W) or ``= T(prefix)``.
- ``!=``, ``not in``, ``not starts with``, NaN tests: only identity projects them (a partition of
  any other transform also holds other values).
- void and unknown transforms: no partition predicate.

A projection is expression data (``icebook.analysis.expr.nodes``) on partition field ids, so one
evaluator (``icebook.analysis.expr.pruning.evaluate``) decides it against partition values or
partition summaries.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from icebook.analysis.expr import nodes
from icebook.analysis.expr.binding import bind_predicate
from icebook.analysis.expr.nodes import (
    PREDICATE_NODES,
    Connective,
    Constant,
    Expr,
    Predicate,
    Ref,
    push_not,
    visitor,
    with_ref,
)
from icebook.errors import NotFound, UnsupportedFeature
from icebook.spec.partitioning import PartitionField, PartitionSpec
from icebook.spec.schema import Schema
from icebook.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    TruncateTransform,
    YearTransform,
)
from icebook.spec.types import DATE, INT, LONG, STRING, TIME, TIMESTAMP_TYPES, DecimalType, IcebergType

_ORDER_PRESERVING = (TruncateTransform, YearTransform, MonthTransform, DayTransform, HourTransform)
_UNIT_STEP = frozenset({INT, LONG, DATE, TIME, *TIMESTAMP_TYPES})


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldProjection:
    """One row predicate under one partition field: the partition predicate, or why there is none."""

    spec_id: int
    field: PartitionField
    predicate: Predicate
    """The row predicate (bound to a schema, negations pushed down)."""
    projected: Predicate | None
    """The partition predicate on ``field`` (its ref carries the partition field id and result
    type); None when this field cannot prune with ``predicate``."""
    reason: str

    @property
    def text(self) -> str | None:
        """The partition predicate with values as partition paths show them (``ts_day >= 2024-01-03``)."""
        if self.projected is None:
            return None
        return predicate_text(self.projected, self.field, self.predicate.ref.type)


@dataclass(frozen=True, slots=True, kw_only=True)
class SpecProjection:
    """A row filter projected onto one partition spec: the partition filter and how each
    predicate got there."""

    spec_id: int
    expr: Expr
    """The partition filter: the row filter with each predicate replaced by the conjunction of its
    projections (true where nothing projects)."""
    fields: tuple[FieldProjection, ...]
    """Every (row predicate, partition field on its column) pair, in filter order."""

    def __str__(self) -> str:
        return str(self.expr)


def _next_value_step(source: IcebergType) -> Any:
    """The distance to the next representable value (None for strings and binary: no such step)."""
    if isinstance(source, DecimalType):
        return Decimal(1).scaleb(-source.scale)
    return 1 if source in _UNIT_STEP else None


def project_predicate(p: Predicate, pf: PartitionField, spec_id: int) -> FieldProjection:
    """The inclusive projection of one bound row predicate under one partition field (the rules above)."""
    t, source = pf.transform, p.ref.type

    def out(projected: Predicate | None, reason: str) -> FieldProjection:
        return FieldProjection(spec_id=spec_id, field=pf, predicate=p, projected=projected, reason=reason)

    if t.is_void:
        return out(None, f"{pf.name} is void (always null): it cannot prune")
    if len(pf.source_ids) != 1:
        return out(None, f"{t} reads several columns: a predicate on one of them cannot be projected")
    if source is None or not t.can_transform(source):
        return out(None, f"transform {t} does not apply to {source}: no partition predicate")
    part = Ref(pf.name, pf.field_id, t.result_type(source))
    if isinstance(t, IdentityTransform):
        return out(with_ref(p, part), "identity: the same predicate on the partition value")
    if isinstance(p, nodes.Unary):
        if p.op in ("is_null", "not_null"):
            return out(nodes.Unary(p.op, part), "every transform maps null to null")
        return out(None, f"{t} does not keep NaN: only identity projects {p.op.replace('_', ' ')}")

    def apply(value: Any) -> Any:
        return t.apply(value, source)

    other_values = "cannot be projected: a partition also holds other values"
    if isinstance(p, nodes.In):
        if p.negated:
            return out(None, f"not in {other_values}")
        return out(nodes.In(part, tuple(dict.fromkeys(apply(v) for v in p.values))), f"{t}: each value maps to its own")
    if isinstance(t, BucketTransform):
        if isinstance(p, nodes.Compare) and p.op == "=":
            return out(nodes.Compare("=", part, apply(p.value)), f"{t}: equality maps to the value's bucket")
        return out(None, f"{t} only projects equality: bucket numbers do not preserve order")
    if isinstance(p, nodes.StartsWith):
        if p.negated:
            return out(None, f"not starts with {other_values}")
        if isinstance(t, TruncateTransform) and source == STRING:
            if len(p.prefix) <= t.width:
                return out(nodes.StartsWith(part, p.prefix), f"{t} keeps prefixes of up to {t.width} characters")
            return out(nodes.Compare("=", part, p.prefix[: t.width]), f"{t}: every match truncates to the same value")
        return out(None, f"{t} does not preserve prefixes")
    if not isinstance(t, _ORDER_PRESERVING):
        return out(None, f"transform {t} is not understood here: no partition predicate")
    if p.op == "!=":
        return out(None, f"!= {other_values}")
    step = _next_value_step(source)
    bound, op = p.value, p.op
    if op == "<":
        op, bound = "<=", (p.value - step if step is not None else p.value)  # x < v  <=>  x <= v - 1
    elif op == ">":
        op, bound = ">=", (p.value + step if step is not None else p.value)
    why = f"{t} preserves order: inclusive projection of {p.op} is {op} on the transformed bound"
    return out(nodes.Compare(op, part, apply(bound)), why)


def project(expr: Expr, spec: PartitionSpec) -> SpecProjection:
    """Inclusive projection of a bound row filter onto ``spec``'s partition fields."""
    steps: list[FieldProjection] = []
    projected = _simplify(_project(push_not(expr), spec, steps))
    return SpecProjection(spec_id=spec.spec_id, expr=projected, fields=tuple(steps))


@visitor()
def _project(expr: Expr, spec: PartitionSpec, steps: list[FieldProjection]) -> Expr:
    """The partition filter of a row filter in negation normal form; each predicate's steps go to ``steps``."""
    raise AssertionError  # never runs: see ``visitor``


@_project.register
def _(expr: Constant, spec: PartitionSpec, steps: list[FieldProjection]) -> Expr:
    return expr


@_project.register
def _(expr: Connective, spec: PartitionSpec, steps: list[FieldProjection]) -> Expr:
    return type(expr)(_project(expr.left, spec, steps), _project(expr.right, spec, steps))


@_project.register
def _(expr: nodes.Not, spec: PartitionSpec, steps: list[FieldProjection]) -> Expr:
    return nodes.AlwaysTrue()  # cannot happen after push_not


@_project.register
def _(expr: Predicate, spec: PartitionSpec, steps: list[FieldProjection]) -> Expr:
    projected: Expr = nodes.AlwaysTrue()
    for pf in spec.fields:
        if expr.ref.field_id not in pf.source_ids:
            continue
        step = project_predicate(expr, pf, spec.spec_id)
        steps.append(step)
        if step.projected is not None:
            projected = (
                step.projected if isinstance(projected, nodes.AlwaysTrue) else nodes.And(projected, step.projected)
            )
    return projected


# In an ``and``, false absorbs and true drops out; in an ``or``, the other way round.
_ABSORBING: dict[type, type] = {nodes.And: nodes.AlwaysFalse, nodes.Or: nodes.AlwaysTrue}
_NEUTRAL: dict[type, type] = {nodes.And: nodes.AlwaysTrue, nodes.Or: nodes.AlwaysFalse}


def _simplify(expr: Expr) -> Expr:
    if not isinstance(expr, (nodes.And, nodes.Or)):
        return expr
    kind = type(expr)
    left, right = _simplify(expr.left), _simplify(expr.right)
    if isinstance(left, _ABSORBING[kind]) or isinstance(right, _ABSORBING[kind]):
        return _ABSORBING[kind]()  # type: ignore[no-any-return]
    if isinstance(left, _NEUTRAL[kind]):
        return right
    return left if isinstance(right, _NEUTRAL[kind]) else kind(left, right)


@visitor(covers=PREDICATE_NODES)
def predicate_text(projected: Predicate, pf: PartitionField, source: IcebergType | None) -> str:
    """A partition predicate with values written as partition paths write them."""
    raise AssertionError  # never runs: see ``visitor``


@predicate_text.register
def _(projected: nodes.Unary, pf: PartitionField, source: IcebergType | None) -> str:
    return f"{pf.name} {'IS NULL' if projected.op == 'is_null' else 'IS NOT NULL'}"


@predicate_text.register
def _(projected: nodes.In, pf: PartitionField, source: IcebergType | None) -> str:
    values = ", ".join(pf.transform.to_human(v, source) for v in projected.values)
    return f"{pf.name} {'NOT IN' if projected.negated else 'IN'} ({values})"


@predicate_text.register
def _(projected: nodes.StartsWith, pf: PartitionField, source: IcebergType | None) -> str:
    return f"{pf.name} {'NOT STARTS WITH' if projected.negated else 'STARTS WITH'} {projected.prefix}"


@predicate_text.register
def _(projected: nodes.Compare, pf: PartitionField, source: IcebergType | None) -> str:
    return f"{pf.name} {projected.op} {pf.transform.to_human(projected.value, source)}"


# ----------------------------------------------------------------- one predicate, every spec

OPS = ("=", "!=", "<", "<=", ">", ">=", "is_null", "not_null", "in", "not_in", "starts_with", "not_starts_with")
_ALIASES = {
    "==": "=",
    "<>": "!=",
    "is null": "is_null",
    "is not null": "not_null",
    "not null": "not_null",
    "not in": "not_in",
    "starts with": "starts_with",
    "not starts with": "not_starts_with",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Projection:
    """One spec's view of a predicate: the partition predicate, or why there is none."""

    spec_id: int
    partition_field: str | None
    transform: str | None
    predicate: str | None
    """E.g. ``ts_day >= 2024-01-03``; None when the spec cannot prune on this predicate."""
    reason: str
    projected: Predicate | None = None
    """``predicate`` as expression data, as the scan planner evaluates it."""


def normalize_op(op: str) -> str:
    key = op.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in OPS:
        raise UnsupportedFeature(f"operator {op!r}: use one of {', '.join(OPS)}")
    return key


def explain_in_spec(spec: PartitionSpec, schema: Schema, column: str, op: str, value: Any) -> list[Projection]:
    """Projections of ``column op value`` into one spec (one row per partition field on the column)."""
    op = normalize_op(op)
    field = schema.find_field_by_name(column) or schema.find_field_by_name(column, case_sensitive=False)
    if field is None:
        raise NotFound(f"column {column!r}", available=schema.id_to_name().values())
    name = schema.find_column_name(field.field_id) or column
    predicate = bind_predicate(Ref(name, field.field_id, field.type), op, value)
    matching = [pf for pf in spec.fields if field.field_id in pf.source_ids]
    if not matching:
        others = ", ".join(f"{pf.name}={pf.transform}" for pf in spec.fields) or "nothing"
        reason = f"spec {spec.spec_id} does not partition by {column} (it partitions by {others})"
        return [Projection(spec_id=spec.spec_id, partition_field=None, transform=None, predicate=None, reason=reason)]
    out = []
    for pf in matching:
        step = project_predicate(predicate, pf, spec.spec_id)
        out.append(
            Projection(
                spec_id=spec.spec_id,
                partition_field=pf.name,
                transform=str(pf.transform),
                predicate=step.text,
                reason=step.reason,
                projected=step.projected,
            )
        )
    return out


__all__ = [
    "OPS",
    "FieldProjection",
    "Projection",
    "SpecProjection",
    "explain_in_spec",
    "normalize_op",
    "predicate_text",
    "project",
    "project_predicate",
]
