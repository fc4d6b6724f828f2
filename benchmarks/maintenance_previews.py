"""Benchmark: maintenance previews against the reference implementation's own planning, same table, one run.

On the large metadata-only table (``large_table.py``):

a. compaction: ``t.maintenance.compaction_preview()`` vs Iceberg's ``BinPackRewriteFilePlanner.plan()`` in the Spark
   JVM (what ``rewrite_data_files`` plans before it rewrites anything);
b. orphans: ``t.maintenance.orphans()`` vs ``remove_orphan_files(dry_run => true)`` (default cutoff, three days);
c. expiry: ``t.maintenance.expire_preview(older_than=<the newest snapshot>)`` (icebook only: Spark has no dry run
   for expire_snapshots; its ``ExpireSnapshots.apply()`` gives the snapshots, timed as the peer).

Prints seconds per step and the ratio peer / icebook (above 1: icebook is faster), and checks the
answers agree (groups, orphan paths, expired snapshot ids). Exit status 1 when they do not.

    python benchmarks/maintenance_previews.py [--files 100000] [--runs 1]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import large_table  # after the path tweak, so the script runs from any directory
from files_listing import timed

import icebook


def java_plan_groups(spark: Any, identifier: str) -> set[frozenset[str]]:
    jvm = spark._jvm
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, identifier)
    planner = jvm.org.apache.iceberg.actions.BinPackRewriteFilePlanner(table)
    planner.init(jvm.java.util.HashMap())
    groups = set()
    iterator = planner.plan().groups().iterator()
    while iterator.hasNext():
        group = iterator.next()
        groups.add(frozenset(str(task.file().location()) for task in group.fileScanTasks()))
    return groups


def java_expired(spark: Any, identifier: str, older_than: int) -> set[int]:
    jvm = spark._jvm
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, identifier)
    return {int(s.snapshotId()) for s in table.expireSnapshots().expireOlderThan(older_than).apply()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args(argv)
    location = large_table.ensure_large_table(args.files)
    spark = large_table.get_spark()
    identifier = f"{large_table.CATALOG}.{large_table.NAMESPACE}.{large_table.table_name(args.files)}"
    ok = True
    rows: list[tuple[str, float, float]] = []

    def fresh() -> Any:
        return icebook.open(str(location))  # a new table object: nothing cached between runs

    preview, ours = timed(args.runs, lambda: fresh().maintenance.compaction_preview())
    theirs_groups, theirs = timed(args.runs, lambda: java_plan_groups(spark, identifier))
    same = {g.paths for g in preview.groups} == theirs_groups
    ok &= same
    rows.append((f"compaction plan ({len(preview.groups)} groups, same: {same})", ours, theirs))

    report, ours = timed(args.runs, lambda: fresh().maintenance.orphans())
    listed, theirs = timed(
        args.runs,
        lambda: [
            r.orphan_file_location
            for r in spark.sql(
                f"CALL {large_table.CATALOG}.system.remove_orphan_files(table => "
                f"'{large_table.NAMESPACE}.{large_table.table_name(args.files)}', dry_run => true)"
            ).collect()
        ],
    )
    same = {p.removeprefix("file:") for p in listed} == set(report.paths)
    ok &= same
    rows.append((f"orphans ({len(report.paths)} found among {report.listed} listed, same: {same})", ours, theirs))

    t = fresh()
    older_than = max(s.timestamp_ms for s in t.snapshots)
    expiry, ours = timed(args.runs, lambda: fresh().maintenance.expire_preview(older_than=older_than))
    expired, theirs = timed(args.runs, lambda: java_expired(spark, identifier, older_than))
    same = set(expiry.expired_snapshot_ids) == expired
    ok &= same
    rows.append((f"expire ({len(expired)} snapshots, {len(expiry.files)} files; same snapshots: {same})", ours, theirs))

    print(f"table: {location} ({args.files} data files)")
    print(f"{'step':<78} {'icebook s':>10} {'peer s':>10} {'peer/icebook':>13}")
    for name, mine, peer in rows:
        print(f"{name:<78} {mine:>10.2f} {peer:>10.2f} {peer / mine if mine else float('nan'):>13.2f}")
    if not ok:
        print("MISMATCH: icebook and the reference implementation disagree", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    started = time.perf_counter()
    code = main()
    print(f"total {time.perf_counter() - started:.1f} s")
    raise SystemExit(code)
