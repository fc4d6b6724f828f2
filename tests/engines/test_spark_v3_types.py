"""Spark's collected Arrow for the v3 types reshaped into icebook's form, without a JVM: the struct shapes
PySpark 4.1 gives (``to_arrow_type``) built by hand."""

from __future__ import annotations

import pyarrow as pa

from icebook.analysis.arrow_types import VARIANT_STORAGE
from icebook.engines.spark_v3_types import from_spark, type_spark_lacks
from icebook.errors import EngineError, UnsupportedFeature

SPARK_VARIANT = pa.struct(
    [
        pa.field("value", pa.binary(), nullable=False),
        pa.field("metadata", pa.binary(), nullable=False, metadata={b"variant": b"true"}),
    ]
)


def spark_geo(kind: str, srid: int) -> pa.DataType:
    wkb = pa.field("wkb", pa.binary(), nullable=False, metadata={kind.encode(): b"true", b"srid": str(srid).encode()})
    return pa.struct([pa.field("srid", pa.int32(), nullable=False), wkb])


def test_variant_and_geo_structs_take_icebooks_form() -> None:
    point = bytes.fromhex("0101000000000000000000F03F0000000000000040")
    variant = pa.array([{"value": b"\x0c\x01", "metadata": b"\x01\x00\x00"}, None], SPARK_VARIANT)
    geo = pa.array([{"srid": 4326, "wkb": point}, None], spark_geo("geography", 4326))
    nested = pa.StructArray.from_arrays(
        [pa.array([[{"srid": 3857, "wkb": point}], None], pa.list_(spark_geo("geometry", 3857)))], names=["shapes"]
    )
    table = pa.table({"id": [1, 2], "v": variant, "g": geo, "n": nested})
    out = from_spark(table)
    assert out.schema.field("v").type == VARIANT_STORAGE
    assert out.column("v").to_pylist() == [{"metadata": b"\x01\x00\x00", "value": b"\x0c\x01"}, None]
    assert out.schema.field("v").metadata == {
        b"ARROW:extension:name": b"arrow.parquet.variant",
        b"ARROW:extension:metadata": b"",
    }
    assert out.column("g").to_pylist() == [point, None]
    assert out.schema.field("g").metadata[b"ARROW:extension:metadata"] == (
        b'{"crs":"OGC:CRS84","crs_type":"authority_code","edges":"spherical"}'
    )
    shapes = out.schema.field("n").type.field("shapes").type.value_field
    assert shapes.type == pa.binary() and b"EPSG:3857" in shapes.metadata[b"ARROW:extension:metadata"]
    assert out.column("n").to_pylist() == [{"shapes": [point]}, {"shapes": None}]
    assert from_spark(pa.table({"id": [1]})).equals(pa.table({"id": [1]}))  # nothing else changes


def test_a_type_spark_lacks_is_one_line_naming_the_engine_that_reads_it() -> None:
    error = type_spark_lacks(
        EngineError("Cannot convert unsupported type to Spark: timestamptz_ns\n(while reading)"), "db.t"
    )
    assert isinstance(error, UnsupportedFeature)
    assert "timestamptz_ns" in str(error) and 'engine="arrow"' in str(error) and "\n" not in str(error)
    assert type_spark_lacks(EngineError("Table not found"), "db.t") is None
