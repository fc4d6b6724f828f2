"""The snapshot graph as a live widget: a git-like SVG of snapshots with branch and tag labels.

Python lays the graph out (``icebook.display.lineage_render.layout``) and sends plain JSON;
``widgets/lineage.js`` draws it. Clicking a snapshot sets ``selected_snapshot_id``, which other views
observe (the workbench re-roots its tree there).
"""

from __future__ import annotations

from typing import Any

import anywidget
import traitlets

from icebook.analysis.history.lineage import Lineage, lineage
from icebook.display._base import StaticHTML, TableLike
from icebook.display.lineage_render import current_snapshot_id, layout
from icebook.display.registry import render_html
from icebook.display.tree import SNAPSHOT_ID_JSON
from icebook.widgets import STYLESHEET, bundle


class LineageWidget(StaticHTML, anywidget.AnyWidget):  # type: ignore[misc]
    """Snapshots as a git-like graph; ``selected_snapshot_id`` follows clicks."""

    _esm = bundle("lineage.js")
    _css = STYLESHEET

    graph = traitlets.List(trait=traitlets.Dict()).tag(sync=True)
    lanes = traitlets.Int(1).tag(sync=True)
    current = traitlets.Unicode("").tag(sync=True)
    selected_snapshot_id = traitlets.Int(allow_none=True, default_value=None).tag(sync=True, **SNAPSHOT_ID_JSON)

    def __init__(self, source: TableLike | Lineage, **kwargs: Any) -> None:
        """``source``: a table, or the ``Lineage`` of one (``t.lineage()``)."""
        self.lineage = source if isinstance(source, Lineage) else lineage(source.metadata)
        rows, lanes = layout(self.lineage)
        current = current_snapshot_id(self.lineage)
        super().__init__(graph=rows, lanes=lanes, current="" if current is None else str(current), **kwargs)

    def _repr_html_(self) -> str:
        return render_html(self.lineage)


def lineage_widget(table: TableLike) -> LineageWidget:
    return LineageWidget(table)
