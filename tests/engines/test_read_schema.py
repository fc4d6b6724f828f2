"""Every way of reading a table returns the schema of ``t.read`` at the same point.

Spark's rule (``analysis/resolve.py`` ``read_schema``): a branch, main included, and the current state
read with the table's current schema; a snapshot id, a tag or a time with the snapshot's own schema.
PyIceberg's ``trips`` is the table where the two differ at a branch: a column was added after main's
last write, so ``SELECT *`` at ``main`` must return it on every engine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pytest
from _arrow_compare import normal_type
from IPython.core.interactiveshell import InteractiveShell

import icebook
from icebook.analysis.resolve import AtTime, read_schema
from icebook.engines.spark_session import add_catalog
from icebook.scenarios import SCENARIOS
from icebook.scenarios.sql_catalog import PYICEBERG_SCENARIOS
from icebook.table import Table

SELECT_ALL = "SELECT * FROM t"


def _points(t: Table) -> list[str | int | None]:
    """The current state, every branch and tag, and every snapshot by id."""
    return [None, *sorted(t.refs), *(s.snapshot_id for s in t.snapshots)]


def _polars_schema(table: pa.Table) -> pl.Schema:
    frame = pl.from_arrow(table.schema.empty_table())
    assert isinstance(frame, pl.DataFrame)
    return frame.schema


def assert_arrow_sql_has_the_read_schema(t: Table, what: str) -> None:
    assert t.snapshots, f"{what}: a scenario table with no snapshot proves nothing here"
    for at in _points(t):
        expected = t.read(at=at)
        where = f"{what} @ {at or 'current'}"
        got = t.sql(SELECT_ALL, at=at, engine="arrow")
        assert got.columns.tolist() == expected.column_names, where
        # The frame the query runs over holds t.read's Arrow types (as polars holds Arrow types) ...
        assert t.lazy(at).collect_schema() == _polars_schema(expected), where
        # ... and the answer holds them again: the same Arrow types as t.read, column by column.
        answer = t.sql(SELECT_ALL, at=at, engine="arrow", output="arrow")
        assert [(f.name, f.type) for f in answer.schema] == [(f.name, f.type) for f in expected.schema], where
        assert len(got) == expected.num_rows, where


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_arrow_sql_reads_with_the_read_schema(scenario_locations: dict[str, Path], name: str) -> None:
    assert_arrow_sql_has_the_read_schema(icebook.open(scenario_locations[name]), name)


@pytest.mark.parametrize("name", sorted(PYICEBERG_SCENARIOS))
def test_arrow_sql_reads_pyiceberg_tables_with_the_read_schema(pyiceberg_catalog: str, name: str) -> None:
    assert_arrow_sql_has_the_read_schema(icebook.open(f"{pyiceberg_catalog}.db.{name}"), name)


def test_a_branch_reads_the_column_added_after_its_head(pyiceberg_catalog: str) -> None:
    t = icebook.open(f"{pyiceberg_catalog}.db.trips")
    main_head = t.refs["main"].snapshot_id
    assert t.metadata.snapshot_by_id(main_head).schema_id != t.metadata.current_schema_id  # what makes it a test
    for at in ("main", "audit", None):
        assert "vehicle" in t.sql(SELECT_ALL, at=at, engine="arrow").columns, at
        assert "vehicle" in t.lazy(at).collect_schema(), at
    assert "vehicle" not in t.sql(SELECT_ALL, at=main_head, engine="arrow").columns
    assert "vehicle" not in t.sql(SELECT_ALL, at="release-1", engine="arrow").columns


def test_the_cell_magic_on_the_arrow_engine_at_a_branch(pyiceberg_catalog: str) -> None:
    """``%%ice --engine arrow`` at main returns the column added after main's last write, as Spark does."""
    t = icebook.open(f"{pyiceberg_catalog}.db.trips")
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "icebook")
    try:
        ip.run_line_magic("ice", f"open {pyiceberg_catalog}.db.trips --as trips")
        for line in ("--engine arrow --at main", "--engine arrow --branch main", "--engine arrow"):
            got = ip.run_cell_magic("ice", line, SELECT_ALL)
            assert got.columns.tolist() == t.read(at="main").column_names, line
            assert "vehicle" in got.columns, line
        got = ip.run_cell_magic("ice", "--engine arrow --at release-1", SELECT_ALL)
        assert got.columns.tolist() == t.read(at="release-1").column_names
    finally:
        ip.run_line_magic("reload_ext", "icebook")


def test_the_rule_by_kind_of_point(pyiceberg_catalog: str) -> None:
    t = icebook.open(f"{pyiceberg_catalog}.db.trips")
    md = t.metadata
    head = md.snapshot_by_id(t.refs["main"].snapshot_id)
    tagged = md.snapshot_by_id(t.refs["release-1"].snapshot_id)
    assert head.schema_id is not None and tagged.schema_id is not None
    assert len({md.current_schema_id, head.schema_id, tagged.schema_id}) == 3
    assert read_schema(md, None) is md.current_schema()
    assert read_schema(md, "main") is md.current_schema()  # a branch: the current schema
    assert read_schema(md, "audit") is md.current_schema()
    assert read_schema(md, head.snapshot_id) is md.schemas[head.schema_id]  # an id: the snapshot's own
    assert read_schema(md, str(head.snapshot_id)) is md.schemas[head.schema_id]
    assert read_schema(md, AtTime(head.timestamp_ms)) is md.schemas[head.schema_id]  # a time: the snapshot's own
    assert read_schema(md, "release-1") is md.schemas[tagged.schema_id]  # a tag: the snapshot's own
    for at in (None, "main", "release-1", head.snapshot_id):
        assert t.read_schema(at) is read_schema(md, at)


def assert_spark_agrees(t: Table, what: str) -> None:
    for at in [None, *sorted(t.refs)]:
        expected = t.read(at=at)
        where = f"{what} @ {at or 'current'}"
        assert t.sql(SELECT_ALL, at=at, engine="spark").columns.tolist() == expected.column_names, where
        spark = t.read(at=at, engine="spark")
        assert spark.column_names == expected.column_names, where
        assert [normal_type(f.type) for f in spark.schema] == [normal_type(f.type) for f in expected.schema], where


@pytest.mark.spark
@pytest.mark.parametrize("name", ["events", "schema_evolution", "hostile"])
def test_spark_reads_every_ref_with_the_read_schema(scenario_locations: dict[str, Path], spark: Any, name: str) -> None:
    assert_spark_agrees(icebook.open(scenario_locations[name]), name)


@pytest.mark.spark
def test_spark_reads_pyiceberg_refs_with_the_read_schema(spark: Any, pyiceberg_catalog: str) -> None:
    assert_spark_agrees(icebook.open(f"{pyiceberg_catalog}.db.trips"), "trips")


@pytest.mark.spark
def test_a_spark_table_by_name_after_a_column_is_added(spark: Any, tmp_path: Path) -> None:
    """Opened by a name Spark's session knows, the current state is pinned by snapshot id only where
    that id reads the current schema: after ADD COLUMN with no write since, it is not."""
    add_catalog("read_schema_rule", tmp_path)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS read_schema_rule.db")
    spark.sql("CREATE TABLE read_schema_rule.db.t (id INT) USING iceberg TBLPROPERTIES ('format-version'='2')")
    spark.sql("INSERT INTO read_schema_rule.db.t VALUES (1), (2)")
    spark.sql("ALTER TABLE read_schema_rule.db.t ADD COLUMN note STRING")
    t = icebook.open("read_schema_rule.db.t")
    assert t.identifier == "read_schema_rule.db.t" and t.catalog_kind == "spark"
    head = t.current_snapshot
    assert head is not None and head.schema_id != t.metadata.current_schema_id  # what makes it a test
    for at in (None, "main"):
        assert t.read(at=at).column_names == ["id", "note"]
        assert t.sql(SELECT_ALL, at=at, engine="arrow").columns.tolist() == ["id", "note"]
        assert t.sql(SELECT_ALL, at=at, engine="spark").columns.tolist() == ["id", "note"]
        assert t.read(at=at, engine="spark").column_names == ["id", "note"]
    assert t.sql(SELECT_ALL, at=head.snapshot_id, engine="spark").columns.tolist() == ["id"]
    assert t.sql(SELECT_ALL, at=head.snapshot_id, engine="arrow").columns.tolist() == ["id"]
