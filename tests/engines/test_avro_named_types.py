"""Avro writes a named type once and then only its name: Spark's Avro data files and manifests with two
columns of one decimal type read as Spark reads them (the type map: ``io/avro_types.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import fastavro
import pytest
from _arrow_compare import assert_same, spark_arrow

import icebook
from icebook.engines.spark_session import add_catalog

pytestmark = pytest.mark.spark


def test_a_spark_table_with_two_decimal_columns_in_avro(spark: Any, tmp_path: Path) -> None:
    """Spark writes the second decimal(10,2) of a data file's schema, and of a manifest's partition
    tuple, as a name; every snapshot reads as Spark reads it."""
    add_catalog("avro_names", tmp_path)
    table = "avro_names.db.prices"
    spark.sql("CREATE NAMESPACE IF NOT EXISTS avro_names.db")
    spark.sql(
        f"CREATE TABLE {table} (id INT, price DECIMAL(10,2), cost DECIMAL(10,2), note STRING) USING iceberg "
        "PARTITIONED BY (price, cost) TBLPROPERTIES ('format-version'='2', 'write.format.default'='avro', "
        "'write.delete.format.default'='avro', 'write.delete.mode'='merge-on-read')"
    )
    spark.sql(f"INSERT INTO {table} VALUES (1, 1.25, 0.50, 'a'), (2, 1.25, NULL, 'b'), (3, NULL, 9.99, NULL)")
    spark.sql(f"DELETE FROM {table} WHERE id = 2")
    t = icebook.open(tmp_path / "db" / "prices")
    data_file = next(p for p in (tmp_path / "db" / "prices" / "data").rglob("*.avro") if "-deletes" not in p.name)
    assert '"decimal_10_2"' in json.dumps(fastavro.reader(data_file.open("rb")).writer_schema)  # what makes it a test
    for snapshot in t.snapshots:
        theirs = spark_arrow(spark, f"SELECT * FROM {table} VERSION AS OF {snapshot.snapshot_id}")
        assert_same(t.read(at=snapshot.snapshot_id), theirs, f"snapshot {snapshot.snapshot_id}")
