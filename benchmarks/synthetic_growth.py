"""A synthetic table grown in many append commits (``large_table.py --measure``'s growth tables), written fast.

The layout of ``synthetic_table.py``'s table (same schema, partition spec, manifest schema, 2,500 files per
manifest, files day by day and bucket by bucket), but its data files come in appends of ``commit_files``
each (50,000: 400 commits for 20 million files), followed by one row delta adding position delete files for
about 200 of them, as ``large_table.py`` grows its Spark-written tables.

Twenty million entries through ``fastavro``'s record writer would take hours (its union resolution costs
about 0.2 ms a record), so entries are encoded here straight to Avro's binary form: the fields that follow
from the file's index (path, partition, ``id`` and ``ts`` bounds) are encoded per file, the statistics that
do not (record count, sizes, counts, the other bounds) come from a pool of 1,021 pre-encoded variants. The
container files (header, deflate blocks, sync markers) are written by hand too; ``fastavro`` reads them back
in the test of the benchmarks. Every value is a pure function of the file's index, so two builds of one size
are the same table. 20 million files take a few minutes in two processes (about 1.8 GB of manifests).

    python benchmarks/synthetic_growth.py --files 20000000 [--commit-files 50000]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import struct
import sys
import uuid
import zlib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import fastavro

from icebook.io.avro_header import write_container_header, write_long

sys.path.insert(0, str(Path(__file__).resolve().parent))

import synthetic_table as st  # after the path tweak, so the script runs from any directory

VERSION = 1  # bump when what is written changes: tables of an older version are rebuilt
POOL = 1_021  # statistics variants (prime, so that neighbouring files in a partition differ)
BLOCK = 500  # entries per Avro block
_SYNC = bytes(range(16))


zz = write_long  # Avro's zig-zag varint encoding of an int or long


def _string(raw: bytes) -> bytes:
    return zz(len(raw)) + raw


def _long_map(values: dict[int, int]) -> bytes:
    """An optional int->long map present (union branch 1), as one array block."""
    body = b"".join(zz(k) + zz(v) for k, v in values.items())
    return b"\x02" + zz(len(values)) + body + b"\x00"


class Variant:
    """One pre-encoded set of statistics: everything of an entry that does not follow from its index."""

    __slots__ = ("between_bounds", "head", "lower_mid", "lower_tail", "records", "ts_span", "ts_start", "upper_mid")

    def __init__(self, j: int) -> None:
        rnd = random.Random(1_000_003 + j)
        records = self.records = 10_000 + rnd.randrange(190_000)
        self.ts_start = rnd.randrange(3_600) * 1_000_000
        self.ts_span = rnd.randrange(80_000) * 1_000_000
        columns = range(1, 9)
        self.head = (
            zz(records)
            + zz(records * 24 + rnd.randrange(4096))
            + _long_map({c: records * (1 + rnd.randrange(8)) + 64 for c in columns})
            + _long_map(dict.fromkeys(columns, records))
            + _long_map({c: 0 if c == 1 else rnd.randrange(100) * (rnd.randrange(4) == 0) for c in columns})
            + _long_map({4: rnd.randrange(5) * (rnd.randrange(10) == 0)})
        )
        lower = [
            st._int(rnd.randrange(10)),
            f"customer-{rnd.randrange(1000):05d}".encode(),
            struct.pack("<d", rnd.random() * 10.0),
        ]
        upper = [
            st._int(990 + rnd.randrange(10)),
            f"customer-{99000 + rnd.randrange(1000):05d}".encode(),
            struct.pack("<d", 990.0 + rnd.random() * 10.0),
        ]
        tail_low = [st._decimal(rnd.randrange(10_000)), b"\x00"]
        tail_up = [st._decimal(100_000_000 + rnd.randrange(10_000)), b"\x01"]

        def pairs(keys: range, values: list[bytes]) -> bytes:
            return b"".join(zz(k) + _string(v) for k, v in zip(keys, values, strict=True))

        # lower_bounds: 1 (id), 2-4 pooled, 5 (d = the day), 6 (ts), 7-8 pooled; the day's and ts' bytes per file
        self.lower_mid = pairs(range(2, 5), lower)
        self.upper_mid = pairs(range(2, 5), upper)
        self.lower_tail = pairs(range(7, 9), tail_low) + b"\x00"
        self.between_bounds = pairs(range(7, 9), tail_up) + b"\x00"


# key_metadata null, split_offsets [4], equality_ids null, sort_order_id 0
_TRAILER = b"\x00" + b"\x02\x02\x08\x00" + b"\x00" + b"\x02\x00"
_PARQUET = _string(b"PARQUET")


def encode_data_entry(
    location: Path, layout: st.Layout, index: int, variants: list[Variant], partitions: dict[int, tuple[Any, ...]]
) -> bytes:
    """One data file's manifest entry (``synthetic_table.data_entry``'s fields, statistics from the pool);
    ``partitions`` caches each partition's path prefix and encoded tuple."""
    v = variants[index % POOL]
    group = index // layout.files_per_partition
    cached = partitions.get(group)
    if cached is None:
        partitions.clear()
        day, bucket = st.day_of(layout, index), st.bucket_of(layout, index)
        prefix = st.data_path(location, layout, index).rsplit("/", 1)[0] + "/"
        cached = partitions[group] = (day, prefix, b"\x02" + zz(day) + b"\x02" + zz(bucket), b"\x08" + st._int(day))
    day, prefix, partition, day_bytes = cached
    first_id = index * 1_000_000
    start = day * st.MICROS_PER_DAY + v.ts_start
    bounds_lower = (
        b"\x02\x10\x02\x10"
        + st._long(first_id)
        + v.lower_mid
        + b"\x0a"
        + day_bytes
        + b"\x0c\x10"
        + st._long(start)
        + v.lower_tail
    )
    bounds_upper = (
        b"\x02\x10\x02\x10"
        + st._long(first_id + v.records - 1)
        + v.upper_mid
        + b"\x0a"
        + day_bytes
        + b"\x0c\x10"
        + st._long(start + v.ts_span)
        + v.between_bounds
    )
    return b"".join(
        (
            b"\x02\x00\x00\x00\x00",  # status ADDED, inherited ids and sequence numbers, content DATA
            _string(f"{prefix}{index % 1000:05d}-{index // 1000}-synth-{index:08d}.parquet".encode()),
            _PARQUET,
            partition,
            v.head,
            bounds_lower,
            bounds_upper,
            _TRAILER,
        )
    )


def container(schema: dict[str, Any], metadata: dict[str, str], records: list[bytes], *, deflate: bool) -> bytes:
    """An Avro object container file of pre-encoded ``records``, in blocks of ``BLOCK``."""
    meta = {"avro.schema": json.dumps(schema), "avro.codec": "deflate" if deflate else "null", **metadata}
    out = io.BytesIO()
    out.write(write_container_header({k: v.encode() for k, v in meta.items()}, _SYNC))
    for first in range(0, len(records), BLOCK):
        chunk = records[first : first + BLOCK]
        data = b"".join(chunk)
        if deflate:
            packer = zlib.compressobj(1, zlib.DEFLATED, -15)
            data = packer.compress(data) + packer.flush()
        out.write(zz(len(chunk)) + zz(len(data)) + data + _SYNC)
    return out.getvalue()


def _manifest_metadata(content: str) -> dict[str, str]:
    return {
        "schema": json.dumps(st.SCHEMA),
        "schema-id": "0",
        "partition-spec": json.dumps(st.SPEC_FIELDS),
        "partition-spec-id": "0",
        "format-version": "2",
        "content": content,
    }


def write_data_manifests(location: Path, layout: st.Layout, prefix: str, numbers: list[int]) -> list[dict[str, Any]]:
    """Write data manifests ``numbers`` (files ``k * files_per_manifest`` onwards); returns their counts."""
    variants = [Variant(j) for j in range(POOL)]
    per = layout.files_per_manifest
    out = []
    for k in numbers:
        indexes = range(k * per, min(layout.files, (k + 1) * per))
        partitions: dict[int, tuple[Any, ...]] = {}
        records = [encode_data_entry(location, layout, i, variants, partitions) for i in indexes]
        path = location / "metadata" / f"{prefix}-{k:05d}-m0.avro"
        path.write_bytes(container(st.ENTRY_SCHEMA, _manifest_metadata("data"), records, deflate=True))
        days = [st.day_of(layout, i) for i in indexes]
        buckets = [st.bucket_of(layout, i) for i in indexes]
        summaries = [
            {
                "contains_null": False,
                "contains_nan": False,
                "lower_bound": st._int(min(v)),
                "upper_bound": st._int(max(v)),
            }
            for v in (days, buckets)
        ]
        out.append(
            {
                "manifest_length": path.stat().st_size,
                "partitions": summaries,
                "added_files_count": len(indexes),
                "added_rows_count": sum(variants[i % POOL].records for i in indexes),
            }
        )
    return out


def location_of(files: int, commit_files: int, files_per_manifest: int = 2_500) -> Path:
    name = f"synth_grow_{files}_c{commit_files}"
    return st.location_of(files, files_per_manifest).with_name(
        name if files_per_manifest == 2_500 else f"{name}_m{files_per_manifest}"
    )


def _encoded_list_entry(entry: dict[str, Any]) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, st._PARSED_LIST, entry)
    return out.getvalue()


def build(files: int, commit_files: int = 50_000, *, files_per_manifest: int = 2_500, workers: int = 2) -> Path:
    """Write the table unless a complete one of this version is there; returns its location."""
    layout = st.Layout(files=files, files_per_manifest=files_per_manifest)
    if commit_files % files_per_manifest:
        raise ValueError("commit_files must be a multiple of files_per_manifest")
    location = location_of(files, commit_files, files_per_manifest)
    marker_file = location / "complete.json"
    wanted = {
        "version": VERSION,
        "files": files,
        "commit_files": commit_files,
        "files_per_manifest": files_per_manifest,
    }
    if marker_file.is_file() and json.loads(marker_file.read_text()).get("layout") == wanted:
        return location
    shutil.rmtree(location, ignore_errors=True)
    metadata_dir = location / "metadata"
    metadata_dir.mkdir(parents=True)
    rng = random.Random(files * 7 + commit_files)
    table_uuid = str(uuid.UUID(int=rng.getrandbits(128)))
    prefix = table_uuid[:8]
    manifests_count = -(-files // files_per_manifest)
    numbers = list(range(manifests_count))
    shares = [numbers[w::workers] for w in range(workers)]
    with ProcessPoolExecutor(workers) as pool:
        done = list(
            pool.map(write_data_manifests, [location] * workers, [layout] * workers, [prefix] * workers, shares)
        )
    counts: dict[int, dict[str, Any]] = {}
    for share, results in zip(shares, done, strict=True):
        counts.update(zip(share, results, strict=True))

    per_commit = commit_files // files_per_manifest
    commits = -(-manifests_count // per_commit)
    ids = [rng.getrandbits(62) for _ in range(commits + 1)]
    list_entries: list[bytes] = []  # encoded, newest first within each commit as written below
    snapshots: list[dict[str, Any]] = []
    records = 0
    listed: list[bytes] = []
    data_files = 0

    def write_list(number: int, entries: list[bytes]) -> str:
        path = metadata_dir / f"snap-{ids[number]}-1-{uuid.UUID(int=rng.getrandbits(128))}.avro"
        meta = {
            "format-version": "2",
            "snapshot-id": str(ids[number]),
            "parent-snapshot-id": str(ids[number - 1]) if number else "null",
            "sequence-number": str(number + 1),
        }
        path.write_bytes(container(st.MANIFEST_FILE_SCHEMA, meta, entries, deflate=False))
        return str(path)

    def snapshot(number: int, list_path: str, summary: dict[str, str]) -> None:
        snapshots.append(
            {
                "snapshot-id": ids[number],
                **({"parent-snapshot-id": ids[number - 1]} if number else {}),
                "sequence-number": number + 1,
                "timestamp-ms": st.BASE_MS + number * 60_000,
                "manifest-list": list_path,
                "summary": summary,
                "schema-id": 0,
            }
        )

    for c in range(commits):
        mine = numbers[c * per_commit : (c + 1) * per_commit]
        added_files = added_rows = 0
        fresh = []
        for k in mine:
            path = metadata_dir / f"{prefix}-{k:05d}-m0.avro"
            entry = st._list_entry(path, counts[k], content=0, sequence=c + 1, snapshot_id=ids[c])
            fresh.append(_encoded_list_entry(entry))
            added_files += counts[k]["added_files_count"]
            added_rows += counts[k]["added_rows_count"]
        listed = fresh + listed  # a new snapshot lists its own manifests first
        list_entries = listed
        data_files += added_files
        records += added_rows
        summary = {
            "operation": "append",
            "added-data-files": str(added_files),
            "added-records": str(added_rows),
            "total-data-files": str(data_files),
            "total-delete-files": "0",
            "total-records": str(records),
            "total-position-deletes": "0",
            "total-equality-deletes": "0",
        }
        snapshot(c, write_list(c, list_entries), summary)

    deletes = [st.delete_entry(location, layout, i) for i in st.deleted(layout)]
    path = metadata_dir / f"{prefix}-deletes-m0.avro"
    delete_counts = st._write_manifest(path, deletes, "deletes")
    entry = st._list_entry(path, delete_counts, content=1, sequence=commits + 1, snapshot_id=ids[commits])
    summary = {
        "operation": "overwrite",
        "added-data-files": "0",
        "added-delete-files": str(len(deletes)),
        "total-data-files": str(data_files),
        "total-delete-files": str(len(deletes)),
        "total-records": str(records),
        "total-position-deletes": str(10 * len(deletes)),
        "total-equality-deletes": "0",
    }
    snapshot(commits, write_list(commits, [_encoded_list_entry(entry), *list_entries]), summary)
    metadata = {
        "format-version": 2,
        "table-uuid": table_uuid,
        "location": str(location),
        "last-sequence-number": commits + 1,
        "last-updated-ms": snapshots[-1]["timestamp-ms"],
        "last-column-id": 8,
        "current-schema-id": 0,
        "schemas": [st.SCHEMA],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": st.SPEC_FIELDS}],
        "last-partition-id": 1001,
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": {"write.metadata.metrics.default": "full"},
        "current-snapshot-id": snapshots[-1]["snapshot-id"],
        "refs": {"main": {"snapshot-id": snapshots[-1]["snapshot-id"], "type": "branch"}},
        "snapshots": snapshots,
        "snapshot-log": [{"snapshot-id": s["snapshot-id"], "timestamp-ms": s["timestamp-ms"]} for s in snapshots],
        "metadata-log": [],
    }
    (metadata_dir / "v1.metadata.json").write_text(json.dumps(metadata))
    (metadata_dir / "version-hint.text").write_text("1")
    table_counts = {
        "files": files + len(deletes),
        "data_files": files,
        "delete_files": len(deletes),
        "manifests": manifests_count + 1,
        "snapshots": len(snapshots),
    }
    marker_file.write_text(json.dumps({"layout": wanted, "location": str(location), "counts": table_counts}))
    return location


def marker(files: int, commit_files: int, files_per_manifest: int = 2_500) -> dict[str, Any] | None:
    path = location_of(files, commit_files, files_per_manifest) / "complete.json"
    return json.loads(path.read_text()) if path.is_file() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000_000)
    parser.add_argument("--commit-files", type=int, default=50_000)
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args(argv)
    print(build(args.files, args.commit_files, workers=args.workers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
