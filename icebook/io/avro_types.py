"""Avro types as Arrow types: the one map of Appendix A ("Avro"), for manifests' partition tuples
(``io/avro_schema.py``) and for Avro data and delete files (``io/datafiles.py``).

The Avro type decides and a logical type refines it where Iceberg writes one: ``decimal`` on fixed or
bytes, ``date`` on int, ``time-micros`` and the timestamps on long (UTC-adjusted when ``adjust-to-utc``
is true); a uuid is a ``fixed(16)``. A named type may be used again by its name, as Avro writers do
for a second decimal of the same precision and scale (Iceberg names it ``decimal_P_S``). Iceberg's
field ids (``field-id``, ``element-id``, ``key-id``, ``value-id``) become ``PARQUET:field_id``
metadata of the Arrow fields, the form every reader matches by id.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from icebook.errors import MetadataError, one_line

PARQUET_FIELD_ID = b"PARQUET:field_id"
"""The field metadata key of an Arrow field's Iceberg field id (Parquet's key, used for every format)."""
_MAX_DEPTH = 64  # as for metadata JSON: deeper is damage, and the recursion must stay bounded

_PRIMITIVES: dict[str, pa.DataType] = {
    "null": pa.null(),  # Iceberg's unknown type
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "bytes": pa.binary(),
}


class _NotIceberg(ValueError):
    """An Avro type Iceberg does not write, found at ``where``."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(problem)
        self.where = where
        self.problem = problem


@dataclass
class _Names:
    """Named types of one schema: converted once (a name used again costs nothing), and the ones
    being converted (a type that contains itself is no Iceberg type)."""

    done: dict[str, pa.DataType] = field(default_factory=dict)
    open: set[str] = field(default_factory=set)


def with_field_id(arrow_field: pa.Field, field_id: Any) -> pa.Field:
    """``arrow_field`` carrying ``field_id`` as its ``PARQUET:field_id`` (unchanged when None)."""
    return arrow_field if field_id is None else arrow_field.with_metadata({PARQUET_FIELD_ID: str(field_id).encode()})


def avro_arrow_type(avro: Any, *, file: str, where: str, kind: str) -> tuple[pa.DataType, bool]:
    """(Arrow type, nullable) of the Avro type ``avro`` (parsed JSON) that ``where`` of ``file`` has.

    A type Iceberg does not write, or malformed JSON, is a ``MetadataError`` naming ``file`` and the
    field (``where``, then the nested field names)."""
    try:
        return _convert(avro, where, _Names(), 0)
    except _NotIceberg as exc:
        raise MetadataError(file, exc.where, exc.problem, kind=kind) from None


def _at(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


def strip_null(avro: Any) -> Any:
    """The type of an Iceberg optional union ``["null", T]`` (a ``ValueError`` for any other union)."""
    return _non_null(avro, "")[0]


def _non_null(avro: Any, where: str) -> tuple[Any, bool]:
    """The type of an Iceberg optional union ``["null", T]`` and whether it is nullable."""
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        if len(branches) != 1:
            raise _NotIceberg(where, f"Avro union {avro!r} is not an Iceberg type (only [null, T] unions are)"[:300])
        return branches[0], len(branches) != len(avro)
    return avro, False


def _convert(avro: Any, where: str, names: _Names, depth: int) -> tuple[pa.DataType, bool]:
    if depth > _MAX_DEPTH:
        raise _NotIceberg(where, f"Avro type nested deeper than {_MAX_DEPTH} levels")
    t, nullable = _non_null(avro, where)
    if isinstance(t, str):
        if t in _PRIMITIVES:
            return _PRIMITIVES[t], nullable
        if t in names.done:
            return names.done[t], nullable
        if t in names.open:
            raise _NotIceberg(where, f"Avro type {t!r} contains itself (no Iceberg type does)")
        raise _NotIceberg(where, f"unknown Avro type {t[:100]!r}")
    if not isinstance(t, dict):
        raise _NotIceberg(where, f"unsupported Avro type {t!r}"[:300])
    base = t.get("type")
    name = t.get("name") if base in ("fixed", "record", "enum") else None
    if isinstance(name, str):
        names.open.add(name)
    try:
        arrow = _complex(t, base, where, names, depth)
    except _NotIceberg:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:  # pyarrow's errors are ValueErrors
        raise _NotIceberg(where, f"malformed Avro type ({one_line(exc)})"[:300]) from None
    if isinstance(name, str):
        names.open.discard(name)
        names.done[name] = arrow
    return arrow, nullable


def _complex(t: dict[str, Any], base: Any, where: str, names: _Names, depth: int) -> pa.DataType:
    logical = t.get("logicalType")
    if base == "fixed":
        if logical == "decimal":
            return pa.decimal128(int(t["precision"]), int(t.get("scale", 0)))
        size = int(t["size"])
        if size < 0:
            raise ValueError(f"negative fixed size {size}")
        return pa.binary(size)
    if base == "bytes":
        return pa.decimal128(int(t["precision"]), int(t.get("scale", 0))) if logical == "decimal" else pa.binary()
    if base == "int":
        return pa.date32() if logical == "date" else pa.int32()
    if base == "long":
        if logical == "time-micros":
            return pa.time64("us")
        if logical in ("timestamp-micros", "timestamp-nanos"):
            utc = str(t.get("adjust-to-utc")).lower() == "true"  # a boolean, or its text, as Iceberg's reader takes it
            return pa.timestamp("us" if logical == "timestamp-micros" else "ns", tz="UTC" if utc else None)
        return pa.int64()
    if base == "record":
        children = []
        for f in t["fields"]:
            child, child_nullable = _convert(f["type"], _at(where, f["name"]), names, depth + 1)
            children.append(with_field_id(pa.field(f["name"], child, nullable=child_nullable), f.get("field-id")))
        return pa.struct(children)
    if base == "array" and logical == "map":  # Iceberg's map with non-string keys: an array of key/value records
        entry, _ = _non_null(t["items"], where)
        key_f, value_f = entry["fields"]
        key, _ = _convert(key_f["type"], _at(where, "key"), names, depth + 1)
        value, value_nullable = _convert(value_f["type"], _at(where, "value"), names, depth + 1)
        return pa.map_(
            with_field_id(pa.field("key", key, nullable=False), key_f.get("field-id")),
            with_field_id(pa.field("value", value, nullable=value_nullable), value_f.get("field-id")),
        )
    if base == "array":
        element, element_nullable = _convert(t["items"], _at(where, "element"), names, depth + 1)
        return pa.list_(with_field_id(pa.field("element", element, nullable=element_nullable), t.get("element-id")))
    if base == "map":
        value, value_nullable = _convert(t["values"], _at(where, "value"), names, depth + 1)
        return pa.map_(
            with_field_id(pa.field("key", pa.string(), nullable=False), t.get("key-id")),
            with_field_id(pa.field("value", value, nullable=value_nullable), t.get("value-id")),
        )
    if isinstance(base, (str, list, dict)):  # {"type": <a type>}
        return _convert(base, where, names, depth + 1)[0]
    raise _NotIceberg(where, f"unsupported Avro type {t!r}"[:300])


__all__ = ["PARQUET_FIELD_ID", "avro_arrow_type", "strip_null", "with_field_id"]
