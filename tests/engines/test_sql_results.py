"""``t.sql`` answers as Spark does, with every value's type kept, from both engines.

``SELECT *`` through ``t.sql`` (pandas, the default) at every snapshot and every ref of every scenario
table, the PyIceberg-written ones included, converted back to Arrow, equals Spark's own rows: the same
column names, types and values. A nullable long above 2^53 and a date survive (``exact_values``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from _arrow_compare import assert_same, extension_marks
from _support.java_oracle import java_rows

import icebook
from icebook.engines.spark_v3_types import from_spark
from icebook.errors import IcebookError
from icebook.scenarios import SCENARIOS
from icebook.scenarios.sql_catalog import PYICEBERG_SCENARIOS

ENGINES = ("arrow", "spark")


def _spark_rows(spark: Any, location: str, **options: Any) -> pa.Table:
    """Spark's own rows of the table (its metadata file loaded as a static table), pinned by ``options``,
    variant and geo structs in icebook's documented form (``from_spark``: values moved as they are)."""
    reader = spark.read.format("iceberg")
    for key, value in options.items():
        reader = reader.option(key, str(value))
    df = reader.load(location)
    batches = df._collect_as_arrow()
    if batches:
        return from_spark(pa.Table.from_batches(batches))
    from pyspark.sql.pandas.types import to_arrow_schema

    return from_spark(to_arrow_schema(df.schema).empty_table())


def _points(t: Any) -> list[tuple[Any, dict[str, Any]]]:
    """Every snapshot id and every ref of ``t``, with the Spark read option that pins the same point."""
    points: list[tuple[Any, dict[str, Any]]] = [(s.snapshot_id, {"versionAsOf": s.snapshot_id}) for s in t.snapshots]
    for name, ref in sorted(t.refs.items()):
        kind = "branch" if type(ref).__name__ == "Branch" else "versionAsOf"  # Spark's name for a tag
        points.append((name, {kind: name}))
    return points


SPARK_LACKS = {"timestamp_ns", "timestamptz_ns"}
"""Iceberg types Spark 4.1 cannot convert to its own."""


def _check_every_point(spark: Any, t: Any, what: str, *, spark_reads: bool = True) -> int:
    """``SELECT *`` from both engines at every point equals Spark's rows; for a table Spark cannot read
    (a type it lacks), the Arrow engine equals Iceberg's Java reader and the Spark engine is one error."""
    reads = 0
    for at, options in _points(t):
        engines: tuple[str, ...] = ENGINES
        if spark_reads:
            theirs = _spark_rows(spark, t.metadata_location, **options)
        else:
            sid = t.snapshot(at).snapshot_id
            theirs = java_rows(spark, t.location, sid)
            # Spark reads a snapshot whose schema has only types it knows (types_v3 before its nanosecond
            # columns were added); with a type it lacks, the Spark engine is one error.
            if {str(c.type) for c in t.read_schema(sid).columns} & SPARK_LACKS:
                engines = ("arrow",)
                with pytest.raises(IcebookError):
                    t.sql("SELECT * FROM t", at=at, engine="spark")
        for engine in engines:
            df = t.sql("SELECT * FROM t", at=at, engine=engine)
            assert isinstance(df, pd.DataFrame)
            assert all(isinstance(d, pd.ArrowDtype) for d in df.dtypes), f"{what} @ {at} ({engine}): {df.dtypes}"
            ours = pa.Table.from_pandas(df, preserve_index=False)
            assert_same(ours, theirs, f"{what} @ {at} ({engine})", marks=False)  # pandas keeps no field marks
            arrow = t.sql("SELECT * FROM t", at=at, engine=engine, output="arrow")
            assert extension_marks(arrow.schema) == extension_marks(theirs.schema), f"{what} @ {at} ({engine})"
            reads += 1
    return reads


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_select_star_at_every_point_equals_sparks_rows(
    spark: Any, scenario_locations: dict[str, Path], name: str
) -> None:
    t = icebook.open(scenario_locations[name])
    spark_reads = SCENARIOS[name].spark_reads
    assert _check_every_point(spark, t, name, spark_reads=spark_reads) >= (2 if spark_reads else 1) * len(t.snapshots)


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(PYICEBERG_SCENARIOS))
def test_select_star_of_pyiceberg_tables_equals_sparks_rows(spark: Any, pyiceberg_catalog: str, name: str) -> None:
    t = icebook.open(f"{pyiceberg_catalog}.db.{name}")
    assert _check_every_point(spark, t, name) >= 2 * len(t.snapshots)


@pytest.mark.spark
@pytest.mark.parametrize("engine", ENGINES)
def test_long_above_2_53_beside_nulls_and_dates_survive(scenario_locations: dict[str, Path], engine: str) -> None:
    t = icebook.open(scenario_locations["exact_values"])
    df = t.sql("SELECT id, day, tags FROM t ORDER BY id", engine=engine)
    assert str(df["id"].dtype) == "int64[pyarrow]"
    assert str(df["day"].dtype) == "date32[day][pyarrow]"
    ids = df["id"].tolist()  # pd.NA for a null
    known = [v for v in ids if v is not pd.NA]
    assert len(known) == len(ids) - 2 and 9007199254740993 in known and 9223372036854775807 in known
    tags = pa.Table.from_pandas(df, preserve_index=False).column("tags").to_pylist()
    assert [("a", 9007199254740993), ("b", None)] in tags  # a map keeps its null value, no NaN float


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(n for n, s in SCENARIOS.items() if s.claims.format_version == 3))
def test_row_lineage_through_sql_at_every_snapshot_equals_sparks(
    spark: Any, scenario_locations: dict[str, Path], name: str
) -> None:
    # The metadata columns named in SQL over t answer as Spark answers on the table (where * leaves them out).
    t = icebook.open(scenario_locations[name])
    lineage = "_row_id, _last_updated_sequence_number"
    for snapshot in t.snapshots:
        sid = snapshot.snapshot_id
        engines: tuple[str, ...] = ENGINES
        if SCENARIOS[name].spark_reads:
            df = spark.sql(f"SELECT {lineage}, * FROM {SCENARIOS[name].table} VERSION AS OF {sid}")
            batches = df._collect_as_arrow()
            theirs = from_spark(pa.Table.from_batches(batches)) if batches else None
        else:  # a type Spark lacks: Iceberg's Java reader, with the lineage columns, is the reference
            theirs = java_rows(spark, t.location, sid, lineage=True)
            if {str(c.type) for c in t.read_schema(sid).columns} & SPARK_LACKS:
                engines = ("arrow",)
        for engine in engines:
            ours = t.sql(f"SELECT {lineage}, * FROM t", at=sid, engine=engine, output="arrow")
            if theirs is None:
                assert ours.num_rows == 0 and ours.column_names == df.columns, f"{name} @ {sid} ({engine})"
            else:
                assert_same(ours, theirs, f"{name} @ {sid} ({engine})")


@pytest.mark.spark
def test_both_engines_name_columns_as_spark_does(spark: Any, scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    queries = (
        "SELECT count(*), max(event_id) FROM t",
        "SELECT region, COUNT(*) AS n, min(event_id) FROM t GROUP BY region",
        "SELECT event_id + 1, upper(region) FROM t WHERE region IS NOT NULL",
    )
    for query in queries:
        spark_result = t.sql(query, engine="spark", output="arrow")
        arrow_result = t.sql(query, engine="arrow", output="arrow")
        assert arrow_result.column_names == spark_result.column_names, query
    assert t.sql(queries[0], engine="arrow").columns.tolist() == ["count(1)", "max(event_id)"]


@pytest.mark.spark
@pytest.mark.parametrize("engine", ENGINES)
def test_arrow_and_polars_on_request(scenario_locations: dict[str, Path], engine: str) -> None:
    t = icebook.open(scenario_locations["exact_values"])
    query = "SELECT id FROM t WHERE id IS NOT NULL"
    arrow = t.sql(query, engine=engine, output="arrow")
    polars = t.sql(query, engine=engine, output="polars")
    assert isinstance(arrow, pa.Table) and arrow.schema.field("id").type == pa.int64()
    assert isinstance(polars, pl.DataFrame) and sorted(polars["id"].to_list()) == sorted(arrow["id"].to_pylist())


def test_spark_names_read_from_the_select_list() -> None:
    from icebook.engines.sql_names import spark_names

    assert spark_names("SELECT count(*), MAX(t.id) FROM t") == ["count(1)", "max(id)"]
    assert spark_names("select region, COUNT(*) AS n, sum(x) total from t group by 1") == ["region", "n", "total"]
    assert spark_names("SELECT id + 1, upper('a'), cast(x as string), x is not null FROM t") == [
        "(id + 1)",
        "upper(a)",
        "CAST(x AS STRING)",
        "(x IS NOT NULL)",
    ]
    assert spark_names("WITH a AS (SELECT 1 AS one) SELECT count(DISTINCT one) FROM a") == ["count(DISTINCT one)"]
    assert spark_names("SELECT * FROM t") is None  # the tables name those columns
    assert spark_names("SELECT row_number() OVER (ORDER BY id) FROM t") == [None]  # left to the engine
