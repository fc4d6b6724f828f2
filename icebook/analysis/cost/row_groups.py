"""Row groups of one Parquet data file: which a reader skips by their statistics, and the bytes it reads.

A Parquet reader decides each row group by the min/max and null counts of its column chunks, as the
planner decides files by their manifest bounds. Here the same rule decides both: a row group's
statistics become ``pruning.Stats`` (values in the spec's physical form, Appendix D) and go through
``pruning.evaluate`` with the plan's row filter, so a skip comes with the planner's reason in words.

Columns are matched by field id (spec: "Column Projection"): a leaf column chunk carries the id of its
field when it is reached through structs only (the fields Iceberg keeps bounds for), and belongs to
the top-level field it is under, whose chunks a read of that column fetches.
"""

from __future__ import annotations

import json
import uuid as _uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from icebook.analysis.expr.binding import convert_literal
from icebook.analysis.expr.nodes import Expr
from icebook.analysis.expr.pruning import Stats, evaluate
from icebook.io.datafiles import field_id
from icebook.spec.schema import Schema
from icebook.spec.types import DecimalType, FixedType, IcebergType, Primitive, PrimitiveType

LABEL = "row group stats"
_NANOS_TYPES = (Primitive.TIMESTAMP_NS, Primitive.TIMESTAMPTZ_NS)
_TIMESTAMPS = (Primitive.TIMESTAMP, Primitive.TIMESTAMPTZ, *_NANOS_TYPES)
_UNIT_NANOS = {"milliseconds": 1_000_000, "microseconds": 1_000, "nanoseconds": 1}


@dataclass(frozen=True, slots=True)
class Leaf:
    """One leaf column of a Parquet file: the top-level field it is under, and its own field id when
    it is reached through structs only (else None: no bounds apply to it)."""

    top_level_id: int | None
    field_id: int | None


@dataclass(frozen=True, slots=True)
class RowGroupDecision:
    """One row group of one file: kept or skipped, why, and the bytes a read of it fetches."""

    row_group: int
    rows: int
    kept: bool
    reason: str
    bytes_read: int
    """The compressed bytes of the projected column chunks (0 when skipped)."""
    total_bytes: int
    """The compressed bytes of every column chunk of the row group."""


def leaves(schema: pa.Schema) -> list[Leaf]:
    """The file's leaf columns in Parquet's order (depth first, as its column chunks are stored)."""
    out: list[Leaf] = []

    def walk(field: pa.Field, top: int | None, through_structs: bool) -> Iterator[Leaf]:
        t = field.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                yield from walk(t.field(i), top, through_structs)
        elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
            yield from walk(t.value_field, top, False)
        elif pa.types.is_map(t):
            yield from walk(t.key_field, top, False)
            yield from walk(t.item_field, top, False)
        else:
            yield Leaf(top, field_id(field) if through_structs else None)

    for f in schema:
        out.extend(walk(f, field_id(f), True))
    return out


def _time_unit(statistics: Any) -> int | None:
    """Nanoseconds per unit of a Parquet timestamp column (None when it is not one Iceberg reads)."""
    try:
        described = json.loads(statistics.logical_type.to_json())
    except (AttributeError, ValueError, TypeError):
        return None
    return _UNIT_NANOS.get(described.get("timeUnit")) if described.get("Type") == "Timestamp" else None


def _physical(statistics: Any, which: str, t: IcebergType) -> Any:
    """A row group's min or max as the spec's physical value of ``t`` (None when it cannot be known)."""
    raw = getattr(statistics, f"{which}_raw")
    if raw is None:
        return None
    if isinstance(t, FixedType):
        return bytes(raw) if isinstance(raw, (bytes, bytearray)) else None
    if isinstance(t, DecimalType):
        return convert_literal(getattr(statistics, which), t)
    if not isinstance(t, PrimitiveType):
        return None
    name = t.name
    if name in _TIMESTAMPS:
        unit = _time_unit(statistics)
        if unit is None or not isinstance(raw, int):
            return None  # an INT96 or a date-typed column: no bound in the table's unit
        nanos = raw * unit
        # a lower bound rounds down and an upper bound up: a bound in a finer unit must still bound
        target = 1 if name in _NANOS_TYPES else 1_000
        return -((-nanos) // target) if which == "max" else nanos // target
    if name == Primitive.UUID:
        return _uuid.UUID(bytes=bytes(raw)) if isinstance(raw, (bytes, bytearray)) and len(raw) == 16 else None
    if name == Primitive.BINARY:
        return bytes(raw) if isinstance(raw, (bytes, bytearray)) else None
    if name == Primitive.STRING:
        return bytes(raw).decode("utf-8") if isinstance(raw, (bytes, bytearray)) else None
    if name in (Primitive.DATE, Primitive.TIME):
        return convert_literal(getattr(statistics, which), t)
    if name in (Primitive.FLOAT, Primitive.DOUBLE):
        value = float(raw)
        return None if value != value else value  # a NaN bound says nothing
    if name == Primitive.BOOLEAN:
        return bool(raw)
    return int(raw) if name in (Primitive.INT, Primitive.LONG) else None


def column_stats(statistics: Any, t: IcebergType) -> Stats:
    """One column chunk's statistics as the evaluator reads them (unknown where absent or unreadable)."""
    lower = upper = None
    if statistics.has_min_max:
        try:
            lower, upper = _physical(statistics, "min", t), _physical(statistics, "max", t)
        except (ValueError, TypeError, ArithmeticError, UnicodeDecodeError, pa.ArrowException):
            lower = upper = None  # unreadable statistics rule nothing out
        if lower is None or upper is None:
            lower = upper = None
    has_nulls = statistics.null_count if statistics.has_null_count else None
    return Stats(
        lower=lower,
        upper=upper,
        may_null=None if has_nulls is None else has_nulls > 0,
        all_null=has_nulls is not None and statistics.num_values == 0,
        may_nan=None,  # Parquet statistics do not count NaN
        label=LABEL,
    )


def decide_row_groups(
    meta: pq.FileMetaData, schema: Schema, row_filter: Expr, projected: frozenset[int]
) -> list[RowGroupDecision]:
    """Every row group of a file with footer ``meta``: decided by ``row_filter`` (bound to ``schema``,
    in negation normal form) against its statistics; bytes of the chunks under the ``projected``
    top-level field ids."""
    file_leaves = leaves(meta.schema.to_arrow_schema())
    if len(file_leaves) != meta.num_columns:  # a schema pyarrow reads differently from its chunks
        file_leaves = [Leaf(None, None)] * meta.num_columns
    types = {leaf.field_id: schema.find_type(leaf.field_id) for leaf in file_leaves if leaf.field_id is not None}
    out: list[RowGroupDecision] = []
    for index in range(meta.num_row_groups):
        group = meta.row_group(index)
        stats: dict[int, Stats] = {}
        read = total = 0
        for j, leaf in enumerate(file_leaves):
            chunk = group.column(j)
            size = chunk.total_compressed_size
            total += size
            if leaf.top_level_id in projected:
                read += size
            if leaf.field_id is None or not chunk.is_stats_set:
                continue
            t = types.get(leaf.field_id)
            if t is not None:
                stats[leaf.field_id] = column_stats(chunk.statistics, t)
        verdict = evaluate(row_filter, stats)
        kept = verdict.might_match
        out.append(
            RowGroupDecision(
                row_group=index,
                rows=group.num_rows,
                kept=kept,
                reason=verdict.reason if not kept else "statistics may match",
                bytes_read=read if kept else 0,
                total_bytes=total,
            )
        )
    return out


__all__ = ["LABEL", "Leaf", "RowGroupDecision", "column_stats", "decide_row_groups", "leaves"]
