"""Benchmark: diff two adjacent snapshots of a 500k-file table vs comparing two full file listings.

Measured in one run, on the same table (built or reused by ``large_table.py``), for every
parent -> child pair of its history:

a. icebook diff:  ``diff(table, a, b)``: the two manifest lists plus only the manifests
                  the snapshots do not share.
b. full listings: ``t.inspect.files(at=a)`` and ``t.inspect.files(at=b)``, then the set difference
                  of (file_path, content_offset). One table object serves both listings, so the
                  second listing reuses manifests cached by the first (the peer's best case).

Each side starts from a freshly opened table (nothing cached; opening is not timed). Prints seconds,
manifests decoded by each, and the ratio listing_time / diff_time (target: >= 50x), and checks that
both give the same added and removed files. Exit status 1 on a mismatch.

    python benchmarks/diff.py [--files 500000] [--runs 1]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

TARGET_RATIO = 50.0
os.environ.setdefault("TQDM_DISABLE", "1")  # inspect.files() shows a progress bar; keep the table readable


def timed(runs: int, work: Callable[[], Any]) -> tuple[Any, float]:
    """Best of ``runs`` wall-clock times; ``work`` sets up its own fresh state each time."""
    best = float("inf")
    result: Any = None
    for _ in range(runs):
        result = None
        gc.collect()
        result, seconds = work()
        best = min(best, seconds)
    return result, best


def keys(frame: Any) -> set[tuple[str, int | None]]:
    offsets = frame["content_offset"].astype("object").where(frame["content_offset"].notna(), None)
    return set(zip(frame["file_path"], offsets, strict=True))


def run_diff(location: Path, a: int, b: int) -> tuple[Any, float]:
    import icebook
    from icebook.analysis.history.diff import diff

    t = icebook.open(location)
    started = time.perf_counter()
    d = diff(t, a, b, progress=False)
    seconds = time.perf_counter() - started
    return (d, t.store.reads), seconds


def run_listings(location: Path, a: int, b: int) -> tuple[Any, float]:
    import icebook

    t = icebook.open(location)
    started = time.perf_counter()
    at_a = keys(t.inspect.files(at=a))
    at_b = keys(t.inspect.files(at=b))
    added, removed = at_b - at_a, at_a - at_b
    seconds = time.perf_counter() - started
    return (added, removed, t.store.reads), seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=500_000, help="data files in the first snapshot")
    parser.add_argument("--runs", type=int, default=1, help="best of N runs per measurement")
    args = parser.parse_args(argv)

    try:
        import large_table
    except ImportError as exc:
        print(f"benchmarks/diff.py: cannot import benchmarks/large_table.py ({exc}); the large table is needed")
        return 2
    try:
        location = large_table.ensure_large_table(args.files)
    except (Exception, SystemExit) as exc:  # the generator needs Spark and a JDK
        print(f"benchmarks/diff.py: the large benchmark table is not available: {exc!r}")
        print("build it with: python benchmarks/large_table.py (needs Java 17 with javac and the Iceberg jar)")
        return 2

    import icebook

    t = icebook.open(location)
    snaps = t.snapshots
    known = {s.snapshot_id for s in snaps}
    pairs = [(s.parent_snapshot_id, s) for s in snaps if s.parent_snapshot_id in known]
    print(f"table: {location}  ({len(snaps)} snapshots)")
    if pairs:
        # Warm up imports and decoders once (untimed), so the first measurement is not a cold start.
        first_parent, first = pairs[0]
        assert first_parent is not None
        run_diff(location, first_parent, first.snapshot_id)
    header = (
        f"{'a -> b (operation of b)':<48} {'diff s':>8} {'read':>5} {'listings s':>11} {'read':>5} "
        f"{'ratio':>8} {'+files':>7} {'-files':>7}"
    )
    print(header)
    print("-" * len(header))
    ratios: list[float] = []
    ok = True
    for parent, snap in pairs:
        assert parent is not None
        (d, diff_reads), diff_s = timed(args.runs, lambda p=parent, s=snap: run_diff(location, p, s.snapshot_id))
        (added, removed, list_reads), list_s = timed(
            args.runs, lambda p=parent, s=snap: run_listings(location, p, s.snapshot_id)
        )
        same = keys(d.added_files) == added and keys(d.removed_files) == removed
        ok &= same
        ratio = list_s / diff_s if diff_s else float("inf")
        ratios.append(ratio)
        label = f"{parent} -> {snap.snapshot_id} ({snap.operation})"
        print(
            f"{label:<48} {diff_s:>8.3f} {diff_reads:>5} {list_s:>11.3f} {list_reads:>5} {ratio:>7.1f}x "
            f"{len(d.added_files):>7} {len(d.removed_files):>7}" + ("" if same else "  MISMATCH")
        )
    if not pairs:
        print("the table has no parent -> child pair to diff")
        return 1
    print("-" * len(header))
    print(f"ratio listings/diff: min {min(ratios):.1f}x, max {max(ratios):.1f}x (target >= {TARGET_RATIO:.0f}x)")
    print("results identical" if ok else "MISMATCH between diff and listings")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
