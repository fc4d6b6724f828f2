"""Inclusive evaluation: decide from bounds, counts and partition values whether a manifest or a
file might hold a row matching an expression (spec: "Scan Planning").

One evaluator serves row filters against column stats and projected partition filters
(``icebook.analysis.expr.projection``) against partition values and partition summaries. Every
decision comes with a reason in words (which summary, bound or partition value against which
predicate), so that a scan plan can explain itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from icebook.analysis.expr import nodes
from icebook.analysis.expr.nodes import PREDICATE_NODES, Expr, Predicate, Ref, literal_text, push_not, visitor
from icebook.spec.types import DOUBLE, FLOAT

# ------------------------------------------------------------------------------------- evaluation


@dataclass(frozen=True, slots=True)
class Stats:
    """What is known about one column (or partition field) over a set of rows.

    ``lower``/``upper`` bound the non-null, non-NaN values (None: unknown); ``may_null`` /
    ``may_nan`` are None when unknown; ``all_null`` is True when no value is non-null;
    ``exact`` marks a single known value (a file's partition value); ``label`` names the source.
    """

    lower: Any = None
    upper: Any = None
    may_null: bool | None = None
    all_null: bool = False
    may_nan: bool | None = None
    exact: bool = False
    label: str = "bounds"


def value_stats(value: Any, label: str = "partition value") -> Stats:
    """Stats of a single known value (a data file's partition value)."""
    if value is None:
        return Stats(may_null=True, all_null=True, may_nan=False, exact=True, label=label)
    nan = isinstance(value, float) and math.isnan(value)
    return Stats(
        lower=None if nan else value, upper=None if nan else value, may_null=False, may_nan=nan, exact=True, label=label
    )


@dataclass(frozen=True, slots=True)
class Verdict:
    """Whether rows might match, and why not when they cannot."""

    might_match: bool
    reason: str = ""


_KEEP = Verdict(True)


@visitor()
def evaluate(expr: Expr, stats: dict[int, Stats]) -> Verdict:
    """Inclusive evaluation of a bound expression (negation normal form) against column stats keyed
    by field id: False only when no row can match. Missing stats mean "might match"."""
    raise AssertionError  # never runs: see ``visitor``


@evaluate.register
def _(expr: nodes.AlwaysTrue, stats: dict[int, Stats]) -> Verdict:
    return _KEEP


@evaluate.register
def _(expr: nodes.AlwaysFalse, stats: dict[int, Stats]) -> Verdict:
    return Verdict(False, "the filter is always false")


@evaluate.register
def _(expr: nodes.And, stats: dict[int, Stats]) -> Verdict:
    left = evaluate(expr.left, stats)
    return left if not left.might_match else evaluate(expr.right, stats)


@evaluate.register
def _(expr: nodes.Or, stats: dict[int, Stats]) -> Verdict:
    left = evaluate(expr.left, stats)
    if left.might_match:
        return left
    right = evaluate(expr.right, stats)
    return right if right.might_match else Verdict(False, f"{left.reason}; and {right.reason}")


@evaluate.register
def _(expr: nodes.Not, stats: dict[int, Stats]) -> Verdict:
    return evaluate(push_not(expr), stats)


@evaluate.register
def _(expr: Predicate, stats: dict[int, Stats]) -> Verdict:
    s = stats.get(expr.ref.field_id if expr.ref.field_id is not None else -1)
    return _KEEP if s is None else _predicate(expr, s)


def _fmt(value: Any, ref: Ref) -> str:
    return literal_text(value, ref.type)


def _range(p: Predicate, s: Stats) -> str:
    return f"{s.label} {p.ref.name} in [{_fmt(s.lower, p.ref)}, {_fmt(s.upper, p.ref)}]"


def _equal(p: Predicate, s: Stats) -> str:
    return f"{s.label} {p.ref.name} = {_fmt(s.lower, p.ref)}"


@visitor(covers=PREDICATE_NODES)
def _predicate(p: Predicate, s: Stats) -> Verdict:
    raise AssertionError  # never runs: see ``visitor``


@_predicate.register
def _(p: nodes.Unary, s: Stats) -> Verdict:
    name, label = p.ref.name, s.label
    if p.op == "is_null" and s.may_null is False:
        return Verdict(False, f"{p}: {label} {name} has no nulls")
    if p.op in ("not_null", "is_nan") and s.all_null:
        return Verdict(False, f"{p}: {label} {name} is all null")
    if p.op == "is_nan" and s.may_nan is False:
        return Verdict(False, f"{p}: {label} {name} has no NaN")
    return _KEEP


@_predicate.register
def _(p: nodes.StartsWith, s: Stats) -> Verdict:
    if not s.all_null and not (isinstance(s.lower, str) and isinstance(s.upper, str)):
        return _KEEP
    n = len(p.prefix)
    return _membership(p, s, lambda v: v.startswith(p.prefix), lambda lo, hi: lo[:n] > p.prefix or hi[:n] < p.prefix)


@_predicate.register
def _(p: nodes.In, s: Stats) -> Verdict:
    return _membership(p, s, lambda v: v in p.values, lambda lo, hi: all(_lt(v, lo) or _lt(hi, v) for v in p.values))


def _membership(
    p: nodes.In | nodes.StartsWith, s: Stats, holds: Callable[[Any], bool], outside: Callable[[Any, Any], bool]
) -> Verdict:
    """``in`` and ``starts with``: an exact value decides either way; bounds rule out only the
    un-negated form (the range may also hold other values)."""
    lo, hi = s.lower, s.upper
    if s.all_null:
        return Verdict(False, f"{p}: {s.label} {p.ref.name} is all null")
    if lo is None or hi is None:
        return _KEEP
    if s.exact:
        return Verdict(False, f"{p}: {_equal(p, s)}") if holds(lo) == p.negated else _KEEP
    if not p.negated and outside(lo, hi):
        return Verdict(False, f"{p}: {_range(p, s)}")
    return _KEEP


@_predicate.register
def _(p: nodes.Compare, s: Stats) -> Verdict:
    name, label, lo, hi, v = p.ref.name, s.label, s.lower, s.upper, p.value
    if s.all_null:
        return Verdict(False, f"{p}: {label} {name} is all null")
    if isinstance(v, float) and math.isnan(v):
        return _KEEP
    # Spark orders NaN above every number: a file that may hold NaN may match > and >=.
    if p.op in (">", ">=", "!=") and s.may_nan is not False and p.ref.type in (FLOAT, DOUBLE):
        return _KEEP
    where = _equal(p, s) if s.exact else ""
    if p.op in ("<", "<=") and lo is not None and (not _lt(lo, v) if p.op == "<" else _lt(v, lo)):
        bound = where or f"{label} lower bound {name} = {_fmt(lo, p.ref)}"
        return Verdict(False, f"{p}: {bound}")
    if p.op in (">", ">=") and hi is not None and (not _lt(v, hi) if p.op == ">" else _lt(hi, v)):
        bound = where or f"{label} upper bound {name} = {_fmt(hi, p.ref)}"
        return Verdict(False, f"{p}: {bound}")
    if p.op == "=" and lo is not None and hi is not None and (_lt(v, lo) or _lt(hi, v)):
        return Verdict(False, f"{p}: {where or _range(p, s)}")
    if p.op == "!=" and s.exact and lo is not None and lo == v:
        return Verdict(False, f"{p}: {where}")
    return _KEEP


def _lt(a: Any, b: Any) -> bool:
    try:
        return bool(a < b)
    except TypeError:
        return False


__all__ = ["Stats", "Verdict", "evaluate", "value_stats"]
