"""The string form of a row filter, read by recursive descent into expression nodes (still unbound:
columns are names). It reads like SQL::

    ts >= '2024-01-01' and region = 'us'
    event_id in (1, 2, 3) or not (page is null)
    page starts with 'se'
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from icebook.analysis.expr.nodes import (
    FLIP,
    AlwaysFalse,
    AlwaysTrue,
    And,
    Compare,
    Expr,
    FilterError,
    In,
    Not,
    Or,
    StartsWith,
    Unary,
    tree_depth,
)

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

    # or_expr and and_expr stay two plain loops: each level of parentheses costs stack frames, and
    # MAX_FILTER_DEPTH levels must fit in Python's recursion limit.
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
            return Compare(FLIP[op], column, value)
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
    if tree_depth(expr) > MAX_FILTER_DEPTH:
        raise _too_deep(text)
    return expr


__all__ = ["MAX_FILTER_DEPTH", "parse_filter"]
