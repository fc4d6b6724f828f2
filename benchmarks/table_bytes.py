"""Benchmark: what a table's bytes cost the lake browser, per table of a warehouse: ``t.storage()`` (the
location listed, every manifest of every snapshot read) against the current snapshot's summary (the
metadata file alone), the two the browser could show beside each table. Also checks that the summary's
``total-files-size`` equals what ``t.storage()`` files under "data" and "deletes", and prints where not.

Every table under ``<warehouse>/<namespace>/`` (default: the test scenario warehouse, built by Spark),
each opened cold for each measure.

    python benchmarks/table_bytes.py [--warehouse PATH]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import icebook
from icebook.scenarios.warehouse import NAMESPACE, warehouse_path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--warehouse", type=Path, default=None)
    args = parser.parse_args()
    root = (args.warehouse or warehouse_path("test")) / NAMESPACE
    if not root.is_dir():
        raise SystemExit(f"no namespace directory {root}: build the scenario warehouse first")
    storage_s = summary_s = 0.0
    tables = sorted(d for d in root.iterdir() if (d / "metadata").is_dir())
    for location in tables:
        started = time.perf_counter()
        storage = icebook.open(str(location)).storage()
        mid = time.perf_counter()
        current = icebook.open(str(location)).metadata.current_snapshot()
        summary = None if current is None else current.summary.get("total-files-size")
        done = time.perf_counter()
        storage_s, summary_s = storage_s + mid - started, summary_s + done - mid
        live = storage.categories[storage.categories["category"].isin(["data", "deletes"])]["bytes"].sum()
        differs = "" if summary is not None and int(summary) == int(live) else f"  (storage: {int(live)} live bytes)"
        print(
            f"{location.name:<22} storage {mid - started:6.3f} s  summary {done - mid:6.3f} s  "
            f"{int(storage.categories['files'].sum()):>5} files  summary bytes {summary}{differs}"
        )
    print(
        f"{len(tables)} tables: storage {storage_s:.2f} s, summary {summary_s:.2f} s "
        f"({storage_s / max(summary_s, 1e-9):.0f}x)"
    )


if __name__ == "__main__":
    main()
