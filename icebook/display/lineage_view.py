"""The snapshot graph: a git-like SVG of snapshots with branch and tag labels (drawn in the browser).

Python lays the graph out (a row per snapshot, newest first; a lane per branch line) and sends
plain JSON; ``widgets/lineage.js`` draws it. Clicking a snapshot sets ``selected_snapshot_id``,
which other views observe (the tree re-roots there).
"""

from __future__ import annotations

from typing import Any

import anywidget
import traitlets

from icebook.analysis.lineage import Lineage, lineage
from icebook.display._base import StaticHTML, TableLike, esc, frame, human_count, when
from icebook.display.tree import SNAPSHOT_ID_JSON
from icebook.spec.metadata import TableMetadata
from icebook.widgets import read_asset

OP_CLASS = {"append": "append", "overwrite": "overwrite", "delete": "delete", "replace": "replace"}


def layout(graph: Lineage) -> tuple[list[dict[str, Any]], int]:
    """(rows, number of lanes): one row per snapshot, newest first, with its lane.

    Lane 0 is the current snapshot's ancestry; each other branch (then tag) gets the next lane for
    the snapshots only it reaches; unreachable chains (left behind by a rollback) get their own.
    """
    nodes = graph.nodes
    order = sorted(nodes.values(), key=lambda n: (n.snapshot.timestamp_ms, n.snapshot.sequence_number or 0))
    order.reverse()
    lane: dict[int, int] = {}
    lanes = 0

    def claim(chain: tuple[int, ...]) -> None:
        nonlocal lanes
        fresh = [sid for sid in chain if sid not in lane]
        if not fresh:
            return
        for sid in fresh:
            lane[sid] = lanes
        lanes += 1

    claim(graph.main_ancestry)
    heads: list[tuple[int, str, int]] = []
    for node in nodes.values():
        for name in node.branches:
            heads.append((0 if name == "main" else 1, name, node.snapshot_id))
        for name in node.tags:
            heads.append((2, name, node.snapshot_id))
    for _, _, sid in sorted(heads):
        claim(graph.ancestors(sid))
    for node in order:
        if node.snapshot_id not in lane:
            claim(graph.ancestors(node.snapshot_id))
    rows = []
    for row, node in enumerate(order):
        s = node.snapshot
        summary = s.summary or {}
        rows.append(
            {
                "id": str(s.snapshot_id),
                "parent": None if node.parent_id is None or node.parent_id not in nodes else str(node.parent_id),
                "row": row,
                "lane": lane[s.snapshot_id],
                "op": s.operation or "?",
                "op_class": OP_CLASS.get(s.operation or "", "other"),
                "when": when(s.timestamp_ms),
                "seq": s.sequence_number,
                "branches": list(node.branches),
                "tags": list(node.tags),
                "main": node.on_main_ancestry,
                "reachable": node.reachable,
                "parent_expired": node.parent_expired,
                "cherry_picked_from": None if node.cherry_picked_from is None else str(node.cherry_picked_from),
                "summary": _summary_text(summary),
            }
        )
    return rows, max(lanes, 1)


def _summary_text(summary: Any) -> str:
    parts = []
    for key, label in (
        ("added-data-files", "+{} files"),
        ("deleted-data-files", "-{} files"),
        ("added-delete-files", "+{} delete files"),
        ("added-records", "+{} rows"),
        ("deleted-records", "-{} rows"),
        ("total-records", "{} rows total"),
    ):
        if key in summary:
            try:
                parts.append(label.format(human_count(int(summary[key]))))
            except ValueError:
                parts.append(f"{key}={summary[key]}")
    return ", ".join(parts)


class LineageWidget(StaticHTML, anywidget.AnyWidget):  # type: ignore[misc]
    """Snapshots as a git-like graph; ``selected_snapshot_id`` follows clicks."""

    _esm = read_asset("lineage.js")
    _css = read_asset("icebook.css")

    graph = traitlets.List(trait=traitlets.Dict()).tag(sync=True)
    lanes = traitlets.Int(1).tag(sync=True)
    current = traitlets.Unicode("").tag(sync=True)
    selected_snapshot_id = traitlets.Int(allow_none=True, default_value=None).tag(sync=True, **SNAPSHOT_ID_JSON)

    def __init__(self, table: TableLike, **kwargs: Any) -> None:
        self._metadata: TableMetadata = table.metadata
        rows, lanes = layout(lineage(table.metadata))
        current = table.metadata.current_snapshot_id
        super().__init__(graph=rows, lanes=lanes, current="" if current is None else str(current), **kwargs)

    def _repr_html_(self) -> str:
        return lineage_html(self._metadata)


def lineage_widget(table: TableLike) -> LineageWidget:
    return LineageWidget(table)


def lineage_html(metadata: TableMetadata) -> str:
    """Static snapshot graph: the same layout as an inline SVG plus a table (every label escaped)."""
    rows, lanes = layout(lineage(metadata))
    step, lane_w = 28, 18
    width = lanes * lane_w + 12
    height = max(len(rows), 1) * step
    pos = {r["id"]: (r["lane"] * lane_w + 10, r["row"] * step + step // 2) for r in rows}
    main = {r["id"] for r in rows if r["main"]}
    lines = []
    for r in rows:
        if r["parent"] is None or r["parent"] not in pos:
            continue
        (x1, y1), (x2, y2) = pos[r["id"]], pos[r["parent"]]
        cls = "ib-edge ib-edge-main" if r["id"] in main and r["parent"] in main else "ib-edge"
        lines.append(f'<path class="{cls}" d="M{x1},{y1} C{x1},{y1 + step * 0.6} {x2},{y2 - step * 0.6} {x2},{y2}"/>')
    dots = "".join(
        f'<circle class="ib-dot ib-op-{esc(r["op_class"])}{" ib-on-main" if r["main"] else ""}" '
        f'cx="{pos[r["id"]][0]}" cy="{pos[r["id"]][1]}" r="6"/>'
        for r in rows
    )
    svg = (
        f'<svg class="ib-graph" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        f"{''.join(lines)}{dots}</svg>"
    )
    items = []
    for r in rows:
        refs = "".join(f'<span class="ib-badge ib-branch">{esc(b)}</span>' for b in r["branches"]) + "".join(
            f'<span class="ib-badge ib-tag">{esc(t)}</span>' for t in r["tags"]
        )
        faded = "" if r["reachable"] else " ib-unreachable"
        items.append(
            f'<div class="ib-lrow{faded}" style="height:{step}px"><code>{esc(r["id"])}</code> '
            f'<span class="ib-op ib-op-{esc(r["op_class"])}">{esc(r["op"])}</span>{refs} '
            f'<span class="ib-muted">{esc(r["when"])} · {esc(r["summary"])}</span></div>'
        )
    body = (
        f'<div class="ib-lineage"><div class="ib-lgraph">{svg}</div><div class="ib-lrows">{"".join(items)}</div></div>'
    )
    return frame(body, cls="ib-lineage-static")
