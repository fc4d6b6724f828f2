"""The time-travel query panel: pick an engine and a point in history, run, see rows and the scan plan.

Spark runs SQL over the view ``t`` pinned to the point (``t.sql``); Arrow reads with a filter
expression (``t.read(engine="arrow")``). The scan explanation comes from ``t.scan`` when the
table has it, else from the scan planner directly.
"""

from __future__ import annotations

import time
from typing import Any

import ipywidgets as W
import pandas as pd

from icebook.analysis._frames import exact_frame
from icebook.analysis.engine_choice import Engine
from icebook.analysis.scan.planner import plan_scan
from icebook.display._base import StaticHTML, TableLike, error_html, esc, frame, frame_table_html
from icebook.display.summary_render import plan_text
from icebook.errors import one_line
from icebook.spec.snapshots import Branch
from icebook.text import iso_utc, utc_text

PAGE_ROWS = 50
POINTS = [("current", "current"), ("snapshot", "snapshot"), ("branch", "branch"), ("tag", "tag"), ("time", "time")]


class QueryPanel(StaticHTML, W.VBox):  # type: ignore[misc]
    """Engine, point in history, SQL or filter, Run; a paged result and the scan explanation."""

    def __init__(self, table: TableLike, **kwargs: Any) -> None:
        self._table = table
        self.result: pd.DataFrame | None = None
        self.page = 0
        snaps = list(table.snapshots)
        branches = sorted(n for n, r in table.refs.items() if isinstance(r, Branch))
        tags = sorted(n for n, r in table.refs.items() if not isinstance(r, Branch))
        self.engine = W.ToggleButtons(
            options=[("Spark", Engine.SPARK), ("Arrow", Engine.ARROW)], value=Engine.SPARK, description="engine"
        )
        self.point = W.ToggleButtons(options=POINTS, value="current", description="at")
        snap_options: list[tuple[str, int | None]] = [
            (f"{s.snapshot_id} · {s.operation or '?'} · {utc_text(s.timestamp_ms)}", s.snapshot_id) for s in snaps
        ]
        self.snapshot = W.SelectionSlider(
            options=snap_options or [("no snapshot", None)],
            value=snap_options[-1][1] if snap_options else None,
            description="snapshot",
            continuous_update=False,
            layout=W.Layout(width="min(100%, 720px)"),
        )
        self.branch = W.Dropdown(options=branches, description="branch")
        self.tag = W.Dropdown(options=tags, description="tag")
        self.time = W.Text(
            value=iso_utc(snaps[-1].timestamp_ms) if snaps else "",
            description="as of",
            placeholder="2024-01-05T10:00:00",
        )
        self.query = W.Textarea(
            value="SELECT * FROM t LIMIT 100",
            description="SQL",
            layout=W.Layout(width="min(100%, 720px)", height="64px"),
        )
        self.filter = W.Text(value="", description="filter", placeholder="event_id > 3 and region = 'eu'")
        self.run_button = W.Button(description="Run", button_style="primary", icon="play")
        self.status = W.HTML()
        self.prev_button = W.Button(description="◀ previous", layout=W.Layout(width="110px"))
        self.next_button = W.Button(description="next ▶", layout=W.Layout(width="110px"))
        self.rows = W.HTML()
        self.rows.add_class("ib-query-rows")
        self.explain = W.HTML()
        self.explain_box = W.Accordion(children=[self.explain], titles=("scan explanation",))
        self.point_box = W.VBox()
        self.input_box = W.VBox()
        self.run_button.on_click(lambda _b: self.run())
        self.prev_button.on_click(lambda _b: self.show_page(self.page - 1))
        self.next_button.on_click(lambda _b: self.show_page(self.page + 1))
        self.engine.observe(lambda _c: self._layout(), names="value")
        self.point.observe(lambda _c: self._layout(), names="value")
        super().__init__(
            [
                self.engine,
                self.point,
                self.point_box,
                self.input_box,
                W.HBox([self.run_button, self.status]),
                self.rows,
                W.HBox([self.prev_button, self.next_button]),
                self.explain_box,
            ],
            **kwargs,
        )
        self.add_class("ib-query-panel")
        self._layout()
        self.show_page(0)

    def _layout(self) -> None:
        extra = {"snapshot": [self.snapshot], "branch": [self.branch], "tag": [self.tag], "time": [self.time]}
        self.point_box.children = extra.get(self.point.value, [])
        self.input_box.children = [self.query] if Engine(self.engine.value) == Engine.SPARK else [self.filter]

    def at(self) -> Any:
        """The chosen point: None (current), a snapshot id, a ref name, or an ISO time."""
        return {
            "current": None,
            "snapshot": self.snapshot.value,
            "branch": self.branch.value,
            "tag": self.tag.value,
            "time": self.time.value.strip() or None,
        }[self.point.value]

    def run(self) -> pd.DataFrame | None:
        at = self.at()
        engine = Engine(self.engine.value)
        started = time.perf_counter()
        note = " (the first Spark query starts a session, ~10–20 s)" if engine == Engine.SPARK else ""
        self.status.value = f'<span class="icebook ib-muted">running on {esc(engine)}…{esc(note)}</span>'
        try:
            if engine == Engine.SPARK:
                result = self._table.sql(self.query.value, at)
                self.result = result if isinstance(result, pd.DataFrame) else pd.DataFrame(result)
            else:
                arrow = self._table.read(at, filter=self.filter.value.strip() or None, engine=Engine.ARROW.value)
                self.result = exact_frame(arrow)
        except Exception as exc:  # the panel shows the failure; the user fixes the query and runs again
            self.result = None
            self.status.value = error_html(exc)
            self.rows.value = ""
            return None
        seconds = time.perf_counter() - started
        self.status.value = (
            f'<span class="icebook ib-muted">{len(self.result):,} rows from {esc(engine)} at '
            f"{esc('current' if at is None else at)} in {seconds:.2f} s</span>"
        )
        self.show_page(0)
        self.explain.value = self.explanation(at, self.filter.value.strip() if engine == Engine.ARROW else None)
        return self.result

    def explanation(self, at: Any, filter: str | None) -> str:
        try:
            scan = getattr(self._table, "scan", None)
            if callable(scan):
                plan = scan(at, filter=filter)
            else:
                plan = plan_scan(self._table, self._table.snapshot(at), filter)
            text = plan_text(plan)
        except Exception as exc:  # explaining is best effort; the rows are already shown
            text = f"no scan explanation: {one_line(exc)}"
        return f'<pre class="icebook ib-explain">{esc(text)}</pre>'

    def show_page(self, page: int) -> None:
        df = self.result
        if df is None:
            self.rows.value = '<div class="icebook ib-muted">Choose a point in history and press Run.</div>'
            self.prev_button.disabled = self.next_button.disabled = True
            return
        pages = max((len(df) - 1) // PAGE_ROWS + 1, 1)
        self.page = min(max(page, 0), pages - 1)
        self.rows.value = frame(frame_table_html(df, offset=self.page * PAGE_ROWS, limit=PAGE_ROWS), cls="ib-result")
        self.prev_button.disabled = self.page == 0
        self.next_button.disabled = self.page >= pages - 1

    def _repr_html_(self) -> str:
        if self.result is None:
            return frame('<div class="ib-muted">Time-travel query panel (needs a live kernel).</div>')
        return self.rows.value


def query_panel(table: TableLike) -> QueryPanel:
    return QueryPanel(table)
