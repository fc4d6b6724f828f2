"""The manifest's own Avro schema, resolved by Iceberg field id.

A manifest's Avro schema names its fields, but the Iceberg contract is the field id
(Appendix A "Field IDs"). Every column icebook reads is looked up by id here, so a
writer that named a field differently is still read correctly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from icebook.errors import MetadataError, one_line
from icebook.io.avro_types import avro_arrow_type, strip_null
from icebook.spec.manifest import ManifestFile, ManifestHeader

# manifest_entry field ids (spec: "Manifest Entry Fields").
ENTRY_FIELD_IDS = {"status": 0, "snapshot_id": 1, "sequence_number": 3, "file_sequence_number": 4, "data_file": 2}
# data_file field ids (spec: "Data File Fields").
DATA_FILE_FIELD_IDS = {
    "content": 134,
    "file_path": 100,
    "file_format": 101,
    "partition": 102,
    "record_count": 103,
    "file_size_in_bytes": 104,
    "block_size_in_bytes": 105,
    "column_sizes": 108,
    "value_counts": 109,
    "null_value_counts": 110,
    "nan_value_counts": 137,
    "distinct_counts": 111,
    "lower_bounds": 125,
    "upper_bounds": 128,
    "key_metadata": 131,
    "split_offsets": 132,
    "equality_ids": 135,
    "sort_order_id": 140,
    "first_row_id": 142,
    "referenced_data_file": 143,
    "content_offset": 144,
    "content_size_in_bytes": 145,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class AvroPartitionField:
    """One field of the partition tuple as this manifest's Avro schema writes it (the partition spec's
    field is ``spec.partitioning.PartitionField``)."""

    name: str
    field_id: int | None
    avro_type: Any
    arrow_type: pa.DataType


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestLayout:
    """Where each spec field lives in this file's Avro schema (Avro names, found by field id)."""

    entry_names: dict[str, str]  # spec name -> Avro field name in manifest_entry
    data_file_names: dict[str, str]  # spec name -> Avro field name in data_file
    partition_fields: tuple[AvroPartitionField, ...]

    @property
    def partition_type(self) -> pa.StructType:
        return pa.struct([pa.field(p.name, p.arrow_type) for p in self.partition_fields])


def _names_by_id(fields: list[dict[str, Any]], wanted: dict[str, int]) -> dict[str, str]:
    by_id = {f.get("field-id"): f["name"] for f in fields if "field-id" in f}
    by_name = {f["name"] for f in fields}
    out: dict[str, str] = {}
    for spec_name, fid in wanted.items():
        if fid in by_id:
            out[spec_name] = by_id[fid]
        elif spec_name in by_name:  # a writer that omitted field ids: fall back to the spec's name
            out[spec_name] = spec_name
    return out


def manifest_layout(header: ManifestHeader) -> ManifestLayout:
    """Resolve the manifest's Avro schema by field id and derive its partition struct type."""
    try:
        return _manifest_layout(header)
    except (KeyError, TypeError, ValueError, AttributeError, StopIteration) as exc:
        # The schema is the file's own JSON: a field without a name or type is damage, not a bug.
        detail = f"missing key {exc}" if isinstance(exc, KeyError) else one_line(exc)
        raise MetadataError(
            header.path, "avro.schema", f"malformed manifest schema ({detail})"[:300], kind="manifest"
        ) from None


def _manifest_layout(header: ManifestHeader) -> ManifestLayout:
    path = header.path
    try:
        schema = json.loads(header.avro_schema)
    except json.JSONDecodeError as exc:
        raise MetadataError(path, "avro.schema", f"invalid JSON: {exc}", kind="manifest") from None
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise MetadataError(path, "avro.schema", "expected a manifest_entry record", kind="manifest")
    entry_fields = schema.get("fields", [])
    entry_names = _names_by_id(entry_fields, ENTRY_FIELD_IDS)
    for required in ("status", "data_file"):
        if required not in entry_names:
            raise MetadataError(path, required, "missing from the manifest's Avro schema", kind="manifest")
    df_field = next(f for f in entry_fields if f["name"] == entry_names["data_file"])
    df_type = strip_null(df_field["type"])
    if not isinstance(df_type, dict) or df_type.get("type") != "record":
        raise MetadataError(path, "data_file", "expected a record in the Avro schema", kind="manifest")
    df_fields = df_type.get("fields", [])
    data_file_names = _names_by_id(df_fields, DATA_FILE_FIELD_IDS)
    for required in ("file_path", "file_format", "partition", "record_count", "file_size_in_bytes"):
        if required not in data_file_names:
            raise MetadataError(path, f"data_file.{required}", "missing from the Avro schema", kind="manifest")
    part_field = next(f for f in df_fields if f["name"] == data_file_names["partition"])
    part_type = strip_null(part_field["type"])
    if not isinstance(part_type, dict) or part_type.get("type") != "record":
        raise MetadataError(path, "data_file.partition", "expected a record in the Avro schema", kind="manifest")
    # The whole record at once: a named type (a decimal's fixed) may be used again by name in a later field.
    partition, _ = avro_arrow_type(part_type, file=path, where="data_file.partition", kind="manifest")
    partition_fields = [
        AvroPartitionField(name=f["name"], field_id=f.get("field-id"), avro_type=f["type"], arrow_type=arrow.type)
        for f, arrow in zip(part_type.get("fields", []), partition, strict=True)
    ]
    layout = ManifestLayout(
        entry_names=entry_names, data_file_names=data_file_names, partition_fields=tuple(partition_fields)
    )
    check_partition_arity(header, layout)
    return layout


def inheritance_version(header: ManifestHeader, layout: ManifestLayout, manifest: ManifestFile) -> int:
    """The format version whose inheritance rules apply to this manifest's entries: 1 when the file
    has no sequence number column (spec: "Sequence Number Inheritance": "v1 manifests with no
    sequence number column"), else the header's format-version, else the manifest list's."""
    if "sequence_number" not in layout.entry_names:
        return 1
    return header.format_version if header.format_version is not None else manifest.format_version


def check_partition_arity(header: ManifestHeader, layout: ManifestLayout) -> None:
    """The partition tuple must have one field per field of the manifest's partition spec."""
    if header.partition_spec is None:
        return
    try:
        spec_fields = json.loads(header.partition_spec)
    except json.JSONDecodeError as exc:
        raise MetadataError(header.path, "partition-spec", f"invalid JSON: {exc}", kind="manifest") from None
    if isinstance(spec_fields, dict):  # some writers store the whole spec object
        spec_fields = spec_fields.get("fields", [])
    if not isinstance(spec_fields, list):
        raise MetadataError(header.path, "partition-spec", "expected a JSON array of fields", kind="manifest")
    found = len(layout.partition_fields)
    if len(spec_fields) != found:
        spec_id = header.partition_spec_id if header.partition_spec_id is not None else "?"
        raise MetadataError(
            header.path,
            "data_file.partition",
            f"expected {len(spec_fields)} fields for spec {spec_id}, found {found}",
            kind="manifest",
        )


__all__ = [
    "DATA_FILE_FIELD_IDS",
    "ENTRY_FIELD_IDS",
    "AvroPartitionField",
    "ManifestLayout",
    "inheritance_version",
    "manifest_layout",
]
