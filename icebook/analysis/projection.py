"""How a predicate on a source column becomes a predicate on partition values (hidden partitioning).

Spec ("Scan Planning"): "Scan predicates are converted to partition predicates using an
*inclusive projection*: if a scan predicate matches a row, then the partition predicate must
match that row's partition." A projection may be looser than the row predicate (it may keep
partitions without matching rows) but never stricter. Rules per transform, for ``col op v``:

- identity: the same predicate on the partition value.
- bucket[N]: only equality projects (``bucket = bucket(v)``); a range of hashes means nothing.
- truncate[W] and year/month/day/hour (order-preserving): ``=`` -> ``= T(v)``; ``<=``/``>=`` ->
  ``<= T(v)``/``>= T(v)``; ``<`` -> ``<= T(v - 1)`` and ``>`` -> ``>= T(v + 1)`` for integers and
  times (the next representable value); strings under truncate use ``<= T(v)``/``>= T(v)``.
  ``!=`` never projects (a partition holds other values too).
- ``IS NULL``/``IS NOT NULL``: every transform maps null to null, so they project as they are.
- void and unknown transforms: no partition predicate.

This module explains; it does not plan scans.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from icebook.errors import NotFound, UnsupportedFeature
from icebook.spec.partitioning import PartitionField, PartitionSpec
from icebook.spec.schema import Schema
from icebook.spec.transforms import (
    BucketTransform,
    DayTransform,
    HourTransform,
    IdentityTransform,
    MonthTransform,
    Transform,
    TruncateTransform,
    YearTransform,
    human_value,
)
from icebook.spec.types import DecimalType, IcebergType, PrimitiveType

OPS = ("=", "!=", "<", "<=", ">", ">=", "is_null", "not_null")
_ALIASES = {"==": "=", "<>": "!=", "is null": "is_null", "is not null": "not_null", "not null": "not_null"}
_TIME_TRANSFORMS = (YearTransform, MonthTransform, DayTransform, HourTransform)


@dataclass(frozen=True, slots=True, kw_only=True)
class Projection:
    """One spec's view of the predicate: the partition predicate, or why there is none."""

    spec_id: int
    partition_field: str | None
    transform: str | None
    predicate: str | None
    """E.g. ``ts_day >= 2024-01-03``; None when the spec cannot prune on this predicate."""
    reason: str


def normalize_op(op: str) -> str:
    key = op.strip().lower()
    key = _ALIASES.get(key, key)
    if key not in OPS:
        raise UnsupportedFeature(f"operator {op!r}: use one of {', '.join(OPS)}")
    return key


def to_physical(value: Any, source: IcebergType) -> Any:
    """A user value (number, string, date, datetime) in the spec's physical representation of ``source``.

    Timestamps and dates given as text are ISO-8601; a naive time is taken as UTC for
    ``timestamptz`` (the stored value is UTC) and as written for ``timestamp``.
    """
    if isinstance(source, DecimalType):
        return Decimal(str(value))
    name = source.name if isinstance(source, PrimitiveType) else None
    if name in ("int", "long"):
        return int(value)
    if name in ("float", "double"):
        return float(value)
    if name == "boolean":
        return value if isinstance(value, bool) else str(value).lower() == "true"
    if name == "date":
        if isinstance(value, str):
            value = _dt.date.fromisoformat(value[:10])
        if isinstance(value, _dt.datetime):
            value = value.date()
        if isinstance(value, _dt.date):
            return (value - _dt.date(1970, 1, 1)).days
        return int(value)
    if name in ("timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"):
        per_second = 1_000_000_000 if name.endswith("_ns") else 1_000_000
        if isinstance(value, str):
            value = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
            value = _dt.datetime(value.year, value.month, value.day)
        if isinstance(value, _dt.datetime):
            if value.tzinfo is not None:
                value = value.astimezone(_dt.UTC).replace(tzinfo=None)
            delta = value - _dt.datetime(1970, 1, 1)
            return (delta.days * 86_400 + delta.seconds) * per_second + delta.microseconds * (per_second // 1_000_000)
        return int(value)
    return value


def _orderable_step(source: IcebergType) -> int | None:
    """The step to the next representable value for ``<``/``>`` (None: not an integer-like type)."""
    name = source.name if isinstance(source, PrimitiveType) else None
    if name in ("int", "long", "date", "time", "timestamp", "timestamptz", "timestamp_ns", "timestamptz_ns"):
        return 1
    return None


def project(
    pf: PartitionField, transform: Transform, source: IcebergType, op: str, value: Any
) -> tuple[str | None, str]:
    """(partition predicate text or None, reason) for ``source_col op value`` under one partition field."""
    name = pf.name
    if transform.is_void:
        return None, f"{name} is void (always null): it cannot prune"
    if op in ("is_null", "not_null"):
        text = "IS NULL" if op == "is_null" else "IS NOT NULL"
        return f"{name} {text}", "every transform maps null to null"
    if op == "!=":
        return None, "!= cannot be projected: a partition also holds other values"
    if isinstance(transform, IdentityTransform):
        return f"{name} {op} {human_value(value, source)}", "identity: same predicate on the partition value"
    if isinstance(transform, BucketTransform):
        if op != "=":
            return None, f"{transform} only projects equality: bucket numbers do not preserve order"
        result = transform.apply(value, source)
        return f"{name} = {result}", f"{transform}: equality maps to the value's bucket"
    if isinstance(transform, (TruncateTransform, *_TIME_TRANSFORMS)):
        step = _orderable_step(source)
        bound, out_op = value, op
        if op == "<":
            out_op = "<="
            if step is not None:
                bound = value - step  # x < v  <=>  x <= v - 1 for integer-like values
        elif op == ">":
            out_op = ">="
            if step is not None:
                bound = value + step
        result = transform.apply(bound, source)
        shown = transform.to_human(result, source)
        why = f"{transform} preserves order: inclusive projection of {op} is {out_op} on the transformed bound"
        return f"{name} {out_op} {shown}", why
    return None, f"transform {transform} is not understood here: no partition predicate"


def explain_in_spec(spec: PartitionSpec, schema: Schema, column: str, op: str, value: Any) -> list[Projection]:
    """Projections of ``column op value`` into one spec (one row per partition field on the column)."""
    op = normalize_op(op)
    field = schema.find_field_by_name(column) or schema.find_field_by_name(column, case_sensitive=False)
    if field is None:
        raise NotFound(f"column {column!r}", available=schema.id_to_name().values())
    physical = None if op in ("is_null", "not_null") else to_physical(value, field.type)
    matching = [pf for pf in spec.fields if field.field_id in pf.source_ids]
    if not matching:
        others = ", ".join(f"{pf.name}={pf.transform}" for pf in spec.fields) or "nothing"
        return [
            Projection(
                spec_id=spec.spec_id,
                partition_field=None,
                transform=None,
                predicate=None,
                reason=f"spec {spec.spec_id} does not partition by {column} (it partitions by {others})",
            )
        ]
    out = []
    for pf in matching:
        predicate, reason = project(pf, pf.transform, field.type, op, physical)
        out.append(
            Projection(
                spec_id=spec.spec_id,
                partition_field=pf.name,
                transform=str(pf.transform),
                predicate=predicate,
                reason=reason,
            )
        )
    return out
