"""Benchmark: the metadata aggregates of a large table on both engines, in one run.

a. local: ``t.inspect.partitions()`` and ``t.maintenance.file_measures()`` (the health report's files section)
b. Spark: the same with ``engine="spark"`` on the local Spark session (GROUP BYs over Spark's metadata
   tables; one row per partition reaches Python)

Prints seconds per call and the Python process's peak resident memory after each engine (Spark's JVM is
another process and not counted), and checks both engines gave the same answers (exit status 1 if not).
The Spark side runs first, so its peak is not the local side's. Opens the table read-only.

    ICEBOOK_MANIFEST_CACHE=off python benchmarks/spark_aggregates.py [TABLE_DIR]
"""

from __future__ import annotations

import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import large_table  # after the path tweak, so the script runs from any directory

DEFAULT_TABLE = large_table.lapse_location()


def timed(label: str, work: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    result = work()
    print(f"{label:<38} {time.perf_counter() - started:8.1f} s")
    return result


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(location: str) -> int:
    import icebook

    timed("start Spark", lambda: icebook.spark.session(progress=False))
    spark_side = icebook.open(location)
    spark_partitions = timed("spark  inspect.partitions()", lambda: spark_side.inspect.partitions(engine="spark"))
    spark_measures = timed(
        "spark  maintenance.file_measures()", lambda: spark_side.maintenance.file_measures(engine="spark")
    )
    print(f"peak Python RSS after Spark: {peak_mib():.0f} MiB")
    local_side = icebook.open(location)
    local_partitions = timed("local  inspect.partitions()", local_side.inspect.partitions)
    local_measures = timed("local  maintenance.file_measures()", local_side.maintenance.file_measures)
    print(f"peak Python RSS after local: {peak_mib():.0f} MiB")
    same = spark_partitions.equals(local_partitions) and spark_measures == local_measures
    print(f"{len(local_partitions)} partitions, {local_measures.data_files} data files; same answers: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else str(DEFAULT_TABLE)))
