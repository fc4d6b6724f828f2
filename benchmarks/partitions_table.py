"""Benchmark: the ``partitions`` metadata table of a large table, cold, time and peak memory.

Each measurement runs in a fresh process with the manifest cache off (``ICEBOOK_MANIFEST_CACHE=off``), so it
decodes every manifest and its peak resident memory (``ru_maxrss``) is its own:

a. icebook:   ``icebook.open(location).inspect.partitions()`` (streamed, manifest by manifest)
b. baseline:  the same call from another icebook checkout (``--baseline DIR``, e.g. an export of an earlier
              commit: ``git archive <commit> icebook | tar -x -C DIR``), to compare before and after
c. PyIceberg: ``StaticTable.from_metadata(...).inspect.partitions()``, stopped after ``--timeout`` seconds

Prints rows, seconds, peak MiB and the ratios to icebook's (above 1: icebook is faster or smaller), and checks
that every engine that finished found the same partitions with the same record and file counts.

    python benchmarks/partitions_table.py [--table DIR] [--baseline DIR] [--timeout 600]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import large_table  # after the path tweak, so the script runs from any directory

DEFAULT_TABLE = large_table.lapse_location()
REPO = Path(__file__).resolve().parent.parent


@dataclass(slots=True)
class Result:
    name: str
    rows: int | None = None
    records: int | None = None
    files: int | None = None
    seconds: float | None = None
    peak_mib: float | None = None
    note: str = ""


def child(kind: str, table: str) -> dict[str, Any]:
    """One measurement, in this (fresh) process."""
    import resource
    import time

    started = time.perf_counter()
    if kind == "icebook":
        import icebook

        frame = icebook.open(table).inspect.partitions()
        rows, records, files = len(frame), int(frame["record_count"].sum()), int(frame["file_count"].sum())
    else:
        from pyiceberg.table import StaticTable

        import icebook

        metadata_file = icebook.open(table).metadata_location  # found before the clock starts counting
        started = time.perf_counter()
        arrow = StaticTable.from_metadata(metadata_file).inspect.partitions()
        rows = arrow.num_rows
        records = int(arrow.column("record_count").to_numpy().sum())
        files = int(arrow.column("file_count").to_numpy().sum())
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    return {"rows": rows, "records": records, "files": files, "seconds": seconds, "peak_mib": peak}


def measure(name: str, kind: str, table: Path, checkout: Path, timeout: float) -> Result:
    env = {**os.environ, "ICEBOOK_MANIFEST_CACHE": "off", "PYTHONPATH": str(checkout)}
    command = [sys.executable, __file__, "--child", kind, "--table", str(table)]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Result(name, note=f"stopped after {timeout:.0f} s")
    if done.returncode != 0:
        return Result(name, note=f"failed: {done.stderr.strip().splitlines()[-1] if done.stderr else done.returncode}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return Result(name, **figures)


def fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def report(results: list[Result]) -> bool:
    base = results[0]
    print(f"{'engine':<36}{'rows':>9}{'seconds':>10}{'peak MiB':>10}{'time/icebook':>14}{'peak/icebook':>14}  note")
    for r in results:
        time_ratio = r.seconds / base.seconds if r.seconds and base.seconds and r is not base else None
        peak_ratio = r.peak_mib / base.peak_mib if r.peak_mib and base.peak_mib and r is not base else None
        print(
            f"{r.name:<36}{fmt(r.rows, ','):>9}{fmt(r.seconds, '.2f'):>10}{fmt(r.peak_mib, ',.0f'):>10}"
            f"{fmt(time_ratio, '.2f'):>14}{fmt(peak_ratio, '.2f'):>14}  {r.note}"
        )
    answers = {(r.rows, r.records, r.files) for r in results if r.rows is not None}
    same = len(answers) <= 1
    print("\npartitions, records and files: " + ("all equal" if same else f"MISMATCH {sorted(answers)}"))
    return same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=Path, default=DEFAULT_TABLE, help="table directory (not written to)")
    parser.add_argument("--baseline", type=Path, help="another icebook checkout to measure the same call from")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds allowed to each measurement")
    parser.add_argument("--child", choices=("icebook", "pyiceberg"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, str(args.table))))
        return 0
    print(f"table: {args.table} (cold: ICEBOOK_MANIFEST_CACHE=off, each in a fresh process)\n")
    results = [measure("icebook inspect.partitions()", "icebook", args.table, REPO, args.timeout)]
    if args.baseline is not None:
        results.append(measure(f"baseline ({args.baseline})", "icebook", args.table, args.baseline, args.timeout))
    results.append(measure("pyiceberg inspect.partitions()", "pyiceberg", args.table, REPO, args.timeout))
    return 0 if report(results) else 1


if __name__ == "__main__":
    sys.exit(main())
