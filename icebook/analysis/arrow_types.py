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
