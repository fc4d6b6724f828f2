"""``file_formats``: data and delete files in every format the spec allows (ORC, Avro, Parquet).

``write.format.default`` and ``write.delete.format.default`` choose the format of new data and
delete files; changing them later leaves a table of mixed files that every reader must handle.
Position deletes come from merge-on-read DELETE and UPDATE, equality deletes from the Iceberg
Java API. A ``uuid`` column (Spark SQL cannot declare one) is added through the Java API.
The last step registers a copied data file under a partition its rows disagree with: Iceberg's
readers fill identity-partition columns from the partition tuple, not from the file.
"""

from __future__ import annotations

import shutil
from typing import Any

from icebook.scenarios.equality_deletes import _row_delta
from icebook.scenarios.javaapi import jvm, spark_table
from icebook.scenarios.scenario import MERGE_ON_READ, Claims, Scenario, Step, create_table, set_properties


def _files_in(file_format: str) -> dict[str, str]:
    """The properties that make new data and delete files ``file_format`` files."""
    return {"write.format.default": file_format, "write.delete.format.default": file_format}


def add_uuid_column(spark: Any, table_name: str) -> None:
    """ALTER TABLE cannot add a uuid column in Spark SQL; the Java API can."""
    uuid_type = jvm(spark).org.apache.iceberg.types.Types.UUIDType.get()
    spark_table(spark, table_name).updateSchema().addColumn("uid", uuid_type).commit()


def orc_equality_delete(spark: Any, table_name: str) -> None:
    """Equality delete on name = 'gus' as an ORC file, scoped to partition region='eu'."""
    _row_delta(
        spark,
        table_name,
        key=["name"],
        deletes=[{"name": "gus"}],
        spec_id=0,
        partition={"region": "eu"},
        label="orc-names",
        file_format="ORC",
    )


def avro_equality_delete(spark: Any, table_name: str) -> None:
    """Equality delete on id in (1, 12) as an Avro file, scoped to partition region='us'."""
    _row_delta(
        spark,
        table_name,
        key=["id"],
        deletes=[{"id": 1}, {"id": 12}],
        spec_id=0,
        partition={"region": "us"},
        label="avro-ids",
        file_format="AVRO",
    )


def misfiled_copy(spark: Any, table_name: str) -> None:
    """Copy a live Parquet data file of region='apac' and append the copy as partition region='us'."""
    iceberg = jvm(spark).org.apache.iceberg
    table = spark_table(spark, table_name)
    row = spark.sql(
        f"SELECT file_path, file_size_in_bytes, record_count FROM {table_name}.data_files "
        "WHERE file_format = 'PARQUET' AND partition.region = 'apac' ORDER BY file_path LIMIT 1"
    ).collect()[0]
    source = str(row.file_path)
    local = source.removeprefix("file:")
    copy = local.replace("/region=apac/", "/region=us/").replace(".parquet", "-misfiled.parquet")
    shutil.copyfile(local, copy)
    spec = table.spec()
    data_file = (
        iceberg.DataFiles.builder(spec)
        .withPath(copy)
        .withFormat(iceberg.FileFormat.PARQUET)
        .withFileSizeInBytes(int(row.file_size_in_bytes))
        .withRecordCount(int(row.record_count))
        .withPartitionPath("region=us")
        .build()
    )
    table.newAppend().appendFile(data_file).commit()


FILE_FORMATS = Scenario(
    name="file_formats",
    version=1,
    title="Inventory in ORC, Avro and Parquet: data, position-delete and equality-delete files of each format",
    steps=(
        create_table(
            "Create a v2 merge-on-read table whose data and delete files are ORC.",
            columns="""
                id INT, region STRING, name STRING, qty INT, price DECIMAL(10,2), ts TIMESTAMP,
                seen TIMESTAMP_NTZ, day DATE, tags ARRAY<STRING>, attrs MAP<STRING, INT>,
                info STRUCT<code: INT, note: STRING>""",
            format_version=2,
            partitioned_by="region",
            properties={**_files_in("orc"), **MERGE_ON_READ},
        ),
        Step(
            narrative="Add a uuid column through the Java API (Spark reads and writes it as a string).",
            action=add_uuid_column,
        ),
        Step(
            narrative="Append rows: ORC data files, one per region.",
            sql="""INSERT INTO {table} VALUES
                (1, 'us', 'ann', 5, 1.50, TIMESTAMP '2024-03-01 10:00:00', TIMESTAMP_NTZ '2024-03-01 10:00:00',
                 DATE '2024-03-01', array('a', 'b'), map('x', 1), named_struct('code', 1, 'note', 'n1'),
                 '6f1c2a3e-0d4b-4c5e-9f60-7a8b9cadbeef'),
                (2, 'us', 'bob', 3, 2.00, TIMESTAMP '2024-03-01 11:00:00', NULL, DATE '2024-03-02',
                 array(), map(), NULL, NULL),
                (3, 'eu', 'cy', 7, 0.99, NULL, TIMESTAMP_NTZ '1969-12-31 23:59:59', DATE '1969-12-31',
                 NULL, map('y', NULL), named_struct('code', NULL, 'note', 'n3'),
                 '00000000-0000-0000-0000-000000000001'),
                (4, 'apac', 'dee', 1, 10.00, TIMESTAMP '2024-03-02 00:00:00', NULL, NULL,
                 array('c'), NULL, named_struct('code', 4, 'note', NULL), 'ffffffff-ffff-ffff-ffff-ffffffffffff'),
                (5, 'eu', 'eve', 2, 3.25, TIMESTAMP '2024-03-02 12:30:00', NULL, DATE '2024-03-03',
                 array('d', NULL), map('z', 3), named_struct('code', 5, 'note', 'n5'), NULL)""",
        ),
        Step(
            narrative="Merge-on-read DELETE: an ORC position-delete file masks row 2.",
            sql="DELETE FROM {table} WHERE id = 2",
        ),
        set_properties(
            "Switch new data and delete files to Avro; existing ORC files stay as they are.", _files_in("avro")
        ),
        Step(
            narrative="Append rows: Avro data files.",
            sql="""INSERT INTO {table} VALUES
                (6, 'us', 'fay', 6, 4.00, TIMESTAMP '2024-03-03 08:00:00', TIMESTAMP_NTZ '2024-03-03 08:00:00',
                 DATE '2024-03-03', array('e'), map('w', 4), named_struct('code', 6, 'note', 'n6'),
                 '12345678-1234-5678-1234-567812345678'),
                (7, 'eu', 'gus', 4, 5.50, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
                (8, 'apac', 'hal', 9, 0.01, TIMESTAMP '2024-03-03 23:59:59', NULL, DATE '2024-03-04',
                 array(NULL), map('v', 5, 'u', 6), named_struct('code', 8, 'note', 'n8'),
                 'abcdefab-cdef-abcd-efab-cdefabcdefab'),
                (12, 'us', 'ivy', 1, 1.00, NULL, NULL, NULL, NULL, NULL, NULL, NULL)""",
        ),
        Step(
            narrative="DELETE rows in ORC and Avro data files: Avro position-delete files.",
            sql="DELETE FROM {table} WHERE id IN (3, 8)",
        ),
        Step(
            narrative="Merge-on-read UPDATE: Avro position deletes plus new Avro data files.",
            sql="UPDATE {table} SET qty = qty + 100 WHERE id IN (4, 6)",
        ),
        Step(
            narrative="Equality delete as an ORC file: name = 'gus' in region eu.",
            action=orc_equality_delete,
        ),
        Step(
            narrative="Equality delete as an Avro file: id in (1, 12) in region us.",
            action=avro_equality_delete,
        ),
        set_properties(
            "Back to Parquet for new data and delete files: the table now mixes all three formats.",
            _files_in("parquet"),
        ),
        Step(
            narrative="Append rows: Parquet data files.",
            sql="""INSERT INTO {table} VALUES
                (9, 'apac', 'ida', 2, 2.50, TIMESTAMP '2024-03-04 01:00:00', NULL, DATE '2024-03-05',
                 array('f'), map('t', 7), named_struct('code', 9, 'note', 'n9'), '0f0f0f0f-0f0f-0f0f-0f0f-0f0f0f0f0f0f'),
                (10, 'eu', 'jo', 8, 6.75, NULL, NULL, NULL, NULL, NULL, NULL, NULL)""",
        ),
        Step(
            narrative="DELETE across formats: a Parquet position-delete file masks rows of ORC and Parquet files.",
            sql="DELETE FROM {table} WHERE id IN (5, 10)",
        ),
        Step(
            narrative="A copied apac data file appended as partition region='us': readers take region from the "
            "partition tuple, so its rows read as 'us'.",
            action=misfiled_copy,
        ),
    ),
    claims=Claims(
        operations=(
            "append",
            "delete",
            "append",
            "delete",
            "overwrite",
            "delete",
            "delete",
            "append",
            "delete",
            "append",
        ),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0}),
        delete_formats=frozenset({"ORC", "AVRO", "PARQUET"}),
        format_version=2,
    ),
    tags=("file-formats", "orc", "avro", "merge-on-read", "equality-deletes", "uuid"),
)
