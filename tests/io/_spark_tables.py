"""Tiny Spark-written Iceberg tables for the format-library tests, written through the suite's one Spark
session (the ``spark`` fixture) into one hadoop catalog per warehouse directory, added at runtime.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def add_catalog(spark: Any, name: str, warehouse: Path) -> None:
    spark.conf.set(f"spark.sql.catalog.{name}", "org.apache.iceberg.spark.SparkCatalog")
    spark.conf.set(f"spark.sql.catalog.{name}.type", "hadoop")
    spark.conf.set(f"spark.sql.catalog.{name}.warehouse", str(warehouse))


ALL_TYPES_COLUMNS = """
    id bigint, b boolean, i int, l bigint, f float, d double, dec decimal(10,2), bigdec decimal(30,5),
    dt date, ts timestamp, tsntz timestamp_ntz, s string, bin binary
"""

ALL_TYPES_ROWS = """
    (1, true,  -5, -9000000000, -1.5, -2.25, -12.34, 12345678901234567890.12345,
     DATE '2024-01-15', TIMESTAMP '2024-01-15 10:30:00', TIMESTAMP_NTZ '2024-01-15 10:30:00.123456',
     'apple', X'00FF10'),
    (2, false, 7, 42, 3.25, 1e10, 99.99, -1.00001,
     DATE '1969-12-31', TIMESTAMP '1969-12-31 23:59:59.999999', TIMESTAMP_NTZ '2030-06-01 00:00:00',
     'zebra-long-string-value-that-exceeds-sixteen', X'FFFE'),
    (3, true, NULL, 100, NULL, 0.0, 0.00, 0, DATE '2000-02-29', NULL, NULL, NULL, NULL)
"""


def build_tables(spark: Any, catalog: str) -> None:
    """Create the fixture tables in ``catalog`` (each a few rows, a few snapshots)."""
    sql = spark.sql
    sql(f"CREATE NAMESPACE IF NOT EXISTS {catalog}.db")

    # v1, identity + truncate partitioned, every bound type; an append then an overwrite.
    for version in (1, 2, 3):
        # v2 also partitions by identity on a decimal and a timestamp_ntz (fixed/decimal and
        # timestamp partition values in the manifest's Avro schema).
        extra = ", dec, tsntz" if version == 2 else ""
        sql(
            f"CREATE TABLE {catalog}.db.types_v{version} ({ALL_TYPES_COLUMNS}) USING iceberg "
            f"PARTITIONED BY (b, truncate(3, s){extra}) TBLPROPERTIES ('format-version'='{version}')"
        )
        sql(f"INSERT INTO {catalog}.db.types_v{version} VALUES {ALL_TYPES_ROWS}")
        sql(
            f"INSERT INTO {catalog}.db.types_v{version} VALUES (4, false, 1, 2, 3.0, 4.0, 5.00, 6, "
            "DATE '2024-03-01', TIMESTAMP '2024-03-01 00:00:00', TIMESTAMP_NTZ '2024-03-01 00:00:00', 'app', X'01')"
        )

    # bucket + day partitioning, merge-on-read deletes (v2 position deletes, v3 deletion vectors).
    for version in (2, 3):
        t = f"{catalog}.db.mor_v{version}"
        sql(
            f"CREATE TABLE {t} (id bigint, cat string, ts timestamp, amount decimal(9,2)) USING iceberg "
            f"PARTITIONED BY (bucket(4, id), days(ts)) TBLPROPERTIES ('format-version'='{version}', "
            "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
            "'write.merge.mode'='merge-on-read')"
        )
        sql(
            f"INSERT INTO {t} SELECT id, CASE WHEN id % 2 = 0 THEN 'even' ELSE 'odd' END, "
            "TIMESTAMP '2024-05-01 00:00:00' + make_interval(0, 0, 0, CAST(id % 3 AS INT)), "
            "CAST(id * 1.25 AS decimal(9,2)) FROM range(0, 40)"
        )
        sql(f"DELETE FROM {t} WHERE id % 5 = 0")
        sql(f"DELETE FROM {t} WHERE id = 7 OR id = 8 OR id = 39")

    # v1 unpartitioned with a compaction-like rewrite (EXISTING / DELETED entries).
    t = f"{catalog}.db.rewrite_v2"
    sql(f"CREATE TABLE {t} (id bigint, name string) USING iceberg TBLPROPERTIES ('format-version'='2')")
    sql(f"INSERT INTO {t} VALUES (1, 'a'), (2, 'b')")
    sql(f"INSERT INTO {t} VALUES (3, 'c')")
    sql(f"DELETE FROM {t} WHERE id = 1")  # copy-on-write by default: DELETED + EXISTING entries
    spark.sql(f"CALL {catalog}.system.rewrite_manifests('db.rewrite_v2')").collect()


__all__ = ["add_catalog", "build_tables"]
