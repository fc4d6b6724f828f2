"""A metadata-only Iceberg table written without Spark: manifests, manifest lists and metadata JSON, by fastavro.

The layout of ``large_table.py``'s table (8 columns with full statistics, partitioned by ``days(ts)`` and
``bucket(16, id)``, files laid out day by day and bucket by bucket, 2,500 files per manifest) in two
snapshots: an append of ``files`` data files, then a row delta adding file-scoped position delete files for
about 200 of them (``--position-deletes``: as many as asked, for the passes that join every data manifest
against the delete files). The data files do not exist (as in ``large_table.py``): anything that reads metadata works
on it (listings, plans, aggregates), nothing that reads rows. Every value is a pure function of the file's
index, so two builds of one size are the same table.

It needs no JVM: with ``ICEBOOK_BENCH_TABLES=synthetic`` the benchmarks that measure ``large_table.py``'s
table measure this one (``large_table.ensure_large_table``), so they run where Spark does not, and the
benchmarks' smoke test (``tests/test_benchmarks.py``) runs them on a small one. A 500,000-file table is
written in a few minutes (``python benchmarks/synthetic_table.py --files 500000``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import shutil
import struct
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fastavro

sys.path.insert(0, str(Path(__file__).resolve().parent))

import large_table  # after the path tweak, so the script runs from any directory
from history import MANIFEST_FILE_SCHEMA

VERSION = 1  # bump when what is written changes: tables of an older version are rebuilt
BASE_MS = 1_720_000_000_000
FIRST_DAY = (dt.date.fromisoformat(large_table.FIRST_DAY) - dt.date(1970, 1, 1)).days
MICROS_PER_DAY = 86_400_000_000
FILE_PATH_ID, POS_ID = 2147483546, 2147483545

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": False, "type": "long"},
        {"id": 2, "name": "qty", "required": False, "type": "int"},
        {"id": 3, "name": "name", "required": False, "type": "string"},
        {"id": 4, "name": "price", "required": False, "type": "double"},
        {"id": 5, "name": "d", "required": False, "type": "date"},
        {"id": 6, "name": "ts", "required": False, "type": "timestamptz"},
        {"id": 7, "name": "amount", "required": False, "type": "decimal(12, 2)"},
        {"id": 8, "name": "flag", "required": False, "type": "boolean"},
    ],
}
SPEC_FIELDS = [
    {"name": "ts_day", "transform": "day", "source-id": 6, "field-id": 1000},
    {"name": "id_bucket", "transform": "bucket[16]", "source-id": 1, "field-id": 1001},
]


def _opt(name: str, avro: Any, field_id: int) -> dict[str, Any]:
    return {"name": name, "type": ["null", avro], "default": None, "field-id": field_id}


def _map(name: str, key_id: int, value: str, field_id: int) -> dict[str, Any]:
    item = {
        "type": "record",
        "name": f"k{key_id}_v{key_id + 1}",
        "fields": [
            {"name": "key", "type": "int", "field-id": key_id},
            {"name": "value", "type": value, "field-id": key_id + 1},
        ],
    }
    return _opt(name, {"type": "array", "items": item, "logicalType": "map"}, field_id)


# The manifest_entry schema of a v2 manifest as the reference implementation writes it for this spec.
ENTRY_SCHEMA = {
    "type": "record",
    "name": "manifest_entry",
    "fields": [
        {"name": "status", "type": "int", "field-id": 0},
        _opt("snapshot_id", "long", 1),
        _opt("sequence_number", "long", 3),
        _opt("file_sequence_number", "long", 4),
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
                        "type": {
                            "type": "record",
                            "name": "r102",
                            "fields": [
                                _opt("ts_day", {"type": "int", "logicalType": "date"}, 1000),
                                _opt("id_bucket", "int", 1001),
                            ],
                        },
                    },
                    {"name": "record_count", "type": "long", "field-id": 103},
                    {"name": "file_size_in_bytes", "type": "long", "field-id": 104},
                    _map("column_sizes", 117, "long", 108),
                    _map("value_counts", 119, "long", 109),
                    _map("null_value_counts", 121, "long", 110),
                    _map("nan_value_counts", 138, "long", 137),
                    _map("lower_bounds", 126, "bytes", 125),
                    _map("upper_bounds", 129, "bytes", 128),
                    _opt("key_metadata", "bytes", 131),
                    _opt("split_offsets", {"type": "array", "items": "long", "element-id": 133}, 132),
                    _opt("equality_ids", {"type": "array", "items": "int", "element-id": 136}, 135),
                    _opt("sort_order_id", "int", 140),
                ],
            },
        },
    ],
}


Layout = large_table.Layout  # the same layout: files day by day, bucket by bucket
POSITION_DELETES = 200  # data files that get a position delete file


def day_of(layout: Layout, index: int) -> int:
    """Days since the epoch of data file ``index`` (the ``days(ts)`` partition value)."""
    return FIRST_DAY + layout.day_of(index)


def bucket_of(layout: Layout, index: int) -> int:
    return (index // layout.files_per_partition) % layout.buckets


def deleted(layout: Layout, count: int = POSITION_DELETES) -> list[int]:
    """Indexes of the data files that get a position delete file (``count`` of them, spread evenly)."""
    step = max(1, layout.files // count)
    return [j * step + min(333, step - 1) for j in range(count) if j * step < layout.files]


def location_of(files: int, files_per_manifest: int = 2_500) -> Path:
    name = f"synth_{files}" if files_per_manifest == 2_500 else f"synth_{files}_m{files_per_manifest}"
    return large_table.bench_dir() / "synthetic" / name


def _day_text(day: int) -> str:
    return (dt.date(1970, 1, 1) + dt.timedelta(days=day)).isoformat()


def data_path(location: Path, layout: Layout, index: int) -> str:
    day, bucket = day_of(layout, index), bucket_of(layout, index)
    return f"{location}/data/ts_day={_day_text(day)}/id_bucket={bucket}/{index % 1000:05d}-{index // 1000}-synth-{index:08d}.parquet"


def _long(v: int) -> bytes:
    return struct.pack("<q", v)


def _int(v: int) -> bytes:
    return struct.pack("<i", v)


def _decimal(unscaled: int) -> bytes:
    return unscaled.to_bytes((unscaled.bit_length() + 8) // 8, "big", signed=True)


def _pairs(values: dict[int, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": v} for k, v in values.items()]


def data_entry(location: Path, layout: Layout, index: int) -> dict[str, Any]:
    """The ADDED entry of data file ``index`` (snapshot id and sequence numbers inherited)."""
    rnd = random.Random(index)
    records = 10_000 + rnd.randrange(190_000)
    day = day_of(layout, index)
    start = day * MICROS_PER_DAY + rnd.randrange(3_600) * 1_000_000
    first_id = index * 1_000_000
    lower = {
        1: _long(first_id),
        2: _int(rnd.randrange(10)),
        3: f"customer-{rnd.randrange(1000):05d}".encode(),
        4: struct.pack("<d", rnd.random() * 10.0),
        5: _int(day),
        6: _long(start),
        7: _decimal(rnd.randrange(10_000)),
        8: b"\x00",
    }
    upper = {
        1: _long(first_id + records - 1),
        2: _int(990 + rnd.randrange(10)),
        3: f"customer-{99000 + rnd.randrange(1000):05d}".encode(),
        4: struct.pack("<d", 990.0 + rnd.random() * 10.0),
        5: _int(day),
        6: _long(start + rnd.randrange(80_000) * 1_000_000),
        7: _decimal(100_000_000 + rnd.randrange(10_000)),
        8: b"\x01",
    }
    columns = range(1, 9)
    return {
        "status": 1,
        "snapshot_id": None,
        "sequence_number": None,
        "file_sequence_number": None,
        "data_file": {
            "content": 0,
            "file_path": data_path(location, layout, index),
            "file_format": "PARQUET",
            "partition": {"ts_day": day, "id_bucket": bucket_of(layout, index)},
            "record_count": records,
            "file_size_in_bytes": records * 24 + rnd.randrange(4096),
            "column_sizes": _pairs({c: records * (1 + rnd.randrange(8)) + 64 for c in columns}),
            "value_counts": _pairs(dict.fromkeys(columns, records)),
            "null_value_counts": _pairs(
                {c: 0 if c == 1 else rnd.randrange(100) * (rnd.randrange(4) == 0) for c in columns}
            ),
            "nan_value_counts": _pairs({4: rnd.randrange(5) * (rnd.randrange(10) == 0)}),
            "lower_bounds": _pairs(lower),
            "upper_bounds": _pairs(upper),
            "key_metadata": None,
            "split_offsets": [4],
            "equality_ids": None,
            "sort_order_id": 0,
        },
    }


def delete_entry(location: Path, layout: Layout, index: int) -> dict[str, Any]:
    """The ADDED entry of a position delete file for data file ``index`` only (its file_path bounds equal)."""
    target = data_path(location, layout, index).encode()
    return {
        "status": 1,
        "snapshot_id": None,
        "sequence_number": None,
        "file_sequence_number": None,
        "data_file": {
            "content": 1,
            "file_path": f"{location}/data/deletes/delete-{index:08d}.parquet",
            "file_format": "PARQUET",
            "partition": {"ts_day": day_of(layout, index), "id_bucket": bucket_of(layout, index)},
            "record_count": 10,
            "file_size_in_bytes": 1_500,
            "column_sizes": None,
            "value_counts": None,
            "null_value_counts": None,
            "nan_value_counts": None,
            "lower_bounds": _pairs({FILE_PATH_ID: target, POS_ID: _long(0)}),
            "upper_bounds": _pairs({FILE_PATH_ID: target, POS_ID: _long(9)}),
            "key_metadata": None,
            "split_offsets": None,
            "equality_ids": None,
            "sort_order_id": None,
        },
    }


def _write_manifest(path: Path, entries: list[dict[str, Any]], content: str) -> dict[str, Any]:
    """Write one manifest; returns its partition summaries and counts for the manifest list."""
    with open(path, "wb") as f:
        fastavro.writer(
            f,
            _PARSED_ENTRY,
            entries,
            codec="deflate",
            metadata={
                "schema": json.dumps(SCHEMA),
                "schema-id": "0",
                "partition-spec": json.dumps(SPEC_FIELDS),
                "partition-spec-id": "0",
                "format-version": "2",
                "content": content,
            },
        )
    days = [e["data_file"]["partition"]["ts_day"] for e in entries]
    buckets = [e["data_file"]["partition"]["id_bucket"] for e in entries]
    summaries = [
        {"contains_null": False, "contains_nan": False, "lower_bound": _int(min(v)), "upper_bound": _int(max(v))}
        for v in (days, buckets)
    ]
    return {
        "manifest_length": path.stat().st_size,
        "partitions": summaries,
        "added_files_count": len(entries),
        "added_rows_count": sum(e["data_file"]["record_count"] for e in entries),
    }


_PARSED_ENTRY = fastavro.parse_schema(ENTRY_SCHEMA)
_PARSED_LIST = fastavro.parse_schema(MANIFEST_FILE_SCHEMA)


def _chunks(n: int, size: int) -> Iterator[range]:
    for first in range(0, n, size):
        yield range(first, min(n, first + size))


def build(
    files: int,
    location: Path | None = None,
    *,
    files_per_manifest: int = 2_500,
    position_deletes: int = POSITION_DELETES,
) -> Path:
    """Write the table at ``location`` (default ``location_of(files)``) unless a complete one of this version
    is there; returns the location. ``position_deletes``: how many data files get a position delete file."""
    layout = Layout(files=files, files_per_manifest=files_per_manifest)
    location = location or location_of(files, files_per_manifest)
    marker_file = location / "complete.json"
    wanted: dict[str, int] = {"version": VERSION, "files": files, "files_per_manifest": files_per_manifest}
    if position_deletes != POSITION_DELETES:
        wanted["position_deletes"] = position_deletes
    if marker_file.is_file() and json.loads(marker_file.read_text()).get("layout") == wanted:
        return location
    shutil.rmtree(location, ignore_errors=True)
    metadata_dir = location / "metadata"
    metadata_dir.mkdir(parents=True)
    rng = random.Random(files)
    table_uuid = str(uuid.UUID(int=rng.getrandbits(128)))
    ids = [rng.getrandbits(62), rng.getrandbits(62)]

    manifests: list[dict[str, Any]] = []
    records = size = 0
    for k, chunk in enumerate(_chunks(files, files_per_manifest)):
        entries = [data_entry(location, layout, i) for i in chunk]
        records += sum(e["data_file"]["record_count"] for e in entries)
        size += sum(e["data_file"]["file_size_in_bytes"] for e in entries)
        path = metadata_dir / f"{table_uuid[:8]}-{k:05d}-m0.avro"
        counts = _write_manifest(path, entries, "data")
        manifests.append(_list_entry(path, counts, content=0, sequence=1, snapshot_id=ids[0]))
    deletes = [delete_entry(location, layout, i) for i in deleted(layout, position_deletes)]
    path = metadata_dir / f"{table_uuid[:8]}-deletes-m0.avro"
    delete_manifest = _list_entry(
        path, _write_manifest(path, deletes, "deletes"), content=1, sequence=2, snapshot_id=ids[1]
    )

    snapshots = []
    for number, (snapshot_id, listed) in enumerate(((ids[0], manifests), (ids[1], [delete_manifest, *manifests]))):
        list_path = metadata_dir / f"snap-{snapshot_id}-1-{uuid.UUID(int=rng.getrandbits(128))}.avro"
        with open(list_path, "wb") as f:
            fastavro.writer(
                f,
                _PARSED_LIST,
                listed,
                metadata={
                    "format-version": "2",
                    "snapshot-id": str(snapshot_id),
                    "parent-snapshot-id": str(ids[0]) if number else "null",
                    "sequence-number": str(number + 1),
                },
            )
        delete_files = len(deletes) if number else 0
        summary = {
            "operation": "overwrite" if number else "append",
            "added-data-files": "0" if number else str(files),
            "added-delete-files": str(delete_files),
            "total-data-files": str(files),
            "total-delete-files": str(delete_files),
            "total-records": str(records),
            "total-files-size": str(size + 1_500 * delete_files),
            "total-position-deletes": str(10 * delete_files),
            "total-equality-deletes": "0",
        }
        snapshots.append(
            {
                "snapshot-id": snapshot_id,
                **({"parent-snapshot-id": ids[0]} if number else {}),
                "sequence-number": number + 1,
                "timestamp-ms": BASE_MS + number * 60_000,
                "manifest-list": str(list_path),
                "summary": summary,
                "schema-id": 0,
            }
        )
    for version in (1, 2):
        metadata = {
            "format-version": 2,
            "table-uuid": table_uuid,
            "location": str(location),
            "last-sequence-number": version,
            "last-updated-ms": snapshots[version - 1]["timestamp-ms"],
            "last-column-id": 8,
            "current-schema-id": 0,
            "schemas": [SCHEMA],
            "default-spec-id": 0,
            "partition-specs": [{"spec-id": 0, "fields": SPEC_FIELDS}],
            "last-partition-id": 1001,
            "default-sort-order-id": 0,
            "sort-orders": [{"order-id": 0, "fields": []}],
            "properties": {"write.metadata.metrics.default": "full"},
            "current-snapshot-id": snapshots[version - 1]["snapshot-id"],
            "refs": {"main": {"snapshot-id": snapshots[version - 1]["snapshot-id"], "type": "branch"}},
            "snapshots": snapshots[:version],
            "snapshot-log": [
                {"snapshot-id": s["snapshot-id"], "timestamp-ms": s["timestamp-ms"]} for s in snapshots[:version]
            ],
            "metadata-log": [
                {"metadata-file": str(metadata_dir / "v1.metadata.json"), "timestamp-ms": snapshots[0]["timestamp-ms"]}
            ][: version - 1],
        }
        (metadata_dir / f"v{version}.metadata.json").write_text(json.dumps(metadata))
    (metadata_dir / "version-hint.text").write_text("2")
    counts = {
        "files": files + len(deletes),
        "data_files": files,
        "delete_files": len(deletes),
        "manifests": len(manifests) + 1,
        "snapshots": len(snapshots),
    }
    marker_file.write_text(json.dumps({"layout": wanted, "location": str(location), "counts": counts}))
    return location


def marker(files: int, files_per_manifest: int = 2_500) -> dict[str, Any] | None:
    """What the build of ``files`` wrote about it (the layout, the counts; as ``large_table.read_marker``)."""
    path = location_of(files, files_per_manifest) / "complete.json"
    return json.loads(path.read_text()) if path.is_file() else None


def _list_entry(path: Path, counts: dict[str, Any], *, content: int, sequence: int, snapshot_id: int) -> dict[str, Any]:
    return {
        "manifest_path": str(path),
        "manifest_length": counts["manifest_length"],
        "partition_spec_id": 0,
        "content": content,
        "sequence_number": sequence,
        "min_sequence_number": sequence,
        "added_snapshot_id": snapshot_id,
        "added_files_count": counts["added_files_count"],
        "existing_files_count": 0,
        "deleted_files_count": 0,
        "added_rows_count": counts["added_rows_count"],
        "existing_rows_count": 0,
        "deleted_rows_count": 0,
        "partitions": counts["partitions"],
        "key_metadata": None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=500_000)
    parser.add_argument("--location", type=Path)
    parser.add_argument(
        "--position-deletes", type=int, default=POSITION_DELETES, help="data files given a position delete file"
    )
    args = parser.parse_args(argv)
    print(build(args.files, args.location, position_deletes=args.position_deletes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
