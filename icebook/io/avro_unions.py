"""Strict optional values for the columnar Avro reader (run in the decoder worker).

polars-avro reads a two-branch union with ``null`` as a nullable column, and takes every branch index
other than the null branch's as the value branch: an index byte damaged into 2, 28 or -1 reads as a
value, where the Avro spec (and fastavro) reject it. Avro blocks carry no checksum, so such a byte
would decode silently into another answer (a DV's ``content_offset``, a file's size). The reader
checks the index of a union of three or more branches, so every optional value of the writer schema
is read as a union with a third, zero-byte branch no writer uses (``guard_unions``), and the decoded
columns are turned back into nullable ones (``unguard``). The reader rejects an index past the guard
or below zero, and (polars-avro 0.13) a row of a size-0 ``fixed`` too; should a row reach the guard
branch, ``unguard`` raises ``DamagedUnion``. Either way the manifest goes to the next decoder.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

_GUARD = "icebook_union_guard_"


class DamagedUnion(ValueError):
    """A value was read through the guard branch: its union index is one no writer wrote."""


def guard_unions(schema: Any) -> Any:
    """The Avro ``schema`` (parsed JSON) with every ``["null", T]`` / ``[T, "null"]`` union given a third
    branch: a ``fixed`` of size 0, which reads no byte, named afresh for each union."""
    names = (f"{_GUARD}{n}" for n in itertools.count())
    return _guarded(schema, names)


def _guarded(node: Any, names: Iterator[str]) -> Any:
    if isinstance(node, list):
        if len(node) == 2 and "null" in node:
            value = _guarded(node[1 - node.index("null")], names)
            branches = ["null", value] if node[0] == "null" else [value, "null"]
            return [*branches, {"type": "fixed", "name": next(names), "size": 0}]
        return [_guarded(branch, names) for branch in node]
    if isinstance(node, dict):
        kind = node.get("type")
        if kind in ("record", "error"):
            return {**node, "fields": [{**f, "type": _guarded(f["type"], names)} for f in node.get("fields", [])]}
        if kind == "array":
            return {**node, "items": _guarded(node["items"], names)}
        if kind == "map":
            return {**node, "values": _guarded(node["values"], names)}
    return node


def _is_guarded(kind: pa.DataType) -> bool:
    return (
        isinstance(kind, pa.UnionType)
        and kind.num_fields == 3
        and kind.field(2).name.rpartition(".")[2].startswith(_GUARD)
    )


def _holds_guard(kind: pa.DataType) -> bool:
    """Whether a guarded union is anywhere inside ``kind`` (the columns without one are kept as they are)."""
    if _is_guarded(kind):
        return True
    return any(_holds_guard(kind.field(i).type) for i in range(getattr(kind, "num_fields", 0) or 0))


def _nullable(array: pa.Array, rebuild: Callable[[pa.Array | None], pa.Array]) -> pa.Array:
    return rebuild(array.is_null() if array.null_count else None)


def unguard(array: pa.Array, column: str) -> pa.Array:
    """``array`` with each guarded union inside it read back as a nullable column of its value branch;
    DamagedUnion naming ``column`` when a row was read as the guard."""
    kind = array.type
    if not _holds_guard(kind):
        return array
    if _is_guarded(kind):
        union: pa.UnionArray = array
        if len(union.field(2)):
            raise DamagedUnion(f"{column}: a union branch index no writer writes")
        slot = 1 if pa.types.is_null(kind.field(0).type) else 0
        values = unguard(union.field(slot), column)
        if len(values) == len(union):  # every row holds a value: the dense child is the column, in order
            return values
        if not len(values):
            return pa.nulls(len(union), values.type)
        picks = pc.if_else(
            pc.equal(union.type_codes, kind.type_codes[slot]), union.offsets, pa.scalar(None, pa.int32())
        )
        return values.take(picks)
    if pa.types.is_struct(kind):
        children = [unguard(array.field(i), f"{column}.{kind.field(i).name}") for i in range(kind.num_fields)]
        fields = [kind.field(i).with_type(child.type).with_nullable(True) for i, child in enumerate(children)]
        return _nullable(array, lambda mask: pa.StructArray.from_arrays(children, fields=fields, mask=mask))
    if pa.types.is_map(kind):
        keys = unguard(array.keys, column)
        items = unguard(array.items, column)
        return _nullable(array, lambda mask: pa.MapArray.from_arrays(array.offsets, keys, items, mask=mask))
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        values = unguard(array.values, column)
        return _nullable(array, lambda mask: type(array).from_arrays(array.offsets, values, mask=mask))
    return array


def unguard_batch(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Every column of ``batch`` through ``unguard``."""
    if not any(_holds_guard(f.type) for f in batch.schema):
        return batch
    columns = [unguard(batch.column(i), f.name) for i, f in enumerate(batch.schema)]
    fields = [
        f.with_type(c.type).with_nullable(f.nullable or _holds_guard(f.type))
        for f, c in zip(batch.schema, columns, strict=True)
    ]
    return pa.RecordBatch.from_arrays(columns, schema=pa.schema(fields, metadata=batch.schema.metadata))


__all__ = ["DamagedUnion", "guard_unions", "unguard", "unguard_batch"]
