"""Benchmark: scan planning and file listing on the large synthetic tables, against PyIceberg's ``plan_files``.

Every measurement runs in a fresh Python process (cold: no manifest decoded before), which reports its
wall time and its peak resident memory, and consumes what it times as its user would: every task's data
file, size, records and delete files read, or the DataFrame built. Measured on one table (built or reused
by ``large_table.py``; with ``ICEBOOK_BENCH_TABLES=synthetic``, ``synthetic_table.py``'s, written without Spark):

a. icebook ``icebook.open(location).scan()``: the full plan (every manifest decoded, every file decided,
   deletes matched), its tasks read one by one (``plan.tasks``) and, separately, all at once as columns
   (``plan.to_arrow()``)
b. the same with ``filter=<one day>``: a filter that the manifests' partition summaries prune
c. the same with ``filter=id < 0``: a filter that keeps no file but must read every manifest (column stats)
d. icebook ``inspect.files()`` -> pandas, and PyIceberg ``inspect.files()`` -> pandas
e. the peer, PyIceberg ``StaticTable.from_metadata(...).scan(row_filter=...).plan_files()``, its tasks read
   the same way, for a, b and c
f. warm start: ``inspect.files()`` and ``scan()`` in new processes through the disk cache of decoded
   manifests that an earlier process filled (every other measurement runs with that cache off)

g. ``--warm-start``: only the start of a new process, imports inside the clock, each beside PyIceberg's:
   ``import icebook; icebook.open(location)`` and its first view (``_repr_html_``), against
   ``StaticTable.from_metadata``; then ``inspect.files()`` through the disk cache, against PyIceberg's
   ``inspect.files()``; then, cold, the listing as a DataFrame and streamed (``inspect.batches.files()``: peak memory),
   and the one-day plan (imports before the clock, as in b), against ``plan_files``

Prints seconds, CPU seconds (the process's and its decoder workers'), peak memory (MiB), the number of data
files to read, the ratio peer / icebook by wall and by CPU time (above 1: icebook is faster) and the load
average. Exit status 1 when the engines disagree on the tasks (count, records, bytes) or
the listings on their rows. DuckDB is not a peer here: reading Iceberg or Avro needs its ``iceberg`` or
``avro`` extension, which it downloads from its own site, not from PyPI.

    python benchmarks/scan_planning.py [--files 500000] [--no-peer] [--plans full] [--no-listing]
    python benchmarks/scan_planning.py --warm-start [--location DIR]   # DIR: any table of --files' layout
    python benchmarks/scan_planning.py --growth 500000,1000000,2000000,5000000 --no-peer
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import large_table  # after the path tweak, so the script runs from any directory

one_day_filter = large_table.one_day_filter

FILTERS = {"full": None, "one day": "<one day>", "keeps none": "id < 0"}


def warm_child(what: str, location: str, metadata_file: str) -> dict[str, Any]:
    """A new process's start, imports inside the clock: what a notebook pays before its first answer."""
    started = time.perf_counter()
    if what.startswith("icebook"):
        import icebook

        table = icebook.open(location)
        opened = time.perf_counter()
        count = len(table._repr_html_()) if what == "icebook open" else len(table.inspect.files())
    else:
        from pyiceberg.table import StaticTable

        static = StaticTable.from_metadata(metadata_file)
        opened = time.perf_counter()
        count = len(static.metadata.snapshots) if what == "pyiceberg open" else static.inspect.files().num_rows
    seconds = time.perf_counter() - started
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": seconds, "open_s": opened - started, "count": count, "peak_mib": peak_mib}


def consume_tasks(tasks: Any) -> tuple[int, int, int, int]:
    """What a reader of a plan does with it: every task's data file, its size and records, and its delete
    files. Returns (tasks, records, bytes, delete files attached), which every engine must agree on."""
    count = records = size = deletes = 0
    for task in tasks:
        f = task.file
        count += 1
        records += f.record_count
        size += f.file_size_in_bytes
        deletes += len(task.deletes if hasattr(task, "deletes") else task.delete_files)
    return count, records, size, deletes


def child(what: str, location: str, metadata_file: str, filter_text: str | None) -> dict[str, Any]:
    """One measurement in this (fresh) process: imports are done before the clock starts; opening the
    table (reading its metadata file) is timed, and so is consuming the answer (every task read, the
    DataFrame built)."""
    import pyarrow.compute as pc
    from pyiceberg.table import StaticTable

    import icebook
    import icebook.analysis.scan.planner  # opening imports only what opening needs; the rest is not timed here
    import icebook.analysis.tables.inspect
    import icebook.table

    started = time.perf_counter()
    cpu_started = time.process_time()
    check: tuple[int, ...]
    if what == "icebook scan":  # the plan's tasks, read one by one
        check = consume_tasks(icebook.open(location).scan(filter=filter_text).tasks)
    elif what == "icebook scan arrow":  # every task at once, as columns
        table = icebook.open(location).scan(filter=filter_text).to_arrow()
        check = (
            table.num_rows,
            pc.sum(table["record_count"]).as_py() or 0,
            pc.sum(table["file_size_in_bytes"]).as_py() or 0,
            pc.sum(pc.list_value_length(table["delete_files"])).as_py() or 0,
        )
    elif what == "icebook files":
        frame = icebook.open(location).inspect.files()
        check = (len(frame), int(frame["record_count"].sum()))
    elif what == "icebook files stream":
        batches = list(icebook.open(location).inspect.batches.files())
        check = (sum(b.num_rows for b in batches), sum(pc.sum(b["record_count"]).as_py() or 0 for b in batches))
    elif what == "pyiceberg files":
        frame = StaticTable.from_metadata(metadata_file).inspect.files().to_pandas()
        check = (len(frame), int(frame["record_count"].sum()))
    elif what == "pyiceberg plan_files":
        scan = StaticTable.from_metadata(metadata_file).scan(row_filter=filter_text or "True")
        check = consume_tasks(scan.plan_files())
    else:
        raise SystemExit(f"unknown measurement {what!r}")
    seconds = time.perf_counter() - started
    cpu_s = time.process_time() - cpu_started
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    from icebook.io.worker_pool import POOL

    POOL.shutdown()  # the decoder workers stop and are waited for: their CPU time is then the children's
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "seconds": seconds,
        "cpu_s": cpu_s + children.ru_utime + children.ru_stime,
        "load": os.getloadavg()[0],
        "count": check[0],
        "check": list(check),
        "peak_mib": peak_mib,
        "workers_peak_mib": children.ru_maxrss / 1024,
    }


LOCATION: Path | None = None  # --location: an existing table of the layout of --files, used as it is


def table_location(files: int) -> Path:
    return LOCATION or large_table.ensure_large_table(files)


def measure(
    what: str, files: int, filter_text: str | None, *, disk_cache: bool = False, warm: bool = False
) -> dict[str, Any]:
    """``what`` in a new process; cold (the disk cache of decoded manifests off) unless ``disk_cache``."""
    location = table_location(files)
    metadata_file = large_table.current_metadata_file(location)
    args = [sys.executable, __file__, "--warm-child" if warm else "--child", what, str(location), str(metadata_file)]
    args.append(filter_text or "")
    env = {**os.environ, "ICEBOOK_MANIFEST_CACHE": "on" if disk_cache else "off"}
    done = subprocess.run(args, check=False, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{what} on {files:,} files failed:\n{done.stderr[-3000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def row(label: str, result: dict[str, Any], peer: dict[str, Any] | None = None) -> str:
    ratio = f"{peer['seconds'] / result['seconds']:>8.1f}x" if peer else f"{'':>9}"
    cpu_ratio = f"{peer['cpu_s'] / result['cpu_s']:>8.1f}x" if peer and "cpu_s" in result else f"{'':>9}"
    cpu = f"{result['cpu_s']:>8.2f}" if "cpu_s" in result else f"{'':>8}"
    load = f"{result['load']:>6.1f}" if "load" in result else f"{'':>6}"
    return (
        f"{label:<46} {result['seconds']:>9.2f} {cpu} {result['peak_mib']:>9,.0f} {result['count']:>10,} "
        f"{ratio} {cpu_ratio} {load}"
    )


HEADER = (
    f"{'measurement':<46} {'seconds':>9} {'CPU s':>8} {'peak MiB':>9} {'tasks':>10} {'vs peer':>9} "
    f"{'CPU vs':>9} {'load':>6}"
)
"""CPU s: the measuring process's and its decoder workers' CPU time (the machine may be shared: the wall
time then grows with the load, the CPU time much less); load: the 1-minute load average at its end."""


def agree(label: str, results: dict[str, dict[str, Any] | None], fields: int) -> bool:
    """Whether every engine that ran gave the same first ``fields`` figures (tasks, records, bytes, ...)."""
    seen = {name: tuple(r["check"][:fields]) for name, r in results.items() if r is not None}
    if len(set(seen.values())) <= 1:
        return True
    print(f"{label}: answers differ: {seen}", file=sys.stderr)
    return False


def compare(files: int, peer: bool, *, filters: list[str] | None = None, listing: bool = True) -> int:
    print(f"table: {files:,} files ({table_location(files)})")
    print("every measurement consumes its answer: each task's data file, size, records and deletes, or the DataFrame")
    print(HEADER)
    status = 0
    for name, text in FILTERS.items():
        if filters is not None and name not in filters:
            continue
        text = one_day_filter(files) if text == "<one day>" else text
        ours = measure("icebook scan", files, text)
        columns = measure("icebook scan arrow", files, text)
        theirs = measure("pyiceberg plan_files", files, text) if peer else None
        print(row(f"icebook scan ({name}), tasks read", ours, theirs), flush=True)
        print(row(f"icebook scan ({name}), to_arrow()", columns, theirs), flush=True)
        if theirs is not None:
            print(row(f"pyiceberg plan_files ({name})", theirs), flush=True)
        # tasks, records and bytes; the delete files attached are icebook's two forms only (PyIceberg does
        # not read position deletes' file_path bounds, so it attaches more of them)
        if not agree(f"scan ({name})", {"tasks": ours, "arrow": columns, "pyiceberg": theirs}, 3):
            status = 1
        if not agree(f"scan ({name}) deletes", {"tasks": ours, "arrow": columns}, 4):
            status = 1
    if not listing:
        return status
    cold = measure("icebook files", files, None)
    peer_files = measure("pyiceberg files", files, None) if peer else None
    print(row("icebook inspect.files() (cold)", cold, peer_files), flush=True)
    if peer_files is not None:
        print(row("pyiceberg inspect.files() -> pandas", peer_files), flush=True)
    # Warm start: a new process lists the files through the disk cache that an earlier one filled.
    filled = measure("icebook files", files, None, disk_cache=True)
    print(row("icebook inspect.files() (fills cache)", filled, peer_files), flush=True)
    warm = measure("icebook files", files, None, disk_cache=True)
    print(row("icebook inspect.files() (warm start)", warm, peer_files), flush=True)
    warm_scan = measure("icebook scan", files, None, disk_cache=True)
    print(row("icebook scan (full, warm start), tasks read", warm_scan, None), flush=True)
    listings = {"cold": cold, "filled": filled, "warm": warm, "pyiceberg": peer_files}
    if not agree("inspect.files()", listings, 2):
        status = 1
    return status


def warm_start(files: int) -> int:
    """Warm start and the one-day plan, icebook beside PyIceberg, each in a new process."""
    print(f"table: {table_location(files)} (layout of {files:,} files)")
    print(
        f"{'measurement (new process, imports timed)':<52} {'open s':>7} {'total s':>8} {'peak MiB':>9} {'vs peer':>8}"
    )
    status = 0

    def line(label: str, result: dict[str, Any], peer: dict[str, Any] | None) -> None:
        ratio = f"{peer['seconds'] / result['seconds']:>7.1f}x" if peer else ""
        print(
            f"{label:<52} {result['open_s']:>7.2f} {result['seconds']:>8.2f} {result['peak_mib']:>9,.0f} {ratio:>8}",
            flush=True,
        )

    measure("icebook files", files, None, disk_cache=True)  # fills the disk cache (not shown)
    for ours, theirs, label, peer_label, cached in (
        ("icebook open", "pyiceberg open", "open + first view (_repr_html_)", "StaticTable.from_metadata", False),
        ("icebook files", "pyiceberg files", "open + inspect.files() (through the cache)", "+ inspect.files()", True),
    ):
        mine = measure(ours, files, None, disk_cache=cached, warm=True)
        peer = measure(theirs, files, None, warm=True)
        line(f"icebook {label}", mine, peer)
        line(f"pyiceberg {peer_label}", peer, None)
    print(HEADER)
    frame = measure("icebook files", files, None)
    stream = measure("icebook files stream", files, None)
    print(row("icebook inspect.files() (cold)", frame))
    print(row("icebook batches.files() (cold)", stream))
    if frame["count"] != stream["count"]:
        print(f"rows differ: frame {frame['count']}, stream {stream['count']}", file=sys.stderr)
        status = 1
    text = one_day_filter(files)
    ours_plan = measure("icebook scan", files, text)
    theirs_plan = measure("pyiceberg plan_files", files, text)
    print(row("icebook scan (one day, cold)", ours_plan, theirs_plan))
    print(row("pyiceberg plan_files (one day)", theirs_plan))
    if ours_plan["count"] != theirs_plan["count"]:
        print(f"task counts differ: icebook {ours_plan['count']}, pyiceberg {theirs_plan['count']}", file=sys.stderr)
        status = 1
    return status


def growth(sizes: list[int]) -> int:
    print("growth: each point a fresh process (cold)")
    print(
        f"{'files':>10} {'files() s':>10} {'files() MiB':>12} {'scan() s':>9} {'scan() MiB':>11} {'s per 1M files':>15}"
    )
    for files in sizes:
        listed = measure("icebook files", files, None)
        planned = measure("icebook scan", files, None)
        print(
            f"{files:>10,} {listed['seconds']:>10.2f} {listed['peak_mib']:>12,.0f} {planned['seconds']:>9.2f} "
            f"{planned['peak_mib']:>11,.0f} {planned['seconds'] / files * 1e6:>15.2f}",
            flush=True,
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "--child":
        what, location, metadata_file, filter_text = argv[1:5]
        print(json.dumps(child(what, location, metadata_file, filter_text or None)))
        return 0
    if argv and argv[0] == "--warm-child":
        print(json.dumps(warm_child(*argv[1:4])))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--files", type=int, default=500_000)
    parser.add_argument("--no-peer", action="store_true", help="skip PyIceberg")
    parser.add_argument("--growth", help="comma-separated table sizes: time and peak memory per size")
    parser.add_argument("--warm-start", action="store_true", help="only the warm start and the one-day plan")
    parser.add_argument("--location", type=Path, help="an existing table of the layout of --files (not built)")
    parser.add_argument("--plans", help=f"comma-separated plans to measure (of: {', '.join(FILTERS)}); all by default")
    parser.add_argument("--no-listing", action="store_true", help="only the plans, not inspect.files()")
    args = parser.parse_args(argv)
    global LOCATION
    LOCATION = args.location
    if args.warm_start:
        return warm_start(args.files)
    if args.growth:
        return growth([int(n) for n in args.growth.split(",")])
    plans = None if args.plans is None else [p.strip() for p in args.plans.split(",")]
    if plans is not None and not set(plans) <= set(FILTERS):
        parser.error(f"--plans: one of {', '.join(FILTERS)}")
    return compare(args.files, not args.no_peer, filters=plans, listing=not args.no_listing)


if __name__ == "__main__":
    raise SystemExit(main())
