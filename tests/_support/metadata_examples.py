"""Table metadata documents for the spec tests: a v1 example (``V1``), a full v2 one (``v2()``, a fresh copy
each call) and v3 (``v3()``), all written at ``FILE``."""

from __future__ import annotations

from typing import Any

FILE = "/wh/db/t/metadata/00002-4f6c0b8e-5f0a-4c1e-9a43-3c1c2f0e1a11.metadata.json"

SCHEMA_FIELDS = [
    {"id": 1, "name": "id", "required": True, "type": "long"},
    {"id": 2, "name": "data", "required": False, "type": "string"},
    {"id": 3, "name": "ts", "required": False, "type": "timestamptz"},
]

V1: dict[str, Any] = {
    "format-version": 1,
    "location": "/wh/db/t",
    "last-updated-ms": 1515100955770,
    "last-column-id": 3,
    "schema": {"type": "struct", "fields": SCHEMA_FIELDS},
    "partition-spec": [
        {"source-id": 3, "name": "ts_day", "transform": "day"},
        {"source-id": 1, "name": "id_bucket", "transform": "bucket[16]"},
    ],
    "properties": {"write.format.default": "parquet"},
    "current-snapshot-id": 3051729675574597004,
    "snapshots": [
        {
            "snapshot-id": 3051729675574597004,
            "timestamp-ms": 1515100955770,
            "summary": {"operation": "append"},
            "manifests": ["/wh/db/t/metadata/m0.avro"],
        }
    ],
}


def v2() -> dict[str, Any]:
    return {
        "format-version": 2,
        "table-uuid": "fb072c92-a02b-11e9-ae9c-1bb7bc9eca94",
        "location": "s3://b/wh/data.db/table",
        "last-sequence-number": 3,
        "last-updated-ms": 1700000003000,
        "last-column-id": 4,
        "current-schema-id": 1,
        "schemas": [
            {"type": "struct", "schema-id": 0, "fields": SCHEMA_FIELDS},
            {
                "type": "struct",
                "schema-id": 1,
                "identifier-field-ids": [1],
                "fields": [*SCHEMA_FIELDS, {"id": 4, "name": "extra", "required": False, "type": "int"}],
            },
        ],
        "default-spec-id": 1,
        "partition-specs": [
            {"spec-id": 0, "fields": []},
            {
                "spec-id": 1,
                "fields": [
                    {"source-id": 3, "field-id": 1000, "name": "ts_day", "transform": "day"},
                    {"source-id": 1, "field-id": 1001, "name": "id_bucket", "transform": "bucket[16]"},
                ],
            },
        ],
        "last-partition-id": 1001,
        "default-sort-order-id": 1,
        "sort-orders": [
            {"order-id": 0, "fields": []},
            {
                "order-id": 1,
                "fields": [
                    {"transform": "identity", "source-id": 2, "direction": "asc", "null-order": "nulls-first"},
                    {"transform": "bucket[4]", "source-id": 3, "direction": "desc", "null-order": "nulls-last"},
                ],
            },
        ],
        "properties": {"commit.retry.num-retries": "4"},
        "current-snapshot-id": 30,
        "snapshots": [
            {
                "snapshot-id": 10,
                "sequence-number": 1,
                "timestamp-ms": 1700000001000,
                "manifest-list": "s3://b/wh/data.db/table/metadata/snap-10-1-a.avro",
                "summary": {"operation": "append", "added-data-files": "1"},
                "schema-id": 0,
            },
            {
                "snapshot-id": 20,
                "parent-snapshot-id": 10,
                "sequence-number": 2,
                "timestamp-ms": 1700000002000,
                "manifest-list": "s3://b/wh/data.db/table/metadata/snap-20-1-b.avro",
                "summary": {"operation": "overwrite"},
                "schema-id": 0,
            },
            {
                "snapshot-id": 30,
                "parent-snapshot-id": 20,
                "sequence-number": 3,
                "timestamp-ms": 1700000003000,
                "manifest-list": "s3://b/wh/data.db/table/metadata/snap-30-2-c.avro",
                "summary": {"operation": "delete"},
                "schema-id": 1,
            },
        ],
        "refs": {
            "main": {"snapshot-id": 30, "type": "branch"},
            "audit": {
                "snapshot-id": 20,
                "type": "branch",
                "min-snapshots-to-keep": 2,
                "max-snapshot-age-ms": 86400000,
                "max-ref-age-ms": 604800000,
            },
            "v1.0": {"snapshot-id": 10, "type": "tag", "max-ref-age-ms": 10000000},
        },
        "snapshot-log": [
            {"snapshot-id": 10, "timestamp-ms": 1700000001000},
            {"snapshot-id": 30, "timestamp-ms": 1700000003000},
        ],
        "metadata-log": [
            {"metadata-file": "s3://b/wh/data.db/table/metadata/00000-x.metadata.json", "timestamp-ms": 1700000000000},
        ],
        "statistics": [
            {
                "snapshot-id": 30,
                "statistics-path": "s3://b/wh/data.db/table/metadata/30.stats",
                "file-size-in-bytes": 413,
                "file-footer-size-in-bytes": 42,
                "blob-metadata": [
                    {
                        "type": "apache-datasketches-theta-v1",
                        "snapshot-id": 30,
                        "sequence-number": 3,
                        "fields": [1],
                        "properties": {"ndv": "3"},
                    }
                ],
            }
        ],
        "partition-statistics": [
            {"snapshot-id": 30, "statistics-path": "s3://b/p/30.parquet", "file-size-in-bytes": 100},
        ],
        "x-vendor": {"kept": True},
    }


def v3() -> dict[str, Any]:
    m = v2()
    m["format-version"] = 3
    m["next-row-id"] = 12
    for i, s in enumerate(m["snapshots"]):
        s["first-row-id"] = i * 4
        s["added-rows"] = 4
    m["snapshots"][2]["key-id"] = "k1"
    m["encryption-keys"] = [
        {"key-id": "k1", "encrypted-key-metadata": "aWNlYmVyZwo=", "encrypted-by-id": "kms", "properties": {"a": "b"}}
    ]
    m["partition-specs"][1]["fields"].append(
        {"source-ids": [1, 2], "field-id": 1002, "name": "multi", "transform": "zorder"}
    )
    m["last-partition-id"] = 1002
    return m
