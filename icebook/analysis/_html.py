"""Small static-HTML helpers for the ``_repr_html_`` of analysis results.

Tables are untrusted input (DESIGN: "Every string from a table ... is escaped"), so every
value passes through ``html.escape`` here; callers hand over plain values, never markup,
except through ``Markup`` for fragments built by these helpers.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any

ADDED = "#1a7f37"
REMOVED = "#cf222e"
MUTED = "#57606a"
BOX = "font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px;line-height:1.4"
TABLE = "border-collapse:collapse;margin:4px 0 10px 0"
CELL = "border:1px solid #d0d7de;padding:2px 6px;text-align:left;vertical-align:top"


class Markup(str):
    """A string that is already HTML (built from escaped parts); not escaped again."""


def esc(value: Any) -> str:
    if isinstance(value, Markup):
        return str(value)
    return html.escape("" if value is None else str(value), quote=True)


def colored(text: Any, color: str) -> Markup:
    return Markup(f'<span style="color:{color}">{esc(text)}</span>')


def heading(text: Any) -> Markup:
    return Markup(f'<div style="font-weight:600;margin-top:6px">{esc(text)}</div>')


def muted(text: Any) -> Markup:
    return Markup(f'<div style="color:{MUTED}">{esc(text)}</div>')


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], *, row_colors: Sequence[str | None] = ()) -> Markup:
    head = "".join(f'<th style="{CELL};background:#f6f8fa">{esc(h)}</th>' for h in headers)
    body = []
    for i, row in enumerate(rows):
        color = row_colors[i] if i < len(row_colors) else None
        style = f' style="color:{color}"' if color else ""
        body.append(f"<tr{style}>" + "".join(f'<td style="{CELL}">{esc(v)}</td>' for v in row) + "</tr>")
    return Markup(f'<table style="{TABLE}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>')


def box(*parts: Any) -> str:
    return f'<div style="{BOX}">' + "".join(esc(p) for p in parts) + "</div>"
