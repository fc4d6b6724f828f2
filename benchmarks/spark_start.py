"""Benchmark: starting icebook's Spark session, each start in a fresh process (one JVM per process).

a. cold: an empty Ivy home (``spark.jars.ivy``), so Spark's Ivy downloads every package icebook asks for
   (the Iceberg runtime of the installed pyspark, the cloud bundles, the JDBC drivers);
b. warm: the same Ivy home again, everything cached: Ivy only resolves;
c. jar paths: ``jar=`` with the jars (b) resolved, no resolution at all, the way a jar shipped in a PyPI
   package starts Spark;
d. jar path, the runtime alone: the smallest start that reads Iceberg tables on local disk.

Prints, per start, the seconds ``icebook.spark.session()`` took, the whole process's seconds (Python,
the JVM, the first query) and the bytes Ivy downloaded (the jars and POMs added to its cache). Works in a
temporary Ivy home: the user's cache is neither read nor changed. Needs the network for (a).

    python benchmarks/spark_start.py
    PYTHONPATH=.venv/spark35 python benchmarks/spark_start.py    # the same on pyspark 3.5
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = """
import json, sys, time
started = time.perf_counter()
from icebook.engines.spark_session import get_session
args = json.loads(sys.argv[1])
spark = get_session(progress=False, **args)
ready = time.perf_counter() - started
assert spark.sql("SELECT 1 AS one").collect()[0].one == 1
print(json.dumps({"start": ready, "spark": spark.version}))
"""


def downloaded(ivy: Path) -> int:
    """Bytes of the artifacts (jars, POMs) in Ivy's download cache: what a resolution fetched."""
    cache = ivy / "cache"
    return sum(p.stat().st_size for p in cache.rglob("*") if p.is_file() and p.name.endswith((".jar", ".original")))


def run(label: str, start: dict[str, object], ivy: Path) -> None:
    before = downloaded(ivy)
    began = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(start)], capture_output=True, text=True, env=os.environ.copy()
    )
    wall = time.perf_counter() - began
    if done.returncode != 0:
        raise SystemExit(f"{label}: the start failed\n{done.stderr[-3000:]}")
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    fetched = downloaded(ivy) - before
    print(f"{label:<34} {answer['start']:7.1f} s start {wall:7.1f} s process {fetched / 1_048_576:8.1f} MiB fetched")


def main() -> int:
    from icebook.engines import spark_jars

    version = spark_jars.installed_spark_version()
    packages = spark_jars.Stack.from_env().packages(version)
    print(f"pyspark {version}, {os.cpu_count()} cores; packages: {', '.join(map(str, packages))}")
    with tempfile.TemporaryDirectory(prefix="icebook-ivy-") as home:
        ivy = Path(home)
        conf = {"spark.jars.ivy": str(ivy)}
        run("a. cold (empty Ivy home)", {"conf": conf}, ivy)
        run("b. warm (cached Ivy)", {"conf": conf}, ivy)
        jars = [str(ivy / "jars" / c.jar_name) for c in packages]
        # a fresh Ivy home beside: a start from jar paths must leave it untouched
        with tempfile.TemporaryDirectory(prefix="icebook-ivy-unused-") as unused:
            run("c. jar= (all the jars above)", {"jar": jars, "conf": {"spark.jars.ivy": unused}}, Path(unused))
            run("d. jar= (the runtime alone)", {"jar": jars[:1], "conf": {"spark.jars.ivy": unused}}, Path(unused))
            if any(Path(unused).iterdir()):
                raise SystemExit("a start from jar paths wrote into Ivy's home")
    return 0


if __name__ == "__main__":
    sys.exit(main())
