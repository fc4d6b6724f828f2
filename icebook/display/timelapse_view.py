"""A time-lapse as a live widget: a scrubber over the frames (slider, step, play) driving the partition
heatmap, the growth chart, the schema and partition spec in force and the commit's diff.

Python lays everything out once (``timelapse_render.timelapse_payload``, plain JSON) and
``widgets/timelapse.js`` draws the frame at ``position``. Clicking "open in workbench" sets
``selected_snapshot_id``; the view then opens the table's workbench at that snapshot below the scrubber.
"""

from __future__ import annotations

from typing import Any

import anywidget
import ipywidgets as W
import traitlets

from icebook.analysis.history.timelapse import Timelapse
from icebook.display._base import StaticHTML
from icebook.display.registry import render_html
from icebook.display.timelapse_render import METRICS, timelapse_payload
from icebook.display.tree import SNAPSHOT_ID_JSON
from icebook.widgets import STYLESHEET, bundle


class TimelapseWidget(StaticHTML, anywidget.AnyWidget):  # type: ignore[misc]
    """The scrubber and the views that follow it; ``selected_snapshot_id`` is set by "open in workbench"."""

    _esm = bundle("timelapse.js")
    _css = STYLESHEET

    payload = traitlets.Dict().tag(sync=True)
    position = traitlets.Int(0).tag(sync=True)
    metric = traitlets.Enum(METRICS, default_value="records").tag(sync=True)
    interval_ms = traitlets.Int(600).tag(sync=True)
    selected_snapshot_id = traitlets.Int(allow_none=True, default_value=None).tag(sync=True, **SNAPSHOT_ID_JSON)

    def __init__(self, lapse: Timelapse, **kwargs: Any) -> None:
        self.lapse = lapse
        super().__init__(payload=timelapse_payload(lapse), **kwargs)

    def _repr_html_(self) -> str:
        return render_html(self.lapse)


class TimelapseView(StaticHTML, W.VBox):  # type: ignore[misc]
    """The scrubber, with the table's workbench opened below it at a chosen frame's snapshot."""

    def __init__(self, lapse: Timelapse, **kwargs: Any) -> None:
        self.lapse = lapse
        self.scrubber = TimelapseWidget(lapse)
        self.workbench: Any = None
        self._below = W.VBox([])
        self.scrubber.observe(self._open, names=["selected_snapshot_id"])
        super().__init__([self.scrubber, self._below], **kwargs)
        self.add_class("ib-timelapse-view")

    def _open(self, change: dict[str, Any]) -> None:
        snapshot_id = change["new"]
        if snapshot_id is None or self.lapse.source is None:
            return
        if self.workbench is None:
            from icebook.display.workbench import Workbench

            self.workbench = Workbench(self.lapse.source)
            self._below.children = [self.workbench]
        self.workbench.lineage.selected_snapshot_id = snapshot_id

    def _repr_html_(self) -> str:
        return render_html(self.lapse)


__all__ = ["TimelapseView", "TimelapseWidget"]
