"""The names Spark gives a query's result columns, read from the query's text.

Spark names a column without an alias by the expression as it prints it: ``count(*)`` is ``count(1)``,
``MAX(t.id)`` is ``max(id)``, ``id + 1`` is ``(id + 1)``, a string literal is its text. The Arrow engine
(polars) names them its own way (``len``, ``id``), so its results are renamed to Spark's names, and a
query reads the same whichever engine ran it. Only the outermost select list is read; an item this
module cannot print as Spark does gets ``None`` and keeps the engine's name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

_TOKEN = re.compile(
    r"\s+|(?P<str>'(?:[^'\\]|\\.|'')*')|(?P<qid>`(?:[^`]|``)*`|\"(?:[^\"]|\"\")*\")"
    r"|(?P<num>\d+(?:\.\d*)?(?:[eE][+-]?\d+)?)|(?P<word>[A-Za-z_][\w$]*)"
    r"|(?P<sym><=>|<=|>=|<>|!=|\|\||[-+*/%=<>(),.;])"
)
_END_OF_LIST = {"FROM", "WHERE", "GROUP", "ORDER", "LIMIT", "HAVING", "UNION", "EXCEPT", "INTERSECT", "WINDOW"}
_KEYWORDS = _END_OF_LIST | {
    "SELECT", "AS", "DISTINCT", "ALL", "AND", "OR", "NOT", "IS", "NULL", "IN", "LIKE", "CASE", "WHEN", "THEN",
    "ELSE", "END", "OVER", "BETWEEN", "TRUE", "FALSE", "CAST", "ON", "JOIN", "WITH",
}  # fmt: skip
_BINARY = {
    "OR": 1,
    "AND": 2,
    "=": 4,
    "<=>": 4,
    "<": 4,
    "<=": 4,
    ">": 4,
    ">=": 4,
    "+": 6,
    "-": 6,
    "*": 7,
    "/": 7,
    "%": 7,
}


@dataclass(frozen=True, slots=True)
class _SqlToken:
    kind: str  # str, qid, num, word, sym
    text: str

    @property
    def upper(self) -> str:
        return self.text.upper() if self.kind in ("word", "sym") else ""


class _Unsupported(Exception):
    """An expression this module does not print as Spark does."""


def _tokens(query: str) -> list[_SqlToken]:
    out: list[_SqlToken] = []
    pos = 0
    while pos < len(query):
        m = _TOKEN.match(query, pos)
        if m is None:
            raise _Unsupported(query[pos])
        pos = m.end()
        if m.lastgroup is not None:
            out.append(_SqlToken(m.lastgroup, m.group(m.lastgroup)))
    return out


def token_spans(query: str) -> list[tuple[str, str, int, int]] | None:
    """Every token of ``query`` as (kind, text, start, end), kinds as ``_SqlToken``'s (None: a character
    no SQL token starts with)."""
    out: list[tuple[str, str, int, int]] = []
    pos = 0
    while pos < len(query):
        m = _TOKEN.match(query, pos)
        if m is None:
            return None
        pos = m.end()
        if m.lastgroup is not None:
            out.append((m.lastgroup, m.group(m.lastgroup), m.start(), m.end()))
    return out


def select_items(query: str) -> list[list[_SqlToken]] | None:
    """The items of the first select list at the top level of ``query`` (None: no such list)."""
    try:
        tokens = _tokens(query)
    except _Unsupported:
        return None
    depth = 0
    start = None
    for i, tok in enumerate(tokens):
        if tok.text == "(":
            depth += 1
        elif tok.text == ")":
            depth -= 1
        elif depth == 0 and tok.upper == "SELECT":
            start = i + 1
            break
    if start is None:
        return None
    while start < len(tokens) and tokens[start].upper in ("DISTINCT", "ALL"):
        start += 1
    items: list[list[_SqlToken]] = [[]]
    depth = 0
    for tok in tokens[start:]:
        if depth == 0 and (tok.upper in _END_OF_LIST or tok.text == ";"):
            break
        if tok.text == "(":
            depth += 1
        elif tok.text == ")":
            depth -= 1
        if depth == 0 and tok.text == ",":
            items.append([])
        else:
            items[-1].append(tok)
    return items


def spark_names(query: str) -> list[str | None] | None:
    """Spark's name of each column of the outermost select list, None where this module cannot tell;
    None for the whole query when its select list has a ``*`` (its columns come from the tables)."""
    items = select_items(query)
    if items is None or any(_is_star(item) for item in items):
        return None
    return [_item_name(item) for item in items]


def _is_star(item: Sequence[_SqlToken]) -> bool:
    return bool(item) and item[-1].text == "*" and (len(item) == 1 or item[-2].text == ".")


def _item_name(item: Sequence[_SqlToken]) -> str | None:
    if not item:
        return None
    if len(item) >= 2 and item[-2].upper == "AS":
        return _ident(item[-1])
    if len(item) >= 2 and item[-1].kind in ("word", "qid") and item[-1].upper not in _KEYWORDS:
        before = item[-2]
        if before.text == ")" or (before.kind in ("word", "qid", "num", "str") and before.upper not in _KEYWORDS):
            return _ident(item[-1])  # an alias without AS: ``count(*) n``
    try:
        parser = _Printer(list(item))
        text = parser.expression(0)
        if parser.pos != len(parser.tokens):
            return None
        return text
    except (_Unsupported, IndexError):
        return None


def _ident(tok: _SqlToken) -> str:
    if tok.kind == "qid":
        quote = tok.text[0]
        return tok.text[1:-1].replace(quote * 2, quote)
    if tok.kind == "str":
        return tok.text[1:-1].replace("''", "'").replace("\\'", "'")
    return tok.text


class _Printer:
    """A precedence-climbing reader of one select item that prints it as Spark names it."""

    def __init__(self, tokens: list[_SqlToken]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> _SqlToken | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, text: str | None = None) -> _SqlToken:
        tok = self.tokens[self.pos]
        if text is not None and tok.upper != text and tok.text != text:
            raise _Unsupported(tok.text)
        self.pos += 1
        return tok

    def expression(self, min_level: int) -> str:
        left = self.unary()
        while True:
            tok = self.peek()
            if tok is None:
                return left
            op = tok.upper or tok.text
            if op == "IS" and min_level <= 4:
                self.take()
                negated = (after := self.peek()) is not None and after.upper == "NOT"
                if negated:
                    self.take()
                self.take("NULL")
                left = f"({left} IS NOT NULL)" if negated else f"({left} IS NULL)"
                continue
            if op in ("!=", "<>") and min_level <= 4:
                self.take()
                left = f"(NOT ({left} = {self.expression(5)}))"
                continue
            level = _BINARY.get(op)
            if level is None or level < min_level:
                return left
            self.take()
            right = self.expression(level + 1)
            left = f"({left} {op} {right})"

    def unary(self) -> str:
        tok = self.take()
        if tok.upper == "NOT":
            return f"(NOT {self.expression(3)})"
        if tok.kind == "num":
            return tok.text
        if tok.kind == "str":
            return _ident(tok)
        if tok.text == "(":
            inner = self.expression(0)
            self.take(")")
            return inner
        if tok.upper in ("TRUE", "FALSE", "NULL"):
            return tok.upper if tok.upper == "NULL" else tok.text.lower()
        if tok.kind not in ("word", "qid") or tok.upper in _KEYWORDS - {"CAST"}:
            raise _Unsupported(tok.text)
        nxt = self.peek()
        if nxt is not None and nxt.text == "(" and tok.kind == "word":
            return self.call(tok.text)
        name = _ident(tok)
        while (dot := self.peek()) is not None and dot.text == ".":  # a qualified column: Spark shows its name
            self.take()
            name = _ident(self.take())
        return name

    def call(self, function: str) -> str:
        self.take("(")
        if function.upper() == "CAST":
            value = self.expression(0)
            self.take("AS")
            words = []
            while (tok := self.peek()) is not None and tok.text != ")":
                words.append(self.take().text.upper())
            self.take(")")
            return f"CAST({value} AS {''.join(words).replace(',', ', ')})"
        prefix = ""
        if (tok := self.peek()) is not None and tok.upper == "DISTINCT":
            self.take()
            prefix = "DISTINCT "
        args: list[str] = []
        if (tok := self.peek()) is not None and tok.text == "*":
            self.take()
            if function.lower() != "count":
                raise _Unsupported("*")
            args.append("1")
        while (tok := self.peek()) is not None and tok.text != ")":
            args.append(self.expression(0))
            if (sep := self.peek()) is not None and sep.text == ",":
                self.take()
        self.take(")")
        if (tok := self.peek()) is not None and tok.upper in ("OVER", "FILTER"):
            raise _Unsupported(tok.text)  # windows and filters print with their clauses
        return f"{function.lower()}({prefix}{', '.join(args)})"


__all__ = ["select_items", "spark_names", "token_spans"]
