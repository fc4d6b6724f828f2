"""``equality_deletes``: equality delete files, which Spark SQL never writes (Flink and streaming
upserts do). Rows are written with Spark SQL; the equality deletes through the Iceberg Java API
over Spark's py4j gateway: a global (unpartitioned) delete, a partition-scoped one, and an upsert
whose delete and new row share one commit, so that every sequence-number rule shows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from icebook.scenarios.javaapi import jvm, output_file, partition_record, record, spark_table, writer_factory
from icebook.scenarios.scenario import MERGE_ON_READ, Claims, Scenario, Step, create_table


def _row_delta(
    spark: Any,
    table_name: str,
    *,
    key: list[str],
    deletes: list[dict[str, Any]],
    spec_id: int,
    partition: dict[str, Any] | None = None,
    rows: Sequence[dict[str, Any]] = (),
    label: str,
    file_format: str = "PARQUET",
) -> None:
    """Commit one RowDelta: an equality delete file on ``key`` (plus data ``rows``, same commit),
    written in ``file_format`` (PARQUET, ORC or AVRO)."""
    table = spark_table(spark, table_name)
    schema = table.schema()
    spec = table.specs().get(spec_id)
    names = jvm(spark).java.util.ArrayList()
    for column in key:
        names.add(column)
    delete_schema = schema.select(names)
    ids = [schema.findField(column).fieldId() for column in key]
    factory = writer_factory(spark, table, file_format=file_format, equality_ids=ids, delete_schema=delete_schema)
    part = partition_record(spark, spec, partition)
    suffix = file_format.lower()
    writer = factory.newEqualityDeleteWriter(
        output_file(spark, table, spec, part, f"{label}-eq-deletes.{suffix}"), spec, part
    )
    for values in deletes:
        writer.write(record(spark, delete_schema.asStruct(), values))
    writer.close()
    delta = table.newRowDelta().addDeletes(writer.toDeleteFile())
    if rows:
        data_writer = factory.newDataWriter(output_file(spark, table, spec, part, f"{label}-data.{suffix}"), spec, part)
        for values in rows:
            data_writer.write(record(spark, schema.asStruct(), values))
        data_writer.close()
        delta = delta.addRows(data_writer.toDataFile())
    delta.commit()


def global_delete_by_id(spark: Any, table_name: str) -> None:
    """Equality delete on id in (2, 8, NULL), written with the unpartitioned spec 0: a global delete."""
    deletes: list[dict[str, Any]] = [{"id": 2}, {"id": 8}, {"id": None}]
    _row_delta(spark, table_name, key=["id"], deletes=deletes, spec_id=0, label="global")


def eu_delete_by_name(spark: Any, table_name: str) -> None:
    """Equality delete on name in ('x', 'bob') in partition region='eu' of spec 1 only."""
    deletes = [{"name": "x"}, {"name": "bob"}]
    _row_delta(
        spark, table_name, key=["name"], deletes=deletes, spec_id=1, partition={"region": "eu"}, label="eu-names"
    )


def upsert_id_6(spark: Any, table_name: str) -> None:
    """An upsert in one commit: delete id 6 by equality and add its new version (same sequence number)."""
    _row_delta(
        spark,
        table_name,
        key=["id"],
        deletes=[{"id": 6}],
        spec_id=1,
        partition={"region": "us"},
        rows=[{"id": 6, "region": "us", "name": "eve", "qty": 40}],
        label="upsert-6",
    )


EQUALITY_DELETES = Scenario(
    name="equality_deletes",
    version=1,
    title="Stock levels with equality deletes: global and partition-scoped deletes, an upsert, sequence numbers",
    steps=(
        create_table(
            "Create an unpartitioned v2 table (spec 0); SQL deletes are merge-on-read.",
            columns="id INT, region STRING, name STRING, qty INT",
            format_version=2,
            properties=MERGE_ON_READ,
        ),
        Step(
            narrative="Append six rows, one with a null id, into one unpartitioned file (sequence number 1).",
            sql="""INSERT INTO {table} VALUES
                (1, 'us', 'ann', 5), (2, 'eu', 'bob', 3), (3, 'eu', 'cy', 7),
                (4, 'apac', 'dee', 1), (NULL, 'us', 'nobody', 0), (5, 'us', 'x', 2)""",
        ),
        Step(
            narrative="Partition evolution: partition by region from now on (spec 1).",
            sql="ALTER TABLE {table} ADD PARTITION FIELD region",
        ),
        Step(
            narrative="Append six rows under spec 1: one file per region (sequence number 2).",
            sql="""INSERT INTO {table} VALUES
                (6, 'us', 'eve', 4), (7, 'eu', 'fay', 6), (8, 'eu', 'gus', 2),
                (9, 'apac', 'hal', 8), (10, 'eu', 'x', 1), (11, 'apac', 'x', 3)""",
        ),
        Step(
            narrative="Global equality delete (unpartitioned spec): id in (2, 8, null) goes from every older file; "
            "equality is null-safe, so the null-id row goes too.",
            action=global_delete_by_id,
        ),
        Step(
            narrative="Partition-scoped equality delete: name in ('x', 'bob') in region=eu of spec 1 only; "
            "'x' rows elsewhere, and in the spec 0 file, survive.",
            action=eu_delete_by_name,
        ),
        Step(
            narrative="Append rows matching both deletes: newer data sequence numbers, so they survive.",
            sql="INSERT INTO {table} VALUES (2, 'eu', 'bob', 9), (12, 'eu', 'x', 5)",
        ),
        Step(
            narrative="Upsert in one commit: an equality delete of id 6 and its new row; the delete does not "
            "apply to the row of its own commit (equal sequence numbers).",
            action=upsert_id_6,
        ),
        Step(
            narrative="A Spark SQL merge-on-read DELETE adds position deletes next to the equality deletes.",
            sql="DELETE FROM {table} WHERE id = 7",
        ),
    ),
    claims=Claims(
        operations=("append", "append", "delete", "delete", "append", "overwrite", "delete"),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0, 1}),
        delete_formats=frozenset({"PARQUET"}),
        format_version=2,
    ),
    tags=("equality-deletes", "partition-evolution", "merge-on-read"),
)
