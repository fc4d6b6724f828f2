"""Ids of the metadata tree's nodes: a small typed structure, and its one parser.

An id travels to the browser and back as text, path-like from the root: ``meta``; ``g:snapshots``
(a group of the metadata file); ``r:<ref name>``; ``s:<snapshot id>``; ``ml:<snapshot id>`` (its
manifest list); ``m:<snapshot id>:<index in the list>``; ``e:<snapshot id>:<index>:<position in the
manifest>``; ``x:<schema|spec|sort|prop>:<id or key>``. ``NodeId.parse(str(node_id)) == node_id``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from icebook.errors import NotFound


class NodeKind(enum.Enum):
    """What a node is; the value is the prefix of its id."""

    METADATA = "meta"
    GROUP = "g"
    REF = "r"
    SNAPSHOT = "s"
    MANIFEST_LIST = "ml"
    MANIFEST = "m"
    ENTRY = "e"
    ITEM = "x"


class Group(enum.Enum):
    """The children of the metadata file node, in the order shown."""

    SNAPSHOTS = "snapshots"
    REFS = "refs"
    SCHEMAS = "schemas"
    SPECS = "specs"
    SORTS = "sorts"
    PROPS = "props"

    @property
    def title(self) -> str:
        return _GROUP_TITLES[self]


_GROUP_TITLES = {
    Group.SNAPSHOTS: "Snapshots",
    Group.REFS: "Refs (branches and tags)",
    Group.SCHEMAS: "Schemas",
    Group.SPECS: "Partition specs",
    Group.SORTS: "Sort orders",
    Group.PROPS: "Properties",
}


class Item(enum.Enum):
    """A leaf of the schemas, specs, sort orders or properties group."""

    SCHEMA = "schema"
    SPEC = "spec"
    SORT = "sort"
    PROP = "prop"


_NUMBERS = {NodeKind.SNAPSHOT: 1, NodeKind.MANIFEST_LIST: 1, NodeKind.MANIFEST: 2, NodeKind.ENTRY: 3}
"""How many numbers follow the prefix of an id of each kind."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeId:
    """One node of the tree; which fields are set depends on ``kind``."""

    kind: NodeKind
    snapshot_id: int | None = None
    """SNAPSHOT, MANIFEST_LIST, MANIFEST, ENTRY: the snapshot whose manifest list leads here."""
    manifest: int | None = None
    """MANIFEST, ENTRY: the manifest's index in that manifest list."""
    position: int | None = None
    """ENTRY: the entry's position in the manifest."""
    group: Group | None = None
    item: Item | None = None
    name: str | None = None
    """REF: the ref name; ITEM: the schema/spec/sort order id or the property key."""

    @classmethod
    def parse(cls, text: str) -> NodeId:
        """The id written as ``text``; NotFound when it is not a node id."""
        prefix, _, rest = str(text).partition(":")
        try:
            kind = NodeKind(prefix)
            if kind is NodeKind.METADATA:
                if rest:
                    raise ValueError(rest)
                return cls(kind=kind)
            if kind is NodeKind.GROUP:
                return cls(kind=kind, group=Group(rest))
            if kind is NodeKind.REF:
                if not rest:
                    raise ValueError(rest)
                return cls(kind=kind, name=rest)
            if kind is NodeKind.ITEM:
                what, _, key = rest.partition(":")
                item = Item(what)
                if item is not Item.PROP:
                    key = str(int(key))  # schemas, specs and sort orders are named by their integer id
                return cls(kind=kind, item=item, name=key)
            numbers: list[int | None] = [int(part) for part in rest.split(":")]
            if len(numbers) != _NUMBERS[kind]:
                raise ValueError(rest)
            snapshot_id, manifest, position = (*numbers, None, None)[:3]
            return cls(kind=kind, snapshot_id=snapshot_id, manifest=manifest, position=position)
        except (ValueError, KeyError):
            raise NotFound(f"tree node {text!r}: not a node id of the metadata tree") from None

    def __str__(self) -> str:
        kind = self.kind
        if kind is NodeKind.METADATA:
            return kind.value
        if kind is NodeKind.GROUP:
            assert self.group is not None
            return f"{kind.value}:{self.group.value}"
        if kind is NodeKind.REF:
            return f"{kind.value}:{self.name}"
        if kind is NodeKind.ITEM:
            assert self.item is not None
            return f"{kind.value}:{self.item.value}:{self.name}"
        numbers = (self.snapshot_id, self.manifest, self.position)
        return ":".join([kind.value, *(str(n) for n in numbers if n is not None)])
