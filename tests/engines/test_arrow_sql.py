"""SQL on the Arrow engine reads only what the query needs, and answers as Spark does.

- a one-partition ``%%ice --engine arrow`` query opens only that partition's data files (a FileIO that
  records every path opened proves it; Spark's ``files`` metadata table says which files those are);
- ``t.sql(..., engine="arrow")`` equals Spark SQL on the same snapshot;
- the predicate polars pushes down is translated inclusively: what cannot be translated exactly is
  left out, never narrowed.
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import polars as pl
import pyarrow.fs as pafs
import pytest
from IPython.core.interactiveshell import InteractiveShell

import icebook
from icebook.engines.arrow_sql import pushdown_filter
from icebook.io.fileio import ArrowFileIO
from icebook.scenarios import SCENARIOS
from icebook.spec.schema import Schema
from icebook.spec.types import DATE, DOUBLE, LONG, STRING, TIMESTAMPTZ, NestedField, StructType
from icebook.table.opening import open_table


class RecordingFileIO(ArrowFileIO):
    """Every path the table's reads open, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    def open_input(self, path: str) -> pafs.NativeFile:
        self.opened.append(path)
        return super().open_input(path)

    def read_bytes(self, path: str) -> bytes:
        self.opened.append(path)
        return super().read_bytes(path)


@pytest.fixture()
def shell(scenario_locations: dict[str, Path]) -> Iterator[InteractiveShell]:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "icebook")
    yield ip
    ip.run_line_magic("reload_ext", "icebook")


def _spark_files(spark: Any, where: str) -> set[str]:
    table = SCENARIOS["events"].table
    rows = spark.sql(f"SELECT file_path FROM {table}.files WHERE {where}").collect()
    return {r["file_path"] for r in rows}


@pytest.mark.spark
def test_one_partition_arrow_query_opens_only_that_partitions_files(
    shell: InteractiveShell, scenario_locations: dict[str, Path], spark: Any
) -> None:
    location = scenario_locations["events"]
    recorder = RecordingFileIO()
    magics = shell.magics_manager.registry["IceMagics"]
    magics.session.put("t", open_table(str(location), fileio=recorder))

    query = "SELECT page, count(*) AS n FROM t WHERE region = 'eu' GROUP BY page ORDER BY page"
    recorder.opened.clear()
    got = shell.run_cell_magic("ice", "--engine arrow", query)

    data_files = _spark_files(spark, "content = 0")
    eu_files = _spark_files(spark, "content = 0 AND partition.region = 'eu'")
    eu_deletes = _spark_files(spark, "content != 0 AND partition.region = 'eu'")
    assert eu_files and eu_files != data_files  # the partition is a strict part of the table
    opened = set(recorder.opened)
    assert opened & data_files == eu_files
    assert opened <= eu_files | eu_deletes | {p for p in opened if "/metadata/" in p}

    expected = spark.sql(query.replace("FROM t", f"FROM {SCENARIOS['events'].table}")).toPandas()
    assert got["page"].tolist() == expected["page"].tolist()
    assert got["n"].tolist() == expected["n"].tolist()


@pytest.mark.spark
@pytest.mark.parametrize(
    ("query", "at"),
    [
        ("SELECT region, count(*) AS n FROM t GROUP BY region ORDER BY region", None),
        ("SELECT event_id, page FROM t WHERE region = 'us' AND event_id > 2 ORDER BY event_id", None),
        ("SELECT event_id FROM t WHERE page IN ('home', 'search') OR device IS NULL ORDER BY event_id", None),
        ("SELECT count(*) AS n FROM t WHERE page LIKE 'se%'", None),
        ("SELECT region, count(*) AS n FROM t WHERE event_id >= 2 GROUP BY region ORDER BY region", "release-2024-01"),
        ("SELECT event_id, amount FROM t WHERE NOT (region = 'eu') ORDER BY event_id", "release-2024-01"),
        # two scans of t asking for different columns and filters, served by one read
        (
            "SELECT a.event_id, b.page FROM t a JOIN t b ON a.event_id = b.event_id "
            "WHERE a.region = 'eu' AND b.page <> 'home' ORDER BY a.event_id",
            None,
        ),
        ("SELECT count(*) AS n FROM (SELECT event_id FROM t WHERE region = 'us' LIMIT 2) s", None),
    ],
)
def test_arrow_sql_equals_spark(scenario_locations: dict[str, Path], spark: Any, query: str, at: str | None) -> None:
    t = icebook.open(scenario_locations["events"])
    got = t.sql(query, at=at, engine="arrow")
    expected = t.sql(query, at=at)
    assert got.columns.tolist() == expected.columns.tolist()
    for column in got.columns:
        assert [None if pd.isna(v) else v for v in got[column].tolist()] == [
            None if pd.isna(v) else v for v in expected[column].tolist()
        ], column


@pytest.mark.spark
def test_arrow_sql_reads_on_the_calling_thread(
    scenario_locations: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Polars runs an IO source on its own threads while the caller waits inside polars, where no signal
    # (Ctrl-C, a timeout) reaches Python: the table is read on the calling thread, between two passes.
    from icebook.engines import arrow_sql

    threads: list[threading.Thread] = []
    original = arrow_sql.read

    def recording(*args: Any, **kwargs: Any) -> Any:
        threads.append(threading.current_thread())
        return original(*args, **kwargs)

    t = icebook.open(scenario_locations["events"])
    eu = t.read(columns=["region"]).column("region").to_pylist().count("eu")
    monkeypatch.setattr(arrow_sql, "read", recording)
    got = t.sql("SELECT count(*) AS n FROM t WHERE region = 'eu'", engine="arrow")
    assert eu and got["n"].tolist() == [eu]
    assert threads and all(thread is threading.main_thread() for thread in threads)


SCHEMA = Schema(
    schema_id=0,
    fields=StructType(
        (
            NestedField(field_id=1, name="id", required=False, type=LONG),
            NestedField(field_id=2, name="s", required=False, type=STRING),
            NestedField(field_id=3, name="x", required=False, type=DOUBLE),
            NestedField(field_id=4, name="d", required=False, type=DATE),
            NestedField(field_id=5, name="ts", required=False, type=TIMESTAMPTZ),
        )
    ),
)


@pytest.mark.parametrize(
    ("predicate", "expected"),
    [
        (pl.col("id") > 5, "id > 5"),
        (pl.lit(5) < pl.col("id"), "id > 5"),
        ((pl.col("s") == "a") & (pl.col("id") <= 3), "(s = 'a' and id <= 3)"),
        ((pl.col("s") == "a") | pl.col("id").is_null(), "(s = 'a' or id is null)"),
        (pl.col("id").is_in([1, 2]), "id in (1, 2)"),
        (pl.col("s").str.starts_with("ab"), "s starts with 'ab'"),
        (pl.col("d") == dt.date(2024, 1, 5), "d = '2024-01-05'"),
        (pl.col("ts") >= dt.datetime(2024, 1, 2, tzinfo=dt.UTC), "ts >= '2024-01-02T00:00:00+00:00'"),
        (~(pl.col("s") == "a"), "not (s = 'a')"),
        # doubles compare NaN as polars orders it, not as Arrow does: left to polars
        (pl.col("x") > 1.0, None),
        ((pl.col("x") > 1.0) & (pl.col("id") == 2), "id = 2"),
        # an "or" with a side that cannot be translated could only be narrowed: left out whole
        ((pl.col("x") > 1.0) | (pl.col("id") == 2), None),
        # a "not" over a weakened "and" would narrow: left out whole
        (~((pl.col("x") > 1.0) & (pl.col("id") == 2)), None),
        (pl.col("id") + 1 > 5, None),
        (pl.col("s").str.len_chars() > 2, None),
    ],
)
def test_pushdown_is_exact_or_left_out(predicate: pl.Expr, expected: str | None) -> None:
    from icebook.analysis.expr.binding import bind

    got = pushdown_filter(predicate, SCHEMA)
    if expected is None:
        assert got is None
    else:
        assert got is not None
        assert str(bind(got, SCHEMA)) == str(bind(expected, SCHEMA))
