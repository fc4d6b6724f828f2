"""Compare two points of a table: added/removed files, rows, partitions, and metadata changes.

``diff_html(d)`` renders a ``SnapshotDiff`` (green = added, red = removed); ``DiffView`` lets the user
pick the two sides (snapshots or refs) from dropdowns and recomputes it.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as W
import pandas as pd

from icebook.analysis.diff import SnapshotDiff
from icebook.analysis.diff import diff as analysis_diff
from icebook.display._base import (
    StaticHTML,
    TableLike,
    cell_text,
    esc,
    frame,
    human_bytes,
    human_count,
    short_path,
    when,
)
from icebook.spec.snapshots import Branch

CONTENT = {0: "data", 1: "position deletes", 2: "equality deletes"}
CHANGE_CLASS = {
    "added": "ib-added",
    "set": "ib-added",
    "dropped": "ib-removed",
    "removed": "ib-removed",
    "voided": "ib-removed",
    "unset": "ib-removed",
}
FILE_ROWS = 100


def compute_diff(table: TableLike, a: Any, b: Any = None) -> SnapshotDiff:
    """``t.diff(a, b)`` when the table has it, else the analysis function directly."""
    method = getattr(table, "diff", None)
    if callable(method):
        result: SnapshotDiff = method(a, b)
        return result
    return analysis_diff(table.metadata, table.store, a, b, progress=False)


def point_options(table: TableLike) -> list[tuple[str, Any]]:
    """Dropdown options: refs (by name) then snapshots newest first (by id)."""
    options: list[tuple[str, Any]] = []
    for name, ref in sorted(table.refs.items(), key=lambda kv: (kv[0] != "main", kv[0])):
        kind = "branch" if isinstance(ref, Branch) else "tag"
        options.append((f"{kind} {name} → {ref.snapshot_id}", name))
    for s in reversed(table.snapshots):
        options.append((f"{s.snapshot_id} · {s.operation or '?'} · {when(s.timestamp_ms)}", s.snapshot_id))
    return options


def _card(label: str, added: int, removed: int, *, fmt: Any = human_count) -> str:
    return (
        f'<div class="ib-card"><div class="ib-card-label">{esc(label)}</div>'
        f'<span class="ib-added">+{esc(fmt(added))}</span> <span class="ib-removed">−{esc(fmt(removed))}</span></div>'
    )


def _partition_text(part: Any) -> str:
    if not part:
        return "unpartitioned"
    if isinstance(part, dict):
        return "(" + ", ".join(f"{k}={cell_text(v, 40)}" for k, v in part.items()) + ")"
    return cell_text(part)


def _files_table(d: SnapshotDiff, location: str) -> str:
    rows = []
    for change, files in (("added", d.added_files), ("removed", d.removed_files)):
        for r in files.head(FILE_ROWS).to_dict("records"):
            rows.append(
                f'<tr class="ib-row-{change}"><td>{"+" if change == "added" else "−"} {esc(change)}</td>'
                f"<td>{esc(CONTENT.get(int(r['content']), r['content']))}</td>"
                f"<td><code>{esc(short_path(str(r['file_path']), location))}</code></td>"
                f"<td>{esc(_partition_text(r['partition']))}</td><td>{esc(human_count(r['record_count']))}</td>"
                f"<td>{esc(human_bytes(r['file_size_in_bytes']))}</td></tr>"
            )
    hidden = max(len(d.added_files) - FILE_ROWS, 0) + max(len(d.removed_files) - FILE_ROWS, 0)
    if not rows:
        return '<div class="ib-muted">No file was added or removed.</div>'
    more = f'<div class="ib-muted">… {hidden:,} more files (d.added_files / d.removed_files)</div>' if hidden else ""
    head = "".join(f"<th>{h}</th>" for h in ("change", "content", "file", "partition", "records", "size"))
    return (
        f'<div class="ib-scroll"><table class="ib-grid ib-diff-files"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>{more}"
    )


def _partitions_table(df: pd.DataFrame) -> str:
    if not len(df):
        return ""
    rows = []
    for r in df.head(FILE_ROWS).itertuples(index=False):
        net = int(r.net_records)  # type: ignore[arg-type]
        cls = "ib-added" if net > 0 else "ib-removed" if net < 0 else ""
        rows.append(
            f"<tr><td>{esc(_partition_text(r.partition))}</td><td>{esc(r.spec_id)}</td>"
            f'<td class="ib-added">+{r.added_data_files}</td><td class="ib-removed">−{r.removed_data_files}</td>'
            f'<td class="ib-added">+{r.added_delete_files}</td><td class="ib-removed">−{r.removed_delete_files}</td>'
            f'<td class="{cls}">{net:+,}</td></tr>'
        )
    head = "".join(
        f"<th>{h}</th>" for h in ("partition", "spec", "+data", "−data", "+deletes", "−deletes", "net records")
    )
    return (
        '<div class="ib-h">Partitions</div><div class="ib-scroll"><table class="ib-grid">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _changes_table(d: SnapshotDiff) -> str:
    changes = d.changes()
    if not len(changes):
        return '<div class="ib-muted">No schema, partition spec, sort order or property change.</div>'
    rows = []
    for r in changes.itertuples(index=False):
        cls = CHANGE_CLASS.get(str(r.kind), "ib-changed")
        rows.append(
            f'<tr class="{cls}"><td>{esc(r.what)}</td><td>{esc(r.kind)}</td><td>{esc(cell_text(r.field_id))}</td>'
            f"<td><code>{esc(r.name)}</code></td><td>{esc(cell_text(r.before))}</td><td>{esc(cell_text(r.after))}</td></tr>"
        )
    head = "".join(f"<th>{h}</th>" for h in ("what", "change", "id", "name", "before", "after"))
    return f'<table class="ib-grid"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def diff_html(d: SnapshotDiff, location: str = "") -> str:
    """A SnapshotDiff as static HTML (every value escaped)."""
    c = d.counts()
    sid_a = d.a.snapshot_id if d.a is not None else "empty table"
    sid_b = d.b.snapshot_id if d.b is not None else "empty table"
    cards = "".join(
        (
            _card("data files", c["added_data_files"], c["removed_data_files"]),
            _card("delete files", c["added_delete_files"], c["removed_delete_files"]),
            _card("records", c["added_records"], c["removed_records"]),
            _card("bytes", c["added_bytes"], c["removed_bytes"], fmt=human_bytes),
            _card("manifests", len(d.added_manifests), len(d.removed_manifests)),
        )
    )
    shared = f"{len(d.shared_manifests)} manifests shared, {d.manifests_read} read"
    notes = "".join(f'<div class="ib-muted">note: {esc(n)}</div>' for n in d.notes)
    body = (
        f'<div class="ib-h">Snapshot {esc(sid_a)} → {esc(sid_b)}</div>'
        f'<div class="ib-muted">{esc(d.path.describe())} · {esc(shared)}</div>'
        f'<div class="ib-cards">{cards}</div>'
        f'<div class="ib-h">Files</div>{_files_table(d, location)}'
        f"{_partitions_table(d.partition_changes)}"
        f'<div class="ib-h">Schema, partition spec, sort order and properties</div>{_changes_table(d)}{notes}'
    )
    return frame(body, cls="ib-diff")


class DiffView(StaticHTML, W.VBox):  # type: ignore[misc]
    """Two dropdowns (snapshots and refs), a Compare button, and the diff."""

    def __init__(self, table: TableLike, a: Any = None, b: Any = None, **kwargs: Any) -> None:
        self._table = table
        options = point_options(table)
        current = table.metadata.current_snapshot()
        default_b = b if b is not None else (current.snapshot_id if current else None)
        default_a = a
        if default_a is None and current is not None and current.parent_snapshot_id is not None:
            default_a = current.parent_snapshot_id
        values = [v for _, v in options]
        self.a = W.Dropdown(options=options, value=default_a if default_a in values else None, description="from")
        self.b = W.Dropdown(options=options, value=default_b if default_b in values else None, description="to")
        for dd in (self.a, self.b):
            dd.layout = W.Layout(width="min(46%, 440px)")
        self.button = W.Button(description="Compare", button_style="primary", icon="exchange")
        self.output = W.HTML()
        self.output.add_class("ib-diff-output")
        self.button.on_click(lambda _b: self.refresh())
        super().__init__([W.HBox([self.a, self.b, self.button]), self.output], **kwargs)
        self.add_class("ib-diff-view")
        self.diff: SnapshotDiff | None = None
        if self.a.value is not None or self.b.value is not None:
            self.refresh()

    def refresh(self) -> None:
        self.output.value = '<div class="icebook ib-muted">comparing…</div>'
        try:
            self.diff = compute_diff(self._table, self.a.value, self.b.value)
            self.output.value = diff_html(self.diff, self._table.location)
        except Exception as exc:  # shown to the user in place of the diff
            self.output.value = frame(f'<div class="ib-error">{esc(type(exc).__name__)}: {esc(exc)}</div>')

    def _repr_html_(self) -> str:
        return self.output.value or "<div>diff</div>"
