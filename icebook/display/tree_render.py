"""The metadata tree without a kernel: walked once over the one ``TreeSource``, then written as text (the
command line) or as nested ``<details>`` (saved notebooks). The live widget asks the same source for pages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from icebook.display._base import TableLike, badge, esc, frame, human_count, label
from icebook.display.tree_ids import Group, NodeId, NodeKind
from icebook.display.tree_nodes import Node, TreeSource
from icebook.spec.manifest import FileContent

STATIC_MANIFESTS = 20
STATIC_ENTRIES = 50
TEXT_MANIFESTS = 200
TEXT_ENTRIES = 20
OTHER_CHILDREN = 500


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class MetadataTree:
    """The tree of one table, as ``%ice tree`` and ``icebook tree`` give it: text on the command line, the
    live widget in a kernel, nested ``<details>`` in a saved notebook."""

    table: TableLike
    snapshot_id: int | None = None
    """Re-root the live tree at this snapshot and open it in the static views; None: the current one."""

    def __repr__(self) -> str:
        at = "" if self.snapshot_id is None else f" at {self.snapshot_id}"
        return f"<MetadataTree {self.table.location}{at}>"


@dataclass(frozen=True, slots=True, kw_only=True)
class Expansion:
    """Which nodes a walk opens (the metadata file, its groups, one snapshot down to its files) and how
    many children of each it shows."""

    snapshot_id: int | None
    manifests: int | None
    """Manifests shown of the snapshot's manifest list (None: all)."""
    entries: int | None
    """Files shown per manifest (None: all)."""

    def expands(self, node: NodeId) -> bool:
        if node.kind in (NodeKind.METADATA, NodeKind.GROUP):
            return True
        if node.kind in (NodeKind.SNAPSHOT, NodeKind.MANIFEST_LIST, NodeKind.MANIFEST):
            return self.snapshot_id is not None and node.snapshot_id == self.snapshot_id
        return False

    def opened(self, node: NodeId) -> bool:
        """Shown open at first (the rest of what is expanded stays folded in HTML)."""
        if node.kind is NodeKind.GROUP:
            return node.group is Group.SNAPSHOTS
        return node.kind is NodeKind.METADATA or (
            node.kind in (NodeKind.SNAPSHOT, NodeKind.MANIFEST_LIST) and node.snapshot_id == self.snapshot_id
        )

    def limit(self, node: NodeId) -> int | None:
        if node.kind is NodeKind.MANIFEST:
            return self.entries
        if node.kind is NodeKind.MANIFEST_LIST:
            return self.manifests
        return OTHER_CHILDREN


@dataclass(frozen=True, slots=True, kw_only=True)
class Walked:
    """A node as a walk left it: its children when it was expanded."""

    node: Node
    leaf: bool
    expanded: bool
    opened: bool = False
    children: tuple[Walked, ...] = ()
    more: int = 0
    """Children not shown (beyond the expansion's limit)."""


def walk(source: TreeSource, nodes: list[Node], expansion: Expansion) -> tuple[Walked, ...]:
    """Expand ``nodes`` as ``expansion`` says, reading children from ``source`` (one page per node)."""
    out = []
    for node in nodes:
        node_id = NodeId.parse(node["id"])
        # A ref's child is its snapshot, which the snapshots group shows already.
        leaf = node.get("n") == 0 or node_id.kind is NodeKind.REF
        if leaf or not expansion.expands(node_id):
            out.append(Walked(node=node, leaf=leaf, expanded=False))
            continue
        limit = expansion.limit(node_id)
        total, children = source.children(node_id, 0, limit if limit is not None else 2**31)
        out.append(
            Walked(
                node=node,
                leaf=False,
                expanded=True,
                opened=expansion.opened(node_id),
                children=walk(source, children, expansion),
                more=total - len(children),
            )
        )
    return tuple(out)


def _walk_table(
    table: TableLike, at: Any, manifests: int | None, entries: int | None
) -> tuple[tuple[Walked, ...], int | None]:
    snapshot = table.snapshot(at) if at is not None else table.metadata.current_snapshot()
    sid = None if snapshot is None else snapshot.snapshot_id
    source = TreeSource(table)
    return walk(source, source.root(), Expansion(snapshot_id=sid, manifests=manifests, entries=entries)), sid


# ---------------------------------------------------------------------- text


def _parts_text(node: Node) -> str:
    named = [f"{role}={text}" for text, role, _ in node.get("parts") or [] if role not in _PLAIN_ROLES]
    return f"  ({', '.join(named)})" if named else ""


_PLAIN_ROLES = ("prefix", "extension", "separator", "name")
_SELF_NAMED = ("schema", "spec", "sort_order")


def node_text(node: Node) -> str:
    """One line for a node: what it is, its name, its refs, then its facts."""
    kind = str(node.get("kind", ""))
    facts = {k: v for k, v, _ in node.get("facts", [])}
    if kind == "group":
        return f"{node['label']} ({human_count(node.get('n'))})"
    if kind == "property":
        return f"{node['label']} = {facts.get('=', '')}"
    if kind in _SELF_NAMED:  # the label says what it is ("schema 0: struct<...>")
        return str(node["label"])
    if kind in ("data_file", "delete_file"):
        content = facts.pop("content", "")
        head = f"{facts.pop('status', '')} {label(FileContent[content]) if content in FileContent.__members__ else content}"
    else:
        head = kind.replace("_", " ")
    badges = [text for text, _ in node.get("badges", [])]
    line = f"{head} {node['label']}{_parts_text(node)}" + (f"  [{', '.join(badges)}]" if badges else "")
    shown = [
        f"{k} {v}" + (" (inherited)" if flag == "inherited" else "")
        for k, v, flag in node.get("facts", [])
        if k in facts and v != ""
    ]
    return line + (f"  {' · '.join(shown)}" if shown else "")


def _text_lines(items: tuple[Walked, ...], indent: str, out: list[str], *, top: bool) -> None:
    for i, item in enumerate(items):
        last = i == len(items) - 1 and not item.more
        branch, stem = ("", "") if top else (("└─ ", "   ") if last else ("├─ ", "│  "))
        out.append(f"{indent}{branch}{node_text(item.node)}")
        _text_lines(item.children, indent + stem, out, top=False)
        if item.more:
            out.append(f"{indent}{stem}└─ … {human_count(item.more)} more")


def tree_text(
    table: TableLike, at: Any = None, *, manifests: int | None = TEXT_MANIFESTS, entries: int | None = TEXT_ENTRIES
) -> str:
    """The tree as indented text: the metadata file, its snapshots, refs, schemas, specs, sort orders and
    properties, and for ``at`` (default: the current snapshot) its manifest list, manifests and files."""
    walked, _ = _walk_table(table, at, manifests, entries)
    lines: list[str] = []
    _text_lines(walked, "", lines, top=True)
    return "\n".join(lines)


# ---------------------------------------------------------------------- static HTML


def tree_html(
    table: TableLike, at: Any = None, *, manifests: int = STATIC_MANIFESTS, entries: int = STATIC_ENTRIES
) -> str:
    """The tree as nested ``<details>`` (no kernel needed): everything ``tree_text`` shows, with at most
    ``manifests`` manifests and ``entries`` files per manifest."""
    walked, sid = _walk_table(table, at, manifests, entries)
    body = "".join(_html_node(item) for item in walked)
    note = (
        f'<div class="ib-muted ib-caption">Static view: snapshot {esc(sid)} with its first {manifests} manifests '
        f"and {entries} files per manifest. Run <code>t.tree()</code> in a live kernel to expand everything.</div>"
    )
    return frame(f'<div class="ib-tree ib-static">{body}</div>{note}', cls="ib-tree-static")


def _html_node(item: Walked) -> str:
    head = _node_summary(item.node)
    if item.leaf:
        return f'<div class="ib-node ib-leaf">{head}</div>'
    if not item.expanded:
        return (
            f'<details class="ib-node"><summary>{head}</summary>'
            '<div class="ib-muted ib-children">not expanded in the static view</div></details>'
        )
    parts = [_html_node(child) for child in item.children]
    if item.more:
        parts.append(f'<div class="ib-muted ib-more">… {esc(human_count(item.more))} more</div>')
    opened = " open" if item.opened else ""
    return (
        f'<details class="ib-node"{opened}><summary>{head}</summary>'
        f'<div class="ib-children">{"".join(parts)}</div></details>'
    )


def _node_summary(node: Node) -> str:
    kind = str(node.get("kind", ""))
    text = esc(node.get("label", ""))
    if node.get("parts"):
        text = "".join(
            f'<span class="ib-part ib-part-{esc(role)}" title="{esc(role)}: {esc(meaning)}">{esc(part)}</span>'
            for part, role, meaning in node["parts"]
        )
    facts = "".join(
        f'<span class="ib-fact ib-f-{esc(flag)}"><span class="ib-fk">{esc(k)}</span> '
        f'<span class="ib-fv">{esc(v)}</span>{"<sup>i</sup>" if flag == "inherited" else ""}</span>'
        for k, v, flag in node.get("facts", [])
    )
    badges = "".join(badge(name, cls) for name, cls in node.get("badges", []))
    count = "" if node.get("n") in (None, 0) else f' <span class="ib-muted">({esc(human_count(node["n"]))})</span>'
    kind_html = f'<span class="ib-kind ib-kind-{esc(kind)}">{esc(kind.replace("_", " "))}</span> '
    return (
        kind_html if kind != "group" else ""
    ) + f'<span class="ib-label">{text}</span>{count}{badges} <span class="ib-facts">{facts}</span>'


# ---------------------------------------------------------------------- the registry's renderers


def metadata_tree_text(tree: MetadataTree) -> str:
    return tree_text(tree.table, tree.snapshot_id)


def metadata_tree_html(tree: MetadataTree) -> str:
    return tree_html(tree.table, tree.snapshot_id)
