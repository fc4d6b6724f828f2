"""Partition-level views: manifest partition summaries as text (the ``partitions`` table is streamed:
``icebook.analysis.tables.aggregates``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from icebook.analysis.store.manifests import source_schema_for, spec_partition_type
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
