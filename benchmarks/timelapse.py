"""Benchmark: the whole time-lapse, cold, against one cold listing of the current snapshot and a peer.

Two tables:

1. A synthetic table of 500,000 data files and 200 snapshots (metadata only, written by the Iceberg Java
   API in the Spark JVM with ``large_table.py``'s writer): 197 fast appends of about 2,540 files each (one
   manifest per commit, manifest merging off, so the last snapshot lists 197+ manifests), then a delete
   (a whole day plus single files across many manifests), position deletes for ~200 files, and a
   compaction of one partition. Built once, nice'd; reused while its marker matches.
2. The 50,000-snapshot table of ``history.py`` (manifest lists only: its manifests are not written).

Every measurement runs in a fresh process with the disk cache of decoded manifests off (cold):

a. icebook ``icebook.open(location).inspect.files()``: one listing of the current snapshot
b. icebook ``icebook.open(location).timelapse()`` and its ``to_pandas()`` and ``partitions_frame()``
c. the peer, PyIceberg ``inspect.files()`` of the current snapshot; a time-lapse with PyIceberg means one
   such listing per snapshot (it has no incremental form), so its cost is estimated as the sum over the
   snapshots of a listing whose time grows with the files listed (``files(snapshot) / files(current)``)

On the history table, whose manifests were never written, ``timelapse(manifests=False)`` (frames from the
manifest lists' counts, every list read once, column-wise) is timed; ``timelapse()`` is run too and reports
the missing manifest it needs.

    python benchmarks/timelapse.py [--files 500000] [--snapshots 200] [--history 50000] [--no-peer]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import large_table  # after the path tweak, so the script runs from any directory

GENERATOR_VERSION = 1


def _name(files: int, snapshots: int) -> str:
    return f"lapse_{files}_s{snapshots}"


def _location(files: int, snapshots: int) -> Path:
    return large_table.lapse_location(files, snapshots)


def _marker(files: int, snapshots: int) -> Path:
    return large_table.bench_dir() / f"{_name(files, snapshots)}.complete.json"


def ensure_lapse_table(files: int, snapshots: int, threads: int = 2) -> Path:
    """The table of ``files`` data files over ``snapshots`` commits, built once."""
    layout = large_table.Layout(files=files)
    marker = _marker(files, snapshots)
    location = _location(files, snapshots)
    wanted = {"layout": asdict(layout), "snapshots": snapshots, "version": GENERATOR_VERSION}
    if marker.is_file() and (location / "metadata" / "version-hint.text").is_file():
        try:
            if {k: v for k, v in json.loads(marker.read_text()).items() if k in wanted} == wanted:
                return location
        except (OSError, json.JSONDecodeError):
            pass
    import shutil

    appends = snapshots - 3
    if appends < 1:
        raise SystemExit("need at least 4 snapshots: appends, a delete, position deletes and a compaction")
    spark = large_table.get_spark()
    name = _name(files, snapshots)
    shutil.rmtree(location, ignore_errors=True)
    spark.sql(f"DROP TABLE IF EXISTS {large_table.CATALOG}.{large_table.NAMESPACE}.{name}")
    marker.unlink(missing_ok=True)
    started = time.monotonic()
    large_table._create_table(spark, name, layout.buckets)
    table = spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        spark._jsparkSession, f"{large_table.CATALOG}.{large_table.NAMESPACE}.{name}"
    )
    writer = large_table.load_writer(spark, table, layout)
    plan = large_table._plan(layout)
    per = -(-files // appends)
    first = 0
    while first < files:
        count = min(per, files - first)
        writer.appendFiles(table, first, count, count, threads)  # one manifest per commit
        first += count
        print(f"timelapse bench: appended {first:,} of {files:,} files", file=sys.stderr, flush=True)
    writer.deleteDayAndFiles(table, plan["delete_day"], large_table.int_array(spark, plan["scattered"]))
    writer.addPositionDeletes(table, large_table.int_array(spark, plan["position_deletes"]))
    writer.compactPartition(table, plan["compact_day"], plan["compact_bucket"], files)
    counts = large_table.count_with_spark(spark, name)
    report = {**wanted, "plan": plan, "counts": counts, "build_s": round(time.monotonic() - started, 1)}
    tmp = marker.with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=2))
    tmp.replace(marker)
    return location


# ---------------------------------------------------------------------- measurements in fresh processes

_CHILD = r"""
import json, resource, sys, time
what, location = sys.argv[1], sys.argv[2]
if what == "pyiceberg files":
    from pyiceberg.table import StaticTable
    import large_table
    started = opened = time.perf_counter()
    t = StaticTable.from_metadata(str(large_table.current_metadata_file(__import__("pathlib").Path(location))))
    rows = t.inspect.files().num_rows
    extra = {"rows": rows}
else:
    import icebook
    started = time.perf_counter()
    t = icebook.open(location)
    opened = time.perf_counter()
    if what == "icebook files":
        extra = {"rows": len(t.inspect.files())}
    elif what == "icebook timelapse lists":
        frame = t.timelapse(manifests=False).to_pandas()
        extra = {"frames": len(frame)}
    elif what == "icebook timelapse":
        lapse = t.timelapse()
        frames_s = time.perf_counter() - started
        frame = lapse.to_pandas()
        long = lapse.partitions_frame()
        extra = {
            "frames": len(frame), "frames_s": frames_s, "partition_rows": len(long),
            "afresh": int(frame["afresh"].sum()), "manifests_read": lapse.manifests_read,
            "files_per_frame": [int(v) for v in frame["data_files"] + frame["delete_files"]],
            "last": {k: int(frame[k].iloc[-1]) for k in ("data_files", "delete_files", "records")},
        }
    else:
        raise SystemExit(f"unknown measurement {what}")
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_mib": peak, "after_open_s": time.perf_counter() - opened, **extra}))
"""


def measure(what: str, location: Path, timeout: int) -> dict[str, Any]:
    env = {**os.environ, "ICEBOOK_MANIFEST_CACHE": "off", "PYTHONPATH": _pythonpath()}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, what, str(location)],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=str(Path(__file__).resolve().parent),
        )
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout} s"}
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else f"exit {done.returncode}"}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _pythonpath() -> str:
    here = Path(__file__).resolve()
    parts = [str(here.parent), str(here.parent.parent), os.environ.get("PYTHONPATH", "")]
    return os.pathsep.join(p for p in parts if p)


def _line(label: str, result: dict[str, Any], extra: str = "") -> None:
    if "error" in result:
        print(f"{label:<56}{'failed':>10}  {result['error']}", flush=True)
        return
    print(f"{label:<56}{result['seconds']:>10.2f}{result['peak_mib']:>10.0f}  {extra}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=500_000)
    parser.add_argument("--snapshots", type=int, default=200)
    parser.add_argument("--history", type=int, default=50_000, help="snapshots of history.py's table (0: skip)")
    parser.add_argument("--threads", type=int, default=2, help="JVM threads writing manifests while building")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds allowed to each measurement")
    parser.add_argument("--no-peer", action="store_true")
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--history-only", action="store_true", help="only the history table's measurements")
    args = parser.parse_args(argv)

    started = time.monotonic()
    location = ensure_lapse_table(args.files, args.snapshots, args.threads)
    print(f"table: {location} (built or reused in {time.monotonic() - started:.0f} s)", flush=True)
    if args.build_only:
        return 0
    if not args.history_only:
        _large(args, location)
    if args.history:
        _history(args)
    return 0


def _large(args: argparse.Namespace, location: Path) -> None:
    print(f"{'measurement (fresh process, manifest cache off)':<56}{'seconds':>10}{'MiB':>10}", flush=True)
    listing = measure("icebook files", location, args.timeout)
    _line("icebook inspect.files() of the current snapshot", listing, f"{listing.get('rows', 0):,} files")
    lapse = measure("icebook timelapse", location, args.timeout)
    _line(
        "icebook timelapse() + to_pandas() + partitions_frame()",
        lapse,
        f"{lapse.get('frames', 0)} frames, {lapse.get('partition_rows', 0):,} partition rows, "
        f"{lapse.get('manifests_read', 0)} manifests read, frames alone {lapse.get('frames_s', 0):.2f} s",
    )
    if "error" not in listing and "error" not in lapse:
        ratio = lapse["seconds"] / listing["seconds"]
        print(f"time-lapse / one listing: {ratio:.2f} (goal: at most 3)", flush=True)
    if not args.no_peer:
        peer = measure("pyiceberg files", location, args.timeout)
        _line("peer: pyiceberg inspect.files() of the current snapshot", peer, f"{peer.get('rows', 0):,} files")
        if "error" not in peer and "files_per_frame" in lapse:
            sizes = lapse["files_per_frame"]
            estimate = sum(peer["seconds"] * n / max(sizes[-1], 1) for n in sizes)
            print(
                f"peer time-lapse estimate (one pyiceberg listing per snapshot): {estimate:.0f} s; "
                f"ratio peer / icebook: {estimate / lapse['seconds']:.1f}",
                flush=True,
            )


def _history(args: argparse.Namespace) -> None:
    import history

    metadata_file = history.generate(args.history, 2)
    result = measure("icebook timelapse lists", metadata_file, args.timeout)
    _line(
        f"icebook timelapse(manifests=False) + to_pandas(), {args.history:,} snapshots",
        result,
        f"{result.get('frames', 0):,} frames; {result.get('after_open_s', 0):.2f} s after opening (goal: 5 s)",
    )
    result = measure("icebook timelapse", metadata_file, args.timeout)
    _line(f"icebook timelapse(), {args.history:,} snapshots (no manifests written)", result)


if __name__ == "__main__":
    sys.exit(main())
