"""Benchmark: ``Table.query_cost`` cold (every footer read from its file) and warm (footers and manifests from
the disk caches an earlier process filled), each in a fresh Python process, imports before the clock.

The table is written once by PyIceberg under ``$ICEBOOK_HOME/bench/query_cost-<files>``: ``--files`` Parquet
files (one per value of the partition column), each of ``--rows`` rows in row groups of 1,000 rows. The
filter keeps every file and a tenth of each file's row groups (``id`` ascends within each file).

Prints seconds and peak memory (MiB) per run, the files and row groups decided, and the bytes read.

    python benchmarks/query_cost.py [--files 400] [--rows 20000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import large_table  # after the path tweak, so the script runs from any directory


def build(files: int, rows: int) -> str:
    """The table's metadata file, written on first use."""
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog

    root = large_table.bench_dir() / f"query_cost-{files}x{rows}"
    marker = root / "metadata_location"
    if marker.exists():
        return marker.read_text()
    root.mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog("bench", uri=f"sqlite:///{root / 'catalog.db'}", warehouse=(root / "wh").as_uri())
    catalog.create_namespace("db")
    schema = pa.schema([("part", pa.int32()), ("id", pa.int64()), ("value", pa.float64()), ("note", pa.string())])
    table = catalog.create_table(
        "db.t",
        schema,
        properties={"write.parquet.row-group-limit": "1000", "write.target-file-size-bytes": str(1 << 40)},
    )
    with table.update_spec() as update:
        update.add_identity("part")
    table = catalog.load_table("db.t")
    for start in range(0, files, 50):  # a few commits of 50 partitions each
        parts = range(start, min(start + 50, files))
        batch = pa.table(
            {
                "part": pa.array([p for p in parts for _ in range(rows)], pa.int32()),
                "id": pa.array([i for _ in parts for i in range(rows)], pa.int64()),
                "value": pa.array([float(i) for i in range(len(parts) * rows)], pa.float64()),
                "note": pa.array([f"note {i % 997}" for i in range(len(parts) * rows)]),
            },
            schema=schema,
        )
        table.append(batch)
    metadata = catalog.load_table("db.t").metadata_location
    marker.write_text(metadata)
    return metadata


def child(metadata: str, filter_text: str) -> dict[str, Any]:
    import icebook
    import icebook.analysis.cost.query_cost

    started = time.perf_counter()
    cost = icebook.open(metadata).query_cost(filter_text, columns=["value"])
    seconds = time.perf_counter() - started
    totals = cost.totals
    return {
        "seconds": seconds,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "files": totals["data_files_read"],
        "row_groups": totals["row_groups"],
        "row_groups_read": totals["row_groups_read"],
        "bytes_read": totals["bytes_read"],
        "table_bytes": totals["table_bytes"],
    }


def run(metadata: str, filter_text: str, home: str) -> dict[str, Any]:
    env = {**os.environ, "ICEBOOK_HOME": home}
    out = subprocess.run(
        [sys.executable, __file__, "--child", metadata, filter_text],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=400)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--child", nargs=2)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return
    metadata = build(args.files, args.rows)
    filter_text = f"id < {args.rows // 10}"
    with tempfile.TemporaryDirectory() as home:
        for label in ("cold", "warm"):
            r = run(metadata, filter_text, home)
            print(
                f"{label}: {r['seconds']:.2f} s, peak {r['peak_mib']:.0f} MiB; {r['files']} files, "
                f"{r['row_groups_read']} of {r['row_groups']} row groups read, "
                f"{r['bytes_read']:,} of {r['table_bytes']:,} bytes"
            )


if __name__ == "__main__":
    main()
