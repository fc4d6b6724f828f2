"""Comparing icebook's Arrow reads with Spark's, as multisets of rows with Spark's column names and types."""

from __future__ import annotations

import datetime as dt
from collections import Counter
from decimal import Decimal
from typing import Any

import pyarrow as pa


def spark_arrow(spark: Any, query: str) -> pa.Table:
    """A Spark query's result as Arrow (the session runs in UTC, so timestamps are UTC), its variant and geo
    structs in icebook's documented form (``from_spark``: a reshaping only, values moved as they are)."""
    from icebook.engines.spark_v3_types import from_spark

    df = spark.sql(query)
    batches = df._collect_as_arrow()
    if batches:
        return from_spark(pa.Table.from_batches(batches))
    from pyspark.sql.pandas.types import to_arrow_schema

    return from_spark(to_arrow_schema(df.schema).empty_table())


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


def extension_marks(schema: pa.Schema | pa.DataType, path: str = "") -> dict[str, tuple[Any, Any]]:
    """Every field's Arrow extension name and metadata (the v3 types' marks), by its dotted path."""
    out: dict[str, tuple[Any, Any]] = {}
    fields = list(schema) if isinstance(schema, pa.Schema) else [schema.field(i) for i in range(schema.num_fields)]
    for f in fields:
        meta = f.metadata or {}
        if b"ARROW:extension:name" in meta:
            out[path + f.name] = (meta[b"ARROW:extension:name"], meta.get(b"ARROW:extension:metadata"))
        if pa.types.is_struct(f.type):
            out |= extension_marks(f.type, f"{path}{f.name}.")
        elif pa.types.is_list(f.type) or pa.types.is_large_list(f.type):
            out |= extension_marks(pa.struct([f.type.value_field]), f"{path}{f.name}[].")
        elif pa.types.is_map(f.type):
            out |= extension_marks(pa.struct([f.type.key_field, f.type.item_field]), f"{path}{f.name}{{}}.")
    return out


def assert_same(ours: pa.Table, theirs: pa.Table, what: str, *, marks: bool = True) -> None:
    """Same columns, types and rows; with ``marks``, the same extension marks too (pandas keeps none)."""
    assert ours.column_names == theirs.column_names, f"{what}: columns {ours.column_names} != {theirs.column_names}"
    if marks:
        assert extension_marks(ours.schema) == extension_marks(theirs.schema), f"{what}: extension marks"
    our_types = [normal_type(f.type) for f in ours.schema]
    their_types = [normal_type(f.type) for f in theirs.schema]
    assert our_types == their_types, f"{what}: types {our_types} != {their_types}"
    mine, spark = rows(ours), rows(theirs)
    assert mine == spark, f"{what}: only icebook {mine - spark}, only Spark {spark - mine}"
