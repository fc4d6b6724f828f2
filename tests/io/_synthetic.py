"""A small, byte-for-byte reproducible Iceberg v2 manifest (fixed values, fixed sync marker).

Tests that damage one exact byte need the same bytes on every machine and every build of the
scenario warehouse, which a Spark-written file (random ids, timestamps, sync markers) cannot give.
"""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro

from icebook.spec.manifest import ManifestContent, ManifestFile

SYNC = b"icebook-tests-16"
PATH = "s3://bucket/t/metadata/synthetic-m0.avro"
"""Where the tests say the synthetic manifest is (served from memory)."""


def _map(name: str, key_id: int, value_id: int, value: str) -> dict[str, Any]:
    return {
        "logicalType": "map",
        "type": "array",
        "items": {
            "type": "record",
            "name": name,
            "fields": [
                {"name": "key", "type": "int", "field-id": key_id},
                {"name": "value", "type": value, "field-id": value_id},
            ],
        },
    }


def _opt(name: str, field_id: int, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", avro_type], "default": None, "field-id": field_id}


SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "manifest_entry",
    "fields": [
        {"name": "status", "type": "int", "field-id": 0},
        _opt("snapshot_id", 1, "long"),
        _opt("sequence_number", 3, "long"),
        _opt("file_sequence_number", 4, "long"),
        {
            "name": "data_file",
            "field-id": 2,
            "type": {
                "type": "record",
                "name": "r2",
                "fields": [
                    {"name": "content", "type": "int", "field-id": 134},
                    {"name": "file_path", "type": "string", "field-id": 100},
                    {"name": "file_format", "type": "string", "field-id": 101},
                    {
                        "name": "partition",
                        "field-id": 102,
                        "type": {"type": "record", "name": "r102", "fields": [_opt("region", 1000, "string")]},
                    },
                    {"name": "record_count", "type": "long", "field-id": 103},
                    {"name": "file_size_in_bytes", "type": "long", "field-id": 104},
                    _opt("column_sizes", 108, _map("k117_v118", 117, 118, "long")),
                    _opt("value_counts", 109, _map("k119_v120", 119, 120, "long")),
                    _opt("null_value_counts", 110, _map("k121_v122", 121, 122, "long")),
                    _opt("lower_bounds", 125, _map("k126_v127", 126, 127, "bytes")),
                    _opt("upper_bounds", 128, _map("k129_v130", 129, 130, "bytes")),
                    _opt("split_offsets", 132, {"type": "array", "items": "long", "element-id": 133}),
                    _opt("sort_order_id", 140, "int"),
                ],
            },
        },
    ],
}

TABLE_SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "region", "required": False, "type": "string"},
    ],
}
METADATA = {
    "schema": json.dumps(TABLE_SCHEMA),
    "schema-id": "0",
    "partition-spec": json.dumps([{"name": "region", "transform": "identity", "source-id": 2, "field-id": 1000}]),
    "partition-spec-id": "0",
    "format-version": "2",
    "content": "data",
}


def record(i: int) -> dict[str, Any]:
    region = ("north", "south", "east")[i % 3]
    return {
        "status": 1,
        "snapshot_id": None,
        "sequence_number": None,
        "file_sequence_number": None,
        "data_file": {
            "content": 0,
            "file_path": f"s3://bucket/t/data/region={region}/{i:05d}-0-data.parquet",
            "file_format": "PARQUET",
            "partition": {"region": region},
            "record_count": 100 + i,
            "file_size_in_bytes": 4096 + i,
            "column_sizes": [{"key": 1, "value": 800 + i}, {"key": 2, "value": 300}],
            "value_counts": [{"key": 1, "value": 100 + i}, {"key": 2, "value": 100 + i}],
            "null_value_counts": [{"key": 1, "value": 0}, {"key": 2, "value": i % 4}],
            "lower_bounds": [{"key": 1, "value": (i * 10).to_bytes(8, "little")}, {"key": 2, "value": region.encode()}],
            "upper_bounds": [
                {"key": 1, "value": (i * 10 + 99).to_bytes(8, "little")},
                {"key": 2, "value": region.encode()},
            ],
            "split_offsets": [4],
            "sort_order_id": 0,
        },
    }


def manifest_bytes(entries: int = 6, *, codec: str = "null") -> bytes:
    """A v2 data manifest of ``entries`` ADDED files, identical bytes on every run."""
    out = io.BytesIO()
    fastavro.writer(
        out,
        fastavro.parse_schema(SCHEMA),
        [record(i) for i in range(entries)],
        codec=codec,
        metadata=METADATA,
        sync_marker=SYNC,
    )
    return out.getvalue()


def manifest_file(data: bytes) -> ManifestFile:
    """The manifest list's record of ``data`` (a synthetic manifest, damaged or not) at ``PATH``."""
    return ManifestFile(
        manifest_path=PATH,
        manifest_length=len(data),
        partition_spec_id=0,
        content=ManifestContent.DATA,
        sequence_number=1,
        min_sequence_number=1,
        added_snapshot_id=7,
        format_version=2,
    )


__all__ = ["PATH", "SCHEMA", "SYNC", "manifest_bytes", "manifest_file", "record"]
