"""The notebook surface: one renderer registry (text, static HTML, live widget for every result), the
static HTML renderers (always escaped), altair charts and anywidget views.

Entry points (the Table delegates to these):

* ``render_text(obj)``, ``render_html(obj)``, ``render_widget(obj)``: how any result is shown
  (``icebook.display.registry``); ``register_formatters()`` teaches IPython to use them;
* ``table_html(table)``, ``snapshot_html(snapshot, metadata=None)``, ``tree_html(table, at=None)``,
  ``tree_text(table, at=None)``, ``diff_html(diff)``, ``evolution_html(evolution)``, ``lineage_html(lineage)``;
* ``tree_widget(table, at=None)`` -> ``TreeWidget``; ``LineageWidget(table)``; ``DiffView(table)``;
  ``EvolutionView(table)``; ``QueryPanel(table)``; ``CostWidget(t.query_cost(...))``;
* ``snapshot_timeline_chart(table)``, ``file_size_histogram(table, at)``, ``partition_heatmap(table, at)``,
  ``storage_chart(t.storage())``;
* ``explore(table)`` -> ``Workbench``: everything in tabs.

Submodules are imported lazily so ``import icebook`` stays light (ipywidgets, anywidget, altair load
on first use).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "render_text": "icebook.display.registry",
    "render_html": "icebook.display.registry",
    "render_widget": "icebook.display.registry",
    "register": "icebook.display.registry",
    "register_formatters": "icebook.display.formatters",
    "table_html": "icebook.display.summary_render",
    "snapshot_html": "icebook.display.summary_render",
    "MetadataTree": "icebook.display.tree_render",
    "tree_html": "icebook.display.tree_render",
    "tree_text": "icebook.display.tree_render",
    "tree_widget": "icebook.display.tree",
    "TreeWidget": "icebook.display.tree",
    "LineageWidget": "icebook.display.lineage_view",
    "lineage_widget": "icebook.display.lineage_view",
    "lineage_html": "icebook.display.lineage_render",
    "DiffView": "icebook.display.diff_view",
    "diff_html": "icebook.display.diff_render",
    "EvolutionView": "icebook.display.evolution_view",
    "evolution_html": "icebook.display.evolution_render",
    "QueryPanel": "icebook.display.query_panel",
    "CostWidget": "icebook.display.cost_view",
    "query_panel": "icebook.display.query_panel",
    "VegaChart": "icebook.display.charts",
    "snapshot_timeline_chart": "icebook.display.charts",
    "file_size_histogram": "icebook.display.charts",
    "partition_heatmap": "icebook.display.charts",
    "files_per_spec_chart": "icebook.display.charts",
    "storage_chart": "icebook.display.charts",
    "explore": "icebook.display.workbench",
    "Workbench": "icebook.display.workbench",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'icebook.display' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
