"""Benchmark: the warm start, a new Python process that opens a table and lists every file through the disk
cache of decoded listings, beside PyIceberg's ``inspect.files()`` in a new process (which has no such cache).

Each run is a fresh process whose clock starts when it is launched (the interpreter's start and every import
inside it) and stops when the answer is built, as a notebook kernel pays before its first answer:

a. floors: ``python -c pass``, ``import pyarrow`` and ``import pandas`` (what any pandas answer costs here)
b. icebook ``import icebook; icebook.open(location)`` (opening only)
c. icebook ``icebook.open(location).inspect.files()``, the pandas DataFrame built, through the cache that an
   earlier (untimed) process filled: first the load that checks every byte of the cached listing and stamps
   it, then the loads after it (the stamp spares the hash; ``icebook.io.manifest_cache``)
d. icebook ``inspect.batches.files()`` through the cache, every batch read (the Arrow form: no pandas)
e. PyIceberg ``StaticTable.from_metadata(...).inspect.files().to_pandas()`` (the same DataFrame; its cold
   read is its warm one)

Children load modules from bytecode, as an installed package does (``PYTHONPYCACHEPREFIX`` under the bench
directory; a development checkout run with ``PYTHONDONTWRITEBYTECODE=1`` would otherwise compile icebook's
sources in every process). Prints each measurement's runs, median and minimum seconds, the median CPU seconds
of the process (user + system, up to its answer: on a shared machine, close to what the wall time is on a quiet
one), peak resident memory (MiB, at the answer) and PyIceberg's median / icebook's median, with the load average
before and after. Exit status 1 when the listings disagree (rows, records) or a warm listing started a
decode worker.

    python benchmarks/warm_start.py [--files 500000] [--runs 7] [--peer-runs 1] [--location DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import large_table  # after the path tweak, so the script runs from any directory

# What each child does after its clock started (at launch): the imports are inside it.
_CHILD = """
import json, resource, sys
what, location, metadata_file = sys.argv[1:4]
rows = records = 0
started_decoders = 0
if what == "pass":
    pass
elif what == "import pyarrow":
    import pyarrow
elif what == "import pandas":
    import pandas
elif what == "icebook open":
    import icebook
    rows = len(icebook.open(location).metadata.snapshots)
elif what == "icebook files":
    import icebook
    frame = icebook.open(location).inspect.files()
    rows, records = len(frame), int(frame["record_count"].sum())
elif what == "icebook batches":
    import icebook
    import pyarrow.compute as pc
    for batch in icebook.open(location).inspect.batches.files():
        rows += batch.num_rows
        records += pc.sum(batch["record_count"]).as_py() or 0
elif what == "pyiceberg files":
    from pyiceberg.table import StaticTable
    frame = StaticTable.from_metadata(metadata_file).inspect.files().to_pandas()
    rows, records = len(frame), int(frame["record_count"].sum())
else:
    raise SystemExit(f"unknown measurement {what!r}")
if what.startswith("icebook"):
    from icebook.io.worker_pool import POOL
    started_decoders = POOL.started
usage = resource.getrusage(resource.RUSAGE_SELF)
try:  # this process's own peak (ru_maxrss also counts the launching process's pages before exec)
    status = open("/proc/self/status").read()
    peak_mib = int(status.split("VmHWM:")[1].split()[0]) / 1024
except (OSError, IndexError, ValueError):
    peak_mib = usage.ru_maxrss / 1024
report = {"rows": rows, "records": records, "peak_mib": peak_mib, "decoders": started_decoders}
print(json.dumps({**report, "cpu": usage.ru_utime + usage.ru_stime}), flush=True)
"""


def child_environment(cache: bool) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    # The checkout this script is in, unless PYTHONPATH names the icebook to measure (an older one, say).
    env["PYTHONPATH"] = os.environ.get("PYTHONPATH") or str(Path(__file__).resolve().parent.parent)
    env["PYTHONPYCACHEPREFIX"] = str(large_table.bench_dir() / "pycache")
    env["ICEBOOK_MANIFEST_CACHE"] = "on" if cache else "off"
    return env


def run_once(what: str, location: Path, metadata_file: Path) -> dict[str, Any]:
    """One fresh process, timed from its launch to the line that reports its answer (its exit, which
    frees the answer, is not the user's wait)."""
    # -P: the working directory is not put on the path, so icebook is the one PYTHONPATH names (or installed)
    args = [sys.executable, "-P", "-c", _CHILD, what, str(location), str(metadata_file)]
    started = time.perf_counter()
    with subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=child_environment(cache=True)
    ) as proc:
        assert proc.stdout is not None and proc.stderr is not None
        line = proc.stdout.readline()
        seconds = time.perf_counter() - started
        error = proc.stderr.read()
        proc.wait()
    if proc.returncode != 0 or not line.strip():
        raise SystemExit(f"{what} failed:\n{error[-3000:]}")
    return {**json.loads(line), "seconds": seconds}


def measure(what: str, runs: int, location: Path, metadata_file: Path) -> dict[str, Any]:
    results = [run_once(what, location, metadata_file) for _ in range(runs)]
    times = [r["seconds"] for r in results]
    return {
        "runs": runs,
        "median": statistics.median(times),
        "min": min(times),
        "cpu": statistics.median(r["cpu"] for r in results),
        "peak_mib": max(r["peak_mib"] for r in results),
        "rows": results[-1]["rows"],
        "records": results[-1]["records"],
        "decoders": max(r["decoders"] for r in results),
    }


def line(label: str, result: dict[str, Any], peer: dict[str, Any] | None = None) -> str:
    ratio = f"{peer['median'] / result['median']:>8.1f}x" if peer else f"{'':>9}"
    return (
        f"{label:<58} {result['runs']:>4} {result['median']:>8.3f} {result['min']:>8.3f} {result['cpu']:>8.3f} "
        f"{result['peak_mib']:>9,.0f} {result['rows']:>9,} {ratio}"
    )


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--files", type=int, default=500_000, help="the synthetic table's size (built if absent)")
    parser.add_argument("--location", type=Path, help="an existing table instead")
    parser.add_argument("--runs", type=int, default=7, help="fresh processes per icebook measurement")
    parser.add_argument("--peer-runs", type=int, default=1, help="fresh processes for PyIceberg's listing (0: none)")
    args = parser.parse_args(argv)
    location = args.location or large_table.ensure_large_table(args.files)
    metadata_file = large_table.current_metadata_file(location)
    print(f"table: {location}")
    print(f"load average before: {load_average()} (1, 5, 15 min; {os.cpu_count()} CPUs)")

    # Untimed: write the bytecode, fill the cache, then wait out the margin after which a check is stamped
    # (an older checkout on PYTHONPATH, measured for comparison, may have no stamps).
    from icebook.io import manifest_cache

    run_once("icebook files", location, metadata_file)
    time.sleep(getattr(manifest_cache, "STAMP_MARGIN_NS", 0) / 1e9)

    print(
        f"{'measurement (new process, launch to answer)':<58} {'runs':>4} {'median s':>8} {'min s':>8} {'cpu s':>8} ",
        end="",
    )
    print(f"{'peak MiB':>9} {'rows':>9} {'vs peer':>9}")
    status = 0
    for what in ("pass", "import pyarrow", "import pandas"):
        print(line(f"floor: python -c '{what}'", measure(what, args.runs, location, metadata_file)), flush=True)
    print(line("icebook open", measure("icebook open", args.runs, location, metadata_file)), flush=True)
    first = measure("icebook files", 1, location, metadata_file)  # checks every byte and stamps the entry
    peer = measure("pyiceberg files", args.peer_runs, location, metadata_file) if args.peer_runs else None
    warm = measure("icebook files", args.runs, location, metadata_file)
    batches = measure("icebook batches", args.runs, location, metadata_file)
    print(line("icebook open + inspect.files() (first load, every byte)", first, peer))
    print(line("icebook open + inspect.files() (warm)", warm, peer))
    print(line("icebook open + inspect.batches.files(), read (warm)", batches, peer))
    if peer is not None:
        print(line("pyiceberg from_metadata + inspect.files().to_pandas()", peer))
    print(f"load average after: {load_average()}")
    listings = {"first": first, "warm": warm, "batches": batches, "pyiceberg": peer}
    answers = {name: (r["rows"], r["records"]) for name, r in listings.items() if r is not None}
    if len(set(answers.values())) != 1:
        print(f"the listings differ (rows, records): {answers}", file=sys.stderr)
        status = 1
    if warm["decoders"]:
        print(f"a warm listing started {warm['decoders']} decode worker(s)", file=sys.stderr)
        status = 1
    return status


if __name__ == "__main__":
    raise SystemExit(main())
