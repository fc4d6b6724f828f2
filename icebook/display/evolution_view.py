"""Schema, partition spec and sort order changes as one timeline, with the files each spec holds."""

from __future__ import annotations

from typing import Any

import ipywidgets as W

from icebook.analysis.evolution import Epoch, Evolution
from icebook.analysis.evolution import evolution as analysis_evolution
from icebook.display._base import StaticHTML, TableLike, esc, frame, human_count, when
from icebook.display.diff_view import CHANGE_CLASS

KIND_CLASS = {"schema": "ib-ev-schema", "partition spec": "ib-ev-spec", "sort order": "ib-ev-sort"}


def compute_evolution(table: TableLike) -> Evolution:
    method = getattr(table, "evolution", None)
    if callable(method):
        result: Evolution = method()
        return result
    return analysis_evolution(table.metadata, table.store)


def _epoch_time(e: Epoch) -> int:
    for value in (e.became_current_ms, e.first_snapshot_ms):
        if value is not None:
            return value
    return -1


def _epoch_html(e: Epoch) -> str:
    kind_cls = KIND_CLASS.get(e.kind, "")
    changes = "".join(f'<li class="{CHANGE_CLASS.get(c.kind, "ib-changed")}">{esc(c)}</li>' for c in e.changes)
    first = (
        f"first snapshot {esc(e.first_snapshot_id)} at {esc(when(e.first_snapshot_ms))}"
        if e.first_snapshot_id is not None
        else "no snapshot written with it"
    )
    current = '<span class="ib-badge ib-current">current</span>' if e.is_current else ""
    became = when(e.became_current_ms) if e.became_current_ms is not None else "unknown time"
    return (
        f'<div class="ib-ev-item {kind_cls}"><div class="ib-ev-dot"></div>'
        f'<div class="ib-ev-head"><span class="ib-ev-kind">{esc(e.kind)} {esc(e.id)}</span>{current} '
        f'<span class="ib-muted">became current {esc(became)} · {first}</span></div>'
        f'<div class="ib-ev-def"><code>{esc(e.definition)}</code></div>'
        f"{f'<ul class=ib-ev-changes>{changes}</ul>' if changes else ''}</div>"
    )


def _files_per_spec_html(ev: Evolution) -> str:
    df = ev.files_per_spec
    if not len(df):
        return '<div class="ib-muted">No snapshot yet.</div>'
    last = df[df["snapshot_id"] == df["snapshot_id"].iloc[-1]]
    rows = "".join(
        f"<tr><td>spec {esc(r.spec_id)}</td><td>{esc(human_count(r.data_files))}</td>"
        f"<td>{esc(human_count(r.delete_files))}</td><td>{esc(human_count(r.data_records))}</td>"
        f"<td>{esc(human_count(r.data_manifests))} + {esc(human_count(r.delete_manifests))}</td></tr>"
        for r in last.itertuples(index=False)
    )
    head = "".join(
        f"<th>{h}</th>" for h in ("spec", "data files", "delete files", "records", "manifests (data + delete)")
    )
    return (
        f'<div class="ib-h">Live files per partition spec (snapshot {esc(last["snapshot_id"].iloc[0])})</div>'
        f'<table class="ib-grid"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
    )


def evolution_html(ev: Evolution) -> str:
    """The timeline (oldest first) of every schema, spec and sort order, and files per spec."""
    epochs = sorted((*ev.schemas, *ev.specs, *ev.sort_orders), key=lambda e: (_epoch_time(e), e.kind, e.id))
    items = "".join(_epoch_html(e) for e in epochs)
    props = ""
    if len(ev.property_history):
        rows = "".join(
            f'<tr class="{CHANGE_CLASS.get(str(r.kind), "ib-changed")}"><td>{esc(r.timestamp)}</td><td>{esc(r.kind)}</td>'
            f"<td><code>{esc(r.name)}</code></td><td>{esc(r.before or '')}</td><td>{esc(r.after or '')}</td></tr>"
            for r in ev.property_history.itertuples(index=False)
        )
        head = "".join(f"<th>{h}</th>" for h in ("at", "change", "property", "before", "after"))
        props = (
            f'<div class="ib-h">Property changes</div><div class="ib-scroll"><table class="ib-grid">'
            f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>"
        )
    notes = "".join(f'<div class="ib-muted">note: {esc(n)}</div>' for n in ev.notes)
    legend = (
        '<div class="ib-ev-legend"><span class="ib-ev-schema">● schema</span> <span class="ib-ev-spec">● partition spec'
        '</span> <span class="ib-ev-sort">● sort order</span></div>'
    )
    body = (
        f'<div class="ib-h">Evolution timeline</div>{legend}<div class="ib-ev-timeline">{items}</div>'
        f"{_files_per_spec_html(ev)}{props}{notes}"
    )
    return frame(body, cls="ib-evolution")


class EvolutionView(StaticHTML, W.VBox):  # type: ignore[misc]
    """The evolution timeline, plus (when altair is at hand) a chart of files per spec over time."""

    def __init__(self, table: TableLike, *, chart: bool = True, **kwargs: Any) -> None:
        self._table = table
        self.evolution = compute_evolution(table)
        self.html = W.HTML(evolution_html(self.evolution))
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
        return evolution_html(self.evolution)
