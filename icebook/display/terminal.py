"""Tables and values for a terminal: what the command line prints.

Values are shown in Iceberg's human-readable form (``spec.values.to_human``): dates and timestamps
in ISO-8601, decimals with their scale, binary as hex, structs as ``name=value``, maps as ``key: value``;
never a Python ``repr``. Bounds maps (``lower_bounds``, ``upper_bounds``: field id -> Appendix D bytes)
are decoded by their column's type when the table's schemas are known. A frame is drawn with ``rich``
at the terminal's width (or ``COLUMNS``): columns that do not fit are named below it, long cells are
shortened in the middle (a path keeps its start and its file name); ``wide`` draws every column in full.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import json
import math
import os
import shutil
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

import pandas as pd

from icebook.spec.schema import DELETE_FILE_PATH_ID, DELETE_POS_ID, Schema, columns_by_id
from icebook.spec.types import IcebergType, parse_type
from icebook.spec.values import decode_value, to_human

BOUNDS_COLUMNS = ("lower_bounds", "upper_bounds")
FIELDS_ATTR = "icebook.field_types"
"""``DataFrame.attrs`` key: field id -> (column name, type) of the table a frame of files describes."""
_RESERVED: Mapping[int, tuple[str, IcebergType]] = {
    DELETE_FILE_PATH_ID: ("file_path", parse_type("string")),
    DELETE_POS_ID: ("pos", parse_type("long")),
}
_MIN_COLUMN = 6
_USEFUL = 24
"""A column is shown when it gets this many characters (or all it needs); the rest are named below."""
_ELLIPSIS = "…"
_DRAWING = "│├└─┌┐┘┬┴┼"


def terminal_width() -> int | None:
    """The width to draw in: ``COLUMNS`` when set, else the terminal's; None (no limit) when the output
    goes to a file or a pipe, so that a script reads whole values."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if sys.stdout is not None and hasattr(sys.stdout, "isatty") and sys.stdout.isatty():
        return shutil.get_terminal_size((100, 24)).columns
    return None


# ------------------------------------------------------------------------------------------ values


def value_text(value: Any) -> str:
    """One value as a person reads it: ISO dates and times, plain decimals, hex bytes, no repr."""
    if value is None or value is pd.NA or value is pd.NaT:
        return ""
    if isinstance(value, float):
        return "" if math.isnan(value) else repr(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # a numpy scalar
        return value_text(value.item())
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "0x" + bytes(value).hex().upper()
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}={_inner(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ndarray":
        items = list(value)
        if items and all(isinstance(i, tuple) and len(i) == 2 for i in items):  # a map as key-value pairs
            return "{" + ", ".join(f"{_inner(k)}: {_inner(v)}" for k, v in items) + "}"
        return "[" + ", ".join(_inner(i) for i in items) + "]"
    return str(value)


def _inner(value: Any) -> str:
    """A value inside a struct, list or map: a null is written out."""
    text = value_text(value)
    return "null" if text == "" and not isinstance(value, str) else text


def json_value(value: Any) -> Any:
    """One value for ``json.dumps``: numbers and strings as they are, everything else as ``value_text``."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if hasattr(value, "item") and not isinstance(value, (bytes, bytearray)):
        return json_value(value.item())
    if isinstance(value, Mapping):
        return {str(k): json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) or type(value).__name__ == "ndarray":
        items = list(value)
        if items and all(isinstance(i, tuple) and len(i) == 2 for i in items):
            return {value_text(k): json_value(v) for k, v in items}
        return [json_value(i) for i in items]
    return value_text(value)


def field_types(schemas: Iterable[Schema]) -> dict[int, tuple[str, IcebergType]]:
    """Field id -> (column name, type) over every schema (later ones win), the reserved ids included."""
    return {**_RESERVED, **columns_by_id(schemas)}


def decoded_bounds(bounds: Any, fields: Mapping[int, tuple[str, IcebergType]]) -> Any:
    """A bounds map (field id -> Appendix D bytes) as column name -> human-readable value."""
    if bounds is None or bounds is pd.NA or (isinstance(bounds, float) and math.isnan(bounds)):
        return None
    pairs = bounds.items() if isinstance(bounds, Mapping) else list(bounds)
    out: dict[str, str] = {}
    for key, raw in pairs:
        known = fields.get(int(key))
        if known is None or raw is None:
            out[str(key)] = value_text(raw)
            continue
        name, type_ = known
        try:
            out[name] = to_human(decode_value(raw, type_, field=name), type_)
        except Exception:  # a bound that does not decode is shown as its bytes, never hidden
            out[name] = value_text(raw)
    return out


def with_field_types(df: pd.DataFrame, schemas: Iterable[Schema]) -> pd.DataFrame:
    """``df`` told the types of its table's fields (in ``attrs``), when it has bounds maps to decode."""
    if any(c in df.columns for c in BOUNDS_COLUMNS):
        df.attrs[FIELDS_ATTR] = field_types(schemas)
    return df


def readable_frame(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its bounds maps decoded by their columns' types (known from ``with_field_types``) and
    its variants as JSON text."""
    from icebook.analysis.variant_text import frame_variants_as_json

    df = frame_variants_as_json(df)
    present = [c for c in BOUNDS_COLUMNS if c in df.columns]
    fields = df.attrs.get(FIELDS_ATTR)
    if not present or not fields:
        return df
    out = df.copy()
    for column in present:
        out[column] = pd.Series([decoded_bounds(v, fields) for v in df[column]], index=df.index, dtype=object)
    return out


# ------------------------------------------------------------------------------------------ tables


def shorten(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, cut in the middle (a path keeps its start and its end)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return _ELLIPSIS[:width]
    head = (width - 1) // 2
    tail = width - 1 - head
    return text[:head] + _ELLIPSIS + (text[-tail:] if tail else "")


def fit_lines(text: str, width: int) -> str:
    """Every line of ``text`` in ``width`` characters: a line of a drawing (a tree) shortened in the
    middle, a line of prose wrapped under its own indent."""
    out: list[str] = []
    for line in text.splitlines():
        if len(line) <= width:
            out.append(line)
        elif any(c in line for c in _DRAWING) or " " not in line.strip():  # a drawing, or one path
            out.append(shorten(line, width))
        else:
            indent = line[: len(line) - len(line.lstrip())]
            hanging = indent + ("  " if line.lstrip().startswith(("- ", "* ")) else "")
            out += textwrap.wrap(
                line.strip(), width, initial_indent=indent, subsequent_indent=hanging, break_on_hyphens=False
            ) or [""]
    return "\n".join(out)


def _cells(df: pd.DataFrame) -> list[list[str]]:
    return [[value_text(v).replace("\n", " ") for v in row] for row in df.itertuples(index=False, name=None)]


def _widths(desired: Sequence[int], available: int) -> list[int]:
    """Column widths that sum to at most ``available``: the widest columns give way first."""
    widths = list(desired)
    while sum(widths) > available and max(widths) > _MIN_COLUMN:
        widest = max(range(len(widths)), key=widths.__getitem__)
        widths[widest] -= max(1, (sum(widths) - available) // max(1, len(widths)))
        widths[widest] = max(widths[widest], _MIN_COLUMN)
    return widths


def frame_text(df: pd.DataFrame, *, width: int | None = None, wide: bool = False) -> str:
    """Every row of ``df`` as a table in ``width`` columns (``terminal_width`` by default; every column
    in full with ``wide`` or when there is no width), or ``(no rows)``."""
    from rich import box
    from rich.console import Console
    from rich.table import Table

    if not len(df):
        return "(no rows)"
    df = readable_frame(df)
    limit = width or terminal_width()
    if limit is None:
        wide, limit = True, 0
    names = [str(c) for c in df.columns]
    cells = _cells(df)
    desired = [max([len(n), *(len(r[i]) for r in cells)]) for i, n in enumerate(names)]
    if wide:
        shown = list(range(len(names)))
        widths = desired
    else:
        shown = []
        used = 0
        for i, d in enumerate(desired):  # columns left to right while each still gets a useful width
            need = min(d, _USEFUL) + 2
            if used + need > limit and shown:
                break
            shown.append(i)
            used += need
        widths = _widths([desired[i] for i in shown], limit - 2 * len(shown))
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1))
    for i, w in zip(shown, widths, strict=True):
        table.add_column(shorten(names[i], w), no_wrap=True, overflow="ellipsis", max_width=w, min_width=1)
    for row in cells:
        table.add_row(*(shorten(row[i], w) for i, w in zip(shown, widths, strict=True)))
    console = Console(
        file=io.StringIO(), width=sum(widths) + 4 * len(shown) + 8 if wide else limit, color_system=None,
        force_terminal=False, force_jupyter=False, highlight=False, emoji=False, markup=False, soft_wrap=False,
    )  # fmt: skip
    console.print(table)
    text = "\n".join(line.rstrip() for line in console.file.getvalue().splitlines())  # type: ignore[attr-defined]
    hidden = [names[i] for i in range(len(names)) if i not in shown]
    if hidden:
        text += "\n" + shorten(f"{len(hidden)} more columns (--wide shows them): {', '.join(hidden)}", limit)
    return text


def frame_json(df: pd.DataFrame) -> str:
    """Rows as a JSON array of objects (values as ``json_value``)."""
    df = readable_frame(df)
    rows = [
        {str(c): json_value(v) for c, v in zip(df.columns, row, strict=True)}
        for row in df.itertuples(index=False, name=None)
    ]
    return json.dumps(rows, indent=1, ensure_ascii=False)


def frame_csv(df: pd.DataFrame) -> str:
    """Rows as CSV with a header (values as ``value_text``)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([str(c) for c in df.columns])
    writer.writerows(_cells(readable_frame(df)))
    return out.getvalue().rstrip("\n")


__all__ = [
    "FIELDS_ATTR",
    "decoded_bounds",
    "field_types",
    "fit_lines",
    "frame_csv",
    "frame_json",
    "frame_text",
    "json_value",
    "readable_frame",
    "shorten",
    "terminal_width",
    "value_text",
    "with_field_types",
]
