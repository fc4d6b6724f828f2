"""Partition-level views: manifest partition summaries as text, and the ``partitions`` table."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from icebook.analysis.arrow_types import arrow_type
from icebook.analysis.store.manifests import source_schema_for, spec_partition_type, table_partition_type
from icebook.spec.manifest import ManifestFile
from icebook.spec.metadata import TableMetadata
from icebook.spec.partitioning import PartitionField
from icebook.spec.types import IcebergType
from icebook.spec.values import decode_value

SUMMARY_TYPE = pa.list_(
    pa.struct(
        [
            pa.field("contains_null", pa.bool_()),
            pa.field("contains_nan", pa.bool_()),
            pa.field("lower_bound", pa.string()),
            pa.field("upper_bound", pa.string()),
        ]
    )
)


def partition_summaries_arrow(metadata: TableMetadata, manifests: Sequence[ManifestFile]) -> pa.Array:
    """Each manifest's field summaries with bounds shown as the transform's human string."""
    rows: list[list[dict[str, Any]] | None] = []
    for m in manifests:
        if m.partitions is None:
            rows.append(None)
            continue
        spec = metadata.spec_by_id(m.partition_spec_id)
        ptype = spec_partition_type(metadata, m.partition_spec_id)
        schema = source_schema_for(metadata, spec)
        summaries = []
        for i, summary in enumerate(m.partitions):
            pf = spec.fields[i] if i < len(spec.fields) else None
            result_type = ptype.fields[i].type if i < len(ptype.fields) else None
            source = schema.find_type(pf.source_ids[0]) if pf and pf.source_ids else None
            where = (m.manifest_path, f"partitions[{i}]")
            summaries.append(
                {
                    "contains_null": summary.contains_null,
                    "contains_nan": summary.contains_nan,
                    "lower_bound": _human(summary.lower_bound, pf, result_type, source, where, "lower_bound"),
                    "upper_bound": _human(summary.upper_bound, pf, result_type, source, where, "upper_bound"),
                }
            )
        rows.append(summaries)
    return pa.array(rows, SUMMARY_TYPE)


def _human(
    raw: bytes | None,
    pf: PartitionField | None,
    result_type: IcebergType | None,
    source: IcebergType | None,
    where: tuple[str, str],
    label: str,
) -> str | None:
    """A summary bound as the transform's human string (Spark's ``partition_summaries`` text); a missing
    bound (a field with only nulls, or a void field) reads "null", as the reference implementation prints it."""
    if pf is None or result_type is None:
        return None
    if raw is None:
        return "null"
    value = decode_value(raw, result_type, field=f"{where[1]}.{label}", file=where[0])
    return str(pf.transform.to_human(value, source))


def partitions_arrow(metadata: TableMetadata, entries: pa.Table | None) -> pa.Table:
    """Aggregate live entries per partition (table-wide partition type), like Spark's ``partitions``."""
    unified = table_partition_type(metadata)
    partition_type = arrow_type(unified)
    timestamps = {s.snapshot_id: s.timestamp_ms for s in metadata.snapshots}
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    if entries is not None and entries.num_rows:
        live = entries.filter(pa.compute.not_equal(entries.column("status"), 2))
        data_file = live.column("data_file").combine_chunks()
        partitions = data_file.field("partition").to_pylist()
        contents = data_file.field("content").to_pylist()
        records = data_file.field("record_count").to_pylist()
        sizes = data_file.field("file_size_in_bytes").to_pylist()
        spec_ids = data_file.field("spec_id").to_pylist()
        snapshot_ids = live.column("snapshot_id").to_pylist()
        for partition, content, record_count, size, spec_id, snapshot_id in zip(
            partitions, contents, records, sizes, spec_ids, snapshot_ids, strict=True
        ):
            key = tuple((partition or {}).values())
            g = groups.setdefault(
                key,
                {
                    "partition": partition,
                    "spec_id": 0,
                    "record_count": 0,
                    "file_count": 0,
                    "total_data_file_size_in_bytes": 0,
                    "position_delete_record_count": 0,
                    "position_delete_file_count": 0,
                    "equality_delete_record_count": 0,
                    "equality_delete_file_count": 0,
                    "last_updated_at": None,
                    "last_updated_snapshot_id": None,
                },
            )
            committed = timestamps.get(snapshot_id)
            if committed is not None and (g["last_updated_at"] is None or committed > g["last_updated_at"]):
                g["last_updated_at"] = committed
                g["last_updated_snapshot_id"] = snapshot_id
            g["spec_id"] = spec_id
            if content == 0:
                g["record_count"] += record_count
                g["file_count"] += 1
                g["total_data_file_size_in_bytes"] += size
            elif content == 1:
                g["position_delete_record_count"] += record_count
                g["position_delete_file_count"] += 1
            else:
                g["equality_delete_record_count"] += record_count
                g["equality_delete_file_count"] += 1
    rows = list(groups.values())
    columns: dict[str, pa.Array] = {
        "partition": pa.array([r["partition"] for r in rows], partition_type),
        "spec_id": pa.array([r["spec_id"] for r in rows], pa.int32()),
        "record_count": pa.array([r["record_count"] for r in rows], pa.int64()),
        "file_count": pa.array([r["file_count"] for r in rows], pa.int32()),
        "total_data_file_size_in_bytes": pa.array([r["total_data_file_size_in_bytes"] for r in rows], pa.int64()),
        "position_delete_record_count": pa.array([r["position_delete_record_count"] for r in rows], pa.int64()),
        "position_delete_file_count": pa.array([r["position_delete_file_count"] for r in rows], pa.int32()),
        "equality_delete_record_count": pa.array([r["equality_delete_record_count"] for r in rows], pa.int64()),
        "equality_delete_file_count": pa.array([r["equality_delete_file_count"] for r in rows], pa.int32()),
        "last_updated_at": pa.array([r["last_updated_at"] for r in rows], pa.int64()).cast(
            pa.timestamp("ms", tz="UTC")
        ),
        "last_updated_snapshot_id": pa.array([r["last_updated_snapshot_id"] for r in rows], pa.int64()),
    }
    if not unified.fields:  # Spark drops the partition and spec_id columns for unpartitioned tables
        columns.pop("partition")
        columns.pop("spec_id")
    return pa.table(columns)
