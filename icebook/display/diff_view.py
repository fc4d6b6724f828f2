"""Compare two points of a table in a widget: pick the two sides (snapshots or refs) from dropdowns, and see
the ``SnapshotDiff`` rendered by ``icebook.display.diff_render``."""

from __future__ import annotations

from typing import Any

import ipywidgets as W

from icebook.analysis.history.diff import SnapshotDiff
from icebook.analysis.history.diff import diff as analysis_diff
from icebook.display._base import StaticHTML, TableLike, error_html, frame
from icebook.display.diff_render import diff_html
from icebook.spec.metadata import main_first
from icebook.spec.snapshots import Branch
from icebook.text import utc_text


def compute_diff(table: TableLike, a: Any, b: Any = None) -> SnapshotDiff:
    """``t.diff(a, b)`` when the table has it, else the analysis function directly."""
    method = getattr(table, "diff", None)
    if callable(method):
        result: SnapshotDiff = method(a, b)
        return result
    return analysis_diff(table, a, b, progress=False)


def point_options(table: TableLike) -> list[tuple[str, Any]]:
    """Dropdown options: refs (by name) then snapshots newest first (by id)."""
    options: list[tuple[str, Any]] = []
    for name, ref in sorted(table.refs.items(), key=lambda kv: main_first(kv[0])):
        kind = "branch" if isinstance(ref, Branch) else "tag"
        options.append((f"{kind} {name} → {ref.snapshot_id}", name))
    for s in reversed(table.snapshots):
        options.append((f"{s.snapshot_id} · {s.operation or '?'} · {utc_text(s.timestamp_ms)}", s.snapshot_id))
    return options


class DiffView(StaticHTML, W.VBox):  # type: ignore[misc]
    """Two dropdowns (snapshots and refs), a Compare button, and the diff."""

    def __init__(self, table: TableLike, a: Any = None, b: Any = None, **kwargs: Any) -> None:
        self._table = table
        options = point_options(table)
        current = table.metadata.current_snapshot()
        default_b = b if b is not None else (current.snapshot_id if current else None)
        default_a = a
        if default_a is None and current is not None and current.parent_snapshot_id is not None:
            default_a = current.parent_snapshot_id
        values = [v for _, v in options]
        self.a = W.Dropdown(options=options, value=default_a if default_a in values else None, description="from")
        self.b = W.Dropdown(options=options, value=default_b if default_b in values else None, description="to")
        for dd in (self.a, self.b):
            dd.layout = W.Layout(width="min(46%, 440px)")
        self.button = W.Button(description="Compare", button_style="primary", icon="exchange")
        self.output = W.HTML()
        self.output.add_class("ib-diff-output")
        self.button.on_click(lambda _b: self.refresh())
        super().__init__([W.HBox([self.a, self.b, self.button]), self.output], **kwargs)
        self.add_class("ib-diff-view")
        self.diff: SnapshotDiff | None = None
        if self.a.value is not None or self.b.value is not None:
            self.refresh()

    def refresh(self) -> None:
        self.output.value = '<div class="icebook ib-muted">comparing…</div>'
        try:
            self.diff = compute_diff(self._table, self.a.value, self.b.value)
            self.output.value = diff_html(self.diff, self._table.location)
        except Exception as exc:  # shown to the user in place of the diff
            self.output.value = frame(error_html(exc))

    def _repr_html_(self) -> str:
        return self.output.value or "<div>diff</div>"
