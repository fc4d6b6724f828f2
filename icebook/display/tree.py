"""The metadata tree: an anywidget that loads children from Python on expand, and a static fallback.

Protocol (anywidget custom messages, JSON only):
  browser -> kernel  {"type": "children", "req", "view", "id", "offset"} | {"type": "details", "req", "view", "id"}
  kernel -> browser  {"type": "children", "req", "view", "id", "offset", "total", "nodes", "ms"}
                     {"type": "details", "req", "view", "id", "details"} | {"type": "error", "req", "view", "message"}
Children come in pages (``page_size``, 200 by default), so a manifest with 100,000 entries
sends 200 rows at a time and the browser offers "load more".
"""

from __future__ import annotations

import time
from typing import Any

import anywidget
import traitlets

from icebook.display._base import StaticHTML, TableLike, badge, esc, frame, human_count
from icebook.display.tree_nodes import PAGE, Node, TreeSource
from icebook.widgets import read_asset

SNAPSHOT_ID_JSON = {
    "to_json": lambda value, widget: None if value is None else str(value),
    "from_json": lambda value, widget: None if value in (None, "") else int(value),
}
"""64-bit snapshot ids exceed JavaScript's exact integers: they travel as strings."""


class TreeWidget(StaticHTML, anywidget.AnyWidget):  # type: ignore[misc]
    """metadata file -> snapshots and refs -> manifest list -> manifests -> data and delete files.

    ``at`` (a snapshot id) re-roots the tree at that snapshot; None shows the whole metadata file.
    """

    _esm = read_asset("tree.js")
    _css = read_asset("icebook.css")

    roots = traitlets.List(trait=traitlets.Dict()).tag(sync=True)
    expand = traitlets.List(trait=traitlets.Unicode()).tag(sync=True)
    at = traitlets.Int(allow_none=True, default_value=None).tag(sync=True, **SNAPSHOT_ID_JSON)
    page_size = traitlets.Int(PAGE).tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)

    def __init__(self, table: TableLike, at: int | None = None, *, page_size: int = PAGE, **kwargs: Any) -> None:
        self._table = table
        self._source = TreeSource(table, page_size)
        super().__init__(page_size=page_size, title=table.location, **kwargs)
        self.on_msg(self._on_message)
        self.observe(self._rerooted, names=["at"])
        self.at = at
        self._rerooted(None)

    @property
    def source(self) -> TreeSource:
        return self._source

    def _rerooted(self, _change: Any) -> None:
        at = self.at
        with self.hold_sync():
            self.expand = ["meta"] if at is None else [f"s:{at}", f"ml:{at}"]
            self.roots = self._source.root(at)

    def _on_message(self, _widget: Any, content: dict[str, Any], _buffers: Any) -> None:
        kind = content.get("type")
        base = {"req": content.get("req"), "view": content.get("view"), "id": content.get("id")}
        started = time.perf_counter()
        try:
            if kind == "children":
                offset = int(content.get("offset") or 0)
                total, nodes = self._source.children(str(content["id"]), offset, self.page_size)
                ms = round((time.perf_counter() - started) * 1000, 1)
                self.send({**base, "type": "children", "offset": offset, "total": total, "nodes": nodes, "ms": ms})
            elif kind == "details":
                self.send({**base, "type": "details", "details": self._source.details(str(content["id"]))})
        except Exception as exc:  # shown in the widget; the kernel must keep serving other requests
            self.send({**base, "type": "error", "message": f"{type(exc).__name__}: {exc}"})

    def _repr_html_(self) -> str:
        return tree_html(self._table, self.at)


def tree_widget(table: TableLike, at: Any = None, *, page_size: int = PAGE) -> TreeWidget:
    """The tree of ``table``; ``at`` (snapshot id, ref name or time) re-roots it at one snapshot."""
    snapshot_id = None if at is None else table.snapshot(at).snapshot_id
    return TreeWidget(table, snapshot_id, page_size=page_size)


# ---------------------------------------------------------------------- static fallback

STATIC_MANIFESTS = 20
STATIC_ENTRIES = 50


def tree_html(
    table: TableLike, at: Any = None, *, manifests: int = STATIC_MANIFESTS, entries: int = STATIC_ENTRIES
) -> str:
    """The tree as nested ``<details>`` (no kernel needed): the metadata file, its snapshots, refs,
    schemas, specs, sort orders and properties, and, for ``at`` (default: the current snapshot),
    its manifests with their first ``entries`` files."""
    source = TreeSource(table)
    snapshot = table.snapshot(at) if at is not None else table.metadata.current_snapshot()
    sid = None if snapshot is None else snapshot.snapshot_id
    plan = _StaticPlan(sid, manifests, entries)
    body = "".join(_static_node(source, node, plan) for node in source.root())
    note = (
        f'<div class="ib-muted ib-caption">Static view: snapshot {esc(sid)} with its first {manifests} manifests '
        f"and {entries} files per manifest. Run <code>t.tree()</code> in a live kernel to expand everything.</div>"
    )
    return frame(f'<div class="ib-tree ib-static">{body}</div>{note}', cls="ib-tree-static")


class _StaticPlan:
    def __init__(self, snapshot_id: int | None, manifests: int, entries: int) -> None:
        self.sid = snapshot_id
        self.manifests = manifests
        self.entries = entries

    def expand(self, node_id: str) -> bool:
        if node_id == "meta" or node_id.startswith("g:"):
            return True
        return (self.sid is not None and node_id in (f"s:{self.sid}", f"ml:{self.sid}")) or (
            node_id.startswith(f"m:{self.sid}:")
        )

    def opened(self, node_id: str) -> bool:
        return node_id in ("meta", "g:snapshots", f"s:{self.sid}", f"ml:{self.sid}")

    def limit(self, node_id: str) -> int:
        return self.entries if node_id.startswith("m:") else self.manifests if node_id.startswith("ml:") else 500


def _static_node(source: TreeSource, node: Node, plan: _StaticPlan) -> str:
    head = _node_summary(node)
    node_id = node["id"]
    if node.get("n") == 0 or node_id.startswith("r:"):
        return f'<div class="ib-node ib-leaf">{head}</div>'
    if not plan.expand(node_id):
        return (
            f'<details class="ib-node"><summary>{head}</summary>'
            '<div class="ib-muted ib-children">not expanded in the static view</div></details>'
        )
    total, children = source.children(node_id, 0, plan.limit(node_id))
    parts = [_static_node(source, child, plan) for child in children]
    if total > len(children):
        parts.append(f'<div class="ib-muted ib-more">… {esc(human_count(total - len(children)))} more</div>')
    opened = " open" if plan.opened(node_id) else ""
    return (
        f'<details class="ib-node"{opened}><summary>{head}</summary>'
        f'<div class="ib-children">{"".join(parts)}</div></details>'
    )


def _node_summary(node: Node) -> str:
    kind = str(node.get("kind", ""))
    label = esc(node.get("label", ""))
    if node.get("parts"):
        label = "".join(
            f'<span class="ib-part ib-part-{esc(role)}" title="{esc(role)}: {esc(meaning)}">{esc(text)}</span>'
            for text, role, meaning in node["parts"]
        )
    facts = "".join(
        f'<span class="ib-fact ib-f-{esc(flag)}"><span class="ib-fk">{esc(k)}</span> '
        f'<span class="ib-fv">{esc(v)}</span>{"<sup>i</sup>" if flag == "inherited" else ""}</span>'
        for k, v, flag in node.get("facts", [])
    )
    badges = "".join(badge(text, cls) for text, cls in node.get("badges", []))
    count = "" if node.get("n") in (None, 0) else f' <span class="ib-muted">({esc(human_count(node["n"]))})</span>'
    return (
        f'<span class="ib-kind ib-kind-{esc(kind)}">{esc(kind.replace("_", " "))}</span> ' if kind != "group" else ""
    ) + f'<span class="ib-label">{label}</span>{count}{badges} <span class="ib-facts">{facts}</span>'
