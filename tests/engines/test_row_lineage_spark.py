"""Row lineage and default values read by both engines, equal to Spark 4.1 on the table at every snapshot.

Small tables written here by Spark (and Iceberg's Java API for defaults): row lineage through appends,
UPDATE, DELETE, MERGE and a compaction (merge-on-read, so deletion vectors); a v2 table with position
deletes upgraded to v3; columns added with ``initial-default``/``write-default`` and rows inserted leaving
them out. Spark's answer is always ``SELECT _row_id, _last_updated_sequence_number, * FROM <table>
VERSION AS OF <id>`` on the table itself.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from _arrow_compare import assert_same, spark_arrow

import icebook
from icebook.engines.spark_session import add_catalog
from icebook.errors import MetadataError, UnsupportedFeature

pytestmark = pytest.mark.spark

CATALOG = "lineage_test"
MOR = ", ".join(f"'write.{op}.mode'='merge-on-read'" for op in ("delete", "update", "merge"))
LINEAGE = "_row_id, _last_updated_sequence_number"
ENGINES = ("arrow", "spark")


@pytest.fixture(scope="module")
def tables(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    warehouse = tmp_path_factory.mktemp("lineage")
    add_catalog(CATALOG, warehouse)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.db")
    _lineage(spark, f"{CATALOG}.db.lin")
    _upgraded(spark, f"{CATALOG}.db.up")
    _defaults(spark, f"{CATALOG}.db.defs")
    spark.sql(f"CREATE TABLE {CATALOG}.db.v2 (id BIGINT) USING iceberg TBLPROPERTIES ('format-version'='2')")
    spark.sql(f"INSERT INTO {CATALOG}.db.v2 VALUES (1)")
    return {name: warehouse / "db" / name for name in ("lin", "up", "defs", "v2")}


def _lineage(spark: Any, name: str) -> None:
    spark.sql(f"CREATE TABLE {name} (id BIGINT, v STRING) USING iceberg TBLPROPERTIES ('format-version'='3', {MOR})")
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    spark.sql(f"INSERT INTO {name} VALUES (4, 'd'), (5, 'e')")
    spark.sql(f"UPDATE {name} SET v = 'B' WHERE id = 2")
    spark.sql(f"DELETE FROM {name} WHERE id = 4")
    spark.sql(
        f"MERGE INTO {name} t USING (SELECT 5 AS id, 'E' AS v UNION ALL SELECT 6, 'f') s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET v = s.v WHEN NOT MATCHED THEN INSERT *"
    )
    short = name.split(".", 1)[1]
    spark.sql(f"CALL {CATALOG}.system.rewrite_data_files(table => '{short}', options => map('rewrite-all', 'true'))")
    spark.sql(f"INSERT INTO {name} VALUES (7, 'g')")


def _upgraded(spark: Any, name: str) -> None:
    spark.sql(f"CREATE TABLE {name} (id BIGINT, v STRING) USING iceberg TBLPROPERTIES ('format-version'='2', {MOR})")
    spark.sql(f"INSERT INTO {name} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    spark.sql(f"DELETE FROM {name} WHERE id = 2")
    spark.sql(f"ALTER TABLE {name} SET TBLPROPERTIES ('format-version'='3')")
    spark.sql(f"INSERT INTO {name} VALUES (4, 'd')")
    spark.sql(f"DELETE FROM {name} WHERE id = 3")
    spark.sql(f"UPDATE {name} SET v = 'A' WHERE id = 1")


def _defaults(spark: Any, name: str) -> None:
    spark.sql(f"CREATE TABLE {name} (id BIGINT) USING iceberg TBLPROPERTIES ('format-version'='3')")
    spark.sql(f"INSERT INTO {name} VALUES (1), (2)")
    jvm = spark._jvm
    iceberg = jvm.org.apache.iceberg
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, name)
    types, literal = iceberg.types.Types, iceberg.expressions.Literal
    table.updateSchema().addColumn("n", types.IntegerType.get(), "a number", literal.of(7)).commit()
    table.updateSchema().addColumn("s", types.StringType.get(), "a text", literal.of("hi")).commit()
    table.updateSchema().addColumn(
        "d", types.DateType.get(), "a day", literal.of("2024-05-01").to(types.DateType.get())
    ).commit()
    spark.sql(f"REFRESH TABLE {name}")
    spark.sql(f"INSERT INTO {name} (id) VALUES (3)")
    table.refresh()
    table.updateSchema().updateColumnDefault("n", literal.of(9)).commit()
    spark.sql(f"REFRESH TABLE {name}")
    spark.sql(f"INSERT INTO {name} (id) VALUES (4)")
    spark.sql(f"INSERT INTO {name} VALUES (5, 1, 'x', DATE '2020-01-01')")


def _spark_name(location: Path) -> str:
    return f"{CATALOG}.db.{location.name}"


def test_lineage_columns_equal_sparks_at_every_snapshot(spark: Any, tables: dict[str, Path]) -> None:
    for name in ("lin", "up"):
        t = icebook.open(str(tables[name]))
        assert len(t.snapshots) >= 5
        for snapshot in t.snapshots:
            sid = snapshot.snapshot_id
            theirs = spark_arrow(spark, f"SELECT {LINEAGE}, * FROM {_spark_name(tables[name])} VERSION AS OF {sid}")
            what = f"{name}@{sid}"
            columns = ["_row_id", "_last_updated_sequence_number", *(f.name for f in t.read_schema(sid).columns)]
            for engine in ENGINES:
                assert_same(t.read(sid, columns=columns, engine=engine), theirs, f"{what} read ({engine})")
                ours = t.sql(f"SELECT {LINEAGE}, * FROM t", at=sid, engine=engine, output="arrow")
                assert_same(ours, theirs, f"{what} sql ({engine})")
            lazy = t.lazy(sid, row_lineage=True).select(columns).collect().to_arrow()
            assert_same(lazy.cast(theirs.schema), theirs, f"{what} lazy")


def test_lineage_values_follow_the_spec(tables: dict[str, Path]) -> None:
    t = icebook.open(str(tables["lin"]))
    first = t.snapshots[0]
    rows = t.read(first.snapshot_id, columns=["id", "_row_id", "_last_updated_sequence_number"]).sort_by("id")
    # The first append: row ids from the snapshot's first-row-id 0, its sequence number 1.
    assert rows.to_pydict() == {"id": [1, 2, 3], "_row_id": [0, 1, 2], "_last_updated_sequence_number": [1, 1, 1]}
    current = t.read(columns=["id", "_row_id", "_last_updated_sequence_number"]).to_pylist()
    ids = [r["_row_id"] for r in current]
    assert len(ids) == len(set(ids)) and None not in ids  # unique across updates, merge and compaction
    updated = next(r for r in current if r["id"] == 2)
    assert updated["_row_id"] == 1 and updated["_last_updated_sequence_number"] == 3  # the UPDATE kept its id


def test_an_upgraded_tables_old_snapshots_have_no_row_ids(tables: dict[str, Path]) -> None:
    t = icebook.open(str(tables["up"]))
    before = [s for s in t.snapshots if s.first_row_id is None]
    assert len(before) == 2
    for s in before:
        rows = t.read(s.snapshot_id, columns=["_row_id", "_last_updated_sequence_number"])
        assert rows.num_rows and rows.column(0).null_count == rows.column(1).null_count == rows.num_rows


def test_tables_before_v3_have_no_row_lineage(tables: dict[str, Path]) -> None:
    t = icebook.open(str(tables["v2"]))
    for engine in ENGINES:
        with pytest.raises(UnsupportedFeature, match="format version 2 has no row lineage"):
            t.read(columns=["id", "_row_id"], engine=engine)
        with pytest.raises(UnsupportedFeature, match="format version 2 has no row lineage"):
            t.sql("SELECT _row_id FROM t", engine=engine)
    with pytest.raises(UnsupportedFeature):
        t.lazy(row_lineage=True)


def test_defaults_equal_sparks_at_every_snapshot(spark: Any, tables: dict[str, Path]) -> None:
    t = icebook.open(str(tables["defs"]))
    n = t.metadata.current_schema().find_field(2)
    assert n is not None and (n.initial_default, n.write_default) == (7, 9)
    for snapshot in t.snapshots:
        sid = snapshot.snapshot_id
        theirs = spark_arrow(spark, f"SELECT * FROM {_spark_name(tables['defs'])} VERSION AS OF {sid}")
        for engine in ENGINES:
            ours = t.sql("SELECT * FROM t", at=sid, engine=engine, output="arrow")
            assert_same(ours, theirs, f"defs@{sid} ({engine})")
    last = t.read().sort_by("id").to_pydict()
    assert last["n"] == [7, 7, 7, 9, 1] and last["s"] == ["hi", "hi", "hi", "hi", "x"]


def test_a_snapshot_with_row_ids_but_a_file_without_first_row_id_is_refused(
    tables: dict[str, Path], tmp_path: Path
) -> None:
    # Damage: a snapshot written before the upgrade (its manifest list assigns no first_row_id) made to
    # claim row ids. Its files then have no first_row_id to give _row_id from: never silent nulls.
    copy = tmp_path / "up"
    shutil.copytree(tables["up"], copy)
    t = icebook.open(str(tables["up"]))
    old = next(s for s in t.snapshots if s.first_row_id is None)
    metadata_file = Path(t.metadata_location.removeprefix("file:"))
    damaged = copy / "metadata" / metadata_file.name
    raw = json.loads(damaged.read_text())
    for s in raw["snapshots"]:
        if s["snapshot-id"] == old.snapshot_id:
            s["first-row-id"], s["added-rows"] = 0, 3
    damaged.write_text(json.dumps(raw))
    broken = icebook.open(str(damaged))
    with pytest.raises(MetadataError) as err:
        broken.read(old.snapshot_id, columns=["id", "_row_id"])
    text = str(err.value)
    assert "first_row_id" in text and "-m0.avro" in text and ".parquet has no first_row_id" in text
    assert broken.read(old.snapshot_id, columns=["id"]).num_rows == 3  # without lineage the read is whole


def test_a_wrong_type_default_names_the_metadata_file_and_field(tables: dict[str, Path], tmp_path: Path) -> None:
    t = icebook.open(str(tables["defs"]))
    raw = json.loads(Path(t.metadata_location.removeprefix("file:")).read_text())
    for schema in raw["schemas"]:
        for field in schema["fields"]:
            if field["name"] == "n":
                field["initial-default"] = "7"
    damaged = tmp_path / "v99.metadata.json"
    damaged.write_text(json.dumps(raw))
    with pytest.raises(MetadataError) as err:
        icebook.open(str(damaged))
    assert str(damaged) in str(err.value) and ".n.initial-default: default '7' is not a value of type int" in str(
        err.value
    )


def test_aggregates_of_lineage_columns_from_both_engines(tables: dict[str, Path]) -> None:
    # Iceberg 1.12 fails on SELECT max(_row_id) FROM <table> in Spark (its aggregate push-down cannot find the
    # metadata column); icebook's Spark engine runs such a query without the push-down, so both engines answer.
    t = icebook.open(str(tables["lin"]))
    query = "SELECT max(_row_id) AS top, count(*) AS n, min(_last_updated_sequence_number) AS low FROM t"
    rows = t.read(columns=["_row_id", "_last_updated_sequence_number"])
    expected = {
        "top": max(rows.column(0).to_pylist()),
        "n": rows.num_rows,
        "low": min(rows.column(1).to_pylist()),
    }
    answers = [t.sql(query, engine=engine, output="arrow").to_pylist() for engine in ENGINES]
    assert answers[0] == answers[1] == [expected] and expected["n"] == 6


def test_spark_reads_lineage_as_arrow_int64(tables: dict[str, Path]) -> None:
    t = icebook.open(str(tables["lin"]))
    for engine in ENGINES:
        schema = t.read(columns=["_row_id", "_last_updated_sequence_number"], engine=engine).schema
        assert [f.type for f in schema] == [pa.int64(), pa.int64()]
