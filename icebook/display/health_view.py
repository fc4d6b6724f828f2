"""The health report as a live view: the findings, then one tab per section, with a chart of data files per
partition against the target size. Its static fallback is the report's HTML (``health_render``)."""

from __future__ import annotations

from typing import Any

import altair as alt
import ipywidgets as W
import pandas as pd

from icebook.analysis.maintenance.health import HealthReport
from icebook.display._base import StaticHTML, frame
from icebook.display.charts import VegaChart
from icebook.display.health_render import header_html, sections_html
from icebook.display.registry import render_html

SIZE_CLASSES = ["small", "in range", "large"]
MAX_PARTITIONS = 60
"""Partitions the size chart shows: those with the most small files."""
SIZE_COLORS = alt.Scale(domain=SIZE_CLASSES, range=["#fb8500", "#2da44e", "#8250df"])


def partition_sizes(report: HealthReport, limit: int = MAX_PARTITIONS) -> pd.DataFrame:
    """Data files per partition and size class (the partitions with the most small files first)."""
    parts = sorted(report.files.partitions, key=lambda p: (-p.small_files, p.partition))[:limit]
    rows = []
    for p in parts:
        in_range = p.data_files - p.small_files - p.large_files
        for size_class, n in zip(SIZE_CLASSES, (p.small_files, in_range, p.large_files), strict=True):
            if n:
                rows.append({"partition": p.partition, "size": size_class, "files": n})
    return pd.DataFrame(rows, columns=["partition", "size", "files"])


def size_chart(report: HealthReport) -> VegaChart:
    data = partition_sizes(report)
    chart = (
        alt.Chart(data, title="Data files per partition, by size against the target")
        .mark_bar()
        .encode(
            y=alt.Y("partition:N", sort="-x", title=None),
            x=alt.X("sum(files):Q", title="data files"),
            color=alt.Color("size:N", scale=SIZE_COLORS, title="size"),
            tooltip=["partition:N", "size:N", "files:Q"],
        )
        .properties(width=420, height=alt.Step(16))
    )
    return VegaChart(chart, title="partition sizes")


class HealthView(StaticHTML, W.VBox):  # type: ignore[misc]
    """Header and findings on top; tabs for files and deletes (with a chart), manifests, history and
    refs, orphans."""

    def __init__(self, report: HealthReport, **kwargs: Any) -> None:
        self.report = report
        sections = sections_html(report)
        self.header = W.HTML(frame(header_html(report) + sections.pop("Findings"), cls="ib-health"))
        chart = W.Output()
        if report.files.partitions:
            chart.append_display_data(size_chart(report))
        pages: list[W.Widget] = []
        for title, body in sections.items():
            # The header carries the stylesheet; the tabs only need the root class.
            page = W.HTML(f'<div class="icebook ib-health">{body}</div>')
            pages.append(W.VBox([chart, page]) if title == "Files & deletes" else page)
        self.tabs = W.Tab(children=pages)
        for i, title in enumerate(sections):
            self.tabs.set_title(i, title)
        super().__init__([self.header, self.tabs], **kwargs)
        self.add_class("ib-health-view")

    def _repr_html_(self) -> str:
        return render_html(self.report)


__all__ = ["HealthView", "partition_sizes", "size_chart"]
