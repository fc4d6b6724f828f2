"""A read's cost as a live widget: the summary, then a map from the files read to their row groups, one box
per row group (read or skipped), the reason and the bytes on hover, the chosen row group's detail on a click.
And where a table's bytes are (``t.storage()``) as its report above the chart of its parts.

Python builds the map (``cost_render.file_map``, plain JSON) and sends it a page of files at a time
(``limit`` grows by "show more"); ``widgets/cost.js`` draws it with ``textContent`` only. Clicking a row
group sets ``selected`` (its file's path, row group, kept and reason), which a notebook can read or observe.
"""

from __future__ import annotations

from typing import Any

import anywidget
import ipywidgets as W
import traitlets

from icebook.analysis.cost.query_cost import QueryCost
from icebook.analysis.cost.storage import Storage
from icebook.display._base import StaticHTML
from icebook.display.charts import storage_chart
from icebook.display.cost_render import file_map
from icebook.display.registry import render_html
from icebook.widgets import STYLESHEET, bundle

PAGE = 100
"""Files sent at first, and added by each "show more"."""


class CostWidget(StaticHTML, anywidget.AnyWidget):  # type: ignore[misc]
    """Files to row groups; ``only_skipping`` shows only the files with a row group skipped."""

    _esm = bundle("cost.js")
    _css = STYLESHEET

    summary = traitlets.Unicode("").tag(sync=True)
    files = traitlets.List(trait=traitlets.Dict()).tag(sync=True)
    matching = traitlets.Int(0).tag(sync=True)
    """Files the current choice shows when every page is sent."""
    limit = traitlets.Int(PAGE).tag(sync=True)
    only_skipping = traitlets.Bool(False).tag(sync=True)
    selected = traitlets.Dict(allow_none=True, default_value=None).tag(sync=True)

    def __init__(self, cost: QueryCost, **kwargs: Any) -> None:
        self.cost = cost
        self._map = file_map(cost)
        super().__init__(summary=cost.summary(), **kwargs)
        self._show_page()
        self.observe(self._show_page, names=["limit", "only_skipping"])

    def _show_page(self, _change: Any = None) -> None:
        chosen = [f for f in self._map if f["skipped"]] if self.only_skipping else self._map
        self.matching = len(chosen)
        self.files = chosen[: max(self.limit, 1)]

    def _repr_html_(self) -> str:
        return render_html(self.cost)


class StorageView(StaticHTML, W.VBox):  # type: ignore[misc]
    """The storage report (its static HTML) with the chart of its parts below."""

    def __init__(self, storage: Storage, **kwargs: Any) -> None:
        self.storage = storage
        self.chart = W.Output()
        self.chart.append_display_data(storage_chart(storage))
        super().__init__([W.HTML(render_html(storage)), self.chart], **kwargs)
        self.add_class("ib-storage-view")

    def _repr_html_(self) -> str:
        return render_html(self.storage)


__all__ = ["PAGE", "CostWidget", "StorageView"]
