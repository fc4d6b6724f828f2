"""Metadata aggregates computed by Spark over Iceberg's own metadata tables, for tables one machine
cannot summarise: ``t.inspect.partitions(at, engine="spark")`` and ``t.maintenance.file_measures(at, engine="spark")``.

Spark reads the exact metadata file icebook opened as a static table (``<metadata file>#<metadata
table>``) pinned to the snapshot by ``versionAsOf``, so both engines answer for the same state. Every
aggregate is a GROUP BY that Spark's executors run; only one row per partition (or per size bucket)
reaches the driver, never a row per file. The rows come back as Arrow in the local answer's types.

Which delete files apply to which data files (``files_with_deletes``, ``equality_deletes_applying``,
``dangling_deletes``, ``delete_records``) is a join Spark runs too (``spark_deletes.py``), only when the
snapshot has delete files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from icebook.analysis.maintenance.binpack import CompactionOptions, compaction_options
from icebook.analysis.maintenance.health_sections import SIZE_BUCKETS, FilesHealth, PartitionHealth
from icebook.analysis.scan.columns import FileBuilder, physical
from icebook.analysis.store.manifests import spec_partition_type, table_partition_type
from icebook.analysis.tables.aggregates import partitions_schema
from icebook.engines import spark_deletes, spark_engine
from icebook.errors import EngineError
from icebook.spec import properties
from icebook.spec.metadata import TableMetadata

# Counted as one file: a deletion vector is one blob of a Puffin file, told apart by its offset.
_DELETE_KEY = "concat(file_path, '#', coalesce(cast(content_offset AS STRING), 'None'))"
_IS_DV = "(content = 1 AND upper(file_format) = 'PUFFIN')"


@dataclass(frozen=True, slots=True)
class SparkMetadataTables:
    """A table's metadata tables as Spark reads them: the metadata file icebook opened, pinned to
    one snapshot (None: the file's current state)."""

    location: str
    metadata_location: str
    properties: Mapping[str, str]
    snapshot_id: int | None

    def dataframe(self, name: str) -> Any:
        """Spark's ``name`` metadata table (``files``, ``partitions``, ...) at the snapshot."""
        spark_engine.prepare_table(self.location, self.metadata_location, self.properties)
        reader = spark_engine.get_session().read.format("iceberg")
        if self.snapshot_id is not None:
            reader = reader.option("versionAsOf", str(self.snapshot_id))
        where = spark_engine.metadata_table(self.metadata_location, name)
        try:
            with spark_engine.spark_errors(f"reading {where} at snapshot {self.snapshot_id}"):
                return reader.load(where)
        except EngineError as exc:
            raise spark_engine.storage_problem(exc, self.location) from exc

    def query(self, name: str, sql: str) -> pa.Table:
        """``sql`` over the metadata table ``name``, bound as the view ``{name}``, collected as Arrow."""
        df = self.dataframe(name)
        view = f"icebook_{name}_{abs(hash((self.metadata_location, self.snapshot_id)))}"
        spark = spark_engine.get_session()
        with spark_engine.spark_errors(f"aggregating {name} of {self.metadata_location}"):
            df.createOrReplaceTempView(view)
            try:
                result = spark.sql(sql.replace("{" + name + "}", view))
                return spark_engine.to_arrow(result)
            finally:
                spark.catalog.dropTempView(view)


# ---------------------------------------------------------------------------------- partitions


def partitions(metadata: TableMetadata, tables: SparkMetadataTables) -> pa.Table:
    """Spark's ``partitions`` metadata table at the snapshot, in the columns and types of the local
    ``partitions`` table (rows in Spark's order: sort both the same way to compare)."""
    schema = partitions_schema(metadata)
    names = ", ".join(f"`{n}`" for n in schema.names)
    collected = tables.query("partitions", f"SELECT {names} FROM {{partitions}}")
    return _cast(collected, schema)


def _cast(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Spark's Arrow (microsecond timestamps, non-null flags of its own) in the local types."""
    return pa.table([table.column(f.name).cast(f.type) for f in schema], schema=schema)


# ---------------------------------------------------------------------------------- file measures


def _bucket_case(target: int) -> str:
    """The SIZE_BUCKETS of a data file's size relative to ``target``, as a Spark SQL expression.
    Double literals (``0.01D``): a bare ``0.01`` is a DECIMAL in Spark SQL."""
    ratio = f"(file_size_in_bytes / CAST({target} AS DOUBLE))" if target else "CAST(0 AS DOUBLE)"
    whens = " ".join(
        f"WHEN {ratio} < {high!r}D THEN {i}" for i, (_, _, high) in enumerate(SIZE_BUCKETS) if high != float("inf")
    )
    return f"CASE {whens} ELSE {len(SIZE_BUCKETS) - 1} END"


def size_histogram(tables: SparkMetadataTables, target: int) -> tuple[tuple[str, int], ...]:
    """(bucket, data files in it): the health report's size buckets, counted by a Spark GROUP BY."""
    counts = tables.query(
        "files",
        f"SELECT {_bucket_case(target)} AS bucket, count(*) AS files FROM {{files}} WHERE content = 0 GROUP BY 1",
    ).to_pydict()
    found = dict(zip(counts["bucket"], counts["files"], strict=True))
    return tuple((name, int(found.get(i, 0))) for i, (name, _, _) in enumerate(SIZE_BUCKETS))


def _partition_sql(options: CompactionOptions, partitioned: bool) -> str:
    group = "spec_id, partition" if partitioned else "spec_id"
    return f"""
        SELECT {group},
            count_if(content = 0) AS data_files,
            coalesce(sum(CASE WHEN content = 0 THEN file_size_in_bytes END), 0) AS data_bytes,
            coalesce(sum(CASE WHEN content = 0 THEN record_count END), 0) AS records,
            count_if(content = 0 AND file_size_in_bytes < {options.min_file_size_bytes}) AS small_files,
            count_if(content = 0 AND file_size_in_bytes > {options.max_file_size_bytes}) AS large_files,
            count(DISTINCT CASE WHEN content = 1 AND NOT {_IS_DV} THEN {_DELETE_KEY} END) AS position_delete_files,
            count(DISTINCT CASE WHEN {_IS_DV} THEN {_DELETE_KEY} END) AS deletion_vectors,
            count(DISTINCT CASE WHEN content = 2 THEN {_DELETE_KEY} END) AS equality_delete_files
        FROM {{files}} GROUP BY {group}"""


_MEASURES = (
    "data_files",
    "data_bytes",
    "records",
    "small_files",
    "large_files",
    "position_delete_files",
    "deletion_vectors",
    "equality_delete_files",
)


def _labels(metadata: TableMetadata, rows: pa.Table) -> list[tuple[int, str]]:
    """(spec_id, the partition as the local report prints it) of each aggregated row: the table-wide
    partition struct Spark groups by, read back per spec by field id."""
    spec_ids = rows.column("spec_id").to_pylist()
    if "partition" not in rows.column_names:
        return [(s, "unpartitioned") for s in spec_ids]
    unified = partitions_schema(metadata).field("partition").type
    part = rows.column("partition").combine_chunks().cast(unified)
    columns = {unified.field(i).name: physical(part.field(i)) for i in range(unified.num_fields)}
    by_id = {f.field_id: f.name for f in table_partition_type(metadata).fields}
    builder = FileBuilder(metadata)
    out = []
    for row, spec_id in enumerate(spec_ids):
        spec = metadata.spec_by_id(spec_id)
        fields = spec_partition_type(metadata, spec_id).fields
        partition = tuple(
            (pf.name, columns[by_id[f.field_id]][row]) for pf, f in zip(spec.fields, fields, strict=False)
        )
        out.append((spec_id, builder.partition_text(spec_id, partition)))
    return out


def report_options(metadata: TableMetadata) -> CompactionOptions:
    """The size thresholds the health report measures with: a table property that cannot be used
    counts as unset (its default), as the report does."""
    bad = {e.name for e in properties.invalid_properties(metadata.properties)}
    return compaction_options({k: v for k, v in metadata.properties.items() if k not in bad})


def file_measures(metadata: TableMetadata, tables: SparkMetadataTables) -> FilesHealth:
    """The health report's per-partition file measures and size histogram, aggregated by Spark over
    the ``files`` metadata table, and which delete files apply over ``entries`` (``spark_deletes``)."""
    options = report_options(metadata)
    partitioned = bool(table_partition_type(metadata).fields)
    rows = tables.query("files", _partition_sql(options, partitioned))
    groups: dict[tuple[int, str], dict[str, int]] = {}
    measures = {name: rows.column(name).to_pylist() for name in _MEASURES}
    # Two partition tuples the local report prints alike are one group there: merge them the same way.
    for i, key in enumerate(_labels(metadata, rows)):
        g = groups.setdefault(key, dict.fromkeys(_MEASURES + spark_deletes.APPLICABILITY, 0))
        for name in _MEASURES:
            g[name] += int(measures[name][i])
    if any(g["position_delete_files"] + g["deletion_vectors"] + g["equality_delete_files"] for g in groups.values()):
        equality_ids = tables.query("entries", spark_deletes.equality_ids_sql()).column("id").to_pylist()
        applied = tables.query("entries", spark_deletes.applicability_sql(metadata, partitioned, equality_ids))
        values = {name: applied.column(name).to_pylist() for name in spark_deletes.APPLICABILITY}
        for i, key in enumerate(_labels(metadata, applied)):
            g = groups.setdefault(key, dict.fromkeys(_MEASURES + spark_deletes.APPLICABILITY, 0))
            for name in spark_deletes.APPLICABILITY:
                g[name] += int(values[name][i])
    ordered = sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0]))
    return FilesHealth.measured(
        options,
        tuple(PartitionHealth(partition=label, spec_id=spec_id, **g) for (spec_id, label), g in ordered),
        size_histogram(tables, options.target_file_size_bytes),
    )


__all__ = ["SparkMetadataTables", "file_measures", "partitions", "report_options", "size_histogram"]
