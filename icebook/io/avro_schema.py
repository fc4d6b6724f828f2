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

from icebook.errors import MetadataError
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
class PartitionField:
    name: str
    field_id: int | None
    avro_type: Any
    arrow_type: pa.DataType


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestLayout:
    """Where each spec field lives in this file's Avro schema (Avro names, found by field id)."""

    entry_names: dict[str, str]  # spec name -> Avro field name in manifest_entry
    data_file_names: dict[str, str]  # spec name -> Avro field name in data_file
    partition_fields: tuple[PartitionField, ...]

    @property
    def partition_type(self) -> pa.StructType:
        return pa.struct([pa.field(p.name, p.arrow_type) for p in self.partition_fields])


def _strip_null(avro_type: Any) -> Any:
    """The non-null branch of an Iceberg optional union ``["null", T]``."""
    if isinstance(avro_type, list):
        branches = [b for b in avro_type if b != "null"]
        if len(branches) != 1:
            raise ValueError(f"unsupported union {avro_type!r} (Iceberg allows only unions with null)")
        return branches[0]
    return avro_type


def avro_to_arrow(avro_type: Any, named: dict[str, Any] | None = None) -> pa.DataType:
    """Arrow type for an Iceberg-written Avro type (Appendix A "Data Type Mappings")."""
    named = {} if named is None else named
    t = _strip_null(avro_type)
    if isinstance(t, str):
        simple = {
            "boolean": pa.bool_(),
            "int": pa.int32(),
            "long": pa.int64(),
            "float": pa.float32(),
            "double": pa.float64(),
            "string": pa.string(),
            "bytes": pa.binary(),
            "null": pa.null(),
        }
        if t in simple:
            return simple[t]
        if t in named:
            return avro_to_arrow(named[t], named)
        raise ValueError(f"unknown Avro type {t!r}")
    if not isinstance(t, dict):
        raise ValueError(f"unsupported Avro type {t!r}")
    base = t.get("type")
    logical = t.get("logicalType")
    if "name" in t and base in ("fixed", "record", "enum"):
        named[t["name"]] = t
    if base == "fixed":
        if logical == "decimal":
            return pa.decimal128(int(t["precision"]), int(t.get("scale", 0)))
        return pa.binary(int(t["size"]))
    if base == "int":
        return pa.date32() if logical == "date" else pa.int32()
    if base == "long":
        utc = bool(t.get("adjust-to-utc", False))
        if logical == "time-micros":
            return pa.time64("us")
        if logical in ("timestamp-micros", "timestamp-nanos"):
            return pa.timestamp("us" if logical == "timestamp-micros" else "ns", tz="UTC" if utc else None)
        return pa.int64()
    if base == "bytes":
        return pa.decimal128(int(t["precision"]), int(t.get("scale", 0))) if logical == "decimal" else pa.binary()
    if base == "string":
        return pa.string()
    if base == "record":
        return pa.struct([pa.field(f["name"], avro_to_arrow(f["type"], named)) for f in t.get("fields", [])])
    if base == "array":
        items = _strip_null(t["items"])
        if logical == "map" and isinstance(items, dict) and items.get("type") == "record":
            key, value = items["fields"]
            return pa.map_(avro_to_arrow(key["type"], named), avro_to_arrow(value["type"], named))
        return pa.list_(avro_to_arrow(t["items"], named))
    if base == "map":
        return pa.map_(pa.string(), avro_to_arrow(t["values"], named))
    if isinstance(base, (dict, list, str)):
        return avro_to_arrow(base, named)
    raise ValueError(f"unsupported Avro type {t!r}")


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
    df_type = _strip_null(df_field["type"])
    if not isinstance(df_type, dict) or df_type.get("type") != "record":
        raise MetadataError(path, "data_file", "expected a record in the Avro schema", kind="manifest")
    df_fields = df_type.get("fields", [])
    data_file_names = _names_by_id(df_fields, DATA_FILE_FIELD_IDS)
    for required in ("file_path", "file_format", "partition", "record_count", "file_size_in_bytes"):
        if required not in data_file_names:
            raise MetadataError(path, f"data_file.{required}", "missing from the Avro schema", kind="manifest")
    part_field = next(f for f in df_fields if f["name"] == data_file_names["partition"])
    part_type = _strip_null(part_field["type"])
    if not isinstance(part_type, dict) or part_type.get("type") != "record":
        raise MetadataError(path, "data_file.partition", "expected a record in the Avro schema", kind="manifest")
    partition_fields = []
    for f in part_type.get("fields", []):
        try:
            arrow_type = avro_to_arrow(f["type"])
        except (ValueError, KeyError, TypeError) as exc:
            raise MetadataError(path, f"data_file.partition.{f.get('name')}", str(exc), kind="manifest") from None
        partition_fields.append(
            PartitionField(name=f["name"], field_id=f.get("field-id"), avro_type=f["type"], arrow_type=arrow_type)
        )
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
    "ManifestLayout",
    "PartitionField",
    "avro_to_arrow",
    "inheritance_version",
    "manifest_layout",
]
