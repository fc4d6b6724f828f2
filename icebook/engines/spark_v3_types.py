"""Spark's Arrow for the v3 types, as icebook's one form of each (``analysis/arrow_types.py``).

PySpark collects a ``VARIANT`` as ``struct<value, metadata>`` (``metadata`` tagged ``variant: true``) and a
``GEOMETRY``/``GEOGRAPHY`` as ``struct<srid, wkb>`` (``wkb`` tagged ``geometry``/``geography`` and its SRID).
Here they become what the Arrow engine reads: ``<metadata, value>`` marked ``arrow.parquet.variant``, and
the WKB marked ``geoarrow.wkb`` with the CRS Spark's SRID stands for (Spark's own SRID table) and, for
geography, Spark's only edge interpolation, spherical. Nothing else changes; values are moved, not
re-encoded.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.arrow_types import VARIANT_STORAGE, extension_metadata
from icebook.errors import EngineError, UnsupportedFeature
from icebook.spec.types import VARIANT, GeoType

_LACKS = "Cannot convert unsupported type to Spark: "


def type_spark_lacks(exc: EngineError, table: str) -> UnsupportedFeature | None:
    """Spark's refusal of a type it has no counterpart for (Spark 4.1: ``timestamp_ns``, ``timestamptz_ns``)
    as one line saying so and what reads it, else None."""
    text = str(exc)
    if _LACKS not in text:
        return None
    kind = text.split(_LACKS, 1)[1].split()[0].strip(".,;")
    return UnsupportedFeature(
        f"Spark cannot read {table} at this point: its schema has a {kind} column and Spark has no such type; "
        'read it with engine="arrow"'
    )


def _tag(field: pa.Field, key: bytes) -> bytes | None:
    return (field.metadata or {}).get(key)


def _spark_geo(t: pa.DataType) -> tuple[str, int] | None:
    """(``geometry``/``geography``, SRID) when ``t`` is Spark's struct of a geo value."""
    if not pa.types.is_struct(t) or t.get_field_index("wkb") < 0 or t.get_field_index("srid") < 0:
        return None
    wkb = t.field("wkb")
    for kind in ("geometry", "geography"):
        if _tag(wkb, kind.encode()) == b"true":
            return kind, int(_tag(wkb, b"srid") or 0)
    return None


def _is_spark_variant(t: pa.DataType) -> bool:
    return (
        pa.types.is_struct(t)
        and t.get_field_index("metadata") >= 0
        and t.get_field_index("value") >= 0
        and _tag(t.field("metadata"), b"variant") == b"true"
    )


def geo_type(kind: str, srid: int) -> GeoType:
    """The Iceberg type of Spark's ``GEOMETRY(srid)``/``GEOGRAPHY(srid)``: the CRS by Spark's SRID table."""
    from pyspark.sql.geo_utils import CartesianSpatialReferenceSystemMapper

    crs = CartesianSpatialReferenceSystemMapper.get_string_id(srid)
    if crs is None:
        raise EngineError(f"Spark returned a {kind} with SRID {srid}, which has no CRS in Spark's table")
    return GeoType(kind, (crs, "spherical") if kind == "geography" else (crs,))


def _convert(arr: pa.Array, field: pa.Field) -> tuple[pa.Array, pa.Field]:
    t = arr.type
    mask = arr.is_null() if arr.null_count else None
    if _is_spark_variant(t):
        children = [arr.field("metadata"), arr.field("value")]
        out = pa.StructArray.from_arrays(children, fields=list(VARIANT_STORAGE), mask=mask)
        return out, pa.field(field.name, VARIANT_STORAGE, field.nullable, metadata=extension_metadata(VARIANT))
    if (geo := _spark_geo(t)) is not None:
        wkb = arr.field("wkb")
        if mask is not None:
            wkb = pc.if_else(mask, pa.scalar(None, pa.binary()), wkb)
        meta = extension_metadata(geo_type(*geo))
        return wkb, pa.field(field.name, pa.binary(), field.nullable, metadata=meta)
    if pa.types.is_struct(t):
        if not any(_changed(t)):
            return arr, field
        pairs = [_convert(arr.field(i), t.field(i)) for i in range(t.num_fields)]
        children, fields = [a for a, _ in pairs], [f for _, f in pairs]
        out = pa.StructArray.from_arrays(children, fields=fields, mask=mask)
        return out, pa.field(field.name, out.type, field.nullable, metadata=field.metadata)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        if not any(_changed(t)):
            return arr, field
        values, value_field = _convert(arr.values, t.value_field)
        list_type = pa.list_(value_field) if pa.types.is_list(t) else pa.large_list(value_field)
        out = type(arr).from_arrays(arr.offsets, values, type=list_type, mask=mask)
        return out, pa.field(field.name, list_type, field.nullable, metadata=field.metadata)
    if pa.types.is_map(t):
        if not any(_changed(t)):
            return arr, field
        keys, key_field = _convert(arr.keys, t.key_field)
        items, item_field = _convert(arr.items, t.item_field)
        map_type = pa.map_(key_field, item_field)
        out = pa.MapArray.from_arrays(arr.offsets, keys, items, type=map_type, mask=mask)
        return out, pa.field(field.name, map_type, field.nullable, metadata=field.metadata)
    return arr, field


def _changed(t: pa.DataType) -> list[bool]:
    """Whether ``t`` holds a Spark variant or geo struct anywhere."""
    if _is_spark_variant(t) or _spark_geo(t) is not None:
        return [True]
    if pa.types.is_struct(t):
        return [any(_changed(t.field(i).type)) for i in range(t.num_fields)]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _changed(t.value_type)
    if pa.types.is_map(t):
        return [any(_changed(t.key_type)), any(_changed(t.item_type))]
    return [False]


def from_spark(table: pa.Table) -> pa.Table:
    """``table`` (Spark's collected Arrow) with every variant and geo value in icebook's Arrow form."""
    if not any(any(_changed(f.type)) for f in table.schema):
        return table
    arrays, fields = [], []
    for column, field in zip(table.columns, table.schema, strict=True):
        if any(_changed(field.type)):
            chunk = column.combine_chunks() if column.num_chunks else pa.array([], field.type)
            arr, field = _convert(chunk, field)
            arrays.append(arr)
        else:
            arrays.append(column)
        fields.append(field)
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields, metadata=table.schema.metadata))


__all__ = ["from_spark", "geo_type", "type_spark_lacks"]
