"""What every view shares: the table protocol, escaping, human numbers, and the static-HTML frame.

Tables are untrusted input: every value from a table passes through ``esc`` before it becomes
HTML. Widgets send plain JSON and the browser side writes it with ``textContent`` only.
"""

from __future__ import annotations

import enum
import html
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from icebook.analysis.history.field_changes import ChangeKind
from icebook.analysis.store.table_like import TableLike as TableLike  # the views import it from here
from icebook.errors import one_line
from icebook.spec.manifest import FileContent
from icebook.widgets import STYLESHEET

if TYPE_CHECKING:
    import pandas as pd  # imported where a frame is shown, so that a table's first view needs no pandas


class Markup(str):
    """Already-escaped HTML built by these helpers; ``esc`` passes it through."""


def esc(value: Any) -> str:
    """HTML-escape any value (quotes too, so it is safe in attributes)."""
    if isinstance(value, Markup):
        return str(value)
    return html.escape("" if value is None else str(value), quote=True)


def error_html(exc: BaseException) -> str:
    """An error in place of a view: its one line (``errors.one_line``), escaped."""
    return f'<div class="icebook ib-error">{esc(one_line(exc))}</div>'


def label(member: enum.Enum) -> str:
    """How a spec constant reads in prose: ``FileContent.POSITION_DELETES`` -> ``position deletes``."""
    return member.name.lower().replace("_", " ")


def constant_name(kind: type[enum.IntEnum], value: Any) -> str:
    """The spec's name of a constant (``ADDED``, ``POSITION_DELETES``); the raw value when it is unknown."""
    try:
        return kind(value).name
    except (TypeError, ValueError):
        return str(value)


def content_label(code: Any) -> str:
    """``data``, ``position deletes`` or ``equality deletes`` for a ``data_file.content`` code; the code
    itself when the spec defines no such content (a corrupt or newer table)."""
    try:
        return label(FileContent(int(code)))
    except (TypeError, ValueError):
        return str(code)


_CHANGE_CLASSES: dict[str, str] = {
    ChangeKind.ADDED: "ib-added",
    ChangeKind.SET: "ib-added",
    ChangeKind.DROPPED: "ib-removed",
    ChangeKind.REMOVED: "ib-removed",
    ChangeKind.VOIDED: "ib-removed",
}


def change_class(kind: ChangeKind | str) -> str:
    """The CSS class of a schema/spec/sort-order/property change kind: green added, red removed, else changed."""
    return _CHANGE_CLASSES.get(kind, "ib-changed")


def human_count(n: Any) -> str:
    """A count with thousands separators; "–" when unknown: None, NaN or pandas' NA (a v1 manifest list may
    leave its counts out, and frames hold that as NA)."""
    if n is None:
        return "–"
    if isinstance(n, int):
        return f"{n:,}"
    import pandas as pd  # NaN or NA come from frames, so pandas is loaded already

    return "–" if pd.isna(n) else f"{int(n):,}"


def short_path(path: str, location: str) -> str:
    base = location.rstrip("/") + "/"
    return path[len(base) :] if path.startswith(base) else path


def base_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def frame(body: str, *, cls: str = "") -> str:
    """Wrap static HTML in the icebook root element with the shared stylesheet inlined once."""
    css = STYLESHEET.read_text(encoding="utf-8")
    return f'<div class="icebook {esc(cls)}"><style>{css}</style>{body}</div>'


def grid(
    headers: Sequence[str],
    rows: str | Iterable[str],
    *,
    cls: str = "",
    caption: str = "",
    scroll: bool = False,
) -> str:
    """The one ``ib-grid`` table: its ``headers`` (none: no head row) and ``caption`` escaped here, its
    ``rows`` the ``<tr>`` elements (or their joined HTML), escaped by their makers; ``cls`` another class
    of the table, ``scroll`` a wide table in a box that scrolls."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = rows if isinstance(rows, str) else "".join(rows)
    table = (
        f'<table class="{esc(" ".join(("ib-grid", *cls.split())))}">'
        + (f"<caption>{esc(caption)}</caption>" if caption else "")
        + (f"<thead><tr>{head}</tr></thead>" if headers else "")
        + f"<tbody>{body}</tbody></table>"
    )
    return f'<div class="ib-scroll">{table}</div>' if scroll else table


def kv_table(rows: Iterable[tuple[Any, Any, Any]], *, headers: Sequence[str] = ("field", "value", "meaning")) -> str:
    """A field/value/explanation table; every cell escaped."""
    return grid(
        headers,
        (
            f'<tr><td><code>{esc(k)}</code></td><td>{esc(v)}</td><td class="ib-muted">{esc(d)}</td></tr>'
            for k, v, d in rows
        ),
    )


def frame_table_html(df: pd.DataFrame, *, offset: int = 0, limit: int = 50, caption: str = "") -> str:
    """One page of a DataFrame as an escaped HTML table, with the row range it shows."""
    import pandas as pd

    from icebook.analysis.variant_text import frame_variants_as_json

    total = len(df)
    page = frame_variants_as_json(df.iloc[offset : offset + limit])
    # NaN in a column that is not floating point is how pandas spells a missing value.
    objects = [not pd.api.types.is_float_dtype(dtype) for dtype in df.dtypes]
    rows = []
    for i, (_, row) in enumerate(page.iterrows()):
        cells = "".join(
            f"<td>{esc('null' if is_obj and _is_nan(v) else cell_text(v))}</td>"
            for v, is_obj in zip(row.tolist(), objects, strict=True)
        )
        rows.append(f'<tr><td class="ib-muted">{offset + i}</td>{cells}</tr>')
    end = min(offset + limit, total)
    info = f"rows {offset + 1 if total else 0}–{end} of {total:,}"
    cap = f"{esc(caption)} · " if caption else ""
    return f'<div class="ib-caption ib-muted">{cap}{esc(info)}</div>' + grid(
        ("#", *map(str, df.columns)), rows, scroll=True
    )


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and value != value


def cell_text(value: Any, limit: int = 200) -> str:
    """A short plain-text form of one cell (bytes as hex, long text cut; lists, maps held as key-value
    pairs and decimals as the terminal writes them, ``terminal.value_text``)."""
    import pandas as pd

    from icebook.display.terminal import value_text

    if value is None or value is pd.NA:
        return "null"
    if isinstance(value, float) and value != value:
        return "NaN"
    if isinstance(value, (bytes, bytearray, memoryview)):
        text = "0x" + bytes(value).hex().upper()
    elif isinstance(value, Mapping):
        text = "{" + ", ".join(f"{k}: {cell_text(v, 60)}" for k, v in value.items()) + "}"
    elif isinstance(value, (list, tuple, Decimal)) or type(value).__name__ == "ndarray":
        text = value_text(value)
    else:
        text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def badge(text: Any, cls: str = "") -> str:
    return f'<span class="ib-badge {esc(cls)}">{esc(text)}</span>'


class StaticHTML:
    """Marks a widget that also answers ``text/html`` (the static fallback for saved notebooks)."""

    def _repr_html_(self) -> str:  # pragma: no cover - overridden
        raise NotImplementedError

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        parent = super()._repr_mimebundle_(**kwargs)  # type: ignore[misc]
        data, meta = parent if isinstance(parent, tuple) else (parent, {})
        if data is None:
            data = {}
        if "text/html" in (kwargs.get("exclude") or ()):
            return data, meta
        try:
            data["text/html"] = self._repr_html_()
        except Exception as exc:  # a fallback must never break the live view
            data["text/html"] = error_html(exc)
        return data, meta
