"""The evolution timeline as a live view, with a chart of the files each partition spec holds over time."""

from __future__ import annotations

from typing import Any

import ipywidgets as W

from icebook.analysis.history.evolution import Evolution
from icebook.analysis.history.evolution import evolution as analysis_evolution
from icebook.display._base import StaticHTML, TableLike
from icebook.display.registry import render_html


def compute_evolution(table: TableLike) -> Evolution:
    method = getattr(table, "evolution", None)
    if callable(method):
        result: Evolution = method()
        return result
    return analysis_evolution(table)


class EvolutionView(StaticHTML, W.VBox):  # type: ignore[misc]
    """The evolution timeline, plus (when there are snapshots) a chart of files per spec over time."""

    def __init__(self, source: TableLike | Evolution, *, chart: bool = True, **kwargs: Any) -> None:
        """``source``: a table, or its ``Evolution`` (``t.evolution()``)."""
        self.evolution = source if isinstance(source, Evolution) else compute_evolution(source)
        self.html = W.HTML(render_html(self.evolution))
        children: list[W.Widget] = [self.html]
        if chart and len(self.evolution.files_per_spec):
            from icebook.display.charts import files_per_spec_chart

            out = W.Output()
            with out:
                from IPython.display import display

                display(files_per_spec_chart(self.evolution))
            children.append(out)
        super().__init__(children, **kwargs)
        self.add_class("ib-evolution-view")

    def _repr_html_(self) -> str:
        return render_html(self.evolution)
