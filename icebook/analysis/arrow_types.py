"""Iceberg types as Arrow types (spec Appendix A, "Parquet": the same logical mapping)."""

from __future__ import annotations

import pyarrow as pa

from icebook.errors import UnsupportedFeature
from icebook.spec.types import (
    BINARY,
    BOOLEAN,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    LONG,
    STRING,
    TIME,
    TIMESTAMP,
    TIMESTAMP_NS,
    TIMESTAMPTZ,
    TIMESTAMPTZ_NS,
    UNKNOWN,
    UUID,
    DecimalType,
    FixedType,
    IcebergType,
    ListType,
    MapType,
    PrimitiveType,
    StructType,
)

_PRIMITIVE: dict[PrimitiveType, pa.DataType] = {
    BOOLEAN: pa.bool_(),
    INT: pa.int32(),
    LONG: pa.int64(),
    FLOAT: pa.float32(),
    DOUBLE: pa.float64(),
    DATE: pa.date32(),
    TIME: pa.time64("us"),
    TIMESTAMP: pa.timestamp("us"),
    TIMESTAMPTZ: pa.timestamp("us", tz="UTC"),
    TIMESTAMP_NS: pa.timestamp("ns"),
    TIMESTAMPTZ_NS: pa.timestamp("ns", tz="UTC"),
    STRING: pa.string(),
    UUID: pa.binary(16),
    BINARY: pa.binary(),
    UNKNOWN: pa.null(),
}


def arrow_type(t: IcebergType) -> pa.DataType:
    """The Arrow type that holds values of Iceberg type ``t``."""
    if isinstance(t, PrimitiveType):
        if t in _PRIMITIVE:
            return _PRIMITIVE[t]
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
