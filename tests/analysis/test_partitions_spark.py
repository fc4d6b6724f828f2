"""A partition with several delete files: icebook's partitions table sums their records, as Spark's does."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

import icebook
from icebook.engines.spark_session import add_catalog

pytestmark = pytest.mark.spark


def test_delete_counts_add_up_across_delete_files(spark: Any, tmp_path: Path) -> None:
    catalog = f"pd_{uuid.uuid4().hex[:8]}"
    add_catalog(catalog, tmp_path)
    t = f"{catalog}.db.t"
    spark.sql(
        f"CREATE TABLE {t} (id BIGINT, r STRING) USING iceberg PARTITIONED BY (r) "
        "TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read')"
    )
    spark.sql(f"INSERT INTO {t} SELECT id, 'a' FROM range(10)")
    spark.sql(f"INSERT INTO {t} SELECT id + 100, 'a' FROM range(10)")
    spark.sql(f"DELETE FROM {t} WHERE id = 1")  # one delete file per data file it touches
    spark.sql(f"DELETE FROM {t} WHERE id IN (102, 103)")
    (theirs,) = spark.sql(f"SELECT * FROM {t}.partitions").collect()
    ours = icebook.open(tmp_path / "db" / "t").inspect.partitions().iloc[0]
    assert theirs.position_delete_file_count == 2 == ours["position_delete_file_count"]
    assert theirs.position_delete_record_count == 3 == ours["position_delete_record_count"]
    assert theirs.record_count == ours["record_count"] == 20
