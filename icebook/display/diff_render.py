"""A ``SnapshotDiff`` as text and as static HTML (green = added, red = removed)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from icebook.analysis.history.diff import SnapshotDiff
from icebook.analysis.history.field_changes import EpochKind
from icebook.analysis.history.lineage import HistoryPath, Relation
from icebook.display._base import (
    cell_text,
    change_class,
    content_label,
    esc,
    frame,
    grid,
    human_count,
    short_path,
)
from icebook.display.v3_changes_render import v3_html, v3_lines
from icebook.spec.snapshots import Snapshot
from icebook.text import byte_size

FILE_ROWS = 100


def _sid(snapshot: Snapshot | None) -> str:
    return "(empty)" if snapshot is None else str(snapshot.snapshot_id)


def path_text(path: HistoryPath) -> str:
    """How a and b relate, with the commits between them."""

    def ops(snaps: tuple[Snapshot, ...]) -> str:
        return ", ".join(f"{s.operation} {s.snapshot_id}" for s in snaps) or "nothing"

    match path.relation:
        case Relation.SAME:
            return "same snapshot"
        case Relation.A_BEFORE_B:
            return f"{len(path.b_side)} commit(s) from a to b: {ops(path.b_side)}"
        case Relation.B_BEFORE_A:
            return f"b is an ancestor of a ({len(path.a_side)} commit(s) back): {ops(path.a_side)}"
        case Relation.DIVERGED:
            return f"diverged at {path.common_ancestor}: a side {ops(path.a_side)}; b side {ops(path.b_side)}"
    return "no common ancestor left (expired, or separate histories)"


def diff_text(d: SnapshotDiff) -> str:
    """The diff in a few lines: path, manifests, files, records, bytes, and every metadata change."""
    c = d.counts()
    lines = [
        f"SnapshotDiff {_sid(d.a)} -> {_sid(d.b)}",
        f"  path: {path_text(d.path)}",
        f"  manifests: {len(d.shared_manifests)} shared, +{len(d.added_manifests)} added, "
        f"-{len(d.removed_manifests)} removed ({d.manifests_read} read)",
        f"  data files: +{c['added_data_files']} -{c['removed_data_files']} "
        f"(records +{c['added_records']} -{c['removed_records']})",
        f"  delete files: +{c['added_delete_files']} -{c['removed_delete_files']} "
        f"(delete records +{c['added_delete_records']} -{c['removed_delete_records']})",
        f"  bytes: +{c['added_bytes']} -{c['removed_bytes']}",
        f"  partitions changed: {len(d.partition_changes)}",
    ]
    for what, changes in (
        (EpochKind.SCHEMA, d.schema_changes),
        (EpochKind.PARTITION_SPEC, d.spec_changes),
        (EpochKind.SORT_ORDER, d.sort_order_changes),
        ("properties", d.property_changes),
    ):
        lines.extend(f"  {what}: {change}" for change in changes)
    lines.extend(f"  v3: {line}" for line in v3_lines(d.v3))
    lines.extend(f"  note: {n}" for n in d.notes)
    return "\n".join(lines)


def _card(title: str, added: int, removed: int, *, fmt: Any = human_count) -> str:
    return (
        f'<div class="ib-card"><div class="ib-card-label">{esc(title)}</div>'
        f'<span class="ib-added">+{esc(fmt(added))}</span> <span class="ib-removed">−{esc(fmt(removed))}</span></div>'
    )


def partition_text(part: Any) -> str:
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
                f"<td>{esc(content_label(r['content']))}</td>"
                f"<td><code>{esc(short_path(str(r['file_path']), location))}</code></td>"
                f"<td>{esc(partition_text(r.get('partition')))}</td><td>{esc(human_count(r['record_count']))}</td>"
                f"<td>{esc(byte_size(r['file_size_in_bytes']))}</td></tr>"
            )
    hidden = max(len(d.added_files) - FILE_ROWS, 0) + max(len(d.removed_files) - FILE_ROWS, 0)
    if not rows:
        return '<div class="ib-muted">No file was added or removed.</div>'
    more = f'<div class="ib-muted">… {hidden:,} more files (d.added_files / d.removed_files)</div>' if hidden else ""
    headers = ("change", "content", "file", "partition", "records", "size")
    return grid(headers, rows, cls="ib-diff-files", scroll=True) + more


def _partitions_table(df: pd.DataFrame) -> str:
    if not len(df):
        return ""
    rows = []
    for r in df.head(FILE_ROWS).itertuples(index=False):
        net = int(r.net_records)  # type: ignore[arg-type]
        cls = "ib-added" if net > 0 else "ib-removed" if net < 0 else ""
        rows.append(
            f"<tr><td>{esc(partition_text(r.partition))}</td><td>{esc(r.spec_id)}</td>"
            f'<td class="ib-added">+{r.added_data_files}</td><td class="ib-removed">−{r.removed_data_files}</td>'
            f'<td class="ib-added">+{r.added_delete_files}</td><td class="ib-removed">−{r.removed_delete_files}</td>'
            f'<td class="{cls}">{net:+,}</td></tr>'
        )
    headers = ("partition", "spec", "+data", "−data", "+deletes", "−deletes", "net records")
    return f'<div class="ib-h">Partitions</div><div class="ib-scroll">{grid(headers, rows)}</div>'


def _changes_table(d: SnapshotDiff) -> str:
    changes = d.changes()
    if not len(changes):
        return '<div class="ib-muted">No schema, partition spec, sort order or property change.</div>'
    rows = []
    for r in changes.itertuples(index=False):
        rows.append(
            f'<tr class="{change_class(str(r.kind))}"><td>{esc(r.what)}</td><td>{esc(r.kind)}</td>'
            f"<td>{esc(cell_text(r.field_id))}</td><td><code>{esc(r.name)}</code></td>"
            f"<td>{esc(cell_text(r.before))}</td><td>{esc(cell_text(r.after))}</td></tr>"
        )
    return grid(("what", "change", "id", "name", "before", "after"), rows)


def diff_html(d: SnapshotDiff, location: str = "") -> str:
    """A SnapshotDiff as static HTML (every value escaped); paths shown relative to ``location``."""
    c = d.counts()
    sid_a = d.a.snapshot_id if d.a is not None else "empty table"
    sid_b = d.b.snapshot_id if d.b is not None else "empty table"
    cards = "".join(
        (
            _card("data files", c["added_data_files"], c["removed_data_files"]),
            _card("delete files", c["added_delete_files"], c["removed_delete_files"]),
            _card("records", c["added_records"], c["removed_records"]),
            _card("bytes", c["added_bytes"], c["removed_bytes"], fmt=byte_size),
            _card("manifests", len(d.added_manifests), len(d.removed_manifests)),
        )
    )
    shared = f"{len(d.shared_manifests)} manifests shared, {d.manifests_read} read"
    notes = "".join(f'<div class="ib-muted">note: {esc(n)}</div>' for n in d.notes)
    body = (
        f'<div class="ib-h">Snapshot {esc(sid_a)} → {esc(sid_b)}</div>'
        f'<div class="ib-muted">{esc(path_text(d.path))} · {esc(shared)}</div>'
        f'<div class="ib-cards">{cards}</div>'
        f'<div class="ib-h">Files</div>{_files_table(d, location)}'
        f"{_partitions_table(d.partition_changes)}"
        f"{v3_html(d.v3, location)}"
        f'<div class="ib-h">Schema, partition spec, sort order and properties</div>{_changes_table(d)}{notes}'
    )
    return frame(body, cls="ib-diff")
