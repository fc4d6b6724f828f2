"""Summaries of a table, of one snapshot and of a scan plan, as text and as static HTML."""

from __future__ import annotations

from typing import TYPE_CHECKING

from icebook.display._base import TableLike, badge, esc, frame, grid, human_count, kv_table
from icebook.spec.defaults import default_text
from icebook.spec.metadata import TableMetadata, main_first
from icebook.spec.snapshots import Branch, Snapshot
from icebook.text import byte_size, utc_text

if TYPE_CHECKING:
    from icebook.analysis.scan.planner import ScanPlan


def _refs_html(metadata: TableMetadata, snapshot_id: int | None = None) -> str:
    out = []
    for name, ref in sorted(metadata.refs.items(), key=lambda kv: main_first(kv[0])):
        if snapshot_id is not None and ref.snapshot_id != snapshot_id:
            continue
        cls = "ib-branch" if isinstance(ref, Branch) else "ib-tag"
        label = name if snapshot_id is not None else f"{name} → {ref.snapshot_id}"
        out.append(badge(label, cls))
    return "".join(out)


def table_html(table: TableLike) -> str:
    """A card: location, format, current snapshot, refs, schema, partition spec, sort order, properties."""
    md = table.metadata
    current = md.current_snapshot()

    def metric(key: str) -> int | None:
        return current.metric(key) if current else None

    schema = md.current_schema()
    columns = "".join(
        f"<tr><td>{esc(f.field_id)}</td><td><code>{esc(f.name)}</code></td><td>{esc(f.type)}</td>"
        f'<td>{"required" if f.required else "optional"}</td><td class="ib-muted">{esc(f.doc or "")}</td>'
        f"<td><code>{esc(default_text(f))}</code></td></tr>"
        for f in schema.columns
    )
    props = "".join(
        f"<tr><td><code>{esc(k)}</code></td><td>{esc(v)}</td></tr>" for k, v in sorted(md.properties.items())[:30]
    )
    more_props = len(md.properties) - 30
    facts = [
        ("format", f"v{md.format_version}"),
        ("snapshots", human_count(len(md.snapshots))),
        ("current snapshot", "none" if current is None else f"{current.snapshot_id} ({current.operation})"),
        ("records", human_count(metric("total-records"))),
        ("data files", human_count(metric("total-data-files"))),
        ("delete files", human_count(metric("total-delete-files"))),
        ("size", byte_size(metric("total-files-size"))),
        ("updated", utc_text(md.last_updated_ms)),
    ]
    fact_html = "".join(
        f'<div class="ib-card"><div class="ib-card-label">{esc(k)}</div>{esc(v)}</div>' for k, v in facts
    )
    spec = md.default_spec()
    order = md.default_sort_order()
    body = (
        f'<div class="ib-h">Iceberg table <code>{esc(table.location)}</code></div>'
        f'<div class="ib-muted">metadata <code>{esc(table.metadata_location)}</code> · uuid {esc(md.table_uuid)}</div>'
        f'<div class="ib-cards">{fact_html}</div>'
        f"<div>refs {_refs_html(md)}</div>"
        f'<details open><summary class="ib-h">Schema {esc(schema.schema_id)} ({len(schema.columns)} columns)</summary>'
        + grid(("id", "name", "type", "", "doc", "defaults"), columns)
        + "</details>"
        f'<div><span class="ib-h">Partitioning</span> <code>{esc(spec)}</code></div>'
        f'<div><span class="ib-h">Sort order</span> <code>{esc(order if order is not None else "unsorted")}</code></div>'
        f'<details><summary class="ib-h">Properties ({len(md.properties)})</summary>'
        + grid((), props)
        + (f'<div class="ib-muted">… {more_props} more</div>' if more_props > 0 else "")
        + "</details>"
    )
    return frame(body, cls="ib-table-card")


def snapshot_text(snapshot: Snapshot) -> str:
    """One line (snapshots are often shown many at a time): id, operation, sequence number, time, parent."""
    parent = "none" if snapshot.parent_snapshot_id is None else snapshot.parent_snapshot_id
    return (
        f"Snapshot {snapshot.snapshot_id} ({snapshot.operation or '?'}, seq {snapshot.sequence_number}, "
        f"{utc_text(snapshot.timestamp_ms)}, parent {parent}, schema {snapshot.schema_id})"
    )


def snapshot_html(snapshot: Snapshot, metadata: TableMetadata | None = None) -> str:
    """One snapshot: its fields with their spec meaning, its refs, and its summary."""
    rows = []
    for name, doc in snapshot.FIELD_DOCS.items():
        if name in ("summary", "extras"):
            continue
        value = getattr(snapshot, name, None)
        if name == "timestamp_ms" and value is not None:
            value = f"{value} ({utc_text(value)})"
        rows.append((name, "null" if value is None else value, doc))
    summary = "".join(
        f"<tr><td><code>{esc(k)}</code></td><td>{esc(v)}</td></tr>" for k, v in (snapshot.summary or {}).items()
    )
    refs = _refs_html(metadata, snapshot.snapshot_id) if metadata is not None else ""
    current = (
        badge("current", "ib-current")
        if metadata is not None and metadata.current_snapshot_id == snapshot.snapshot_id
        else ""
    )
    body = (
        f'<div class="ib-h">Snapshot {esc(snapshot.snapshot_id)} '
        f'<span class="ib-op ib-op-{esc(snapshot.operation or "")}">{esc(snapshot.operation or "")}</span>'
        f"{refs}{current}</div>{kv_table(rows)}"
        f'<div class="ib-h">Summary</div>{grid((), summary)}'
    )
    return frame(body, cls="ib-snapshot-card")


PLAN_LINES = 400
"""Lines of a plan's explanation shown in a notebook; ``plan.explain()`` has all of them."""


def plan_text(plan: ScanPlan) -> str:
    """The scan plan's own explanation (every manifest and file kept or skipped and why, and the deletes),
    cut after ``PLAN_LINES`` lines: only the lines shown are built."""
    total = plan.explain_line_count()
    text = plan.explain(max_lines=PLAN_LINES)
    if total <= PLAN_LINES:
        return text
    return f"{text}\n… {total - PLAN_LINES:,} more lines: plan.explain() has them all"


def plan_html(plan: ScanPlan) -> str:
    body = (
        f'<div class="ib-h">Scan of snapshot {esc(plan.snapshot_id)}: {plan.task_count} data files to read, '
        f"{plan.delete_file_count} delete files to apply, {plan.skipped_count} skipped</div>"
        f'<pre class="ib-explain">{esc(plan_text(plan))}</pre>'
    )
    return frame(body, cls="ib-scan")
