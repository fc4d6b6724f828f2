"""The metadata tree as a live widget: children load from Python on expand (``TreeSource``, the one walker).

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

from icebook.display._base import StaticHTML, TableLike
from icebook.display.registry import render_html
from icebook.display.tree_ids import NodeId, NodeKind
from icebook.display.tree_nodes import PAGE, TreeSource
from icebook.display.tree_render import MetadataTree
from icebook.errors import one_line
from icebook.widgets import STYLESHEET, bundle

SNAPSHOT_ID_JSON = {
    "to_json": lambda value, widget: None if value is None else str(value),
    "from_json": lambda value, widget: None if value in (None, "") else int(value),
}
"""64-bit snapshot ids exceed JavaScript's exact integers: they travel as strings."""


class TreeWidget(StaticHTML, anywidget.AnyWidget):  # type: ignore[misc]
    """metadata file -> snapshots and refs -> manifest list -> manifests -> data and delete files.

    ``at`` (a snapshot id) re-roots the tree at that snapshot; None shows the whole metadata file.
    """

    _esm = bundle("tree.js")
    _css = STYLESHEET

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

    @classmethod
    def of(cls, tree: MetadataTree) -> TreeWidget:
        """The live view of a ``MetadataTree`` (what ``%ice tree`` gives)."""
        return cls(tree.table, tree.snapshot_id)

    @property
    def source(self) -> TreeSource:
        return self._source

    def _rerooted(self, _change: Any) -> None:
        at = self.at
        opened = (
            [NodeId(kind=NodeKind.METADATA)]
            if at is None
            else [NodeId(kind=NodeKind.SNAPSHOT, snapshot_id=at), NodeId(kind=NodeKind.MANIFEST_LIST, snapshot_id=at)]
        )
        with self.hold_sync():
            self.expand = [str(node) for node in opened]
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
            self.send({**base, "type": "error", "message": one_line(exc)})

    def _repr_html_(self) -> str:
        return render_html(MetadataTree(table=self._table, snapshot_id=self.at))


def tree_widget(table: TableLike, at: Any = None, *, page_size: int = PAGE) -> TreeWidget:
    """The tree of ``table``; ``at`` (snapshot id, ref name or time) re-roots it at one snapshot."""
    snapshot_id = None if at is None else table.snapshot(at).snapshot_id
    return TreeWidget(table, snapshot_id, page_size=page_size)
