"""Tables from any writer read exactly as Spark reads them.

PyIceberg's tables (SQL catalog, ``NNNNN-<uuid>.metadata.json``, no version hint) reach Spark as
static tables at their exact metadata file; every snapshot and ref is compared with Spark's own
read of that file, through both engines. Hadoop tables with a stale or missing version hint open
at the metadata file Spark's Hadoop tables read.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from _arrow_compare import assert_same

import icebook
from icebook.engines.spark_engine import to_arrow
from icebook.scenarios.sql_catalog import PYICEBERG_SCENARIOS
from icebook.spec.snapshots import Branch


def spark_read(spark: Any, metadata_file: str, **options: Any) -> pa.Table:
    reader = spark.read.format("iceberg")
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return to_arrow(reader.load(metadata_file))


@pytest.mark.spark
@pytest.mark.parametrize("name", sorted(PYICEBERG_SCENARIOS))
def test_pyiceberg_tables_read_like_spark(spark: Any, pyiceberg_catalog: str, name: str) -> None:
    t = icebook.open(f"{pyiceberg_catalog}.db.{name}")
    assert t.identifier == f"{pyiceberg_catalog}.db.{name}" and t.catalog_kind == "pyiceberg"
    file = t.metadata_location.rsplit("/", 1)[1]
    assert file.split("-", 1)[0].isdigit() and file.endswith(".metadata.json")  # NNNNN-<uuid>.metadata.json
    assert not t.fileio.exists(t.metadata_location.rsplit("/", 1)[0] + "/version-hint.text")
    for snapshot in t.snapshots:
        theirs = spark_read(spark, t.metadata_location, versionAsOf=snapshot.snapshot_id)
        for engine in ("arrow", "spark"):
            ours = t.read(at=snapshot.snapshot_id, engine=engine)  # type: ignore[arg-type]
            assert_same(ours, theirs, f"{name} @ {snapshot.snapshot_id} ({snapshot.operation}), {engine}")
    for ref_name, ref in t.refs.items():
        option = "branch" if isinstance(ref, Branch) else "versionAsOf"  # Spark's name for a tag
        theirs = spark_read(spark, t.metadata_location, **{option: ref_name})
        for engine in ("arrow", "spark"):
            assert_same(t.read(at=ref_name, engine=engine), theirs, f"{name} @ {ref_name}, {engine}")  # type: ignore[arg-type]
    theirs = spark_read(spark, t.metadata_location)
    for engine in ("arrow", "spark"):
        assert_same(t.read(engine=engine), theirs, f"{name} current, {engine}")  # type: ignore[arg-type]


@pytest.mark.spark
def test_pyiceberg_scenario_claims(spark: Any, pyiceberg_catalog: str) -> None:
    for name, scenario in PYICEBERG_SCENARIOS.items():
        t = icebook.open(f"{pyiceberg_catalog}.db.{name}")
        md = t.metadata_location
        ops = [
            r.operation for r in spark.read.format("iceberg").load(md + "#snapshots").orderBy("committed_at").collect()
        ]
        assert tuple(ops) == scenario.claims.operations, name
        refs = {r.name: r.type for r in spark.read.format("iceberg").load(md + "#refs").collect()}
        assert refs == dict(scenario.claims.refs), name
        assert t.format_version == scenario.claims.format_version


@pytest.mark.spark
def test_branch_reads_use_the_current_schema(spark: Any, pyiceberg_catalog: str) -> None:
    """A column added after main's last write: present at main (a branch), absent at main's
    snapshot id and at a tag (their snapshot's schema), as Spark answers."""
    t = icebook.open(f"{pyiceberg_catalog}.db.trips")
    head = t.refs["main"].snapshot_id
    assert "vehicle" in t.read(at="main").column_names and "vehicle" in t.read().column_names
    assert "vehicle" in t.read(at="audit").column_names
    assert "vehicle" not in t.read(at=head).column_names
    assert t.read(at="release-1").column_names == ["trip_id", "city", "fare", "started_at", "rider"]
    assert "vehicle" not in spark_read(spark, t.metadata_location, versionAsOf=head).column_names
    assert t.read_schema("main").schema_id == t.metadata.current_schema_id


@pytest.mark.spark
def test_uuid_columns_are_strings_in_both_engines(pyiceberg_catalog: str) -> None:
    t = icebook.open(f"{pyiceberg_catalog}.db.trips")
    for engine in ("arrow", "spark"):
        rider = t.read(engine=engine).column("rider")  # type: ignore[arg-type]
        assert rider.type == pa.string()
        assert all(len(v) == 36 and v.count("-") == 4 for v in rider.to_pylist())


@pytest.mark.spark
def test_sql_over_a_pyiceberg_table_at_a_tag(spark: Any, pyiceberg_catalog: str) -> None:
    t = icebook.open(f"{pyiceberg_catalog}.db.trips")
    df = t.sql("SELECT count(*) AS n, max(fare) AS top FROM t", at="release-1")
    theirs = spark_read(spark, t.metadata_location, versionAsOf="release-1")
    assert int(df["n"][0]) == theirs.num_rows


@pytest.mark.spark
def test_the_pyiceberg_catalog_is_configured_in_spark_by_name(spark: Any, pyiceberg_catalog: str) -> None:
    """Spark gets the SQL catalog under its name (Iceberg's JDBC catalog on the same sqlite tables), so it
    reads the table by name as the catalog records it. Read only: the fixture warehouse is shared;
    changes through the catalog are tested on tables of their own (tests/io/test_spark_s3.py)."""
    t = icebook.open(f"{pyiceberg_catalog}.db.trips")
    assert t._spark_identifier() == f"{pyiceberg_catalog}.db.trips"
    assert spark.conf.get(f"spark.sql.catalog.{pyiceberg_catalog}.type") == "jdbc"
    by_name = to_arrow(spark.read.format("iceberg").option("versionAsOf", "release-1").load(t.identifier))
    assert_same(by_name, spark_read(spark, t.metadata_location, versionAsOf="release-1"), "trips@release-1")


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


@pytest.mark.spark
def test_stale_and_missing_version_hints_open_what_spark_reads(
    spark: Any, scenario_locations: dict[str, Path], tmp_path: Path
) -> None:
    """Hadoop tables: a stale hint is read forward (HadoopTableOperations), a missing one falls
    back to the highest vN; both open the metadata file Spark's path-based read uses."""
    source = scenario_locations["legacy_v1"]
    newest = icebook.open(source).metadata_location.rsplit("/", 1)[1]
    stale = _copy(source, tmp_path / "stale")
    (stale / "metadata" / "version-hint.text").write_text("1")
    missing = _copy(source, tmp_path / "missing")
    (missing / "metadata" / "version-hint.text").unlink()
    for table_dir in (stale, missing):
        t = icebook.open(table_dir)
        assert t.metadata_location.rsplit("/", 1)[1] == newest
        spark_current = spark.read.format("iceberg").load(str(table_dir) + "#snapshots").count()
        assert spark_current == len(t.metadata.snapshots)
        assert_same(t.read(), to_arrow(spark.read.format("iceberg").load(str(table_dir))), str(table_dir))
        assert_same(t.read(engine="spark"), t.read(), f"{table_dir} spark engine")
