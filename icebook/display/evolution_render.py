"""Schema, partition spec and sort order evolution as text and as a static timeline; a predicate's
projection into each partition spec (hidden partitioning) as text and as a table."""

from __future__ import annotations

from icebook.analysis.history.evolution import Epoch, Evolution, PredicateExplanation
from icebook.analysis.history.field_changes import EpochKind
from icebook.display._base import change_class, esc, frame, grid, human_count
from icebook.text import utc_text

KIND_CLASS = {
    EpochKind.SCHEMA: "ib-ev-schema",
    EpochKind.PARTITION_SPEC: "ib-ev-spec",
    EpochKind.SORT_ORDER: "ib-ev-sort",
}


def _became(e: Epoch) -> str:
    return utc_text(e.became_current_ms) if e.became_current_ms is not None else "unknown time"


def _epoch_line(e: Epoch) -> str:
    current = " (current)" if e.is_current else ""
    first = f", first snapshot {e.first_snapshot_id}" if e.first_snapshot_id is not None else ""
    return f"{e.id}{current}: {e.definition} [became current {_became(e)}{first}]"


def evolution_text(ev: Evolution) -> str:
    """Each schema, spec and sort order with what changed from the one before, then notes."""
    lines = ["Evolution"]
    for title, epochs in (("schemas", ev.schemas), ("partition specs", ev.specs), ("sort orders", ev.sort_orders)):
        lines.append(f"  {title}:")
        for e in epochs:
            lines.append(f"    {_epoch_line(e)}")
            lines.extend(f"      {c}" for c in e.changes)
    if len(ev.property_history):
        lines.append(f"  property changes: {len(ev.property_history)}")
    lines.extend(f"  note: {n}" for n in ev.notes)
    return "\n".join(lines)


def _epoch_time(e: Epoch) -> int:
    for value in (e.became_current_ms, e.first_snapshot_ms):
        if value is not None:
            return value
    return -1


def _epoch_html(e: Epoch) -> str:
    kind_cls = KIND_CLASS.get(e.kind, "")
    changes = "".join(f'<li class="{change_class(c.kind)}">{esc(c)}</li>' for c in e.changes)
    first = (
        f"first snapshot {esc(e.first_snapshot_id)} at {esc(utc_text(e.first_snapshot_ms))}"
        if e.first_snapshot_id is not None
        else "no snapshot written with it"
    )
    current = '<span class="ib-badge ib-current">current</span>' if e.is_current else ""
    return (
        f'<div class="ib-ev-item {kind_cls}"><div class="ib-ev-dot"></div>'
        f'<div class="ib-ev-head"><span class="ib-ev-kind">{esc(e.kind)} {esc(e.id)}</span>{current} '
        f'<span class="ib-muted">became current {esc(_became(e))} · {first}</span></div>'
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
    return (
        f'<div class="ib-h">Live files per partition spec (snapshot {esc(last["snapshot_id"].iloc[0])})</div>'
        + grid(("spec", "data files", "delete files", "records", "manifests (data + delete)"), rows)
    )


def evolution_html(ev: Evolution) -> str:
    """The timeline (oldest first) of every schema, spec and sort order, files per spec, property changes."""
    epochs = sorted((*ev.schemas, *ev.specs, *ev.sort_orders), key=lambda e: (_epoch_time(e), e.kind, e.id))
    items = "".join(_epoch_html(e) for e in epochs)
    props = ""
    if len(ev.property_history):
        rows = "".join(
            f'<tr class="{change_class(str(r.kind))}"><td>{esc(r.timestamp)}</td><td>{esc(r.kind)}</td>'
            f"<td><code>{esc(r.name)}</code></td><td>{esc(r.before or '')}</td><td>{esc(r.after or '')}</td></tr>"
            for r in ev.property_history.itertuples(index=False)
        )
        changes = grid(("at", "change", "property", "before", "after"), rows)
        props = f'<div class="ib-h">Property changes</div><div class="ib-scroll">{changes}</div>'
    notes = "".join(f'<div class="ib-muted">note: {esc(n)}</div>' for n in ev.notes)
    counts = (
        f'<div class="ib-muted">Schemas: {len(ev.schemas)} · Partition specs: {len(ev.specs)} · '
        f"Sort orders: {len(ev.sort_orders)}</div>"
    )
    legend = (
        '<div class="ib-ev-legend"><span class="ib-ev-schema">● schema</span> <span class="ib-ev-spec">● partition spec'
        '</span> <span class="ib-ev-sort">● sort order</span></div>'
    )
    body = (
        f'<div class="ib-h">Evolution timeline</div>{counts}{legend}<div class="ib-ev-timeline">{items}</div>'
        f"{_files_per_spec_html(ev)}{props}{notes}"
    )
    return frame(body, cls="ib-evolution")


def _predicate(ex: PredicateExplanation) -> str:
    if ex.op in ("is_null", "not_null"):
        return f"{ex.column} {'IS NULL' if ex.op == 'is_null' else 'IS NOT NULL'}"
    return f"{ex.column} {ex.op} {ex.value!r}"


def predicate_text(ex: PredicateExplanation) -> str:
    lines = [f"{_predicate(ex)} becomes:"]
    for p in ex.projections:
        target = p.predicate if p.predicate is not None else "no partition predicate"
        lines.append(f"  spec {p.spec_id}: {target}  ({p.reason})")
    return "\n".join(lines)


def predicate_html(ex: PredicateExplanation) -> str:
    rows = "".join(
        f'<tr class="{"" if p.predicate else "ib-muted"}"><td>{esc(p.spec_id)}</td>'
        f"<td>{esc(p.partition_field or '')}</td><td>{esc(p.transform or '')}</td>"
        f"<td><code>{esc(p.predicate or '(none)')}</code></td><td>{esc(p.reason)}</td></tr>"
        for p in ex.projections
    )
    body = f'<div class="ib-h"><code>{esc(_predicate(ex))}</code> becomes</div>' + grid(
        ("spec", "partition field", "transform", "partition predicate", "why"), [rows]
    )
    return frame(body, cls="ib-predicate")
