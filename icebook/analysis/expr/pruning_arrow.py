"""Inclusive evaluation over columns: many manifests or files decided in one pass (spec: "Scan Planning").

This is the vectorised form of ``icebook.analysis.expr.pruning.evaluate``, rule for rule and in the same
order, over Arrow/numpy columns instead of one ``Stats`` per row: one call decides every file of a
manifest (or every manifest of a manifest list). The scalar evaluator stays the definition and the
source of every reason in words; ``tests/analysis/test_scan_columns.py`` holds the two equal on every
manifest and file of every scenario table. Only the planner's hot path uses this module.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.expr import nodes
from icebook.analysis.expr.nodes import PREDICATE_NODES, Constant, Expr, Predicate, push_not, visitor
from icebook.spec.types import DOUBLE, FLOAT

_ARROW_ERRORS = (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, TypeError, ValueError, OverflowError)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class StatsColumns:
    """What is known about one column (or partition field) in each of ``n`` rows: the columns of
    ``pruning.Stats``. ``lower``/``upper`` are in comparable form (``comparable``), null where unknown."""

    lower: pa.Array
    upper: pa.Array
    no_null: np.ndarray
    """``Stats.may_null is False``."""
    all_null: np.ndarray
    no_nan: np.ndarray
    """``Stats.may_nan is False``."""
    exact: bool = False


def comparable(arr: pa.Array) -> pa.Array:
    """Values as the spec's physical form compares them: days, micros and nanos as integers,
    fixed-width binary (uuid, fixed) as binary; everything else as it is."""
    t = arr.type
    if pa.types.is_date32(t):
        return arr.cast(pa.int32())
    if pa.types.is_timestamp(t) or pa.types.is_time64(t):
        return arr.view(pa.int64())
    if pa.types.is_time32(t):
        return arr.view(pa.int32())
    if pa.types.is_fixed_size_binary(t):
        return arr.cast(pa.binary())
    return arr


def _valid(arr: pa.Array) -> np.ndarray:
    return np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def _is_nan(arr: pa.Array) -> np.ndarray:
    if not pa.types.is_floating(arr.type):
        return np.zeros(len(arr), dtype=bool)
    return np.asarray(pc.fill_null(pc.is_nan(arr), False).to_numpy(zero_copy_only=False), dtype=bool)


def _without_nan(arr: pa.Array) -> pa.Array:
    nan = _is_nan(arr)
    return pc.if_else(pa.array(nan), pa.nulls(len(arr), arr.type), arr) if nan.any() else arr


def _equals(arr: pa.Array | None, value: int) -> np.ndarray:
    """Per row: the (nullable) count equals ``value`` (False where it is null)."""
    if arr is None:
        return np.zeros(0, dtype=bool)
    return np.asarray(pc.fill_null(pc.equal(arr, value), False).to_numpy(zero_copy_only=False), dtype=bool)


def exact_stats(values: pa.Array) -> StatsColumns:
    """One known value per row (a file's partition value): ``pruning.value_stats`` per row."""
    values = comparable(values)
    valid, nan = _valid(values), _is_nan(values)
    bounds = _without_nan(values)
    return StatsColumns(lower=bounds, upper=bounds, no_null=valid, all_null=~valid, no_nan=~nan, exact=True)


def bound_stats(
    lower: pa.Array, upper: pa.Array, null_counts: pa.Array, value_counts: pa.Array, nan_counts: pa.Array
) -> StatsColumns:
    """A file's column bounds and counts per row, as the planner's column stats read them: a NaN bound
    says nothing; no nulls when the null count is 0; all null when it equals the value count."""
    all_null = np.asarray(
        pc.fill_null(pc.equal(null_counts, value_counts), False).to_numpy(zero_copy_only=False), dtype=bool
    )
    return StatsColumns(
        lower=_without_nan(comparable(lower)),
        upper=_without_nan(comparable(upper)),
        no_null=_equals(null_counts, 0),
        all_null=all_null,
        no_nan=_equals(nan_counts, 0),
    )


def summary_stats(
    lower: pa.Array,
    upper: pa.Array,
    contains_null: pa.Array,
    contains_nan: pa.Array,
    lower_missing: np.ndarray,
    *,
    floating: bool,
) -> StatsColumns:
    """Manifests' partition field summaries per row (``scan.partition_summary_stats`` per manifest):
    all null when it contains null and has no lower bound, and for float and double no NaN either."""
    has_null = np.asarray(pc.fill_null(contains_null, False).to_numpy(zero_copy_only=False), dtype=bool)
    no_nan = np.asarray(pc.fill_null(pc.invert(contains_nan), False).to_numpy(zero_copy_only=False), dtype=bool)
    all_null = has_null & lower_missing
    if floating:
        all_null &= no_nan
    no_null = np.asarray(pc.fill_null(pc.invert(contains_null), False).to_numpy(zero_copy_only=False), dtype=bool)
    return StatsColumns(
        lower=comparable(lower), upper=comparable(upper), no_null=no_null, all_null=all_null, no_nan=no_nan
    )


# ------------------------------------------------------------------------------------------ comparisons


def _scalar(value: Any, like: pa.DataType) -> pa.Scalar:
    """A filter literal (physical form) as an Arrow scalar comparable with a column of type ``like``."""
    if hasattr(value, "bytes") and not isinstance(value, (bytes, str)):  # uuid.UUID
        return pa.scalar(value.bytes, pa.binary())
    if isinstance(value, bool):
        return pa.scalar(value, pa.bool_())
    if isinstance(value, int) and pa.types.is_floating(like):
        return pa.scalar(float(value), pa.float64())
    return pa.scalar(value)


_PYTHON_OPS = {pc.less: operator.lt, pc.greater: operator.gt, pc.equal: operator.eq}


def _compare(kernel: Any, arr: pa.Array, value: Any) -> np.ndarray:
    """``kernel(arr, value)`` per row, False where the row is null. Where Arrow cannot compare the
    two types, Python compares each value, as the scalar evaluator does (False on a ``TypeError``)."""
    try:
        result = kernel(arr, _scalar(value, arr.type))
    except _ARROW_ERRORS:
        return np.array([_python(_PYTHON_OPS[kernel], a, value) for a in arr.to_pylist()], dtype=bool)
    return np.asarray(pc.fill_null(result, False).to_numpy(zero_copy_only=False), dtype=bool)


def _python(op: Any, a: Any, value: Any) -> bool:
    if a is None:
        return False
    if isinstance(a, bytes) and hasattr(value, "bytes") and not isinstance(value, (bytes, str)):
        value = value.bytes
    try:
        return bool(op(a, value))
    except TypeError:
        return False


def _lt(arr: pa.Array, value: Any) -> np.ndarray:
    """Per row: ``arr < value``."""
    return _compare(pc.less, arr, value)


def _gt(arr: pa.Array, value: Any) -> np.ndarray:
    """Per row: ``value < arr``."""
    return _compare(pc.greater, arr, value)


def _member(arr: pa.Array, values: tuple[Any, ...]) -> np.ndarray:
    """Per row: the value is one of ``values`` (``value in values``)."""
    try:
        value_set = pa.array([_scalar(v, arr.type).as_py() for v in values]).cast(arr.type)
        found = pc.is_in(arr, value_set=value_set)
        return np.asarray(pc.fill_null(found, False).to_numpy(zero_copy_only=False), dtype=bool)
    except _ARROW_ERRORS:
        pass
    hit = np.zeros(len(arr), dtype=bool)
    for v in values:
        hit |= _compare(pc.equal, arr, v)
    return hit


# ------------------------------------------------------------------------------------------ evaluation


@visitor()
def evaluate_columns(expr: Expr, stats: Mapping[int, StatsColumns], n: int) -> np.ndarray:
    """Per row, whether a row matching the bound expression (negation normal form) might be there:
    ``pruning.evaluate(expr, stats_of_row).might_match`` for every row at once."""
    raise AssertionError  # never runs: see ``visitor``


@evaluate_columns.register
def _(expr: Constant, stats: Mapping[int, StatsColumns], n: int) -> np.ndarray:
    return np.full(n, isinstance(expr, nodes.AlwaysTrue), dtype=bool)


@evaluate_columns.register
def _(expr: nodes.And, stats: Mapping[int, StatsColumns], n: int) -> np.ndarray:
    return evaluate_columns(expr.left, stats, n) & evaluate_columns(expr.right, stats, n)


@evaluate_columns.register
def _(expr: nodes.Or, stats: Mapping[int, StatsColumns], n: int) -> np.ndarray:
    return evaluate_columns(expr.left, stats, n) | evaluate_columns(expr.right, stats, n)


@evaluate_columns.register
def _(expr: nodes.Not, stats: Mapping[int, StatsColumns], n: int) -> np.ndarray:
    return evaluate_columns(push_not(expr), stats, n)


@evaluate_columns.register
def _(expr: Predicate, stats: Mapping[int, StatsColumns], n: int) -> np.ndarray:
    s = stats.get(expr.ref.field_id if expr.ref.field_id is not None else -1)
    return np.ones(n, dtype=bool) if s is None else ~_prunes(expr, s, n)


@visitor(covers=PREDICATE_NODES)
def _prunes(p: Predicate, s: StatsColumns, n: int) -> np.ndarray:
    """Rows the predicate rules out (``pruning._predicate`` returns a verdict that does not match)."""
    raise AssertionError  # never runs: see ``visitor``


@_prunes.register
def _(p: nodes.Unary, s: StatsColumns, n: int) -> np.ndarray:
    if p.op == "is_null":
        return s.no_null.copy()
    if p.op == "not_null":
        return s.all_null.copy()
    if p.op == "is_nan":
        return s.all_null | s.no_nan
    return np.zeros(n, dtype=bool)


@_prunes.register
def _(p: nodes.StartsWith, s: StatsColumns, n: int) -> np.ndarray:
    prune, lo, hi = s.all_null.copy(), s.lower, s.upper
    if not (pa.types.is_string(lo.type) or pa.types.is_large_string(lo.type)):
        return prune
    both = _valid(lo) & _valid(hi)
    starts = np.asarray(
        pc.fill_null(pc.starts_with(lo, pattern=p.prefix), False).to_numpy(zero_copy_only=False), dtype=bool
    )
    if s.exact:
        return prune | (both & (starts == p.negated))
    if not p.negated:
        prune |= both & ((_gt(lo, p.prefix) & ~starts) | _lt(hi, p.prefix))
    return prune


@_prunes.register
def _(p: nodes.In, s: StatsColumns, n: int) -> np.ndarray:
    prune, lo, hi = s.all_null.copy(), s.lower, s.upper
    both = _valid(lo) & _valid(hi)
    if s.exact:
        return prune | (both & (_member(lo, p.values) == p.negated))
    if not p.negated:
        outside = np.ones(n, dtype=bool)
        for v in p.values:
            outside &= _gt(lo, v) | _lt(hi, v)
        prune |= both & outside
    return prune


@_prunes.register
def _(p: nodes.Compare, s: StatsColumns, n: int) -> np.ndarray:
    prune, lo, hi, v = s.all_null.copy(), s.lower, s.upper, p.value
    if isinstance(v, float) and math.isnan(v):
        return prune
    rule = np.zeros(n, dtype=bool)
    if p.op == "<":
        rule = _valid(lo) & ~_lt(lo, v)
    elif p.op == "<=":
        rule = _gt(lo, v)
    elif p.op == ">":
        rule = _valid(hi) & ~_gt(hi, v)
    elif p.op == ">=":
        rule = _lt(hi, v)
    elif p.op == "=":
        rule = _valid(lo) & _valid(hi) & (_gt(lo, v) | _lt(hi, v))
    elif p.op == "!=" and s.exact:
        rule = _compare(pc.equal, lo, v)
    # Spark orders NaN above every number: a row that may hold NaN may match > and >=.
    if p.op in (">", ">=", "!=") and p.ref.type in (FLOAT, DOUBLE):
        rule &= s.no_nan
    return prune | rule


__all__ = ["StatsColumns", "bound_stats", "comparable", "evaluate_columns", "exact_stats", "summary_stats"]
