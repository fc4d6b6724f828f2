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
