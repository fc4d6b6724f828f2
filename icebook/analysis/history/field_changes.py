"""What changed, by id, between two schemas, two partition specs or two sort orders.

Spec ("Schema Evolution"): columns are tracked by field id, never by name or position, so a
rename, a reorder or a type promotion keeps the id, and a dropped-then-re-added column gets a
new id. Comparing by id is therefore the only way to say what really happened. Likewise
("Partition Evolution") partition fields are tracked by partition field id across specs.
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Iterable
from dataclasses import dataclass

from icebook.spec.partitioning import PartitionSpec
from icebook.spec.schema import Schema
from icebook.spec.sort_order import SortOrder
from icebook.spec.types import (
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    LONG,
    TIMESTAMP,
    TIMESTAMP_NS,
    DecimalType,
    IcebergType,
    ListType,
    MapType,
    NestedField,
    StructType,
    is_primitive,
)


class EpochKind(enum.StrEnum):
    """What evolves: a table's schemas, partition specs and sort orders."""

    SCHEMA = "schema"
    PARTITION_SPEC = "partition spec"
    SORT_ORDER = "sort order"


class ChangeKind(enum.StrEnum):
    """What happened to one field (str-valued: frames show the plain word)."""

    ADDED = "added"  # schemas, partition specs, sort orders
    DROPPED = "dropped"  # schemas
    RENAMED = "renamed"  # schemas, partition specs
    TYPE_PROMOTED = "type_promoted"
    TYPE_CHANGED = "type_changed"
    MOVED = "moved"
    NULLABILITY_CHANGED = "nullability_changed"
    DOC_CHANGED = "doc_changed"
    DEFAULT_CHANGED = "default_changed"
    IDENTIFIER_FIELDS_CHANGED = "identifier_fields_changed"
    REMOVED = "removed"  # partition specs, sort orders, properties
    TRANSFORM_CHANGED = "transform_changed"  # partition specs
    SOURCE_CHANGED = "source_changed"
    VOIDED = "voided"
    SPEC_NOW_USED = "spec_now_used"  # partition specs in a snapshot diff: files of it became live
    SPEC_NO_LONGER_USED = "spec_no_longer_used"
    CHANGED = "changed"  # sort orders, properties
    REORDERED = "reordered"  # sort orders
    SET = "set"  # properties


@dataclass(frozen=True, slots=True, kw_only=True)
class FieldChange:
    """One change of one field (schemas, partition specs), sort field (by position) or table property."""

    kind: ChangeKind
    field_id: int | None
    """The field id (schemas), partition field id (specs), or position (sort orders); None for
    whole-object changes such as the identifier fields."""
    name: str
    """The field's full name where it exists (the newer side when both do)."""
    before: str | None = None
    after: str | None = None

    def __str__(self) -> str:
        ident = f" (id {self.field_id})" if self.field_id is not None else ""
        if self.before is not None and self.after is not None:
            return f"{self.kind}: {self.name}{ident}: {self.before} -> {self.after}"
        detail = self.after if self.after is not None else self.before
        return f"{self.kind}: {self.name}{ident}" + (f": {detail}" if detail else "")


def _children(t: IcebergType) -> tuple[NestedField, ...]:
    if isinstance(t, StructType):
        return t.fields
    if isinstance(t, ListType):
        return (t.element,)
    if isinstance(t, MapType):
        return (t.key, t.value)
    return ()


def _parents(schema: Schema) -> dict[int, tuple[int, list[int]]]:
    """field id -> (parent field id or 0 for the root, ids of the parent's children in order)."""
    out: dict[int, tuple[int, list[int]]] = {}

    def walk(parent_id: int, t: IcebergType) -> None:
        kids = _children(t)
        ids = [f.field_id for f in kids]
        for f in kids:
            out[f.field_id] = (parent_id, ids)
            walk(f.field_id, f.type)

    walk(0, schema.fields)
    return out


# Spec ("Schema Evolution"): the valid primitive type promotions.
_PROMOTIONS = {(INT, LONG), (FLOAT, DOUBLE), (DATE, TIMESTAMP), (DATE, TIMESTAMP_NS)}


def _type_kind(old: IcebergType, new: IcebergType) -> ChangeKind | None:
    """type_promoted for a promotion the spec allows, type_changed otherwise, None if equal."""
    if not (is_primitive(old) and is_primitive(new)):
        # Nested types are compared through their children's ids; only a change of kind counts.
        return None if type(old) is type(new) else ChangeKind.TYPE_CHANGED
    if old == new:
        return None
    if (old, new) in _PROMOTIONS:
        return ChangeKind.TYPE_PROMOTED
    if isinstance(old, DecimalType) and isinstance(new, DecimalType):
        return ChangeKind.TYPE_PROMOTED  # decimal(P,S) -> decimal(P2,S) with P2 > P; Spark validates it
    return ChangeKind.TYPE_CHANGED


def schema_changes(old: Schema | None, new: Schema | None) -> tuple[FieldChange, ...]:
    """Changes from ``old`` to ``new`` by field id (either may be None: no schema known)."""
    if old is None or new is None or old is new:
        return ()
    out: list[FieldChange] = []
    old_names, new_names = old.id_to_name(), new.id_to_name()
    for fid, name in new_names.items():
        if fid not in old_names:
            f = new.find_field(fid)
            assert f is not None
            out.append(FieldChange(kind=ChangeKind.ADDED, field_id=fid, name=name, after=_describe(f)))
    for fid, name in old_names.items():
        if fid not in new_names:
            f = old.find_field(fid)
            assert f is not None
            out.append(FieldChange(kind=ChangeKind.DROPPED, field_id=fid, name=name, before=_describe(f)))
    old_parents, new_parents = _parents(old), _parents(new)
    moved = _moved(old_parents, new_parents)
    for fid, name in new_names.items():
        before, after = old.find_field(fid), new.find_field(fid)
        if before is None or after is None:
            continue
        if before.name != after.name:
            out.append(FieldChange(kind=ChangeKind.RENAMED, field_id=fid, name=name, before=old_names[fid], after=name))
        kind = _type_kind(before.type, after.type)
        if kind:
            out.append(FieldChange(kind=kind, field_id=fid, name=name, before=str(before.type), after=str(after.type)))
        if fid in moved:
            out.append(
                FieldChange(kind=ChangeKind.MOVED, field_id=fid, name=name, before=moved[fid][0], after=moved[fid][1])
            )
        if before.required != after.required:
            out.append(
                FieldChange(
                    kind=ChangeKind.NULLABILITY_CHANGED,
                    field_id=fid,
                    name=name,
                    before=_nullability(before),
                    after=_nullability(after),
                )
            )
        if before.doc != after.doc:
            out.append(
                FieldChange(kind=ChangeKind.DOC_CHANGED, field_id=fid, name=name, before=before.doc, after=after.doc)
            )
        if (before.initial_default, before.write_default) != (after.initial_default, after.write_default):
            out.append(
                FieldChange(
                    kind=ChangeKind.DEFAULT_CHANGED,
                    field_id=fid,
                    name=name,
                    before=f"initial={before.initial_default!r} write={before.write_default!r}",
                    after=f"initial={after.initial_default!r} write={after.write_default!r}",
                )
            )
    if tuple(old.identifier_field_ids) != tuple(new.identifier_field_ids):
        out.append(
            FieldChange(
                kind=ChangeKind.IDENTIFIER_FIELDS_CHANGED,
                field_id=None,
                name="identifier-field-ids",
                before=_names(old, old.identifier_field_ids),
                after=_names(new, new.identifier_field_ids),
            )
        )
    return tuple(out)


def _moved(old: dict[int, tuple[int, list[int]]], new: dict[int, tuple[int, list[int]]]) -> dict[int, tuple[str, str]]:
    """Fields whose parent changed, or whose order among surviving siblings changed.

    A drop or an add shifts positions without moving anything, so positions are compared only
    among siblings present on both sides, and the longest common order is taken as unmoved.
    """
    out: dict[int, tuple[str, str]] = {}
    for fid, (new_parent, _) in new.items():
        if fid in old and old[fid][0] != new_parent:
            out[fid] = (f"under field {old[fid][0] or 'root'}", f"under field {new_parent or 'root'}")
    seen_parents: set[int] = set()
    for _fid, (parent, new_siblings) in new.items():
        if parent in seen_parents:
            continue
        seen_parents.add(parent)
        old_siblings = next((sibs for p, sibs in old.values() if p == parent), [])
        common_new = [i for i in new_siblings if i in old and old[i][0] == parent]
        common_old = [i for i in old_siblings if i in set(common_new)]
        matcher = difflib.SequenceMatcher(a=common_old, b=common_new, autojunk=False)
        kept = {common_new[j] for block in matcher.get_matching_blocks() for j in range(block.b, block.b + block.size)}
        for i in common_new:
            if i not in kept:
                out[i] = (f"position {common_old.index(i) + 1}", f"position {common_new.index(i) + 1}")
    return out


def _describe(f: NestedField) -> str:
    text = f"{f.type} {_nullability(f)}"
    return f"{text}, doc {f.doc!r}" if f.doc else text


def _nullability(f: NestedField) -> str:
    return "required" if f.required else "optional"


def _names(schema: Schema, ids: Iterable[int]) -> str:
    return "[" + ", ".join(schema.find_column_name(i) or f"#{i}" for i in ids) + "]"


# ---------------------------------------------------------------- partition specs


def _source_names(schema: Schema | None, ids: Iterable[int]) -> str:
    if schema is None:
        return ",".join(f"#{i}" for i in ids)
    return ",".join(schema.find_column_name(i) or f"#{i}" for i in ids)


def spec_changes(
    old: PartitionSpec | None, new: PartitionSpec | None, schema: Schema | None
) -> tuple[FieldChange, ...]:
    """Changes from spec ``old`` to spec ``new`` by partition field id.

    Spec ("Partition Evolution"): in v1, a removed field is kept with the ``void`` transform,
    so a field turning ``void`` is reported as ``voided`` (a removal in effect).
    """
    if old is None or new is None or old == new:
        return ()
    out: list[FieldChange] = []
    old_ids = {f.field_id: f for f in old.fields}
    new_ids = {f.field_id: f for f in new.fields}
    for fid, f in new_ids.items():
        after = f"{f.transform}({_source_names(schema, f.source_ids)})"
        if fid not in old_ids:
            out.append(FieldChange(kind=ChangeKind.ADDED, field_id=fid, name=f.name, after=after))
            continue
        o = old_ids[fid]
        before = f"{o.transform}({_source_names(schema, o.source_ids)})"
        if o.name != f.name:
            out.append(FieldChange(kind=ChangeKind.RENAMED, field_id=fid, name=f.name, before=o.name, after=f.name))
        if f.transform.is_void and not o.transform.is_void:
            out.append(FieldChange(kind=ChangeKind.VOIDED, field_id=fid, name=f.name, before=before, after=after))
        elif str(o.transform) != str(f.transform):
            out.append(
                FieldChange(kind=ChangeKind.TRANSFORM_CHANGED, field_id=fid, name=f.name, before=before, after=after)
            )
        if o.source_ids != f.source_ids:
            out.append(
                FieldChange(kind=ChangeKind.SOURCE_CHANGED, field_id=fid, name=f.name, before=before, after=after)
            )
    for fid, o in old_ids.items():
        if fid not in new_ids:
            before = f"{o.transform}({_source_names(schema, o.source_ids)})"
            out.append(FieldChange(kind=ChangeKind.REMOVED, field_id=fid, name=o.name, before=before))
    return tuple(out)


# ---------------------------------------------------------------- sort orders


def _sort_field_text(order: SortOrder, index: int, schema: Schema | None) -> str:
    f = order.fields[index]
    return f"{f.transform}({_source_names(schema, f.source_ids)}) {f.direction} {f.null_order}"


def sort_order_changes(old: SortOrder | None, new: SortOrder | None, schema: Schema | None) -> tuple[FieldChange, ...]:
    """Changes from sort order ``old`` to ``new``; sort fields have no ids, so they are compared
    by (transform, source ids) and reported by position (1-based)."""
    if old is None or new is None or old == new:
        return ()
    out: list[FieldChange] = []

    def key(order: SortOrder, i: int) -> tuple[str, tuple[int, ...]]:
        return str(order.fields[i].transform), order.fields[i].source_ids

    old_keys = [key(old, i) for i in range(len(old.fields))]
    new_keys = [key(new, i) for i in range(len(new.fields))]
    for j, k in enumerate(new_keys):
        after, name = _sort_field_text(new, j, schema), _source_names(schema, k[1])
        if k not in old_keys:
            out.append(FieldChange(kind=ChangeKind.ADDED, field_id=j + 1, name=name, after=after))
            continue
        i = old_keys.index(k)
        before = _sort_field_text(old, i, schema)
        if before != after:
            out.append(FieldChange(kind=ChangeKind.CHANGED, field_id=j + 1, name=name, before=before, after=after))
        if i != j:
            out.append(
                FieldChange(kind=ChangeKind.REORDERED, field_id=j + 1, name=name, before=str(i + 1), after=str(j + 1))
            )
    for i, k in enumerate(old_keys):
        if k not in new_keys:
            before, name = _sort_field_text(old, i, schema), _source_names(schema, k[1])
            out.append(FieldChange(kind=ChangeKind.REMOVED, field_id=i + 1, name=name, before=before))
    return tuple(out)


def property_changes(old: dict[str, str] | None, new: dict[str, str] | None) -> tuple[FieldChange, ...]:
    """Table property changes (set, changed, removed); None means the properties are unknown."""
    if old is None or new is None:
        return ()
    out: list[FieldChange] = []
    for k in sorted(set(old) | set(new)):
        if k not in old:
            out.append(FieldChange(kind=ChangeKind.SET, field_id=None, name=k, after=new[k]))
        elif k not in new:
            out.append(FieldChange(kind=ChangeKind.REMOVED, field_id=None, name=k, before=old[k]))
        elif old[k] != new[k]:
            out.append(FieldChange(kind=ChangeKind.CHANGED, field_id=None, name=k, before=old[k], after=new[k]))
    return tuple(out)


def changes_frame_rows(changes: Iterable[FieldChange], what: str) -> list[dict[str, object]]:
    """Rows for a DataFrame: what (an ``EpochKind``, or ``property``), kind, field_id, name, before, after."""
    return [
        {
            "what": str(what),
            "kind": c.kind.value,
            "field_id": c.field_id,
            "name": c.name,
            "before": c.before,
            "after": c.after,
        }
        for c in changes
    ]
