"""The Arrow shape of decoded manifest entries (spec: "Manifest Entry Fields", "Data File Fields"): one row per
entry, the entry's own fields, the data file's fields flattened beside them, and a boolean flag for each
value inherited from the manifest list.

Its own module, apart from the decoders (``avro_entries``, ``avro_decode``), because readers that never decode
need the shape too: a listing served from the disk cache is cast to it, and an empty listing is built from it.
"""

from __future__ import annotations

import pyarrow as pa

from icebook.io.metric_facts import METRIC_MAP_TYPES

_ENTRY_FIELDS = (
    pa.field("status", pa.int32()),
    pa.field("snapshot_id", pa.int64()),
    pa.field("sequence_number", pa.int64()),
    pa.field("file_sequence_number", pa.int64()),
)
ENTRY_COLUMNS = tuple(f.name for f in _ENTRY_FIELDS)
"""The manifest_entry fields outside data_file, in spec order (the first columns of an entries table)."""

INHERITED_FLAGS = (
    "snapshot_id_inherited",
    "sequence_number_inherited",
    "file_sequence_number_inherited",
    "first_row_id_inherited",
)


def data_file_arrow_fields(partition_type: pa.StructType) -> list[pa.Field]:
    return [
        pa.field("content", pa.int32()),
        pa.field("file_path", pa.string()),
        pa.field("file_format", pa.string()),
        pa.field("spec_id", pa.int32()),
        pa.field("partition", partition_type),
        pa.field("record_count", pa.int64()),
        pa.field("file_size_in_bytes", pa.int64()),
        pa.field("column_sizes", METRIC_MAP_TYPES["column_sizes"]),
        pa.field("value_counts", METRIC_MAP_TYPES["value_counts"]),
        pa.field("null_value_counts", METRIC_MAP_TYPES["null_value_counts"]),
        pa.field("nan_value_counts", METRIC_MAP_TYPES["nan_value_counts"]),
        pa.field("lower_bounds", METRIC_MAP_TYPES["lower_bounds"]),
        pa.field("upper_bounds", METRIC_MAP_TYPES["upper_bounds"]),
        pa.field("key_metadata", pa.binary()),
        pa.field("split_offsets", pa.list_(pa.int64())),
        pa.field("equality_ids", pa.list_(pa.int32())),
        pa.field("sort_order_id", pa.int32()),
        pa.field("first_row_id", pa.int64()),
        pa.field("referenced_data_file", pa.string()),
        pa.field("content_offset", pa.int64()),
        pa.field("content_size_in_bytes", pa.int64()),
    ]


def entries_schema(partition_type: pa.StructType) -> pa.Schema:
    """The Arrow schema of ``read_manifest_entries`` for a manifest with this partition type."""
    flags = [pa.field(name, pa.bool_()) for name in INHERITED_FLAGS]
    return pa.schema([*_ENTRY_FIELDS, *data_file_arrow_fields(partition_type), *flags])


ENTRY_TABLE_COLUMNS = tuple(entries_schema(pa.struct([])).names)
"""Every column of a ``read_manifest_entries`` table, in order."""

__all__ = ["ENTRY_COLUMNS", "ENTRY_TABLE_COLUMNS", "INHERITED_FLAGS", "data_file_arrow_fields", "entries_schema"]
