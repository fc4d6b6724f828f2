"""Iceberg types as Arrow types (spec Appendix A, "Parquet": the same logical mapping).

The v3 types each have one Arrow form, the same from both engines (docs/ARCHITECTURE.md, "v3 types
in Arrow"): ``variant`` the struct ``<metadata: binary, value: binary>`` of its unshredded encoding,
``geometry``/``geography`` their WKB as ``binary``, both marked by their canonical extension names in
the field's metadata (``arrow_field``): ``arrow.parquet.variant``, and GeoArrow's ``geoarrow.wkb`` with
the CRS (and for ``geography`` the edges) in ``ARROW:extension:metadata``. Field metadata, not a
registered extension type, so that every Arrow consumer reads the storage and those that know the name
(polars, geoarrow-pyarrow through IPC) take the extension.
"""

from __future__ import annotations

import json
from collections.abc import Callable

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
    VARIANT,
    DecimalType,
    FixedType,
    GeoType,
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


VARIANT_EXTENSION = "arrow.parquet.variant"
GEOARROW_WKB = "geoarrow.wkb"
EXTENSION_NAME = b"ARROW:extension:name"
EXTENSION_METADATA = b"ARROW:extension:metadata"
VARIANT_STORAGE = pa.struct(
    [pa.field("metadata", pa.binary(), nullable=False), pa.field("value", pa.binary(), nullable=False)]
)
"""A variant in Arrow: its metadata and (unshredded) value bytes (parquet-format ``VariantEncoding.md``)."""
DEFAULT_CRS = "OGC:CRS84"
DEFAULT_EDGES = "spherical"


def geo_crs(t: GeoType) -> str:
    """The CRS of a ``geometry``/``geography`` type, the spec's default ``OGC:CRS84`` when not written."""
    return t.params[0] if t.params and t.params[0] else DEFAULT_CRS


def geoarrow_metadata(t: GeoType) -> str:
    """GeoArrow's ``ARROW:extension:metadata`` for ``t``: the CRS as Iceberg writes it (``crs_type``
    ``authority_code`` for ``<authority>:<code>``; a ``projjson:<property>`` reference left untyped), and
    for ``geography`` its edge interpolation (``spherical`` unless written); ``geometry`` is planar."""
    crs = geo_crs(t)
    out: dict[str, str] = {"crs": crs}
    if ":" in crs and not crs.lower().startswith("projjson:"):
        out["crs_type"] = "authority_code"
    if t.kind == "geography":
        out["edges"] = (t.params[1] if len(t.params) > 1 and t.params[1] else DEFAULT_EDGES).lower()
    return json.dumps(out, separators=(",", ":"))


def extension_metadata(t: IcebergType) -> dict[bytes, bytes] | None:
    """The field metadata naming ``t``'s Arrow extension (v3 ``variant``, ``geometry``, ``geography``)."""
    if t == VARIANT:
        return {EXTENSION_NAME: VARIANT_EXTENSION.encode(), EXTENSION_METADATA: b""}
    if isinstance(t, GeoType):
        return {EXTENSION_NAME: GEOARROW_WKB.encode(), EXTENSION_METADATA: geoarrow_metadata(t).encode()}
    return None


def arrow_field(name: str, t: IcebergType, nullable: bool, *, rows: bool = False) -> pa.Field:
    """The Arrow field of a value of ``t``: its type (``row_type`` with ``rows``) and extension metadata."""
    return pa.field(name, row_type(t) if rows else arrow_type(t), nullable=nullable, metadata=extension_metadata(t))


def arrow_type(t: IcebergType) -> pa.DataType:
    """The Arrow type that holds values of Iceberg type ``t``."""
    if isinstance(t, PrimitiveType):
        if t in _PRIMITIVE:
            return _PRIMITIVE[t]
        if t == VARIANT:
            return VARIANT_STORAGE
        raise UnsupportedFeature(f"no Arrow type for Iceberg type {t}")
    if isinstance(t, GeoType):
        return pa.binary()
    if isinstance(t, DecimalType):
        return pa.decimal128(t.precision, t.scale)
    if isinstance(t, FixedType):
        return pa.binary(t.length)
    if isinstance(t, StructType):
        return pa.struct([arrow_field(f.name, f.type, not f.required) for f in t.fields])
    if isinstance(t, ListType):
        return pa.list_(arrow_field("element", t.element.type, not t.element.required))
    if isinstance(t, MapType):
        key = arrow_field("key", t.key.type, False)
        return pa.map_(key, arrow_field("value", t.value.type, not t.value.required))
    raise UnsupportedFeature(f"no Arrow type for Iceberg type {t}")


def holds(t: IcebergType, test: Callable[[IcebergType], bool]) -> bool:
    """Whether ``t`` or a type nested in it (struct fields, list elements, map keys and values) passes ``test``."""
    if test(t):
        return True
    if isinstance(t, StructType):
        return any(holds(f.type, test) for f in t.fields)
    if isinstance(t, ListType):
        return holds(t.element.type, test)
    if isinstance(t, MapType):
        return holds(t.key.type, test) or holds(t.value.type, test)
    return False


def _has_uuid(t: IcebergType) -> bool:
    return holds(t, lambda x: x == UUID)


def row_type(t: IcebergType) -> pa.DataType:
    """The Arrow type of ``t`` in rows read from a table: ``arrow_type`` except that ``uuid`` values
    are canonical strings (``8-4-4-4-12`` lower-case hex), as Spark returns them, so that both
    engines answer alike."""
    if not _has_uuid(t):
        return arrow_type(t)
    if isinstance(t, PrimitiveType):
        return pa.string()
    if isinstance(t, StructType):
        return pa.struct([arrow_field(f.name, f.type, not f.required, rows=True) for f in t.fields])
    if isinstance(t, ListType):
        return pa.list_(arrow_field("element", t.element.type, not t.element.required, rows=True))
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
        fields = [arrow_field(f.name, f.type, not f.required, rows=True) for f in t.fields]
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
