"""Rows compared with Spark's as multisets after normalising representation only (timestamps to epoch
microseconds, missing values to None, maps to dicts); values themselves are never adjusted."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def norm(value: Any) -> Any:
    """A canonical Python value for comparison."""
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if hasattr(value, "asDict"):  # pyspark Row
        return {k: norm(v) for k, v in value.asDict(recursive=False).items()}
    if isinstance(value, pd.Timestamp):
        value = value.to_pydatetime()
    if isinstance(value, dt.datetime):
        aware = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return round((aware - EPOCH).total_seconds() * 1_000_000)
    if isinstance(value, np.generic):
        return norm(value.item())
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, Mapping):
        # An empty Arrow map arrives as an empty list of pairs; compare both as [].
        return {norm(k): norm(v) for k, v in value.items()} if value else []
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        items = [norm(v) for v in value]
        if items and all(isinstance(i, tuple) and len(i) == 2 for i in value):  # Arrow map as pairs
            return dict(items)
        return items
    if isinstance(value, decimal.Decimal):
        return value
    return value


def rows(df: pd.DataFrame) -> list[dict[str, Any]]:
    return [{k: norm(v) for k, v in r.items()} for r in df.to_dict("records")]


def spark_rows(spark: Any, sql: str) -> tuple[list[str], list[dict[str, Any]]]:
    df = spark.sql(sql)
    return df.columns, [{k: norm(v) for k, v in r.asDict(recursive=False).items()} for r in df.collect()]


def assert_same(ours: pd.DataFrame, columns: list[str], theirs: list[dict[str, Any]], what: str) -> None:
    assert list(ours.columns) == columns, f"{what}: columns differ"
    mine = sorted(rows(ours), key=repr)
    spark = sorted(theirs, key=repr)
    assert len(mine) == len(spark), f"{what}: {len(mine)} rows vs Spark's {len(spark)}"
    for a, b in zip(mine, spark, strict=True):
        assert a == b, f"{what}: row differs\n icebook: {a}\n spark:   {b}"


def spark_readable(names: Any) -> list[str]:
    """The scenario names Spark can read (``Scenario.spark_reads``), as parameters of a test held to Spark.
    The others (``types_v3``: Spark 4.1 has no nanosecond type) are held to Iceberg's Java API by tests of
    their own (``java_oracle``), so none is skipped: it is not a parameter here."""
    from icebook.scenarios import SCENARIOS

    return [n for n in names if SCENARIOS[n].spark_reads]


def without_bounds(spark_frame: Any, ours: pd.DataFrame, columns: list[str]) -> tuple[Any, pd.DataFrame]:
    """Spark's frame and ours without the ``lower_bound``/``upper_bound`` of ``columns`` in ``readable_metrics``:
    Spark 4.1 fails on a geometry bound that is present ("Unknown type for binary field: GeospatialBound")."""
    from pyspark.sql import functions as F

    if not columns or "readable_metrics" not in ours.columns:
        return spark_frame, ours
    metrics = F.col("readable_metrics")
    for c in columns:
        metrics = metrics.withField(c, F.col(f"readable_metrics.`{c}`").dropFields("lower_bound", "upper_bound"))
    drop = {"lower_bound", "upper_bound"}
    ours = ours.copy()
    ours["readable_metrics"] = [
        {k: ({f: v for f, v in m.items() if f not in drop} if k in columns else m) for k, m in row.items()}
        for row in ours["readable_metrics"]
    ]
    return spark_frame.withColumn("readable_metrics", metrics), ours
