"""Iceberg types as Arrow types (spec Appendix A, "Parquet": the same logical mapping)."""

from __future__ import annotations

import pyarrow as pa

from icebook.errors import UnsupportedFeature
from icebook.spec.types import DecimalType, FixedType, IcebergType, ListType, MapType, PrimitiveType, StructType

_PRIMITIVE: dict[str, pa.DataType] = {
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "date": pa.date32(),
    "time": pa.time64("us"),
    "timestamp": pa.timestamp("us"),
    "timestamptz": pa.timestamp("us", tz="UTC"),
    "timestamp_ns": pa.timestamp("ns"),
    "timestamptz_ns": pa.timestamp("ns", tz="UTC"),
    "string": pa.string(),
    "uuid": pa.binary(16),
    "binary": pa.binary(),
    "unknown": pa.null(),
}


def arrow_type(t: IcebergType) -> pa.DataType:
    """The Arrow type that holds values of Iceberg type ``t``."""
    if isinstance(t, PrimitiveType):
        if t.name in _PRIMITIVE:
            return _PRIMITIVE[t.name]
        raise UnsupportedFeature(f"no Arrow type for Iceberg type {t}")
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, FixedType):
        return pa.binary(t.length)
    if isinstance(t, StructType):
        return pa.struct([pa.field(f.name, arrow_type(f.type), nullable=not f.required) for f in t.fields])
    if isinstance(t, ListType):
        return pa.list_(pa.field("element", arrow_type(t.element.type), nullable=not t.element.required))
    if isinstance(t, MapType):
        return pa.map_(arrow_type(t.key.type), arrow_type(t.value.type))
    raise UnsupportedFeature(f"no Arrow type for Iceberg type {t}")


def _has_uuid(t: IcebergType) -> bool:
    if isinstance(t, PrimitiveType):
        return t.name == "uuid"
    if isinstance(t, StructType):
        return any(_has_uuid(f.type) for f in t.fields)
    if isinstance(t, ListType):
        return _has_uuid(t.element.type)
    if isinstance(t, MapType):
        return _has_uuid(t.key.type) or _has_uuid(t.value.type)
    return False


def row_type(t: IcebergType) -> pa.DataType:
    """The Arrow type of ``t`` in rows read from a table: ``arrow_type`` except that ``uuid`` values
    are canonical strings (``8-4-4-4-12`` lower-case hex), as Spark returns them, so that both
    engines answer alike."""
    if not _has_uuid(t):
        return arrow_type(t)
    if isinstance(t, PrimitiveType):
        return pa.string()
    if isinstance(t, StructType):
        return pa.struct([pa.field(f.name, row_type(f.type), nullable=not f.required) for f in t.fields])
    if isinstance(t, ListType):
        return pa.list_(pa.field("element", row_type(t.element.type), nullable=not t.element.required))
    assert isinstance(t, MapType)
    return pa.map_(row_type(t.key.type), row_type(t.value.type))


def uuid_as_string(arr: pa.Array | pa.ChunkedArray, t: IcebergType) -> pa.Array:
    """Values of Iceberg type ``t`` held as ``arrow_type(t)``, converted to ``row_type(t)``."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if not _has_uuid(t):
        return arr
    if isinstance(t, PrimitiveType):
        import uuid

        return pa.array([None if v is None else str(uuid.UUID(bytes=v)) for v in arr.to_pylist()], pa.string())
    if isinstance(t, StructType):
        children = [uuid_as_string(arr.field(i), f.type) for i, f in enumerate(t.fields)]
        fields = [pa.field(f.name, row_type(f.type), nullable=not f.required) for f in t.fields]
        return pa.StructArray.from_arrays(children, fields=fields, mask=arr.is_null() if arr.null_count else None)
    if isinstance(t, ListType):
        values = uuid_as_string(arr.values, t.element.type)
        return pa.ListArray.from_arrays(
            arr.offsets, values, type=row_type(t), mask=arr.is_null() if arr.null_count else None
        )
    assert isinstance(t, MapType)
    keys = uuid_as_string(arr.keys, t.key.type)
    items = uuid_as_string(arr.items, t.value.type)
    return pa.MapArray.from_arrays(
        arr.offsets, keys, items, type=row_type(t), mask=arr.is_null() if arr.null_count else None
    )
