"""Small helpers for scenario steps that drive the Iceberg Java API over Spark's py4j gateway.

Spark SQL commits through one table handle per statement; some lessons need what only the Java
API exposes: two independent handles on one table (concurrent writers), files written outside
Spark, and the commit operations themselves (append, delete, overwrite, rewrite, row delta).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def jvm(spark: Any) -> Any:
    return spark._jvm


def spark_table(spark: Any, table_name: str) -> Any:
    """The Java table ``table_name`` as Spark's catalog holds it (the handle Spark SQL commits through)."""
    return jvm(spark).org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, table_name)


def table_location(spark: Any, table_name: str) -> str:
    """The table's base location, as Spark's catalog knows it."""
    return str(spark_table(spark, table_name).location())


def load_handle(spark: Any, location: str) -> Any:
    """A fresh, independent table handle (its own TableOperations) on the table at ``location``.

    Not Spark's catalog: that one may cache and share a handle, and two writers need two.
    """
    tables = jvm(spark).org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration())
    return tables.load(location)


def fresh_handle(spark: Any, table_name: str) -> Any:
    """A fresh, independent handle (``load_handle``) on the table Spark's catalog names ``table_name``."""
    return load_handle(spark, table_location(spark, table_name))


def writer_factory(
    spark: Any,
    table: Any,
    *,
    file_format: str = "parquet",
    equality_ids: Sequence[int] = (),
    delete_schema: Any = None,
) -> Any:
    """Iceberg's generic writer factory for ``table``: data, position-delete and (with ``equality_ids``
    and ``delete_schema``) equality-delete writers of Records in ``file_format``."""
    iceberg = jvm(spark).org.apache.iceberg
    fmt = iceberg.FileFormat.valueOf(file_format.upper())
    builder_class = getattr(iceberg.data, "GenericFileWriterFactory$Builder")  # a nested Java class
    builder = builder_class(table).dataFileFormat(fmt).deleteFileFormat(fmt)
    if equality_ids:
        ids = spark._sc._gateway.new_array(jvm(spark).int, len(equality_ids))
        for i, field_id in enumerate(equality_ids):
            ids[i] = field_id
        builder = builder.equalityFieldIds(ids).equalityDeleteRowSchema(delete_schema)
    return builder.build()


def record(spark: Any, struct: Any, values: Mapping[str, Any]) -> Any:
    rec = jvm(spark).org.apache.iceberg.data.GenericRecord.create(struct)
    for name, value in values.items():
        rec.setField(name, value)
    return rec


def partition_record(spark: Any, spec: Any, values: Mapping[str, Any] | None) -> Any:
    """The partition tuple ``values`` of ``spec``, or None for none (an unpartitioned file)."""
    if not values:
        return None
    return record(spark, spec.partitionType(), values)


def output_file(spark: Any, table: Any, spec: Any, partition: Any, name: str) -> Any:
    """A new file ``name`` where ``table`` puts data files of ``partition`` (a record of ``spec``, or None)."""
    iceberg = jvm(spark).org.apache.iceberg
    locations = table.locationProvider()
    path = (
        locations.newDataLocation(spec, partition, name) if partition is not None else locations.newDataLocation(name)
    )
    return iceberg.encryption.EncryptedFiles.plainAsEncryptedOutput(table.io().newOutputFile(path))


def write_data_file(
    spark: Any,
    table: Any,
    rows: Sequence[Mapping[str, Any]],
    *,
    partition: Mapping[str, Any] | None,
    label: str,
    file_name: str | None = None,
) -> Any:
    """Write ``rows`` into one new Parquet data file of ``table`` (not committed), named ``file_name`` or
    ``<label>-<uuid>.parquet``; returns its DataFile."""
    schema, spec = table.schema(), table.spec()
    part = partition_record(spark, spec, partition)
    output = output_file(spark, table, spec, part, file_name or f"{label}-{uuid.uuid4()}.parquet")
    writer = writer_factory(spark, table).newDataWriter(output, spec, part)
    for values in rows:
        writer.write(record(spark, schema.asStruct(), values))
    writer.close()
    return writer.toDataFile()


def write_position_deletes(
    spark: Any, table: Any, data_file: Any, positions: Iterable[int], *, partition: Mapping[str, Any] | None, label: str
) -> Any:
    """Write a position-delete file deleting ``positions`` of ``data_file`` (not committed)."""
    iceberg = jvm(spark).org.apache.iceberg
    spec = table.spec()
    part = partition_record(spark, spec, partition)
    output = output_file(spark, table, spec, part, f"{label}-{uuid.uuid4()}.parquet")
    writer = writer_factory(spark, table).newPositionDeleteWriter(output, spec, part)
    for pos in positions:
        writer.write(iceberg.deletes.PositionDelete.create().set(data_file.location(), pos))
    writer.close()
    return writer.toDeleteFile()


def data_files(spark: Any, table: Any, **equal: Any) -> list[Any]:
    """Live data files of the table's current snapshot that may hold rows with every ``column == value``
    (pruned by partition values and column bounds, as the Java scan planner does)."""
    expressions = jvm(spark).org.apache.iceberg.expressions.Expressions
    condition = expressions.alwaysTrue()
    for column, value in equal.items():
        condition = getattr(expressions, "and")(condition, expressions.equal(column, value))  # a Python keyword
    tasks = table.newScan().filter(condition).planFiles()
    found = []
    iterator = tasks.iterator()
    while iterator.hasNext():
        found.append(iterator.next().file())
    tasks.close()
    return sorted(found, key=lambda f: str(f.location()))


def java_set(spark: Any, items: Iterable[Any]) -> Any:
    out = jvm(spark).java.util.HashSet()
    for item in items:
        out.add(item)
    return out


def java_error(exc: BaseException) -> tuple[str, str] | None:
    """(Java exception class, message) of an error raised through py4j, else None."""
    origin = getattr(exc, "java_exception", None) or getattr(exc, "_origin", None)
    if origin is None:
        return None
    return str(origin.getClass().getName()), str(origin.getMessage())
