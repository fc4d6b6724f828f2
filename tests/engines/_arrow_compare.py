"""Comparing icebook's Arrow reads with Spark's, as multisets of rows with Spark's column names and types."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from decimal import Decimal
from typing import Any

import pyarrow as pa


def spark_arrow(spark: Any, query: str) -> pa.Table:
    """A Spark query's result as Arrow (the session runs in UTC, so timestamps are UTC)."""
    df = spark.sql(query)
    batches = df._collect_as_arrow()
    if batches:
        return pa.Table.from_batches(batches)
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema).empty_table()


def plain_columns(schema: Any) -> list[str]:
    """The top-level columns of ``schema`` whose types hold no v3 variant, geometry or geography (each
    compared with Spark by a test of its own)."""
    special = ("variant", "geometry", "geography")
    return [f.name for f in schema.columns if not any(kind in str(f.type) for kind in special)]


def normal_type(t: pa.DataType) -> pa.DataType:
    if pa.types.is_timestamp(t) and t.tz is not None:
        return pa.timestamp(t.unit, tz="UTC")
    if pa.types.is_large_string(t):
        return pa.string()
    return t


def _normal_value(v: Any) -> Any:
    if isinstance(v, dt.datetime) and v.tzinfo is not None:
        return v.astimezone(dt.UTC)
    if isinstance(v, float) and v != v:
        return "NaN"
    if isinstance(v, Decimal):
        return v.normalize()
    if isinstance(v, dict):  # structs
        return tuple((k, _normal_value(x)) for k, x in v.items())
    if isinstance(v, list):  # lists, and maps as (key, value) pairs
        return tuple(_normal_value(x) for x in v)
    if isinstance(v, tuple):
        return tuple(_normal_value(x) for x in v)
    return v


def rows(table: pa.Table) -> Counter[tuple[Any, ...]]:
    return Counter(tuple(_normal_value(v) for v in row.values()) for row in table.to_pylist())


def assert_same(ours: pa.Table, theirs: pa.Table, what: str) -> None:
    assert ours.column_names == theirs.column_names, f"{what}: columns {ours.column_names} != {theirs.column_names}"
    our_types = [normal_type(f.type) for f in ours.schema]
    their_types = [normal_type(f.type) for f in theirs.schema]
    assert our_types == their_types, f"{what}: types {our_types} != {their_types}"
    mine, spark = rows(ours), rows(theirs)
    assert mine == spark, f"{what}: only icebook {mine - spark}, only Spark {spark - mine}"
