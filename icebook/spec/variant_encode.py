"""Encoding variant values (parquet-format ``VariantEncoding.md``): what a reader needs to rebuild a
shredded variant (``VariantShredding.md``, "Reconstructing a Shredded Variant") as one value.

Sizes follow Iceberg's Java writer, so a rebuilt value has the bytes Spark's reader gives: the fewest
bytes for ids and offsets, ``is_large`` only above 255 elements, object fields sorted by key (unsigned
byte order of UTF-8) and their values written in that order, strings under 64 bytes as short strings.
"""

from __future__ import annotations

import datetime as _dt
import struct
import uuid as _uuid
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from icebook.spec.variant import VariantError, VariantMetadata, _container, _meta, value_size
from icebook.text import EPOCH_DATE

NULL = b"\x00"


def _width(n: int) -> int:
    return 1 if n <= 0xFF else 2 if n <= 0xFFFF else 3 if n <= 0xFFFFFF else 4


def _primitive(type_id: int, payload: bytes = b"") -> bytes:
    return bytes([type_id << 2]) + payload


def encode_metadata(keys: Sequence[str], *, sorted_strings: bool = False) -> bytes:
    """A version-1 metadata whose dictionary holds ``keys`` in the order given, with the fewest offset bytes."""
    raw = [k.encode("utf-8") for k in keys]
    offsets, at = [0], 0
    for k in raw:
        at += len(k)
        offsets.append(at)
    size = _width(max(at, len(raw)))
    header = 0x01 | (0x10 if sorted_strings else 0) | ((size - 1) << 6)
    numbers = [len(raw), *offsets]
    return bytes([header]) + b"".join(n.to_bytes(size, "little") for n in numbers) + b"".join(raw)


def encode_string(text: str) -> bytes:
    raw = text.encode("utf-8")
    if len(raw) < 64:
        return bytes([(len(raw) << 2) | 1]) + raw
    return _primitive(16, struct.pack("<I", len(raw)) + raw)


def encode_int(value: int, size: int) -> bytes:
    """An int8/16/32/64 (``size`` bytes) as the Parquet column's type says."""
    return _primitive({1: 3, 2: 4, 4: 5, 8: 6}[size], value.to_bytes(size, "little", signed=True))


def encode_decimal(value: Decimal, precision: int, scale: int) -> bytes:
    """decimal4/8/16 by the column's precision (as Parquet stores it: INT32, INT64, else bytes), at the
    column's scale."""
    unscaled = int(value.scaleb(scale))
    type_id, size = (8, 4) if precision <= 9 else (9, 8) if precision <= 18 else (10, 16)
    return _primitive(type_id, bytes([scale]) + unscaled.to_bytes(size, "little", signed=True))


def encode_scalar(kind: str, value: Any, *, precision: int = 0, scale: int = 0, size: int = 8) -> bytes:
    """One shredded primitive ``value`` of Arrow ``kind`` (``bool``, ``int``, ``float``, ``double``,
    ``decimal``, ``date``, ``timestamp``/``timestamp_ntz`` (µs) or ``_nanos``, ``time``, ``binary``,
    ``string``, ``uuid``) as a variant value."""
    if kind == "bool":
        return _primitive(1 if value else 2)
    if kind == "int":
        return encode_int(value, size)
    if kind == "double":
        return _primitive(7, struct.pack("<d", value))
    if kind == "float":
        return _primitive(14, struct.pack("<f", value))
    if kind == "decimal":
        return encode_decimal(value, precision, scale)
    if kind == "date":
        return _primitive(11, struct.pack("<i", value))
    if kind in ("timestamp", "timestamp_ntz", "timestamp_nanos", "timestamp_ntz_nanos", "time"):
        type_id = {"timestamp": 12, "timestamp_ntz": 13, "time": 17, "timestamp_nanos": 18, "timestamp_ntz_nanos": 19}
        return _primitive(type_id[kind], struct.pack("<q", value))
    if kind == "binary":
        return _primitive(15, struct.pack("<I", len(value)) + bytes(value))
    if kind == "string":
        return encode_string(value)
    if kind == "uuid":
        return _primitive(20, value.bytes if isinstance(value, _uuid.UUID) else bytes(value))
    raise VariantError("value", f"cannot shred a {kind} value")


def encode_array(elements: Sequence[bytes]) -> bytes:
    data = b"".join(elements)
    offset_size, large = _width(len(data)), len(elements) > 0xFF
    header = ((int(large) << 2) | (offset_size - 1)) << 2 | 3
    offsets, at = [], 0
    for e in elements:
        offsets.append(at)
        at += len(e)
    offsets.append(at)
    count = len(elements).to_bytes(4 if large else 1, "little")
    return bytes([header]) + count + b"".join(o.to_bytes(offset_size, "little") for o in offsets) + data


def encode_object(fields: Sequence[tuple[int, str, bytes]]) -> bytes:
    """An object of (key id, key, encoded value) fields, sorted by key."""
    ordered = sorted(fields, key=lambda f: f[1].encode("utf-8"))
    data = b"".join(f[2] for f in ordered)
    id_size = _width(max((f[0] for f in ordered), default=0))
    offset_size, large = _width(len(data)), len(ordered) > 0xFF
    header = ((int(large) << 4) | ((id_size - 1) << 2) | (offset_size - 1)) << 2 | 2
    offsets, at = [], 0
    for f in ordered:
        offsets.append(at)
        at += len(f[2])
    offsets.append(at)
    return (
        bytes([header])
        + len(ordered).to_bytes(4 if large else 1, "little")
        + b"".join(f[0].to_bytes(id_size, "little") for f in ordered)
        + b"".join(o.to_bytes(offset_size, "little") for o in offsets)
        + data
    )


def object_fields(metadata: bytes | VariantMetadata, value: bytes) -> list[tuple[int, str, bytes]]:
    """The (key id, key, encoded value) fields of an encoded object (a partially shredded object's rest)."""
    meta = _meta(metadata)
    first = value[0] if value else None
    if first is None or first & 0x03 != 2:
        raise VariantError("value", "a partially shredded value is not an object")
    container = _container(value, 0, first >> 2, 2)
    assert container.ids is not None
    out = []
    for key, offset in zip(container.ids, container.offsets, strict=False):
        if key >= len(meta.keys):
            raise VariantError("value", f"field id {key} is outside the dictionary of {len(meta.keys)}")
        start = container.first + offset
        out.append((key, meta.keys[key], bytes(value[start : start + value_size(value, start)])))
    return out


def key_id(meta: VariantMetadata, key: str) -> int:
    """The dictionary id of ``key`` (every key of a shredded object must be in the metadata)."""
    try:
        return meta.keys.index(key)
    except ValueError:
        raise VariantError("metadata", f"the shredded field {key!r} is not in the dictionary") from None


def days(value: _dt.date) -> int:
    return (value - EPOCH_DATE).days


__all__ = [
    "NULL",
    "days",
    "encode_array",
    "encode_decimal",
    "encode_int",
    "encode_metadata",
    "encode_object",
    "encode_scalar",
    "encode_string",
    "key_id",
    "object_fields",
]
