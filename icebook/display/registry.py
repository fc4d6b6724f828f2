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
    return MappingProxyType(_REGISTERED)


def render_text(obj: Any) -> str:
    """Plain text of any result: registered types, DataFrames, strings, else ``str``."""
    from icebook.display.frames import frame_text

    entry = _renderers(obj)
    if entry is None and not _BUILTINS:
        _register_builtins()
        entry = _renderers(obj)
    if entry is not None:
        return entry.text(obj)
    if obj is None:
        return ""
    import pandas as pd  # not before: a registered result is shown without it

    if isinstance(obj, pd.DataFrame):
        return frame_text(obj)
    return str(obj)


def render_html(obj: Any) -> str:
    """Static HTML of any result, escaped: registered types, DataFrames (one page), else preformatted text."""
    from icebook.display._base import esc, frame, frame_table_html

    entry = _renderers(obj)
    if entry is None and not _BUILTINS:
        _register_builtins()
        entry = _renderers(obj)
    if entry is not None:
        return entry.html(obj)
    import pandas as pd  # not before: a registered result is shown without it

    if isinstance(obj, pd.DataFrame):
        return frame(frame_table_html(obj), cls="ib-result")
    return frame(f'<pre class="ib-explain">{esc(render_text(obj))}</pre>')


def render_widget(obj: Any) -> Any | None:
    """The live view of ``obj``, or None when its type has none."""
    entry = _renderers(obj)
    if entry is None and not _BUILTINS:
        _register_builtins()
        entry = _renderers(obj)
    if entry is None or entry.widget is None:
        return None
    module, _, path = entry.widget.partition(":")
    factory: Any = importlib.import_module(module)
    for name in path.split("."):
        factory = getattr(factory, name)
    return factory(obj)


def _register_builtins() -> None:
    """icebook's own result types, registered on the first lookup: importing the registry (as opening a
    table does, to register ``Table``) then costs nothing, and each analysis loads only when shown."""
    global _BUILTINS
    if _BUILTINS:
        return
    _BUILTINS = True
    from icebook.analysis.history.diff import SnapshotDiff
    from icebook.analysis.history.evolution import Evolution, PredicateExplanation
    from icebook.analysis.history.lineage import Lineage
    from icebook.analysis.history.timelapse import Timelapse
    from icebook.analysis.maintenance.before_after import MaintenanceDiff
    from icebook.analysis.maintenance.compaction import CompactionPreview
    from icebook.analysis.maintenance.expire import ExpirePreview
    from icebook.analysis.maintenance.health import HealthReport
    from icebook.analysis.maintenance.lake_health import LakeHealth
    from icebook.analysis.maintenance.orphans import OrphanReport
    from icebook.analysis.maintenance.rewrite_previews import DeleteRewritePreview, ManifestRewritePreview
    from icebook.analysis.scan.planner import ScanPlan
    from icebook.display import (
        diff_render,
        evolution_render,
        health_render,
        lake_health_render,
        lineage_render,
        maintenance_render,
        summary,
        timelapse_render,
        tree_render,
    )
    from icebook.spec.snapshots import Snapshot

    register(SnapshotDiff, text=diff_render.diff_text, html=diff_render.diff_html)
    register(
        Lineage,
        text=lineage_render.lineage_text,
        html=lineage_render.lineage_html,
        widget="icebook.display.lineage_view:LineageWidget",
    )
    register(
        Evolution,
        text=evolution_render.evolution_text,
        html=evolution_render.evolution_html,
        widget="icebook.display.evolution_view:EvolutionView",
    )
    register(PredicateExplanation, text=evolution_render.predicate_text, html=evolution_render.predicate_html)
    register(ScanPlan, text=summary.plan_text, html=summary.plan_html)
    register(Snapshot, text=summary.snapshot_text, html=summary.snapshot_html)
    register(
        tree_render.MetadataTree,
        text=tree_render.metadata_tree_text,
        html=tree_render.metadata_tree_html,
        widget="icebook.display.tree:TreeWidget.of",
    )
    register(
        HealthReport,
        text=health_render.health_text,
        html=health_render.health_html,
        widget="icebook.display.health_view:HealthView",
    )
    register(LakeHealth, text=lake_health_render.lake_health_text, html=lake_health_render.lake_health_html)
    register(ExpirePreview, text=maintenance_render.expire_text, html=maintenance_render.expire_html)
    register(OrphanReport, text=maintenance_render.orphans_text, html=maintenance_render.orphans_html)
    register(CompactionPreview, text=maintenance_render.compaction_text, html=maintenance_render.compaction_html)
    register(
        ManifestRewritePreview,
        text=maintenance_render.manifest_rewrite_text,
        html=maintenance_render.manifest_rewrite_html,
    )
    register(
        DeleteRewritePreview, text=maintenance_render.delete_rewrite_text, html=maintenance_render.delete_rewrite_html
    )
    register(
        MaintenanceDiff, text=maintenance_render.maintenance_diff_text, html=maintenance_render.maintenance_diff_html
    )
    register(
        Timelapse,
        text=timelapse_render.timelapse_text,
        html=timelapse_render.timelapse_html,
        widget="icebook.display.timelapse_view:TimelapseView",
    )
