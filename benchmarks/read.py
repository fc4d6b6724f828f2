"""Benchmark: read one snapshot's rows with icebook's Arrow engine, PyIceberg and Spark, in one run.

The table (built once by Spark, cached under ``$ICEBOOK_HOME/bench/read-warehouse``) is a v2
merge-on-read table of ``--rows`` rows (default 2M) in a few hundred Parquet files (4 regions x
``--tasks`` write tasks), followed by a merge-on-read DELETE of ~1% of rows (position delete files)
and a second append, so every reader has to apply deletes.

a. icebook:   ``icebook.engines.arrow.read(t, snapshot)`` -> Arrow
b. PyIceberg: ``StaticTable.from_metadata(metadata).scan(snapshot_id=...).to_arrow()``
c. Spark:     ``SELECT * FROM ... VERSION AS OF <id>`` collected to Arrow (warm: second run), and ``count()``

Prints rows, seconds and peer_time / icebook_time (above 1: icebook is faster). Exit 1 on a row mismatch.

    python benchmarks/read.py [--rows 2000000] [--tasks 64] [--runs 3] [--filter "region = 'eu'"]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from icebook.config import icebook_home

CATALOG = "benchread"
VERSION = 1


def bench_dir() -> Path:
    return icebook_home() / "bench"


def build(spark: Any, rows: int, tasks: int) -> Path:
    """Create (or reuse) the table; returns its location."""
    from icebook.engines.spark_session import add_catalog

    warehouse = bench_dir() / "read-warehouse"
    marker = bench_dir() / "read-table.json"
    params = {"rows": rows, "tasks": tasks, "version": VERSION}
    location = warehouse / "db" / "reads"
    add_catalog(CATALOG, warehouse)
    if marker.is_file() and json.loads(marker.read_text()) == params and location.is_dir():
        return location
    shutil.rmtree(warehouse, ignore_errors=True)
    marker.unlink(missing_ok=True)
    add_catalog(CATALOG, warehouse)
    table = f"{CATALOG}.db.reads"
    print(f"building {table}: {rows} rows, {tasks} write tasks ...", file=sys.stderr)
    spark.sql(
        f"""CREATE TABLE {table} (id BIGINT NOT NULL, ts TIMESTAMP, region STRING, kind STRING,
            amount DECIMAL(12,2), score DOUBLE) USING iceberg PARTITIONED BY (region)
            TBLPROPERTIES ('format-version'='2', 'write.delete.mode'='merge-on-read',
                           'write.distribution-mode'='none')"""
    )
    first = rows * 9 // 10
    spark.sql(
        f"""INSERT INTO {table}
            SELECT /*+ REPARTITION({tasks}) */ id,
                   TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id % 2592000),
                   element_at(array('us', 'eu', 'apac', 'latam'), CAST(id % 4 AS INT) + 1),
                   IF(id % 3 = 0, 'click', 'view'), CAST(id % 10000 AS DECIMAL(12,2)) / 100, rand(7)
            FROM range(0, {first})"""
    )
    spark.sql(f"DELETE FROM {table} WHERE id % 97 = 0")
    spark.sql(
        f"""INSERT INTO {table}
            SELECT /*+ REPARTITION({max(1, tasks // 8)}) */ id, TIMESTAMP '2024-02-01 00:00:00', 'eu', 'view',
                   CAST(1 AS DECIMAL(12,2)), rand(8)
            FROM range({first}, {rows})"""
    )
    marker.write_text(json.dumps(params))
    return location


def timed(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--tasks", type=int, default=64)
    parser.add_argument("--runs", type=int, default=3, help="best of N (after one warm-up run each)")
    parser.add_argument("--filter", default=None, help="a row filter for all three (icebook string form)")
    args = parser.parse_args(argv)

    import icebook
    from icebook.engines.arrow import read
    from icebook.engines.spark_session import get_session

    spark = get_session(progress=False)
    location = build(spark, args.rows, args.tasks)
    t = icebook.open(location)
    snapshot = t.current_snapshot
    assert snapshot is not None
    files = t.inspect.files()
    print(
        f"table {location}: {int((files['content'] == 0).sum())} data files, "
        f"{int((files['content'] == 1).sum())} position delete files, snapshot {snapshot.snapshot_id}"
    )
    where = f" WHERE {args.filter}" if args.filter else ""

    def ours() -> int:
        fresh = icebook.open(location)  # no manifest cache carried between runs
        return int(read(fresh, fresh.snapshot(snapshot.snapshot_id), args.filter).num_rows)

    def pyiceberg() -> int:
        from pyiceberg.table import StaticTable

        static = StaticTable.from_metadata(t.metadata_location)
        scan = static.scan(snapshot_id=snapshot.snapshot_id, row_filter=args.filter or "True")
        return int(scan.to_arrow().num_rows)

    query = f"SELECT * FROM {CATALOG}.db.reads VERSION AS OF {snapshot.snapshot_id}{where}"

    def spark_arrow() -> int:
        return sum(b.num_rows for b in spark.sql(query)._collect_as_arrow())

    def spark_count() -> int:
        return int(spark.sql(query).count())

    results: list[tuple[str, float, int]] = []
    for name, fn in (
        ("icebook arrow", ours),
        ("pyiceberg", pyiceberg),
        ("spark -> arrow", spark_arrow),
        ("spark count()", spark_count),
    ):
        fn()  # warm-up (JIT, caches, page cache)
        seconds, n = timed(fn, args.runs)
        results.append((name, seconds, n))
    base = results[0][1]
    print(f"{'reader':<16} {'rows':>10} {'seconds':>9} {'rows/s':>12} {'vs icebook':>11}")
    for name, seconds, n in results:
        print(f"{name:<16} {n:>10} {seconds:>9.3f} {n / seconds:>12,.0f} {seconds / base:>10.2f}x")
    counts = {n for _, _, n in results}
    if len(counts) != 1:
        print(f"row counts differ: {counts}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
