"""Row filter expressions as data: the nodes, the one visitor mechanism that walks them, and the rewrites
every later step shares (negation normal form, a predicate moved onto another column).

Expressions name columns; ``icebook.analysis.expr.binding`` resolves each name to a field id (spec:
"Column Projection": columns are identified by id, not by name) and every literal to the column's
physical value. Every walk over the nodes is a ``visitor``: a ``functools.singledispatch`` function whose
fallback raises, so a node type a walk does not handle fails loudly, naming the node and the walk.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias, TypeVar

from icebook.errors import IcebookError
from icebook.spec.types import DATE, TIME, TIMESTAMP_TYPES, IcebergType, PrimitiveType

if TYPE_CHECKING:
    from functools import _SingleDispatchCallable

T = TypeVar("T")


class FilterError(IcebookError):
    """A filter that cannot be parsed or bound: a syntax error (with its position) or an unknown column."""


_TEMPORAL = frozenset({DATE, TIME, *TIMESTAMP_TYPES})
"""Types whose physical values (ints) are written as quoted ISO text."""

CompareOp = Literal["<", "<=", ">", ">=", "=", "!="]
NEGATE: dict[str, CompareOp] = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "=": "!=", "!=": "="}
"""``not (x op v)`` is ``x NEGATE[op] v``."""
FLIP: dict[str, CompareOp] = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}
"""``v op x`` is ``x FLIP[op] v``."""
UnaryOp = Literal["is_null", "not_null", "is_nan", "not_nan"]
_UNARY_TEXT: dict[str, str] = {
    "is_null": "is null",
    "not_null": "is not null",
    "is_nan": "is nan",
    "not_nan": "is not nan",
}
_UNARY_NEGATE: dict[str, UnaryOp] = {
    "is_null": "not_null",
    "not_null": "is_null",
    "is_nan": "not_nan",
    "not_nan": "is_nan",
}


@dataclass(frozen=True, slots=True)
class Ref:
    """A column reference: by name until bound, then also by field id and Iceberg type."""

    name: str
    field_id: int | None = None
    type: IcebergType | None = None

    def __str__(self) -> str:
        return self.name


def _ref(column: str | Ref) -> Ref:
    return column if isinstance(column, Ref) else Ref(str(column))


@dataclass(frozen=True, slots=True)
class _Constant:
    text: ClassVar[str]

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class AlwaysTrue(_Constant):
    text = "true"


@dataclass(frozen=True, slots=True)
class AlwaysFalse(_Constant):
    text = "false"


@dataclass(frozen=True, slots=True)
class Compare:
    """``column <op> value`` for op in <, <=, >, >=, =, !=."""

    op: CompareOp
    ref: Ref
    value: Any

    def __init__(self, op: str, column: str | Ref, value: Any) -> None:
        if op not in NEGATE:
            raise FilterError(f"unknown comparison {op!r}")
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "ref", _ref(column))
        object.__setattr__(self, "value", value)

    def __str__(self) -> str:
        return f"{self.ref} {self.op} {literal_text(self.value, self.ref.type)}"


@dataclass(frozen=True, slots=True)
class In:
    """``column in (v1, v2, ...)``; ``negated`` gives ``not in``."""

    ref: Ref
    values: tuple[Any, ...]
    negated: bool = False

    def __init__(self, column: str | Ref, values: Any, negated: bool = False) -> None:
        object.__setattr__(self, "ref", _ref(column))
        object.__setattr__(self, "values", tuple(values))
        object.__setattr__(self, "negated", negated)

    def __str__(self) -> str:
        inner = ", ".join(literal_text(v, self.ref.type) for v in self.values)
        return f"{self.ref} {'not in' if self.negated else 'in'} ({inner})"


@dataclass(frozen=True, slots=True)
class Unary:
    """``column is null`` / ``is not null`` / ``is nan`` / ``is not nan``."""

    op: UnaryOp
    ref: Ref

    def __init__(self, op: str, column: str | Ref) -> None:
        if op not in _UNARY_TEXT:
            raise FilterError(f"unknown unary predicate {op!r}")
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "ref", _ref(column))

    def __str__(self) -> str:
        return f"{self.ref} {_UNARY_TEXT[self.op]}"


@dataclass(frozen=True, slots=True)
class StartsWith:
    """``column starts with 'prefix'`` (strings); ``negated`` gives ``not starts with``."""

    ref: Ref
    prefix: str
    negated: bool = False

    def __init__(self, column: str | Ref, prefix: str, negated: bool = False) -> None:
        object.__setattr__(self, "ref", _ref(column))
        object.__setattr__(self, "prefix", prefix)
        object.__setattr__(self, "negated", negated)

    def __str__(self) -> str:
        return f"{self.ref} {'not starts' if self.negated else 'starts'} with {self.prefix!r}"


@dataclass(frozen=True, slots=True)
class _Connective:
    """Two expressions joined by ``and`` or ``or`` (``word``)."""

    word: ClassVar[str]
    left: Expr
    right: Expr

    def __str__(self) -> str:
        return f"({self.left} {self.word} {self.right})"


@dataclass(frozen=True, slots=True)
class And(_Connective):
    word = "and"


@dataclass(frozen=True, slots=True)
class Or(_Connective):
    word = "or"


@dataclass(frozen=True, slots=True)
class Not:
    child: Expr

    def __str__(self) -> str:
        return f"not ({self.child})"


Predicate: TypeAlias = Compare | In | Unary | StartsWith
Constant: TypeAlias = AlwaysTrue | AlwaysFalse
Connective: TypeAlias = And | Or
Expr: TypeAlias = Constant | Predicate | Connective | Not
PREDICATE_NODES: tuple[type, ...] = (Compare, In, Unary, StartsWith)
EXPR_NODES: tuple[type, ...] = (AlwaysTrue, AlwaysFalse, *PREDICATE_NODES, And, Or, Not)


def IsNull(column: str | Ref) -> Unary:
    return Unary("is_null", column)


def NotIn(column: str | Ref, values: Any) -> In:
    return In(column, values, negated=True)


def and_(*exprs: Expr) -> Expr:
    """The conjunction of ``exprs`` (true when there are none)."""
    out: Expr = AlwaysTrue()
    for e in exprs:
        out = e if isinstance(out, AlwaysTrue) else And(out, e)
    return out


def literal_text(value: Any, t: IcebergType | None) -> str:
    """A literal as the filter syntax writes it: strings quoted, dates and times as quoted ISO text."""
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if isinstance(value, int) and isinstance(t, PrimitiveType) and t in _TEMPORAL:
        from icebook.spec.transforms import human_value

        return "'" + human_value(value, t) + "'"
    return str(value)


# ------------------------------------------------------------------------------------------- visitors


@dataclass(frozen=True, slots=True)
class Visitor:
    """A registered walk over expression nodes and the node types it must handle."""

    name: str
    dispatch: _SingleDispatchCallable[Any]
    covers: tuple[type, ...]


VISITORS: list[Visitor] = []
"""Every walk over expression nodes (``tests/analysis/test_expressions.py`` checks that each handles the
node types it covers and refuses any other)."""


def visitor(covers: tuple[type, ...] = EXPR_NODES) -> Callable[[Callable[..., T]], _SingleDispatchCallable[T]]:
    """Make a function a walk over expression nodes, dispatched on the type of its first argument.

    Register one implementation per node type with ``@walk.register``; the decorated function's body is
    never run: a node type with no implementation raises a ``FilterError`` naming the type and the walk."""

    def decorate(fn: Callable[..., T]) -> _SingleDispatchCallable[T]:
        name = f"{fn.__module__.removeprefix('icebook.analysis.expr.')}.{fn.__qualname__}"

        def unhandled(node: object, *args: Any, **kwargs: Any) -> T:
            raise FilterError(
                f"{name} does not handle {type(node).__name__} (not a filter expression it knows): {node!r}"
            )

        functools.update_wrapper(unhandled, fn)
        walk = functools.singledispatch(unhandled)
        VISITORS.append(Visitor(name, walk, covers))
        return walk

    return decorate


@visitor()
def children(expr: Expr) -> tuple[Expr, ...]:
    """The expressions directly below ``expr`` (none for predicates and constants)."""
    raise AssertionError  # never runs: see ``visitor``


@children.register
def _(expr: Constant | Predicate) -> tuple[Expr, ...]:
    return ()


@children.register
def _(expr: Connective) -> tuple[Expr, ...]:
    return (expr.left, expr.right)


@children.register
def _(expr: Not) -> tuple[Expr, ...]:
    return (expr.child,)


def predicates(expr: Expr) -> Iterator[Predicate]:
    """The predicates of ``expr`` from left to right (without recursion: a long and/or chain is deep)."""
    stack: list[Expr] = [expr]
    while stack:
        node = stack.pop()
        below = children(node)
        if below:
            stack.extend(reversed(below))
        elif isinstance(node, (Compare, In, Unary, StartsWith)):
            yield node


def tree_depth(expr: Expr) -> int:
    """The depth of ``expr``, measured without recursion (a left-deep and/or chain is as deep as it is long)."""
    deepest = 0
    stack: list[tuple[Expr, int]] = [(expr, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children(node))
    return deepest


def referenced_ids(expr: Expr) -> set[int]:
    """Field ids of every column a bound expression reads."""
    return {p.ref.field_id for p in predicates(expr) if p.ref.field_id is not None}


def referenced_names(expr: Expr) -> list[str]:
    """Column names an (unbound or bound) expression reads, in order of appearance."""
    return list(dict.fromkeys(p.ref.name for p in predicates(expr)))


@visitor(covers=PREDICATE_NODES)
def with_ref(p: Predicate, ref: Ref) -> Predicate:
    """The same predicate (operator, values, negation) on another column or partition field."""
    raise AssertionError  # never runs: see ``visitor``


@with_ref.register
def _(p: Compare, ref: Ref) -> Predicate:
    return Compare(p.op, ref, p.value)


@with_ref.register
def _(p: In, ref: Ref) -> Predicate:
    return In(ref, p.values, negated=p.negated)


@with_ref.register
def _(p: Unary, ref: Ref) -> Predicate:
    return Unary(p.op, ref)


@with_ref.register
def _(p: StartsWith, ref: Ref) -> Predicate:
    return StartsWith(ref, p.prefix, negated=p.negated)


# ------------------------------------------------------------------------------------------- negation


@visitor()
def push_not(expr: Expr) -> Expr:
    """The same expression with every ``not`` pushed down to the predicates (negation normal form)."""
    raise AssertionError  # never runs: see ``visitor``


@push_not.register
def _(expr: Constant | Predicate) -> Expr:
    return expr


@push_not.register
def _(expr: Connective) -> Expr:
    return type(expr)(push_not(expr.left), push_not(expr.right))


@push_not.register
def _(expr: Not) -> Expr:
    return negate(expr.child)


@visitor()
def negate(expr: Expr) -> Expr:
    """``not expr`` in negation normal form."""
    raise AssertionError  # never runs: see ``visitor``


@negate.register
def _(expr: AlwaysTrue) -> Expr:
    return AlwaysFalse()


@negate.register
def _(expr: AlwaysFalse) -> Expr:
    return AlwaysTrue()


@negate.register
def _(expr: Compare) -> Expr:
    return Compare(NEGATE[expr.op], expr.ref, expr.value)


@negate.register
def _(expr: In) -> Expr:
    return In(expr.ref, expr.values, negated=not expr.negated)


@negate.register
def _(expr: StartsWith) -> Expr:
    return StartsWith(expr.ref, expr.prefix, negated=not expr.negated)


@negate.register
def _(expr: Unary) -> Expr:
    return Unary(_UNARY_NEGATE[expr.op], expr.ref)


@negate.register
def _(expr: And) -> Expr:
    return Or(negate(expr.left), negate(expr.right))


@negate.register
def _(expr: Or) -> Expr:
    return And(negate(expr.left), negate(expr.right))


@negate.register
def _(expr: Not) -> Expr:
    return push_not(expr.child)


__all__ = [
    "EXPR_NODES",
    "FLIP",
    "NEGATE",
    "PREDICATE_NODES",
    "VISITORS",
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "Compare",
    "CompareOp",
    "Connective",
    "Constant",
    "Expr",
    "FilterError",
    "In",
    "IsNull",
    "Not",
    "NotIn",
    "Or",
    "Predicate",
    "Ref",
    "StartsWith",
    "Unary",
    "Visitor",
    "and_",
    "children",
    "literal_text",
    "negate",
    "predicates",
    "push_not",
    "referenced_ids",
    "referenced_names",
    "tree_depth",
    "visitor",
    "with_ref",
]
