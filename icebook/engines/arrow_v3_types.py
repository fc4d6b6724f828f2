"""The v3 types in the Arrow engine: a file's ``variant`` and ``geometry``/``geography`` columns as
icebook's one Arrow form of each (``analysis/arrow_types.py``), and variants shown as JSON text.

A variant column is read as Parquet stores it: unshredded, a group of ``metadata`` and ``value``; shredded
(parquet-format ``VariantShredding.md``), ``value`` optional beside a ``typed_value`` of objects, arrays
and primitives. Both become ``<metadata, value>`` with the value rebuilt as one encoded variant, bytes for
bytes as Iceberg's Java reader (Spark's) rebuilds it. Every row's metadata and value are walked once:
bytes cut short or malformed are one ``MetadataError`` naming the data file and the column.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa

from icebook.analysis.arrow_types import VARIANT_STORAGE, arrow_type, holds
from icebook.spec import variant_encode as enc
from icebook.spec.types import VARIANT, GeoType, IcebergType, ListType, MapType
from icebook.spec.variant import VariantError, VariantMetadata, check, parse_metadata

Rows = list[bytes | None]
"""One encoded value per row; None where the value is missing (both ``value`` and ``typed_value`` null)."""


def is_v3_value(t: IcebergType) -> bool:
    return t == VARIANT or isinstance(t, GeoType)


def holds_v3_value(t: IcebergType) -> bool:
    """Whether a list or map of type ``t`` holds a variant or geo value somewhere (its elements are then
    conformed one by one, not cast)."""
    return holds(t, is_v3_value)


def conform_collection(
    arr: pa.Array, t: ListType | MapType, conform: Callable[[pa.Array, IcebergType], pa.Array]
) -> pa.Array:
    """A list or map column whose elements hold v3 values, each element conformed by ``conform``."""
    mask = arr.is_null() if arr.null_count else None
    if isinstance(t, ListType):
        values = conform(arr.values, t.element.type)
        return pa.ListArray.from_arrays(arr.offsets, values, type=arrow_type(t), mask=mask)
    keys, items = conform(arr.keys, t.key.type), conform(arr.items, t.value.type)
    return pa.MapArray.from_arrays(arr.offsets, keys, items, type=arrow_type(t), mask=mask)


def conform_v3(arr: pa.Array, t: IcebergType) -> pa.Array:
    """A file column of ``variant`` or geo type ``t`` in icebook's Arrow form; ``VariantError`` when its
    bytes are malformed (the reader names the file and column)."""
    if isinstance(t, GeoType):
        if pa.types.is_large_binary(arr.type) or pa.types.is_binary_view(arr.type):
            return arr.cast(pa.binary())
        if not pa.types.is_binary(arr.type):
            raise VariantError("value", f"a {t} column must hold WKB binary, found {arr.type}")
        return arr
    return _variant(arr)


def _variant(arr: pa.Array) -> pa.Array:
    if not pa.types.is_struct(arr.type) or arr.type.get_field_index("metadata") < 0:
        raise VariantError("value", f"a variant column must be a group with metadata and value, found {arr.type}")
    n = len(arr)
    present = [not null for null in arr.is_null().to_pylist()] if arr.null_count else [True] * n
    metadata = _binary(arr.field("metadata")).to_pylist()
    metas = _metas(metadata, present)
    value = _binary(arr.field("value")) if arr.type.get_field_index("value") >= 0 else None
    typed = arr.field("typed_value") if arr.type.get_field_index("typed_value") >= 0 else None
    if typed is None:
        if value is None:
            raise VariantError("value", "a variant group has neither value nor typed_value")
        values: Rows = value.to_pylist()
        for i in range(n):
            if present[i] and values[i] is not None:
                check(metas[i], values[i])  # type: ignore[arg-type]
    else:
        values = _rebuild(value, typed, metas)
    out_meta, out_value = [], []
    mask = []
    for i in range(n):
        ok = present[i] and metadata[i] is not None
        mask.append(not ok)
        out_meta.append(metadata[i] if ok else b"")
        out_value.append((values[i] if values[i] is not None else enc.NULL) if ok else b"")
    children = [pa.array(out_meta, pa.binary()), pa.array(out_value, pa.binary())]
    return pa.StructArray.from_arrays(
        children, fields=list(VARIANT_STORAGE), mask=pa.array(mask) if any(mask) else None
    )


def _binary(arr: pa.Array) -> pa.Array:
    return arr if pa.types.is_binary(arr.type) else arr.cast(pa.binary())


def _metas(metadata: Sequence[bytes | None], present: Sequence[bool]) -> list[VariantMetadata | None]:
    """Each row's parsed metadata, each distinct one parsed once."""
    seen: dict[bytes, VariantMetadata] = {}
    out: list[VariantMetadata | None] = []
    for raw, ok in zip(metadata, present, strict=True):
        if not ok or raw is None:
            out.append(None)
            continue
        meta = seen.get(raw)
        if meta is None:
            meta = seen[raw] = parse_metadata(raw)
        out.append(meta)
    return out


# ------------------------------------------------------------------------------ shredded variants


def _rebuild(value: pa.Array | None, typed: pa.Array, metas: Sequence[VariantMetadata | None]) -> Rows:
    """Each row's value rebuilt from ``value`` and ``typed_value`` (spec: "Reconstructing a Shredded
    Variant"); None where both are null (a missing object field)."""
    n = len(typed)
    values: Rows = value.to_pylist() if value is not None else [None] * n
    typed_null = typed.is_null().to_pylist() if typed.null_count else [False] * n
    if pa.types.is_struct(typed.type):
        fields = []
        for j in range(typed.type.num_fields):
            name = typed.type.field(j).name
            child = typed.field(j)
            child_value = child.field("value") if child.type.get_field_index("value") >= 0 else None
            child_typed = child.field("typed_value") if child.type.get_field_index("typed_value") >= 0 else None
            if child_typed is None:
                rows = _binary(child_value).to_pylist() if child_value is not None else [None] * n
            else:
                rows = _rebuild(_binary(child_value) if child_value is not None else None, child_typed, metas)
            fields.append((name, rows))
        out: Rows = []
        for i in range(n):
            meta = metas[i]
            if typed_null[i] or meta is None:
                out.append(_checked(meta, values[i]))
                continue
            members = [(enc.key_id(meta, name), name, rows[i]) for name, rows in fields if rows[i] is not None]
            if values[i] is not None:
                members += enc.object_fields(meta, values[i])  # type: ignore[arg-type]
            out.append(enc.encode_object(members))  # type: ignore[arg-type]
        return out
    if pa.types.is_list(typed.type) or pa.types.is_large_list(typed.type):
        element = typed.values
        element_value = element.field("value") if element.type.get_field_index("value") >= 0 else None
        element_typed = element.field("typed_value") if element.type.get_field_index("typed_value") >= 0 else None
        offsets = typed.offsets.to_pylist()
        owners: list[VariantMetadata | None] = [None] * len(element)
        for i in range(n):
            for k in range(offsets[i], offsets[i + 1]):
                owners[k] = metas[i]
        if element_typed is None:
            items: Rows = _binary(element_value).to_pylist() if element_value is not None else [None] * len(element)
        else:
            items = _rebuild(_binary(element_value) if element_value is not None else None, element_typed, owners)
        out = []
        for i in range(n):
            if typed_null[i]:
                out.append(_checked(metas[i], values[i]))
                continue
            out.append(enc.encode_array([x if x is not None else enc.NULL for x in items[offsets[i] : offsets[i + 1]]]))
        return out
    encode = _scalar_encoder(typed.type)
    raw = _raw(typed)
    return [_checked(metas[i], values[i]) if typed_null[i] else encode(raw[i]) for i in range(n)]


def _checked(meta: VariantMetadata | None, value: bytes | None) -> bytes | None:
    if value is not None and meta is not None:
        check(meta, value)
    return value


def _raw(arr: pa.Array) -> list[Any]:
    """Values as the variant encoding stores them: dates as days, times and timestamps as integers."""
    t = arr.type
    if pa.types.is_date32(t):
        return arr.cast(pa.int32()).to_pylist()
    if pa.types.is_timestamp(t) or pa.types.is_time64(t):
        return arr.cast(pa.int64()).to_pylist()
    if isinstance(t, pa.ExtensionType):
        return arr.storage.to_pylist()
    return arr.to_pylist()


def _scalar_encoder(t: pa.DataType) -> Callable[[Any], bytes]:
    """How one shredded primitive of Arrow type ``t`` is encoded (``VariantShredding.md``, "Shredded Value Types")."""
    if pa.types.is_boolean(t):
        return lambda v: enc.encode_scalar("bool", v)
    if pa.types.is_integer(t):
        size = t.bit_width // 8
        return lambda v: enc.encode_int(v, size)
    if pa.types.is_float32(t):
        return lambda v: enc.encode_scalar("float", v)
    if pa.types.is_float64(t):
        return lambda v: enc.encode_scalar("double", v)
    if pa.types.is_decimal(t):
        precision, scale = t.precision, t.scale
        return lambda v: enc.encode_decimal(v, precision, scale)
    if pa.types.is_date32(t):
        return lambda v: enc.encode_scalar("date", v)
    if pa.types.is_timestamp(t):
        kind = ("timestamp" if t.tz else "timestamp_ntz") + ("_nanos" if t.unit == "ns" else "")
        return lambda v: enc.encode_scalar(kind, v)
    if pa.types.is_time64(t):
        return lambda v: enc.encode_scalar("time", v)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return enc.encode_string
    if (pa.types.is_fixed_size_binary(t) and t.byte_width == 16) or isinstance(t, pa.ExtensionType):
        return lambda v: enc.encode_scalar("uuid", v)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return lambda v: enc.encode_scalar("binary", v)
    raise VariantError("value", f"a shredded typed_value of Arrow type {t} is not a variant type")


__all__ = ["conform_collection", "conform_v3", "holds_v3_value", "is_v3_value"]
