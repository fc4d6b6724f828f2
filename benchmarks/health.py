"""Benchmark: a cold ``t.maintenance.health()`` against its peer, one cold ``t.inspect.files()`` of the same table.

Each is measured in a fresh Python process with the manifest disk cache off (``ICEBOOK_MANIFEST_CACHE=off``),
so each reads every manifest it needs from the files; the peak resident memory of that process is read
from ``resource.getrusage``. The health report reads the snapshot's manifests once (files, deletes,
manifests, compaction), the table's history and lists the location for orphans.

Prints seconds and peak MiB of each, and the ratios health / listing (time and memory).

The benchmark tables hold metadata only, so the location lists no data file. ``--with-data-files`` first
writes every live file of the current snapshot that is missing as an empty file dated 30 days back (older
than the orphan search's cut-off), so that the search lists as many files as a real table's location holds,
and checks each against the table's references.

    python benchmarks/health.py [--location <table dir>] [--runs 1] [--no-listing-files] [--with-data-files]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import large_table  # after the path tweak, so the script runs from any directory

DEFAULT_TABLE = large_table.lapse_location()

# Run in a child process: open the table, time one call, report seconds, peak RSS and a size figure.
_CHILD = """
import json, resource, sys, time
import icebook
location, what, list_files = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
started = time.perf_counter()
t = icebook.open(location)
if what == "health":
    report = t.maintenance.health(list_files=list_files)
    size = report.files.data_files
    note = report.summary()
else:
    frame = t.inspect.files()
    size = len(frame)
    note = f"{size} rows"
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_mib": peak, "files": size, "note": note}))
"""


@dataclass(frozen=True, slots=True)
class Run:
    seconds: float
    peak_mib: float
    note: str


def measure(location: Path, what: str, list_files: bool) -> Run:
    env = {**os.environ, "ICEBOOK_MANIFEST_CACHE": "off"}
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(location), what, "1" if list_files else "0"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    r = json.loads(out.stdout.strip().splitlines()[-1])
    return Run(seconds=float(r["seconds"]), peak_mib=float(r["peak_mib"]), note=str(r["note"]))


# Run in a child process, so that this process stays small: a child's peak memory starts from its parent's.
_WRITER = """
import os, sys, time
from pathlib import Path
import icebook
location = Path(sys.argv[1])
dated = time.time() - 30 * 86_400
written = 0
for path in icebook.open(str(location)).inspect.files()["file_path"].tolist():
    file = Path(path)
    if not file.is_relative_to(location) or file.exists():
        continue
    file.parent.mkdir(parents=True, exist_ok=True)
    file.touch()
    os.utime(file, (dated, dated))
    written += 1
print(written)
"""


def write_data_files(location: Path) -> int:
    """Every live file of the table's current snapshot under ``location`` that is missing, as an empty file
    dated 30 days back; how many were written."""
    out = subprocess.run([sys.executable, "-c", _WRITER, str(location)], check=True, capture_output=True, text=True)
    return int(out.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--location", type=Path, default=DEFAULT_TABLE)
    parser.add_argument("--runs", type=int, default=1, help="runs of each (the fastest is kept)")
    parser.add_argument("--no-listing-files", action="store_true", help="health(list_files=False): no orphan check")
    parser.add_argument(
        "--with-data-files", action="store_true", help="first write the table's live files, empty, where missing"
    )
    args = parser.parse_args()
    if not args.location.is_dir():
        print(f"no table at {args.location} (build it with benchmarks/timelapse.py)", file=sys.stderr)
        return 2
    if args.with_data_files:
        print(f"wrote {write_data_files(args.location.resolve()):,} empty data files")
    best: dict[str, Run] = {}
    for _ in range(args.runs):
        for what in ("listing", "health"):  # alternated, so both see the same machine load
            r = measure(args.location, what, not args.no_listing_files)
            if what not in best or r.seconds < best[what].seconds:
                best[what] = r
    for what, r in best.items():
        print(f"{what:8} {r.seconds:7.2f} s  peak {r.peak_mib:7.0f} MiB  {r.note}")
    h, listing = best["health"], best["listing"]
    print(
        f"health / listing: time {h.seconds / listing.seconds:.2f}x, peak memory {h.peak_mib / listing.peak_mib:.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
