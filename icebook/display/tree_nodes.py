"""The metadata tree as plain JSON nodes, computed lazily one page at a time: the one tree walker.

metadata file -> snapshots / refs / schemas / specs / sort orders / properties;
snapshot -> manifest list -> manifests -> data and delete files (manifest entries).

``TreeSource`` is the only code that walks a table's tree: the live widget asks it for pages of
children over widget messages, and ``icebook.display.tree_render`` walks it for the static
``<details>`` HTML and for the command line's text tree.

A node is a small dict (JSON for the widget): ``id`` (a ``NodeId`` as text), ``kind``, ``label``,
``parts`` (file-name segments with their meaning), ``facts`` (name, value, flag), ``badges`` and ``n``
(number of children; 0 = leaf, None = unknown until read). Nothing here is HTML: the browser writes
these strings with ``textContent``, the static renderer escapes them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import fields as dc_fields
from functools import cached_property
from typing import Any

from icebook.analysis.store.manifests import spec_partition_type
from icebook.display._base import TableLike, base_name, constant_name, human_count
from icebook.display.tree_ids import Group, Item, NodeId, NodeKind
from icebook.errors import IcebookError, NotFound
from icebook.io.avro import read_manifest_entry
from icebook.spec.filenames import parse_file_name
from icebook.spec.manifest import DataFile, EntryStatus, FileContent, ManifestContent, ManifestEntry, ManifestFile
from icebook.spec.metadata import TableMetadata, commit_order, main_first
from icebook.spec.schema import columns_by_id
from icebook.spec.snapshots import Branch, Ref, Snapshot
from icebook.spec.transforms import human_value
from icebook.spec.types import IcebergType
from icebook.spec.values import decode_value, to_human
from icebook.text import byte_size, utc_text

PAGE = 200
Node = dict[str, Any]
_SUMMARY_FACTS = (
    ("added-data-files", "+files"),
    ("deleted-data-files", "-files"),
    ("added-delete-files", "+delete files"),
    ("added-records", "+records"),
    ("deleted-records", "-records"),
    ("total-records", "records"),
    ("total-data-files", "data files"),
    ("total-delete-files", "delete files"),
)


def _parts(path: str) -> list[list[str]]:
    return [[p.text, p.role, p.meaning] for p in parse_file_name(path).parts]


def _short(value: Any, limit: int = 48) -> str:
    text = str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TreeSource:
    """Answers the tree's questions about one table: nodes, pages of children, details."""

    def __init__(self, table: TableLike, page_size: int = PAGE) -> None:
        self.table = table
        self.page_size = page_size

    @property
    def metadata(self) -> TableMetadata:
        return self.table.metadata

    # ------------------------------------------------------------------ lookups

    @cached_property
    def columns(self) -> dict[int, tuple[str, IcebergType]]:
        """field id -> (name, type) over every schema, the newest schema naming each id."""
        return columns_by_id(sorted(self.metadata.schemas.values(), key=lambda s: s.schema_id))

    def _refs_of(self, snapshot_id: int) -> list[list[str]]:
        return [
            [name, "ib-branch" if isinstance(ref, Branch) else "ib-tag"]
            for name, ref in sorted(self.table.refs.items())
            if ref.snapshot_id == snapshot_id
        ]

    def _snapshot(self, node: NodeId) -> Snapshot:
        assert node.snapshot_id is not None
        return self.metadata.snapshot_by_id(node.snapshot_id)

    def _manifests(self, node: NodeId) -> tuple[ManifestFile, ...]:
        return self.table.store.manifest_list(self._snapshot(node))

    def _manifest(self, node: NodeId) -> ManifestFile:
        manifests = self._manifests(node)
        i = node.manifest
        if i is None or not 0 <= i < len(manifests):
            raise NotFound(f"manifest {i} of snapshot {node.snapshot_id}")
        return manifests[i]

    # ------------------------------------------------------------------ nodes

    def root(self, at: int | None = None) -> list[Node]:
        """The top nodes: the metadata file, or with ``at`` that one snapshot."""
        if at is None:
            return [self.metadata_node()]
        return [self.snapshot_node(self.metadata.snapshot_by_id(at))]

    def metadata_node(self) -> Node:
        md = self.metadata
        facts = [
            ["format", f"v{md.format_version}", ""],
            ["snapshots", human_count(len(md.snapshots)), ""],
            ["current", str(md.current_snapshot_id) if md.current_snapshot_id is not None else "none", ""],
            ["last seq", str(md.last_sequence_number), ""],
            ["updated", utc_text(md.last_updated_ms), ""],
        ]
        return {
            "id": str(NodeId(kind=NodeKind.METADATA)),
            "kind": "metadata",
            "label": base_name(self.table.metadata_location),
            "parts": _parts(self.table.metadata_location),
            "facts": facts,
            "badges": [],
            "n": len(Group),
        }

    def groups(self) -> list[Node]:
        md = self.metadata
        sizes = {
            Group.SNAPSHOTS: len(md.snapshots),
            Group.REFS: len(self.table.refs),
            Group.SCHEMAS: len(md.schemas),
            Group.SPECS: len(md.partition_specs),
            Group.SORTS: len(md.sort_orders),
            Group.PROPS: len(md.properties),
        }
        return [
            {
                "id": str(NodeId(kind=NodeKind.GROUP, group=g)),
                "kind": "group",
                "label": g.title,
                "facts": [],
                "badges": [],
                "n": n,
            }
            for g, n in sizes.items()
        ]

    def snapshot_node(self, s: Snapshot) -> Node:
        summary = s.summary or {}
        facts = [["op", s.operation or "?", "op"], ["at", utc_text(s.timestamp_ms), ""]]
        if s.sequence_number is not None:
            facts.append(["seq", str(s.sequence_number), ""])
        facts += [[label, human_count(int(summary[k])), ""] for k, label in _SUMMARY_FACTS if k in summary]
        if "total-files-size" in summary:
            facts.append(["size", byte_size(int(summary["total-files-size"])), ""])
        badges = self._refs_of(s.snapshot_id)
        if s.snapshot_id == self.metadata.current_snapshot_id:
            badges.append(["current", "ib-current"])
        return {
            "id": str(NodeId(kind=NodeKind.SNAPSHOT, snapshot_id=s.snapshot_id)),
            "kind": "snapshot",
            "label": str(s.snapshot_id),
            "facts": facts,
            "badges": badges,
            "n": 1 if s.manifest_list else 0,
        }

    def manifest_list_node(self, s: Snapshot) -> Node:
        path = s.manifest_list or ""
        return {
            "id": str(NodeId(kind=NodeKind.MANIFEST_LIST, snapshot_id=s.snapshot_id)),
            "kind": "manifest_list",
            "label": base_name(path),
            "parts": _parts(path),
            "facts": [["manifest list", "", ""]],
            "badges": [],
            "n": None,
        }

    def manifest_node(self, sid: int, index: int, m: ManifestFile) -> Node:
        inherited = {i.field for i in m.inherited}
        content = constant_name(ManifestContent, m.effective_content)
        facts = [
            ["content", content, "delete" if m.content == ManifestContent.DELETES else ""],
            ["spec", str(m.partition_spec_id), ""],
            ["seq", _opt(m.sequence_number), "inherited" if "sequence_number" in inherited else ""],
            ["min seq", _opt(m.min_sequence_number), "inherited" if "min_sequence_number" in inherited else ""],
            ["added by", _opt(m.added_snapshot_id), ""],
        ]
        for label, value, cls in (
            ("added", m.added_files_count, "added"),
            ("existing", m.existing_files_count, ""),
            ("deleted", m.deleted_files_count, "deleted"),
        ):
            if value:
                facts.append([label, human_count(value), cls])
        rows = sum(v or 0 for v in (m.added_rows_count, m.existing_rows_count, m.deleted_rows_count))
        facts += [["rows", human_count(rows), ""], ["length", byte_size(m.manifest_length), ""]]
        counts = (m.added_files_count, m.existing_files_count, m.deleted_files_count)
        n = None if any(c is None for c in counts) else sum(c or 0 for c in counts)
        return {
            "id": str(NodeId(kind=NodeKind.MANIFEST, snapshot_id=sid, manifest=index)),
            "kind": "manifest",
            "label": base_name(m.manifest_path),
            "parts": _parts(m.manifest_path),
            "facts": facts,
            "badges": [],
            "n": n,
        }

    def entry_nodes(self, node: NodeId, offset: int, limit: int) -> tuple[int, list[Node]]:
        m = self._manifest(node)
        entries = self.table.store.entries(m)
        total = entries.num_rows
        rows = entries.slice(offset, limit).to_pylist()
        spec_fields = spec_partition_type(self.metadata, m.partition_spec_id).fields
        assert node.snapshot_id is not None and node.manifest is not None
        return total, [
            self._entry_node(
                NodeId(kind=NodeKind.ENTRY, snapshot_id=node.snapshot_id, manifest=node.manifest, position=offset + j),
                row,
                spec_fields,
            )
            for j, row in enumerate(rows)
        ]

    def _entry_node(self, node: NodeId, row: Mapping[str, Any], spec_fields: Any) -> Node:
        status = constant_name(EntryStatus, row["status"])
        content = constant_name(FileContent, row["content"])
        facts = [
            ["status", status, status.lower()],
            ["content", content, "delete" if row["content"] != FileContent.DATA else ""],
            ["data seq", _opt(row["sequence_number"]), "inherited" if row.get("sequence_number_inherited") else ""],
            [
                "file seq",
                _opt(row["file_sequence_number"]),
                "inherited" if row.get("file_sequence_number_inherited") else "",
            ],
            ["partition", self.partition_text(row.get("partition"), spec_fields), ""],
            ["records", human_count(row["record_count"]), ""],
            ["size", byte_size(row["file_size_in_bytes"]), ""],
            ["format", str(row["file_format"]), ""],
        ]
        bounds = self.bounds_text(row.get("lower_bounds"), row.get("upper_bounds"), limit=3)
        if bounds:
            facts.append(["bounds", bounds, ""])
        if row.get("referenced_data_file"):
            facts.append(["refers to", base_name(row["referenced_data_file"]), ""])
        if row.get("content_offset") is not None:  # a deletion vector: its blob in the Puffin file
            where = f"offset {row['content_offset']}, {byte_size(row.get('content_size_in_bytes'))}"
            facts.append(["vector", where, f"{human_count(row['record_count'])} deleted"])
        if row.get("first_row_id") is not None and row["content"] == FileContent.DATA and row["record_count"]:
            first = row["first_row_id"]
            inherited = "inherited" if row.get("first_row_id_inherited") else ""
            facts.append(["row ids", f"{first}-{first + row['record_count'] - 1}", inherited])
        return {
            "id": str(node),
            "kind": "delete_file" if row["content"] != FileContent.DATA else "data_file",
            "label": base_name(row["file_path"]),
            "facts": facts,
            "badges": [],
            "n": 0,
        }

    def partition_text(self, partition: Mapping[str, Any] | None, spec_fields: Any) -> str:
        if not spec_fields:
            return "unpartitioned"
        values = list((partition or {}).values())
        pairs = []
        for i, f in enumerate(spec_fields):
            value = values[i] if i < len(values) else None
            pairs.append(f"{f.name}={human_value(value, f.type)}")
        return "(" + ", ".join(pairs) + ")"

    def decode_bound(self, field_id: int, raw: bytes | None) -> str:
        if raw is None:
            return "null"
        column = self.columns.get(field_id)
        if column is None:
            return "0x" + bytes(raw).hex().upper()
        try:
            return to_human(decode_value(bytes(raw), column[1]), column[1])
        except (IcebookError, ValueError, TypeError):
            return "0x" + bytes(raw).hex().upper()

    def bounds_text(self, lower: Any, upper: Any, limit: int | None = None) -> str:
        lo = dict(lower or [])
        hi = dict(upper or [])
        parts = []
        for fid in sorted(set(lo) | set(hi)):
            name = self.columns.get(fid, (str(fid), None))[0]
            parts.append(
                f"{name}: {_short(self.decode_bound(fid, lo.get(fid)), 24)} … {_short(self.decode_bound(fid, hi.get(fid)), 24)}"
            )
        if limit is not None and len(parts) > limit:
            parts = [*parts[:limit], f"+{len(parts) - limit} more"]
        return "; ".join(parts)

    # ------------------------------------------------------------------ children (paged)

    def children(self, node_id: str | NodeId, offset: int = 0, limit: int | None = None) -> tuple[int, list[Node]]:
        """(total number of children, one page of them) for the node ``node_id``."""
        node = node_id if isinstance(node_id, NodeId) else NodeId.parse(node_id)
        return self._child_pages[node.kind](self, node, offset, limit or self.page_size)

    def _group_children(self, node: NodeId, offset: int, limit: int) -> tuple[int, list[Node]]:
        md = self.metadata
        group = node.group
        if group is Group.SNAPSHOTS:  # newest first; only the page is built
            snaps = sorted(md.snapshots, key=commit_order, reverse=True)
            return len(snaps), [self.snapshot_node(s) for s in snaps[offset : offset + limit]]
        items: list[Node]
        if group is Group.REFS:
            items = [self.ref_node(name) for name in sorted(self.table.refs, key=main_first)]
        elif group is Group.PROPS:
            items = [
                self.leaf(NodeId(kind=NodeKind.ITEM, item=Item.PROP, name=k), "property", k, [["=", v, ""]])
                for k, v in sorted(md.properties.items())
            ]
        else:
            item, kind, by_id = {
                Group.SCHEMAS: (Item.SCHEMA, "schema", md.schemas),
                Group.SPECS: (Item.SPEC, "spec", md.partition_specs),
                Group.SORTS: (Item.SORT, "sort_order", md.sort_orders),
            }[group]  # type: ignore[index]
            items = [
                self.leaf(NodeId(kind=NodeKind.ITEM, item=item, name=str(i)), kind, str(obj), [])
                for i, obj in sorted(by_id.items())
            ]
        return _page(items, offset, limit)

    def _ref_children(self, node: NodeId, offset: int, limit: int) -> tuple[int, list[Node]]:
        ref = self._ref(node)
        return _page([self.snapshot_node(self.metadata.snapshot_by_id(ref.snapshot_id))], offset, limit)

    def _manifest_list_children(self, node: NodeId, offset: int, limit: int) -> tuple[int, list[Node]]:
        manifests = self._manifests(node)
        assert node.snapshot_id is not None
        page = manifests[offset : offset + limit]
        return len(manifests), [self.manifest_node(node.snapshot_id, offset + i, m) for i, m in enumerate(page)]

    _child_pages: Mapping[NodeKind, Callable[[TreeSource, NodeId, int, int], tuple[int, list[Node]]]] = {
        NodeKind.METADATA: lambda self, node, offset, limit: _page(self.groups(), offset, limit),
        NodeKind.GROUP: _group_children,
        NodeKind.REF: _ref_children,
        NodeKind.SNAPSHOT: lambda self, node, offset, limit: _page(
            [self.manifest_list_node(self._snapshot(node))], offset, limit
        ),
        NodeKind.MANIFEST_LIST: _manifest_list_children,
        NodeKind.MANIFEST: entry_nodes,
        NodeKind.ENTRY: lambda self, node, offset, limit: (0, []),
        NodeKind.ITEM: lambda self, node, offset, limit: (0, []),
    }

    def _ref(self, node: NodeId) -> Ref:
        ref = self.table.refs.get(node.name or "")
        if ref is None:
            raise NotFound(f"no branch or tag named {node.name!r}", available=sorted(self.table.refs))
        return ref

    def ref_node(self, name: str) -> Node:
        ref = self.table.refs[name]
        kind = "branch" if isinstance(ref, Branch) else "tag"
        return {
            "id": str(NodeId(kind=NodeKind.REF, name=name)),
            "kind": "ref",
            "label": name,
            "facts": [["type", kind, kind], ["snapshot", str(ref.snapshot_id), ""]],
            "badges": [],
            "n": 1 if ref.snapshot_id in {s.snapshot_id for s in self.metadata.snapshots} else 0,
        }

    @staticmethod
    def leaf(node: NodeId, kind: str, label: str, facts: list[list[str]]) -> Node:
        return {"id": str(node), "kind": kind, "label": label, "facts": facts, "badges": [], "n": 0}

    # ------------------------------------------------------------------ details

    def details(self, node_id: str | NodeId) -> dict[str, Any]:
        """Title, file-name parts and (field, value, spec explanation, inheritance note) rows."""
        node = node_id if isinstance(node_id, NodeId) else NodeId.parse(node_id)
        return self._detail_builders[node.kind](self, node)

    def _metadata_details(self, node: NodeId) -> dict[str, Any]:
        rows = _model_rows(self.metadata, skip={"snapshots", "snapshot_log", "metadata_log", "wire_keys"})
        return _details("Table metadata", self.table.metadata_location, rows)

    def _snapshot_details(self, node: NodeId) -> dict[str, Any]:
        s = self._snapshot(node)
        return _details(f"Snapshot {s.snapshot_id}", None, _model_rows(s))

    def _manifest_list_details(self, node: NodeId) -> dict[str, Any]:
        s = self._snapshot(node)
        rows = [["manifest_list", _opt(s.manifest_list), s.FIELD_DOCS["manifest_list"], ""]]
        return _details("Manifest list", s.manifest_list, rows)

    def _manifest_details(self, node: NodeId) -> dict[str, Any]:
        m = self._manifest(node)
        return _details("Manifest", m.manifest_path, _model_rows(m, explain=m.explain))

    def _entry_details(self, node: NodeId) -> dict[str, Any]:
        entry = read_manifest_entry(self.table.fileio, self._manifest(node), node.position or 0)
        return _details(f"Manifest entry {node.position}", entry.data_file.file_path, self.entry_rows(entry))

    def _ref_details(self, node: NodeId) -> dict[str, Any]:
        ref = self._ref(node)
        return _details(f"{ref.type.capitalize()} {node.name}", None, _model_rows(ref))

    def _item_details(self, node: NodeId) -> dict[str, Any]:
        md = self.metadata
        key = node.name or ""
        if node.item is Item.PROP:
            doc = md.FIELD_DOCS["properties"]
            return _details(f"Property {key}", None, [[key, _opt(md.properties.get(key)), doc, ""]])
        by_id: Mapping[int, Any] = {Item.SCHEMA: md.schemas, Item.SPEC: md.partition_specs, Item.SORT: md.sort_orders}[
            node.item  # type: ignore[index]
        ]
        obj = by_id.get(int(key))  # NodeId.parse checked that it is a number
        return _details(str(obj), None, _model_rows(obj) if obj is not None else [])

    _detail_builders: Mapping[NodeKind, Callable[[TreeSource, NodeId], dict[str, Any]]] = {
        NodeKind.METADATA: _metadata_details,
        NodeKind.GROUP: lambda self, node: _details(str(node.group and node.group.value).capitalize(), None, []),
        NodeKind.REF: _ref_details,
        NodeKind.SNAPSHOT: _snapshot_details,
        NodeKind.MANIFEST_LIST: _manifest_list_details,
        NodeKind.MANIFEST: _manifest_details,
        NodeKind.ENTRY: _entry_details,
        NodeKind.ITEM: _item_details,
    }

    def entry_rows(self, entry: ManifestEntry) -> list[list[str]]:
        rows: list[list[str]] = []
        for name in ("status", "snapshot_id", "sequence_number", "file_sequence_number"):
            value = getattr(entry, name)
            text = constant_name(EntryStatus, value) if name == "status" else _opt(value)
            rows.append([name, text, entry.FIELD_DOCS.get(name, ""), entry.explain(name) or ""])
        df = entry.data_file
        spec_fields = spec_partition_type(self.metadata, df.spec_id).fields
        for f in dc_fields(DataFile):
            name = f.name
            if name == "partition_field_ids":
                continue
            value = getattr(df, name)
            if name == "content":
                text = constant_name(FileContent, value)
            elif name == "partition":
                text = self.partition_text(value, spec_fields)
            elif name in ("lower_bounds", "upper_bounds"):
                text = "" if value is None else self._named_map({k: self.decode_bound(k, v) for k, v in value.items()})
            elif isinstance(value, Mapping):
                text = self._named_map(value)
            elif isinstance(value, bytes):
                text = "0x" + value.hex().upper()
            else:
                text = _opt(value)
            rows.append([f"data_file.{name}", text, DataFile.FIELD_DOCS.get(name, ""), entry.explain(name) or ""])
        return rows

    def _named_map(self, value: Mapping[int, Any]) -> str:
        return "; ".join(f"{k} {self.columns.get(k, ('?', None))[0]}: {v}" for k, v in sorted(value.items()))


def _page(items: Sequence[Node], offset: int, limit: int) -> tuple[int, list[Node]]:
    return len(items), list(items[offset : offset + limit])


def _opt(value: Any) -> str:
    return "null" if value is None else str(value)


def _details(title: str, path: str | None, rows: list[list[str]]) -> dict[str, Any]:
    return {"title": title, "path": path or "", "parts": _parts(path) if path else [], "rows": rows}


def _model_rows(obj: Any, *, skip: frozenset[str] | set[str] = frozenset(), explain: Any = None) -> list[list[str]]:
    docs: Mapping[str, str] = getattr(obj, "FIELD_DOCS", {})
    rows = []
    for f in dc_fields(obj):
        if f.name.startswith("_") or f.name in skip or f.name in ("FIELD_DOCS",):
            continue
        value = getattr(obj, f.name)
        rows.append([f.name, _value_text(value), docs.get(f.name, ""), (explain(f.name) if explain else None) or ""])
    return rows


def _value_text(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        return "; ".join(f"{k}: {_value_text(v)}" for k, v in value.items())
    if isinstance(value, (tuple, list, frozenset, set)):
        if not value:
            return "[]"
        return "; ".join(_value_text(v) for v in value)
    if isinstance(value, bytes):
        return "0x" + value.hex().upper()
    return str(value)
