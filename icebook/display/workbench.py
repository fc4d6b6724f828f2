"""``explore(table)``: every view of one table in one workbench (tabs), wired together.

History tab: the snapshot graph above the metadata tree; clicking a snapshot re-roots the tree.
Other tabs (diff, evolution, query, charts) are built the first time they are opened.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as W

from icebook.display._base import StaticHTML, TableLike, error_html, esc, frame
from icebook.display.lineage_view import LineageWidget
from icebook.display.registry import render_html
from icebook.display.summary_render import table_html
from icebook.display.tree import TreeWidget
from icebook.display.tree_render import MetadataTree
from icebook.errors import one_line

TABS = ("History", "Diff", "Evolution", "Query", "Charts", "Table")


class Workbench(StaticHTML, W.VBox):  # type: ignore[misc]
    """The icebook workbench for one table."""

    def __init__(self, table: TableLike, **kwargs: Any) -> None:
        self._table = table
        self.lineage = LineageWidget(table)
        self.tree = TreeWidget(table)
        self.lineage.observe(self._follow, names=["selected_snapshot_id"])
        history = W.VBox([self.lineage, self.tree])
        history.add_class("ib-history")
        builders: dict[int, Callable[[], W.Widget]] = {
            1: self._diff,
            2: self._evolution,
            3: self._query,
            4: self._charts,
            5: lambda: W.HTML(table_html(table)),
        }
        self._builders = builders
        self._built: dict[int, W.Widget] = {0: history}
        placeholders = [history] + [W.HTML('<div class="icebook ib-muted">loading…</div>') for _ in TABS[1:]]
        self.tabs = W.Tab(children=placeholders, titles=TABS)
        self.tabs.observe(self._opened, names=["selected_index"])
        title = W.HTML(frame(f'<div class="ib-h">icebook · <code>{esc(table.location)}</code></div>'))
        super().__init__([title, self.tabs], **kwargs)
        self.add_class("ib-workbench")

    def _follow(self, change: dict[str, Any]) -> None:
        self.tree.at = change["new"]

    def _opened(self, change: dict[str, Any]) -> None:
        index = change["new"]
        if index is None or index in self._built:
            return
        try:
            widget = self._builders[index]()
        except Exception as exc:  # a tab that cannot be built says why; the others still work
            widget = W.HTML(frame(error_html(exc)))
        self._built[index] = widget
        children = list(self.tabs.children)
        children[index] = widget
        self.tabs.children = children
        self.tabs.titles = TABS

    def show_tab(self, name: str) -> W.Widget:
        """Open a tab by title and return its view (built on first use)."""
        index = TABS.index(name)
        self.tabs.selected_index = index
        if index not in self._built:
            self._opened({"new": index})
        return self._built[index]

    def _diff(self) -> W.Widget:
        from icebook.display.diff_view import DiffView

        return DiffView(self._table)

    def _evolution(self) -> W.Widget:
        from icebook.display.evolution_view import EvolutionView

        return EvolutionView(self._table)

    def _query(self) -> W.Widget:
        from icebook.display.query_panel import QueryPanel

        return QueryPanel(self._table)

    def _charts(self) -> W.Widget:
        from IPython.display import display

        from icebook.display.charts import file_size_histogram, partition_heatmap, snapshot_timeline_chart

        out = W.Output()
        with out:
            for make in (snapshot_timeline_chart, file_size_histogram, partition_heatmap):
                try:
                    display(make(self._table))
                except Exception as exc:  # one failing chart must not hide the others
                    print(f"{make.__name__}: {one_line(exc)}")
        return out

    def _repr_html_(self) -> str:
        return table_html(self._table) + render_html(MetadataTree(table=self._table))


def explore(table: TableLike) -> Workbench:
    """Lineage graph + metadata tree, diff, evolution, time-travel queries and charts in tabs."""
    return Workbench(table)
