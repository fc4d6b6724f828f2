"""The snapshot graph as text (like ``git log --graph``) and as static HTML (an SVG beside one row per
snapshot), from one layout that the live ``LineageWidget`` draws too."""

from __future__ import annotations

from typing import Any

from icebook.analysis.history.lineage import Lineage, LineageNode, lineage
from icebook.display._base import esc, frame, human_count
from icebook.spec.metadata import TableMetadata, commit_order, main_first
from icebook.spec.snapshots import Operation
from icebook.text import utc_text

_OPERATIONS = frozenset(Operation)
ROW_HEIGHT = 28
LANE_WIDTH = 18


def operation_class(operation: str | None) -> str:
    """The CSS class suffix of an operation's colour (``ib-op-<class>``): one of ``Operation``, else "other"."""
    return operation if operation in _OPERATIONS else "other"


def _newest_first(graph: Lineage) -> list[LineageNode]:
    order = sorted(graph.nodes.values(), key=lambda n: commit_order(n.snapshot))
    order.reverse()
    return order


def notes(node: LineageNode) -> list[str]:
    """What is special about a snapshot: unreachable, expired parent, a parent loop, cherry-pick, write-audit-publish."""
    out = []
    if not node.reachable:
        out.append("unreachable")
    if node.parent_expired:
        out.append(f"parent {node.parent_id} expired")
    if node.parent_cycle:
        loop = " -> ".join(str(i) for i in (*node.parent_cycle, node.parent_cycle[0]))
        out.append(f"DAMAGED: parent links loop {loop}")
    if node.cherry_picked_from is not None:
        out.append(f"cherry-picked from {node.cherry_picked_from}")
    if node.published_wap_id is not None:
        out.append(f"published WAP {node.published_wap_id}")
    if node.wap_id is not None:
        out.append(f"staged WAP {node.wap_id}")
    return out


def _summary_text(summary: Any) -> str:
    parts = []
    for key, template in (
        ("added-data-files", "+{} files"),
        ("deleted-data-files", "-{} files"),
        ("added-delete-files", "+{} delete files"),
        ("added-records", "+{} rows"),
        ("deleted-records", "-{} rows"),
        ("total-records", "{} rows total"),
    ):
        if key in summary:
            try:
                parts.append(template.format(human_count(int(summary[key]))))
            except ValueError:
                parts.append(f"{key}={summary[key]}")
    return ", ".join(parts)


def layout(graph: Lineage) -> tuple[list[dict[str, Any]], int]:
    """(rows, number of lanes): one row per snapshot, newest first, with its lane (plain JSON).

    Lane 0 is the current snapshot's ancestry; each other branch (then tag) gets the next lane for
    the snapshots only it reaches; unreachable chains (left behind by a rollback) get their own.
    """
    nodes = graph.nodes
    order = _newest_first(graph)
    lane: dict[int, int] = {}
    lanes = 0

    def claim(head: int | None) -> None:
        """A new lane for ``head`` and its ancestors that no lane has yet. Lanes hold whole ancestries,
        so the walk up stops at the first snapshot already in one (each snapshot is walked once)."""
        nonlocal lanes
        fresh = []
        while head is not None and head in nodes and head not in lane:
            lane[head] = -1  # being claimed: a parent cycle ends the walk here
            fresh.append(head)
            head = nodes[head].parent_id
        if not fresh:
            return
        for sid in fresh:
            lane[sid] = lanes
        lanes += 1

    claim(graph.main_ancestry[0] if graph.main_ancestry else None)
    heads: list[tuple[int, str, int]] = []
    for node in nodes.values():
        heads += [(*main_first(name), node.snapshot_id) for name in node.branches]
        heads += [(2, name, node.snapshot_id) for name in node.tags]
    for _, _, sid in sorted(heads):
        claim(sid)
    for node in order:
        claim(node.snapshot_id)
    rows = []
    for row, node in enumerate(order):
        s = node.snapshot
        rows.append(
            {
                "id": str(s.snapshot_id),
                "parent": None if node.parent_id is None or node.parent_id not in nodes else str(node.parent_id),
                "row": row,
                "lane": lane[s.snapshot_id],
                "op": s.operation or "?",
                "op_class": operation_class(s.operation),
                "when": utc_text(s.timestamp_ms),
                "seq": s.sequence_number,
                "branches": list(node.branches),
                "tags": list(node.tags),
                "main": node.on_main_ancestry,
                "reachable": node.reachable,
                "parent_expired": node.parent_expired,
                "notes": notes(node),
                "summary": _summary_text(s.summary or {}),
            }
        )
    return rows, max(lanes, 1)


def current_snapshot_id(graph: Lineage) -> int | None:
    """The current snapshot: the head of the main ancestry."""
    return graph.main_ancestry[0] if graph.main_ancestry else None


# ---------------------------------------------------------------------- text


def graph_lines(graph: Lineage) -> list[tuple[str, LineageNode | None]]:
    """(graph prefix, node) rows, newest first, like ``git log --graph``; node None for a joint row."""
    cols: list[int | None] = []
    out: list[tuple[str, LineageNode | None]] = []
    for node in _newest_first(graph):
        sid = node.snapshot_id
        waiting = [i for i, c in enumerate(cols) if c == sid]
        if len(waiting) > 1:
            # Several lines (branches) meet at this snapshot: draw them joining, then drop the extras.
            keep = waiting[0]
            chars = [" "] * (2 * len(cols))
            for i in range(len(cols)):
                chars[2 * i - 1 if i in waiting[1:] else 2 * i] = "/" if i in waiting[1:] else "|"
            out.append(("".join(chars).rstrip(), None))
            cols = [c for i, c in enumerate(cols) if i not in waiting[1:]]
            idx = keep
        elif waiting:
            idx = waiting[0]
        else:
            cols.append(sid)
            idx = len(cols) - 1
        out.append(("".join("* " if i == idx else "| " for i in range(len(cols))), node))
        parent = node.parent_id if node.parent_id in graph.nodes else None
        if parent is None:
            del cols[idx]
        else:
            cols[idx] = parent
    return out


def _refs_text(node: LineageNode) -> str:
    names = [*node.branches, *(f"tag: {t}" for t in node.tags)]
    return f" ({', '.join(names)})" if names else ""


def lineage_text(graph: Lineage) -> str:
    """A heading line, then one line per snapshot under its graph prefix."""
    lines = [f"Lineage: {len(graph.nodes)} snapshots, refs {sorted(graph.refs)}"]
    for prefix, node in graph_lines(graph):
        if node is None:
            lines.append(prefix)
            continue
        s = node.snapshot
        text = (
            f"{prefix.rstrip()} {s.snapshot_id} {s.operation or '?'} seq={s.sequence_number} {utc_text(s.timestamp_ms)}"
        )
        text += _refs_text(node)
        extra = notes(node)
        lines.append(text + (f" [{'; '.join(extra)}]" if extra else ""))
    return "\n".join(lines)


# ---------------------------------------------------------------------- static HTML


def lineage_html(source: Lineage | TableMetadata) -> str:
    """The snapshot graph: the widget's layout as an inline SVG beside one row per snapshot (all escaped)."""
    graph = source if isinstance(source, Lineage) else lineage(source)
    rows, lanes = layout(graph)
    current = current_snapshot_id(graph)
    step = ROW_HEIGHT
    width = lanes * LANE_WIDTH + 12
    height = max(len(rows), 1) * step
    pos = {r["id"]: (r["lane"] * LANE_WIDTH + 10, r["row"] * step + step // 2) for r in rows}
    main = {r["id"] for r in rows if r["main"]}
    edges = []
    for r in rows:
        if r["parent"] is None or r["parent"] not in pos:
            continue
        (x1, y1), (x2, y2) = pos[r["id"]], pos[r["parent"]]
        cls = "ib-edge ib-edge-main" if r["id"] in main and r["parent"] in main else "ib-edge"
        edges.append(f'<path class="{cls}" d="M{x1},{y1} C{x1},{y1 + step * 0.6} {x2},{y2 - step * 0.6} {x2},{y2}"/>')
    dots = "".join(
        f'<circle class="ib-dot ib-op-{esc(r["op_class"])}{" ib-on-main" if r["main"] else ""}" '
        f'cx="{pos[r["id"]][0]}" cy="{pos[r["id"]][1]}" r="6"/>'
        for r in rows
    )
    svg = (
        f'<svg class="ib-graph" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        f"{''.join(edges)}{dots}</svg>"
    )
    items = []
    for r in rows:
        badges = "".join(f'<span class="ib-badge ib-branch">{esc(b)}</span>' for b in r["branches"])
        badges += "".join(f'<span class="ib-badge ib-tag">{esc(t)}</span>' for t in r["tags"])
        if r["id"] == str(current):
            badges += '<span class="ib-badge ib-current">current</span>'
        badges += "".join(f'<span class="ib-badge">{esc(n)}</span>' for n in r["notes"])
        faded = "" if r["reachable"] else " ib-unreachable"
        items.append(
            f'<div class="ib-lrow{faded}" style="height:{step}px"><code>{esc(r["id"])}</code> '
            f'<span class="ib-op ib-op-{esc(r["op_class"])}">{esc(r["op"])}</span>{badges} '
            f'<span class="ib-muted">{esc(r["when"])} · {esc(r["summary"])}</span></div>'
        )
    body = (
        f'<div class="ib-h">Lineage: {len(rows)} snapshots</div>'
        f'<div class="ib-lineage"><div class="ib-lgraph">{svg}</div><div class="ib-lrows">{"".join(items)}</div></div>'
        '<div class="ib-muted ib-caption">newest first · thick line: current ancestry (main) · '
        "faded rows: reachable from no branch or tag</div>"
    )
    return frame(body, cls="ib-lineage-static")
