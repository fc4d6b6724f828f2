"""The one renderer registry: how each result icebook gives is shown as text, as static HTML and live.

A result type is registered once with its renderers (dispatch on type, as ``functools.singledispatch``
does, so subclasses inherit them):

* ``text``: plain text for the terminal and the ``icebook`` command line;
* ``html``: static HTML for saved notebooks (GitHub, nbviewer), every table string escaped;
* ``widget``: where one exists, the live anywidget/ipywidgets view for a running kernel, named as
  ``"module:callable"`` so that the command line never imports ipywidgets, anywidget or altair.

The command line prints ``render_text``; IPython shows results through the formatters that
``icebook.display.formatters`` registers for every type here (text/plain, text/html, and the widget);
every ``_repr_html_`` of icebook calls ``render_html``. Results stay plain data: nothing here is stored
on them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import singledispatch
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class Renderers:
    """How one result type is shown."""

    text: Callable[[Any], str]
    """Plain text (terminal, command line, IPython's text/plain)."""
    html: Callable[[Any], str]
    """Static, escaped HTML (saved notebooks)."""
    widget: str | None = None
    """``"module:callable"`` building the live view from the result; None when there is none."""


_REGISTERED: dict[type, Renderers] = {}
_BUILTINS = False


@singledispatch
def _renderers(obj: Any) -> Renderers | None:
    return None


def register(cls: type, *, text: Callable[[Any], str], html: Callable[[Any], str], widget: str | None = None) -> None:
    """Register (or replace) how instances of ``cls`` and its subclasses are shown."""
    entry = Renderers(text=text, html=html, widget=widget)
    _REGISTERED[cls] = entry
    _renderers.register(cls, lambda _obj: entry)


def registered() -> Mapping[type, Renderers]:
    """Every registered type and its renderers, in registration order."""
    _register_builtins()
    return loaded()


def loaded() -> Mapping[type, Renderers]:
    """The types registered so far (without the built-ins not imported yet: ``not_loaded``)."""
    return MappingProxyType(_REGISTERED)


def _lookup(obj: Any) -> Renderers | None:
    """The renderers of ``obj``'s type; icebook's own result types are imported on the first miss."""
    entry = _renderers(obj)
    if entry is None and not _BUILTINS:
        _register_builtins()
        entry = _renderers(obj)
    return entry


def render_text(obj: Any) -> str:
    """Plain text of any result: registered types, DataFrames, strings, else ``str``."""
    entry = _lookup(obj)
    if entry is not None:
        return entry.text(obj)
    if obj is None:
        return ""
    import pandas as pd  # not before: a registered result is shown without it

    if isinstance(obj, pd.DataFrame):
        from icebook.display.frames import frame_text

        return frame_text(obj)
    return str(obj)


def render_html(obj: Any) -> str:
    """Static HTML of any result, escaped: registered types, DataFrames (one page), else preformatted text."""
    from icebook.display._base import esc, frame, frame_table_html

    entry = _lookup(obj)
    if entry is not None:
        return entry.html(obj)
    import pandas as pd  # not before: a registered result is shown without it

    if isinstance(obj, pd.DataFrame):
        return frame(frame_table_html(obj), cls="ib-result")
    return frame(f'<pre class="ib-explain">{esc(render_text(obj))}</pre>')


def render_widget(obj: Any) -> Any | None:
    """The live view of ``obj``, or None when its type has none."""
    entry = _lookup(obj)
    if entry is None or entry.widget is None:
        return None
    module, _, path = entry.widget.partition(":")
    factory: Any = importlib.import_module(module)
    for name in path.split("."):
        factory = getattr(factory, name)
    return factory(obj)


_BUILTIN: tuple[tuple[str, str, str, str, str | None], ...] = (
    # (module of the type, the type, module of its renderers, their stem, widget): the renderers of a
    # type are ``<stem>_text`` and ``<stem>_html``
    ("icebook.analysis.history.diff", "SnapshotDiff", "icebook.display.diff_render", "diff", None),
    (
        "icebook.analysis.history.lineage",
        "Lineage",
        "icebook.display.lineage_render",
        "lineage",
        "icebook.display.lineage_view:LineageWidget",
    ),
    (
        "icebook.analysis.history.evolution",
        "Evolution",
        "icebook.display.evolution_render",
        "evolution",
        "icebook.display.evolution_view:EvolutionView",
    ),
    (
        "icebook.analysis.history.evolution",
        "PredicateExplanation",
        "icebook.display.evolution_render",
        "predicate",
        None,
    ),
    ("icebook.analysis.scan.planner", "ScanPlan", "icebook.display.summary_render", "plan", None),
    (
        "icebook.analysis.cost.query_cost",
        "QueryCost",
        "icebook.display.cost_render",
        "cost",
        "icebook.display.cost_view:CostWidget",
    ),
    (
        "icebook.analysis.cost.storage",
        "Storage",
        "icebook.display.cost_render",
        "storage",
        "icebook.display.cost_view:StorageView",
    ),
    ("icebook.analysis.cost.compare_plans", "PlanComparison", "icebook.display.cost_render", "plans", None),
    ("icebook.spec.snapshots", "Snapshot", "icebook.display.summary_render", "snapshot", None),
    (
        "icebook.display.tree_render",
        "MetadataTree",
        "icebook.display.tree_render",
        "metadata_tree",
        "icebook.display.tree:TreeWidget.of",
    ),
    (
        "icebook.analysis.maintenance.health",
        "HealthReport",
        "icebook.display.health_render",
        "health",
        "icebook.display.health_view:HealthView",
    ),
    (
        "icebook.analysis.maintenance.lake_health",
        "LakeHealth",
        "icebook.display.lake_health_render",
        "lake_health",
        None,
    ),
    *(
        (module, name, "icebook.display.maintenance_render", stem, None)
        for module, name, stem in (
            ("icebook.analysis.maintenance.expire", "ExpirePreview", "expire"),
            ("icebook.analysis.maintenance.orphans", "OrphanReport", "orphans"),
            ("icebook.analysis.maintenance.compaction", "CompactionPreview", "compaction"),
            ("icebook.analysis.maintenance.rewrite_previews", "ManifestRewritePreview", "manifest_rewrite"),
            ("icebook.analysis.maintenance.rewrite_previews", "DeleteRewritePreview", "delete_rewrite"),
            ("icebook.analysis.maintenance.before_after", "MaintenanceDiff", "maintenance_diff"),
            ("icebook.analysis.maintenance.why_kept", "WhyKept", "why"),
        )
    ),
    *(
        (module, name, "icebook.display.v3_render", stem, None)
        for module, name, stem in (
            ("icebook.analysis.v3.inspection", "V3Inspection", "v3"),
            ("icebook.analysis.v3.deletion_vectors", "DeletionVectorMap", "dv"),
            ("icebook.analysis.v3.row_lineage", "RowLineage", "lineage"),
            ("icebook.analysis.v3.default_provenance", "Defaults", "defaults"),
            ("icebook.analysis.v3.variants", "VariantShredding", "variants"),
            ("icebook.analysis.v3.geo", "GeoBounds", "geo"),
        )
    ),
    (
        "icebook.analysis.history.timelapse",
        "Timelapse",
        "icebook.display.timelapse_render",
        "timelapse",
        "icebook.display.timelapse_view:TimelapseView",
    ),
)
"""icebook's own result types, named rather than imported: importing the registry (as opening a table does,
to register ``Table``) loads no analysis, and IPython is taught them by name (``not_loaded``)."""


def not_loaded() -> tuple[tuple[str, str, bool], ...]:
    """(module, type name, has a widget) of the built-in types not registered yet."""
    return () if _BUILTINS else tuple((module, name, widget is not None) for module, name, *_, widget in _BUILTIN)


def _register_builtins() -> None:
    """Register the built-in types, importing them and their renderers: on the first lookup that misses."""
    global _BUILTINS
    if _BUILTINS:
        return
    for module, name, renderers, stem, widget in _BUILTIN:
        cls = getattr(importlib.import_module(module), name)
        views = importlib.import_module(renderers)
        register(cls, text=getattr(views, f"{stem}_text"), html=getattr(views, f"{stem}_html"), widget=widget)
    _BUILTINS = True
