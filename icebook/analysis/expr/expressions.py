"""Row filters: expression objects, a small string parser, binding to a schema, and evaluation.

Expressions name columns; ``bind`` resolves each name to a field id of a schema (spec: "Column
Projection": columns are identified by id, not by name) and converts every literal to the
column's Iceberg type, in the physical form ``icebook.spec.values`` uses (days for ``date``,
microseconds for ``timestamp``, ``Decimal`` for ``decimal``).

The string form reads like SQL::

    ts >= '2024-01-01' and region = 'us'
    event_id in (1, 2, 3) or not (page is null)
    page starts with 'se'

``to_arrow`` turns a bound expression into a ``pyarrow.compute.Expression`` with SQL's
three-valued logic (a row whose predicate is null is filtered out, as in Spark's ``WHERE``).
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import uuid as _uuid
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Literal, TypeAlias

from icebook.errors import IcebookError
from icebook.spec.schema import Schema
from icebook.spec.types import (
    DATE,
    DOUBLE,
    FLOAT,
    NANOSECOND_TYPES,
    STRING,
    TIME,
    TIMESTAMP_TYPES,
    UTC_ADJUSTED_TYPES,
    DecimalType,
    FixedType,
    IcebergType,
    Primitive,
    PrimitiveType,
    is_primitive,
)


class FilterError(IcebookError):
    """A filter that cannot be parsed or bound: a syntax error (with its position) or an unknown column."""


_TEMPORAL = frozenset({DATE, TIME, *TIMESTAMP_TYPES})
"""Types whose physical values (ints) are written as quoted ISO text."""

CompareOp = Literal["<", "<=", ">", ">=", "=", "!="]
_NEGATE: dict[str, CompareOp] = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "=": "!=", "!=": "="}
_FLIP: dict[str, CompareOp] = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "=", "!=": "!="}


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
class AlwaysTrue:
    def __str__(self) -> str:
        return "true"


@dataclass(frozen=True, slots=True)
class AlwaysFalse:
    def __str__(self) -> str:
        return "false"


@dataclass(frozen=True, slots=True)
class Compare:
    """``column <op> value`` for op in <, <=, >, >=, =, !=."""

    op: CompareOp
    ref: Ref
    value: Any

    def __init__(self, op: str, column: str | Ref, value: Any) -> None:
        if op not in _NEGATE:
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

    op: Literal["is_null", "not_null", "is_nan", "not_nan"]
    ref: Ref

    def __init__(self, op: str, column: str | Ref) -> None:
        if op not in ("is_null", "not_null", "is_nan", "not_nan"):
            raise FilterError(f"unknown unary predicate {op!r}")
        object.__setattr__(self, "op", op)
        object.__setattr__(self, "ref", _ref(column))

    def __str__(self) -> str:
        text = {"is_null": "is null", "not_null": "is not null", "is_nan": "is nan", "not_nan": "is not nan"}
        return f"{self.ref} {text[self.op]}"


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
class And:
    left: Expr
    right: Expr

    def __str__(self) -> str:
        return f"({self.left} and {self.right})"


@dataclass(frozen=True, slots=True)
class Or:
    left: Expr
    right: Expr

    def __str__(self) -> str:
        return f"({self.left} or {self.right})"


@dataclass(frozen=True, slots=True)
class Not:
    child: Expr

    def __str__(self) -> str:
        return f"not ({self.child})"


Predicate: TypeAlias = Compare | In | Unary | StartsWith
Expr: TypeAlias = AlwaysTrue | AlwaysFalse | Predicate | And | Or | Not


def IsNull(column: str | Ref) -> Unary:
    return Unary("is_null", column)


def NotNull(column: str | Ref) -> Unary:
    return Unary("not_null", column)


def IsNaN(column: str | Ref) -> Unary:
    return Unary("is_nan", column)


def NotIn(column: str | Ref, values: Any) -> In:
    return In(column, values, negated=True)


def and_(*exprs: Expr) -> Expr:
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


# ------------------------------------------------------------------------------------------- parser

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>'(?:[^']|'')*')
      | (?P<number>[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)
      | (?P<quoted>`(?:[^`]|``)+`|"(?:[^"]|"")+")
      | (?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)
      | (?P<op><=|>=|<>|!=|==|=|<|>)
      | (?P<punct>[(),])
    )""",
    re.VERBOSE,
)
_KEYWORDS = {"and", "or", "not", "in", "is", "null", "nan", "starts", "with", "true", "false"}


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str
    text: str
    pos: int
    value: Any = None


def _tokenize(text: str) -> list[_Tok]:
    tokens: list[_Tok] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            start = pos + (len(text[pos:]) - len(text[pos:].lstrip()))
            raise FilterError(f"syntax error at position {start}: unexpected {text[start]!r} in {text!r}")
        kind = m.lastgroup or ""
        raw = m.group(kind)
        start = m.start(kind)
        if kind == "string":
            tokens.append(_Tok("literal", raw, start, raw[1:-1].replace("''", "'")))
        elif kind == "number":
            tokens.append(_Tok("literal", raw, start, _number(raw)))
        elif kind == "quoted":
            q = raw[0]
            tokens.append(_Tok("name", raw, start, raw[1:-1].replace(q + q, q)))
        elif kind == "name" and raw.lower() in _KEYWORDS:
            tokens.append(_Tok(raw.lower(), raw, start))
        elif kind == "name":
            tokens.append(_Tok("name", raw, start, raw))
        elif kind == "op":
            tokens.append(_Tok("op", {"<>": "!=", "==": "="}.get(raw, raw), start))
        else:
            tokens.append(_Tok(raw, raw, start))
        pos = m.end()
    tokens.append(_Tok("end", "", len(text)))
    return tokens


def _number(raw: str) -> int | float | Decimal:
    if re.fullmatch(r"[-+]?\d+", raw):
        return int(raw)
    if "e" in raw.lower():
        return float(raw)
    return Decimal(raw)


MAX_FILTER_DEPTH = 200
"""Deepest filter tree (parentheses, not, and/or chains) icebook reads: every step after parsing
(binding, projection, evaluation, explaining) walks the tree recursively."""


def _too_deep(text: str) -> FilterError:
    shown = text if len(text) <= 60 else text[:57] + "..."
    return FilterError(
        f"filter nested more than {MAX_FILTER_DEPTH} levels deep (parentheses, not, and/or chains): {shown!r}; "
        "a long chain of or-ed values reads better as `column in (...)`"
    )


def _tree_depth(expr: Expr) -> int:
    """The depth of ``expr``, measured without recursion (a left-deep and/or chain is as deep as it is long)."""
    deepest = 0
    stack: list[tuple[Expr, int]] = [(expr, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(node, (And, Or)):
            stack.extend(((node.left, depth + 1), (node.right, depth + 1)))
        elif isinstance(node, Not):
            stack.append((node.child, depth + 1))
    return deepest


class _Parser:
    """Recursive descent: or_expr := and_expr ('or' and_expr)*; and_expr := unary ('and' unary)*;
    unary := 'not' unary | '(' or_expr ')' | 'true' | 'false' | predicate."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0
        self.depth = 0  # open parentheses and 'not's around the current position

    def peek(self, offset: int = 0) -> _Tok:
        return self.tokens[min(self.i + offset, len(self.tokens) - 1)]

    def take(self) -> _Tok:
        tok = self.tokens[self.i]
        self.i = min(self.i + 1, len(self.tokens) - 1)
        return tok

    def fail(self, expected: str, tok: _Tok | None = None) -> FilterError:
        tok = tok or self.peek()
        found = "end of input" if tok.kind == "end" else repr(tok.text)
        return FilterError(f"syntax error at position {tok.pos}: expected {expected}, found {found} in {self.text!r}")

    def expect(self, kind: str, what: str) -> _Tok:
        if self.peek().kind != kind:
            raise self.fail(what)
        return self.take()

    def parse(self) -> Expr:
        expr = self.or_expr()
        if self.peek().kind != "end":
            raise self.fail("'and', 'or' or end of input")
        return expr

    def or_expr(self) -> Expr:
        left = self.and_expr()
        while self.peek().kind == "or":
            self.take()
            left = Or(left, self.and_expr())
        return left

    def and_expr(self) -> Expr:
        left = self.unary()
        while self.peek().kind == "and":
            self.take()
            left = And(left, self.unary())
        return left

    def unary(self) -> Expr:
        tok = self.peek()
        if tok.kind in ("not", "(") and self.depth >= MAX_FILTER_DEPTH:
            raise _too_deep(self.text)
        self.depth += tok.kind in ("not", "(")
        try:
            return self._unary(tok)
        finally:
            self.depth -= tok.kind in ("not", "(")

    def _unary(self, tok: _Tok) -> Expr:
        if tok.kind == "not":
            self.take()
            return Not(self.unary())
        if tok.kind == "(":
            self.take()
            inner = self.or_expr()
            self.expect(")", "')'")
            return inner
        if tok.kind in ("true", "false") and self.peek(1).kind in ("and", "or", ")", "end"):
            self.take()
            return AlwaysTrue() if tok.kind == "true" else AlwaysFalse()
        return self.predicate()

    def literal(self) -> Any:
        tok = self.peek()
        if tok.kind == "literal":
            return self.take().value
        if tok.kind in ("true", "false"):
            self.take()
            return tok.kind == "true"
        if tok.kind == "nan":
            self.take()
            return math.nan
        raise self.fail("a literal (a number, a 'quoted string', true or false)")

    def predicate(self) -> Expr:
        tok = self.peek()
        if tok.kind in ("literal", "true", "false") and self.peek(1).kind == "op":
            value = self.literal()
            op = self.take().text
            column = self.expect("name", "a column name").value
            return Compare(_FLIP[op], column, value)
        column = self.expect("name", "a column name, 'not' or '('").value
        nxt = self.peek()
        if nxt.kind == "op":
            self.take()
            if self.peek().kind == "null":
                raise self.fail("a literal; compare with null using 'is null'")
            return Compare(nxt.text, column, self.literal())
        if nxt.kind == "is":
            self.take()
            negated = self.peek().kind == "not"
            if negated:
                self.take()
            what = self.peek().kind
            if what not in ("null", "nan"):
                raise self.fail("'null' or 'nan'")
            self.take()
            ops = {("null", False): "is_null", ("null", True): "not_null", ("nan", False): "is_nan"}
            return Unary(ops.get((what, negated), "not_nan"), column)
        negated = nxt.kind == "not"
        if negated:
            self.take()
        kind = self.peek().kind
        if kind == "in":
            self.take()
            self.expect("(", "'(' after 'in'")
            values = [self.literal()]
            while self.peek().kind == ",":
                self.take()
                values.append(self.literal())
            self.expect(")", "',' or ')'")
            return In(column, values, negated=negated)
        if kind == "starts":
            self.take()
            self.expect("with", "'with' after 'starts'")
            prefix = self.peek()
            if prefix.kind != "literal" or not isinstance(prefix.value, str):
                raise self.fail("a 'quoted string' prefix")
            self.take()
            return StartsWith(column, prefix.value, negated=negated)
        raise self.fail("a comparison (=, !=, <, <=, >, >=), 'is', 'in' or 'starts with'")


def parse_filter(text: str) -> Expr:
    """Parse the string form of a row filter (unbound: columns are still names)."""
    if not isinstance(text, str):
        raise FilterError(f"a filter must be a string or an expression, not {type(text).__name__}")
    if not text.strip():
        return AlwaysTrue()
    expr = _Parser(text).parse()
    if _tree_depth(expr) > MAX_FILTER_DEPTH:
        raise _too_deep(text)
    return expr


# ------------------------------------------------------------------------------------------- binding


def bind(expr: Expr | str | None, schema: Schema, *, case_sensitive: bool = False) -> Expr:
    """Resolve column names to field ids of ``schema`` and convert literals to the column types."""
    if expr is None:
        return AlwaysTrue()
    if isinstance(expr, str):
        expr = parse_filter(expr)
    if isinstance(expr, (AlwaysTrue, AlwaysFalse)):
        return expr
    if isinstance(expr, And):
        return And(
            bind(expr.left, schema, case_sensitive=case_sensitive),
            bind(expr.right, schema, case_sensitive=case_sensitive),
        )
    if isinstance(expr, Or):
        return Or(
            bind(expr.left, schema, case_sensitive=case_sensitive),
            bind(expr.right, schema, case_sensitive=case_sensitive),
        )
    if isinstance(expr, Not):
        return Not(bind(expr.child, schema, case_sensitive=case_sensitive))
    ref = _bind_ref(expr.ref, schema, case_sensitive)
    t = ref.type
    assert t is not None
    if isinstance(expr, Compare):
        return Compare(expr.op, ref, convert_literal(expr.value, t, ref.name))
    if isinstance(expr, In):
        return In(ref, tuple(convert_literal(v, t, ref.name) for v in expr.values), negated=expr.negated)
    if isinstance(expr, Unary):
        if expr.op in ("is_nan", "not_nan") and t not in (FLOAT, DOUBLE):
            raise FilterError(f"column {ref.name!r} is {t}: only float and double columns can be NaN")
        return Unary(expr.op, ref)
    if isinstance(expr, StartsWith):
        if t != STRING:
            raise FilterError(f"column {ref.name!r} is {t}: 'starts with' needs a string column")
        return StartsWith(ref, str(expr.prefix), negated=expr.negated)
    raise FilterError(f"not a filter expression: {expr!r}")


def _bind_ref(ref: Ref, schema: Schema, case_sensitive: bool) -> Ref:
    f = schema.find_field_by_name(ref.name, case_sensitive=case_sensitive)
    if f is None:
        names = [n for n in schema.id_to_name().values()]
        raise FilterError(f"unknown column {ref.name!r} in schema {schema.schema_id}; columns: {', '.join(names)}")
    if not is_primitive(f.type):
        raise FilterError(f"column {ref.name!r} is {f.type}: filters apply to primitive columns only")
    full = schema.find_column_name(f.field_id) or ref.name
    return Ref(full, f.field_id, f.type)


def referenced_ids(expr: Expr) -> set[int]:
    """Field ids of every column a bound expression reads."""
    if isinstance(expr, (And, Or)):
        return referenced_ids(expr.left) | referenced_ids(expr.right)
    if isinstance(expr, Not):
        return referenced_ids(expr.child)
    if isinstance(expr, (AlwaysTrue, AlwaysFalse)):
        return set()
    return {expr.ref.field_id} if expr.ref.field_id is not None else set()


def referenced_names(expr: Expr) -> list[str]:
    """Column names an (unbound or bound) expression reads, in order of appearance."""
    if isinstance(expr, (And, Or)):
        return list(dict.fromkeys(referenced_names(expr.left) + referenced_names(expr.right)))
    if isinstance(expr, Not):
        return referenced_names(expr.child)
    if isinstance(expr, (AlwaysTrue, AlwaysFalse)):
        return []
    return [expr.ref.name]


_EPOCH = _dt.datetime(1970, 1, 1)


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
                    return (value - _dt.date(1970, 1, 1)).days
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
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


# ------------------------------------------------------------------------------------------- rewriting


def push_not(expr: Expr) -> Expr:
    """The same expression with every ``not`` pushed down to the predicates (negation normal form)."""
    if isinstance(expr, And):
        return And(push_not(expr.left), push_not(expr.right))
    if isinstance(expr, Or):
        return Or(push_not(expr.left), push_not(expr.right))
    if not isinstance(expr, Not):
        return expr
    c = expr.child
    if isinstance(c, Not):
        return push_not(c.child)
    if isinstance(c, And):
        return Or(push_not(Not(c.left)), push_not(Not(c.right)))
    if isinstance(c, Or):
        return And(push_not(Not(c.left)), push_not(Not(c.right)))
    if isinstance(c, AlwaysTrue):
        return AlwaysFalse()
    if isinstance(c, AlwaysFalse):
        return AlwaysTrue()
    if isinstance(c, Compare):
        return Compare(_NEGATE[c.op], c.ref, c.value)
    if isinstance(c, In):
        return In(c.ref, c.values, negated=not c.negated)
    if isinstance(c, StartsWith):
        return StartsWith(c.ref, c.prefix, negated=not c.negated)
    flip = {"is_null": "not_null", "not_null": "is_null", "is_nan": "not_nan", "not_nan": "is_nan"}
    return Unary(flip[c.op], c.ref)


__all__ = [
    "AlwaysFalse",
    "AlwaysTrue",
    "And",
    "Compare",
    "Expr",
    "FilterError",
    "In",
    "IsNaN",
    "IsNull",
    "Not",
    "NotIn",
    "NotNull",
    "Or",
    "Ref",
    "StartsWith",
    "Unary",
    "and_",
    "bind",
    "convert_literal",
    "literal_text",
    "parse_filter",
    "push_not",
    "referenced_ids",
    "referenced_names",
]
