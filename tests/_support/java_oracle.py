"""Iceberg's Java API as the oracle for tables Spark cannot read (a type Spark lacks, such as timestamp_ns)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def java_table(spark: Any, location: Path | str) -> Any:
    """A handle on the table at ``location`` through Iceberg's HadoopTables (no Spark type conversion)."""
    tables = spark._jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration())
    return tables.load(str(location))


def manifest_facts(spark: Any, table: Any) -> tuple[set[int], set[str]]:
    """(partition spec ids of every file any snapshot kept, file formats of every delete file), read from
    the manifests of all snapshots as ``all_files`` and ``all_delete_files`` would."""
    iceberg = spark._jvm.org.apache.iceberg
    spec_ids: set[int] = set()
    formats: set[str] = set()
    for snapshot in table.snapshots():
        for manifest in snapshot.allManifests(table.io()):
            if manifest.content().id() == 0:
                spec_ids.add(int(manifest.partitionSpecId()))
                continue
            reader = iceberg.ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs())
            iterator = reader.iterator()
            while iterator.hasNext():
                formats.add(str(iterator.next().format()))
            reader.close()
    return spec_ids, formats


LINEAGE = ("_row_id", "_last_updated_sequence_number")


def java_rows(spark: Any, location: Path | str, snapshot_id: int, *, lineage: bool = False) -> Any:
    """The rows Iceberg's Java generic reader (``IcebergGenerics``) reads at ``snapshot_id``, as Arrow in
    the types icebook documents for each Iceberg type (``analysis/arrow_types.py``): the reference for
    tables Spark cannot read. A type without a conversion here fails the test that asked. With ``lineage``,
    the row-lineage metadata columns come first (``_row_id``, ``_last_updated_sequence_number``, as
    ``SELECT _row_id, _last_updated_sequence_number, *``)."""
    import pyarrow as pa
    import pytest

    import icebook
    from icebook.analysis.arrow_types import arrow_field

    iceberg = spark._jvm.org.apache.iceberg
    util = iceberg.util.DateTimeUtil
    table = java_table(spark, location)
    schema = icebook.open(str(location)).read_schema(snapshot_id)
    as_int = {
        "timestamp_ns": util.nanosFromTimestamp,
        "timestamptz_ns": util.nanosFromTimestamptz,
        "timestamp": util.microsFromTimestamp,
        "timestamptz": util.microsFromTimestamptz,
        "date": util.daysFromDate,
    }
    plain = {"int", "long", "boolean", "string", "double", "float", "unknown"}
    columns: dict[str, list[Any]] = {f.name: [] for f in schema.columns}
    scan = iceberg.data.IcebergGenerics.read(table).useSnapshot(snapshot_id)
    if lineage:
        meta = iceberg.Schema([iceberg.MetadataColumns.ROW_ID, iceberg.MetadataColumns.LAST_UPDATED_SEQUENCE_NUMBER])
        scan = scan.project(
            iceberg.types.TypeUtil.join(table.schemas().get(table.snapshot(snapshot_id).schemaId()), meta)
        )
        columns |= {name: [] for name in LINEAGE}
    records = scan.build()
    try:
        iterator = records.iterator()
        while iterator.hasNext():
            record = iterator.next()
            for name in LINEAGE if lineage else ():
                columns[name].append(record.getField(name))
            for f in schema.columns:
                value, kind = record.getField(f.name), str(f.type)
                if kind not in plain and kind not in as_int:
                    pytest.fail(f"java_rows has no conversion for {kind} (column {f.name})")
                columns[f.name].append(None if value is None else as_int[kind](value) if kind in as_int else value)
    finally:
        records.close()
    fields = [arrow_field(f.name, f.type, not f.required, rows=True) for f in schema.columns]
    arrays = [
        pa.array(columns[f.name], pa.int64() if str(c.type) in as_int else f.type).cast(f.type)
        for f, c in zip(fields, schema.columns, strict=True)
    ]
    if lineage:
        fields = [pa.field(name, pa.int64()) for name in LINEAGE] + fields
        arrays = [pa.array(columns[name], pa.int64()) for name in LINEAGE] + arrays
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def java_file_facts(spark: Any, location: Path | str, snapshot_id: int) -> dict[str, dict[str, Any]]:
    """Per live data file at ``snapshot_id``, as Iceberg's Java API plans it (``includeColumnStats``): its
    record count, size, first row id, and each column's bounds decoded by ``Conversions.fromByteBuffer``
    (keyed by column name): an int or string as Java holds it, a geo bound as the tuple ``(x, y[, z[, m]])``
    of its ``GeospatialBound``."""
    iceberg = spark._jvm.org.apache.iceberg
    table = java_table(spark, location)
    schema = table.schemas().get(table.snapshot(snapshot_id).schemaId()) or table.schema()
    out: dict[str, dict[str, Any]] = {}
    tasks = table.newScan().useSnapshot(snapshot_id).includeColumnStats().planFiles()
    try:
        iterator = tasks.iterator()
        while iterator.hasNext():
            f = iterator.next().file()
            bounds: dict[str, Any] = {}
            for side, raw in (("lower", f.lowerBounds()), ("upper", f.upperBounds())):
                for field_id in [] if raw is None else list(raw.keySet()):
                    field = table.schema().findField(int(field_id)) or schema.findField(int(field_id))
                    value = iceberg.types.Conversions.fromByteBuffer(field.type(), raw.get(field_id))
                    if field.type().typeId().toString() in ("GEOMETRY", "GEOGRAPHY"):
                        value = (
                            value.x(),
                            value.y(),
                            *((value.z(),) if value.hasZ() or value.hasM() else ()),
                            *((value.m(),) if value.hasM() else ()),
                        )
                    elif not isinstance(value, (int, float, str, bool)):
                        value = str(value)
                    bounds[f"{field.name()}.{side}"] = value
            first_row_id = f.firstRowId()
            out[str(f.location())] = {
                "record_count": int(f.recordCount()),
                "file_size_in_bytes": int(f.fileSizeInBytes()),
                "first_row_id": None if first_row_id is None else int(first_row_id),
                "bounds": bounds,
            }
    finally:
        tasks.close()
    return out


def java_files(spark: Any, location: Path | str, snapshot_id: int) -> list[dict[str, Any]]:
    """The live files of ``snapshot_id``'s manifests as Iceberg's Java manifest readers list them (the rows of
    the ``files`` metadata table): content, path, DV offset and size, spec id, record count, file size,
    partition (as text) and first row id."""
    iceberg = spark._jvm.org.apache.iceberg
    table = java_table(spark, location)
    out: list[dict[str, Any]] = []
    for manifest in table.snapshot(snapshot_id).allManifests(table.io()):
        if manifest.content().id() == 0:
            reader = iceberg.ManifestFiles.read(manifest, table.io(), table.specs())
        else:
            reader = iceberg.ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs())
        try:
            iterator = reader.iterator()
            while iterator.hasNext():
                f = iterator.next()
                offset, size = (f.contentOffset(), f.contentSizeInBytes()) if manifest.content().id() else (None, None)
                out.append(
                    {
                        "content": int(f.content().id()),
                        "file_path": str(f.location()),
                        "content_offset": None if offset is None else int(offset),
                        "content_size_in_bytes": None if size is None else int(size),
                        "spec_id": int(f.specId()),
                        "record_count": int(f.recordCount()),
                        "file_size_in_bytes": int(f.fileSizeInBytes()),
                        "partition": str(f.partition()),
                        "first_row_id": None if f.firstRowId() is None else int(f.firstRowId()),
                    }
                )
        finally:
            reader.close()
    return out
