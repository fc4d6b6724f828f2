"""A large synthetic Iceberg table for metadata benchmarks (500k data files, 200+ manifests, full stats).

Only metadata is committed: manifests, manifest lists and table metadata, written by the Iceberg Java
API inside the Spark JVM. The data files they list do not exist, which is fine for anything that reads
metadata (inspect tables, diffs, trees, scan planning) and wrong for anything that reads rows.

Building 500k Java objects one py4j call at a time would take hours, so a small Java class
(``BenchTableWriter.java``, next to this file) does the per-file work. It is compiled on first use with
the JDK's ``javac`` against the Iceberg runtime jar and loaded into the running JVM through a
``URLClassLoader`` whose parent is the loader of the Iceberg classes: the JVM's classpath itself is fixed.

History (so that adjacent-snapshot diffs have something to show):

1. append: ``files`` data files in ``files / files_per_manifest`` manifests
2. append: 4 more manifests
3. delete: one whole day (a partition filter) plus single files spread over many manifests
4. delete (a row delta adding only deletes): position delete files for ~200 data files
5. replace: one partition compacted into one file

Run ``python benchmarks/large_table.py [--files N]``; the table is built once and reused while the
marker file next to it matches the parameters.

Growth (``--measure [SIZES]``, default 500k, 2M, 5M, 10M and 20M files): tables ``grow_<files>`` whose files
come in appends of 50,000 (20 manifests each; 400 commits for 20M), then the same delete, position deletes
and compaction. On each, ``health()``, ``inspect.partitions()``, a full plan and a one-day plan (each read in
full: every task's data file, size, records and delete files) and the full plan as columns (``to_arrow()``) run cold
(the disk cache of decoded manifests off), each in its own process, beside PyIceberg's ``inspect.partitions()``
and ``plan_files()`` up to ``--peer-max`` files; printed: seconds, peak memory, the ratio to the peer and
seconds per million files (growth is linear when that column stays flat). ``--build-growth SIZES`` only
builds them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from icebook.config import icebook_home

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CATALOG = "bench"
NAMESPACE = "db"
# Bump when BenchTableWriter.java or the history below changes what gets written: cached tables rebuild.
GENERATOR_VERSION = 1
# The growth tables (``--measure``): appends of 50,000 files each, so 20M files are 400 commits.
GROWTH_COMMIT_FILES = 50_000
GROWTH_SIZES = (500_000, 2_000_000, 5_000_000, 10_000_000, 20_000_000)
FIRST_DAY = "2024-01-01"  # BenchTableWriter.FIRST_DAY
JAVA_SOURCE = Path(__file__).with_name("BenchTableWriter.java")
_writer_class: Any = None


@dataclass(frozen=True, slots=True)
class Layout:
    """Parameters that decide the table's content; the cache marker stores them."""

    files: int
    files_per_manifest: int = 2_500
    files_per_partition: int = 80
    buckets: int = 16
    extra_manifests: int = 4
    version: int = GENERATOR_VERSION

    @property
    def files_per_day(self) -> int:
        return self.files_per_partition * self.buckets

    @property
    def days(self) -> int:
        return max(1, self.files // self.files_per_day)

    def day_of(self, index: int) -> int:
        return index // self.files_per_day


def bench_dir() -> Path:
    return icebook_home() / "bench"


def warehouse_dir() -> Path:
    return bench_dir() / "warehouse"


def table_name(files: int, files_per_manifest: int = 2_500, commit_files: int = 0) -> str:
    # The default size keeps the short name the other benchmarks talk about (bench.db.big); a table
    # grown in commits of ``commit_files`` is ``grow_<files>``.
    if commit_files:
        name = f"grow_{files}" if commit_files == GROWTH_COMMIT_FILES else f"grow_{files}_c{commit_files}"
    else:
        name = "big" if files == 500_000 else f"big_{files}"
    return name if files_per_manifest == 2_500 else f"{name}_m{files_per_manifest}"


def table_dir(files: int, files_per_manifest: int = 2_500, commit_files: int = 0) -> Path:
    return warehouse_dir() / NAMESPACE / table_name(files, files_per_manifest, commit_files)


def lapse_location(files: int = 500_000, snapshots: int = 200) -> Path:
    """The time-lapse table of ``files`` data files over ``snapshots`` commits (built by ``timelapse.py``;
    the health, partitions and Spark aggregate benchmarks measure the default one)."""
    return warehouse_dir() / NAMESPACE / f"lapse_{files}_s{snapshots}"


def marker_path(files: int, files_per_manifest: int = 2_500, commit_files: int = 0) -> Path:
    return bench_dir() / f"{table_name(files, files_per_manifest, commit_files)}.complete.json"


def current_metadata_file(location: Path) -> Path:
    """The current ``vN.metadata.json`` of a Hadoop-catalog table, from its ``version-hint.text``."""
    metadata = location / "metadata"
    version = (metadata / "version-hint.text").read_text().strip()
    return metadata / f"v{version}.metadata.json"


def synthetic() -> bool:
    """``ICEBOOK_BENCH_TABLES=synthetic``: the benchmarks' large tables are ``synthetic_table.py``'s, written
    without Spark (same columns, partitioning and layout; two snapshots: an append, then position deletes)."""
    return os.environ.get("ICEBOOK_BENCH_TABLES", "") == "synthetic"


def read_marker(files: int, files_per_manifest: int = 2_500, commit_files: int = 0) -> dict[str, Any] | None:
    if synthetic():
        if commit_files:
            import synthetic_growth

            return synthetic_growth.marker(files, commit_files, files_per_manifest)
        import synthetic_table

        return synthetic_table.marker(files, files_per_manifest)
    path = marker_path(files, files_per_manifest, commit_files)
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def get_spark() -> SparkSession:
    from icebook.engines.spark_session import get_session

    # Collecting the files metadata table of 500k files into the driver needs more than the default 3g
    # (ICEBOOK_SPARK_DRIVER_MEMORY, when set, says how much).
    memory = os.environ.get("ICEBOOK_SPARK_DRIVER_MEMORY") or "8g"
    return get_session(warehouse=warehouse_dir(), catalog=CATALOG, conf={"spark.driver.memory": memory})


def compile_writer() -> Path:
    """Compile BenchTableWriter.java once per source version; returns the classes directory."""
    from icebook.engines.spark_jars import runtime_jar

    source = JAVA_SOURCE.read_bytes()
    classes = bench_dir() / f"classes-{hashlib.sha256(source).hexdigest()[:12]}"
    if (classes / "BenchTableWriter.class").is_file():
        return classes
    java_home = os.environ.get("JAVA_HOME")
    javac = Path(java_home) / "bin" / "javac" if java_home else shutil.which("javac")
    if not javac or not Path(javac).exists():
        raise SystemExit("javac not found: the generator needs a JDK 17 (apt-get install openjdk-17-jdk-headless)")
    tmp = classes.with_name(classes.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    subprocess.run(
        [str(javac), "-nowarn", "--release", "17", "-cp", str(runtime_jar()), "-d", str(tmp), str(JAVA_SOURCE)],
        check=True,
    )
    tmp.rename(classes)
    return classes


def load_writer(spark: SparkSession, java_table: Any, layout: Layout) -> Any:
    """Instantiate BenchTableWriter in the Spark JVM, in a class loader that sees the Iceberg classes."""
    global _writer_class
    gateway = spark.sparkContext._gateway
    jvm = spark._jvm
    # One class per process: py4j caches methods by class name, so a second copy of the class from a
    # second loader would be called with the first copy's methods ("not an instance of declaring class").
    if _writer_class is None:
        urls = gateway.new_array(jvm.java.net.URL, 1)
        urls[0] = jvm.java.io.File(str(compile_writer())).toURI().toURL()
        loader = jvm.java.net.URLClassLoader(urls, java_table.getClass().getClassLoader())
        _writer_class = loader.loadClass("BenchTableWriter")
    writer_class = _writer_class
    args = gateway.new_array(jvm.java.lang.Object, 2)
    args[0] = layout.files_per_partition
    args[1] = layout.buckets
    return writer_class.getConstructors()[0].newInstance(args)


def int_array(spark: SparkSession, values: list[int]) -> Any:
    array = spark.sparkContext._gateway.new_array(spark._jvm.int, len(values))
    for i, value in enumerate(values):
        array[i] = value
    return array


def _create_table(spark: SparkSession, name: str, buckets: int) -> None:
    # Manifest merging is off: it would bin-pack the 200 manifests into a few 8 MB ones on the first
    # delete commit, and the benchmarks are about many manifests.
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.{NAMESPACE}")
    spark.sql(
        f"""
        CREATE TABLE {CATALOG}.{NAMESPACE}.{name} (
            id BIGINT, qty INT, name STRING, price DOUBLE, d DATE, ts TIMESTAMP, amount DECIMAL(12, 2),
            flag BOOLEAN
        ) USING iceberg
        PARTITIONED BY (days(ts), bucket({buckets}, id))
        TBLPROPERTIES (
            'format-version' = '2',
            'write.metadata.metrics.default' = 'full',
            'commit.manifest-merge.enabled' = 'false'
        )
        """
    )


def _plan(layout: Layout) -> dict[str, Any]:
    """Which files the later snapshots touch; disjoint, so each commit's validation passes."""
    if layout.days < 3:
        raise ValueError(f"need at least 3 days of files (files >= {3 * layout.files_per_day})")
    delete_day = layout.days // 3
    compact_day, compact_bucket = (2 * layout.days) // 3, 3
    step = max(1, layout.files // 10)
    scattered = [k * step + 777 for k in range(1, 10) if k * step + 777 < layout.files]
    scattered = [i for i in scattered if layout.day_of(i) not in (delete_day, compact_day)]
    step = max(1, layout.files // 200)
    position = [j * step + 333 for j in range(200) if j * step + 333 < layout.files]
    position = [i for i in position if layout.day_of(i) not in (delete_day, compact_day) and i not in set(scattered)]
    return {
        "delete_day": delete_day,
        "scattered": scattered,
        "position_deletes": position,
        "compact_day": compact_day,
        "compact_bucket": compact_bucket,
    }


def _log(message: str) -> None:
    print(f"large_table: {message}", file=sys.stderr, flush=True)


def build(layout: Layout, threads: int = 2, *, commit_files: int = 0) -> dict[str, Any]:
    """Create the table and commit its snapshots (the files in one append, or in appends of
    ``commit_files`` each, then the delete, position deletes and compaction); returns timings and counts."""
    spark = get_spark()
    name = table_name(layout.files, layout.files_per_manifest, commit_files)
    location = table_dir(layout.files, layout.files_per_manifest, commit_files)
    # A table without a marker is a leftover from an interrupted build: start over. The directory goes
    # first (its metadata may be half-written); DROP then only clears the catalog's cached table.
    shutil.rmtree(location, ignore_errors=True)
    spark.sql(f"DROP TABLE IF EXISTS {CATALOG}.{NAMESPACE}.{name}")
    marker_path(layout.files, layout.files_per_manifest, commit_files).unlink(missing_ok=True)

    timings: dict[str, float] = {}
    started = time.monotonic()
    _create_table(spark, name, layout.buckets)
    table = spark._jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
        spark._jsparkSession, f"{CATALOG}.{NAMESPACE}.{name}"
    )
    writer = load_writer(spark, table, layout)
    timings["create_and_compile_s"] = time.monotonic() - started
    plan = _plan(layout)

    def step(label: str, commit: Any) -> None:
        t0 = time.monotonic()
        commit()
        timings[f"{label}_s"] = round(time.monotonic() - t0, 2)
        _log(f"{label}: {timings[f'{label}_s']:.1f} s")

    per_commit = commit_files or layout.files

    def append_all() -> None:
        for first in range(0, layout.files, per_commit):
            count = min(per_commit, layout.files - first)
            writer.appendFiles(table, first, count, layout.files_per_manifest, threads)
            if commit_files:
                _log(f"{name}: appended {first + count:,} of {layout.files:,} files")

    step("append_bulk", append_all)
    extra = layout.extra_manifests * layout.files_per_manifest
    step("append_more", lambda: writer.appendFiles(table, layout.files, extra, layout.files_per_manifest, threads))
    step(
        "delete",
        lambda: writer.deleteDayAndFiles(table, plan["delete_day"], int_array(spark, plan["scattered"])),
    )
    step("position_deletes", lambda: writer.addPositionDeletes(table, int_array(spark, plan["position_deletes"])))
    step(
        "compact",
        lambda: writer.compactPartition(table, plan["compact_day"], plan["compact_bucket"], layout.files + extra),
    )
    timings["generation_s"] = round(time.monotonic() - started, 2)

    t0 = time.monotonic()
    counts = count_with_spark(spark, name)
    timings["spark_count_s"] = round(time.monotonic() - t0, 2)
    return {"layout": asdict(layout), "plan": plan, "timings": timings, "counts": counts}


def count_with_spark(spark: SparkSession, name: str) -> dict[str, int]:
    """Counts through Spark's metadata tables (the manifests' own counts, so that tens of millions of
    files are not listed): proves Spark can read what was committed."""
    qualified = f"{CATALOG}.{NAMESPACE}.{name}"
    row = spark.sql(
        "SELECT count(*) AS manifests, "
        "sum(added_data_files_count + existing_data_files_count) AS data_files, "
        "sum(added_delete_files_count + existing_delete_files_count) AS delete_files "
        f"FROM {qualified}.manifests"
    ).collect()[0]
    snapshots = spark.sql(f"SELECT count(*) AS n FROM {qualified}.snapshots").collect()[0]["n"]
    return {
        "files": int(row["data_files"] or 0) + int(row["delete_files"] or 0),
        "data_files": int(row["data_files"] or 0),
        "delete_files": int(row["delete_files"] or 0),
        "manifests": int(row["manifests"]),
        "snapshots": int(snapshots),
    }


def ensure_large_table(
    files: int = 500_000, *, files_per_manifest: int = 2_500, threads: int = 2, commit_files: int = 0
) -> Path:
    """Return the directory of the synthetic table, building it first unless a matching marker exists.
    ``commit_files``: files per append commit (0: all in one). With ``synthetic()`` the table is written
    without Spark: ``synthetic_table.py``'s, or ``synthetic_growth.py``'s when grown in commits."""
    if synthetic():
        if commit_files:
            import synthetic_growth

            return synthetic_growth.build(files, commit_files, files_per_manifest=files_per_manifest)
        import synthetic_table

        return synthetic_table.build(files, files_per_manifest=files_per_manifest)
    layout = Layout(files=files, files_per_manifest=files_per_manifest)
    marker = read_marker(files, files_per_manifest, commit_files)
    location = table_dir(files, files_per_manifest, commit_files)
    wanted = {"layout": asdict(layout), "commit_files": commit_files}
    if (
        marker
        and {k: marker.get(k, 0 if k == "commit_files" else None) for k in wanted} == wanted
        and (location / "metadata" / "version-hint.text").is_file()
    ):
        return location
    _log(f"building {files:,} files in {warehouse_dir()} (one-off; cached afterwards)")
    report = build(layout, threads=threads, commit_files=commit_files)
    report["commit_files"] = commit_files
    report["location"] = str(location)
    report["metadata_file"] = str(current_metadata_file(location))
    # Written last, atomically: its presence means every commit above succeeded.
    path = marker_path(files, files_per_manifest, commit_files)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=2))
    tmp.replace(path)
    return location


def one_day_filter(files: int) -> str:
    """A filter on one day in the middle of the table: ts is partitioned by day, so the manifests'
    partition summaries rule out all but the one or two manifests that hold that day."""
    import datetime as dt

    layout = Layout(files=files)
    day = dt.date.fromisoformat(FIRST_DAY) + dt.timedelta(days=layout.days // 2 + 1)
    return (
        f"ts >= '{day.isoformat()}T00:00:00+00:00' and ts < '{(day + dt.timedelta(days=1)).isoformat()}T00:00:00+00:00'"
    )


# ---------------------------------------------------------------------- growth: each measure in a new process

_CHILD = r"""
import json, resource, sys, time
what, location, metadata_file, filter_text = sys.argv[1:5]
if what.startswith("pyiceberg"):
    from pyiceberg.table import StaticTable
else:
    import icebook
    import icebook.analysis.maintenance.health, icebook.analysis.scan.planner, icebook.analysis.tables.inspect
started = time.perf_counter()
if what == "health":
    report = icebook.open(location).maintenance.health()
    count = len(report.files.partitions)
elif what == "partitions":
    count = len(icebook.open(location).inspect.partitions())
elif what == "plan":  # the plan read in full: every task's file, size, records and deletes
    count = records = size = deletes = 0
    for task in icebook.open(location).scan(filter=filter_text or None).tasks:
        count, records, size = count + 1, records + task.file.record_count, size + task.file.file_size_in_bytes
        deletes += len(task.deletes)
elif what == "plan arrow":  # the plan's every task at once, as columns, each column read
    import pyarrow.compute as pc
    table = icebook.open(location).scan(filter=filter_text or None).to_arrow()
    count = table.num_rows
    records, size = pc.sum(table["record_count"]).as_py(), pc.sum(table["file_size_in_bytes"]).as_py()
    deletes = pc.sum(pc.list_value_length(table["delete_files"])).as_py()
elif what == "pyiceberg partitions":
    count = StaticTable.from_metadata(metadata_file).inspect.partitions().num_rows
elif what == "pyiceberg plan":
    scan = StaticTable.from_metadata(metadata_file).scan(row_filter=filter_text or "True")
    count = records = size = deletes = 0
    for task in scan.plan_files():
        count, records, size = count + 1, records + task.file.record_count, size + task.file.file_size_in_bytes
        deletes += len(task.delete_files)
else:
    raise SystemExit(f"unknown measurement {what!r}")
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_mib": peak, "count": count}))
"""

# (label, child measurement, filter): the four the growth table shows, each beside its peer.
GROWTH_MEASURES = {
    "health": ("health()", "health", None),
    "partitions": ("inspect.partitions()", "partitions", None),
    "plan": ("full plan", "plan", ""),
    "plan-arrow": ("full plan, to_arrow()", "plan arrow", ""),
    "one-day": ("one-day plan", "plan", "<one day>"),
}
PEERS = {"partitions": "pyiceberg partitions", "plan": "pyiceberg plan", "plan arrow": "pyiceberg plan"}
AGGREGATE_LIMIT_MIB = 6 * 1024


def run_child(what: str, location: Path, filter_text: str | None, timeout: int) -> dict[str, Any]:
    """``what`` in a new Python process, cold (the disk cache of decoded manifests off)."""
    here = Path(__file__).resolve()
    env = {
        **os.environ,
        "ICEBOOK_MANIFEST_CACHE": "off",
        "PYTHONPATH": os.pathsep.join(p for p in (str(here.parent.parent), os.environ.get("PYTHONPATH", "")) if p),
    }
    args = [sys.executable, "-c", _CHILD, what, str(location), str(current_metadata_file(location)), filter_text or ""]
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout} s"}
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return {"error": lines[-1][:200] if lines else f"exit {done.returncode}"}
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def _cell(result: dict[str, Any] | None) -> str:
    if result is None:
        return f"{'-':>22}"
    if "error" in result:
        return f"{'failed: ' + result['error']:>22.22}"
    return f"{result['seconds']:>9.2f} s {result['peak_mib']:>7,.0f} MiB"


def measure_growth(
    sizes: list[int], *, peer_max: int, timeout: int, threads: int, measures: list[str] | None = None
) -> int:
    """Build (or reuse) a table of each size grown in 50,000-file commits, then time every measure cold in
    its own process, beside PyIceberg's where the table is at most ``peer_max`` files. Exit status 1 when
    the two disagree on a count or an aggregate at the largest size passes ``AGGREGATE_LIMIT_MIB``."""
    status = 0
    results: dict[tuple[int, str], dict[str, Any]] = {}
    print(f"{'files':>11} {'measure':<22} {'icebook':>22} {'pyiceberg':>22} {'ratio':>7} {'s per 1M files':>15}")
    for files in sizes:
        location = ensure_large_table(files, threads=threads, commit_files=GROWTH_COMMIT_FILES)
        for key in measures or list(GROWTH_MEASURES):
            label, what, filter_text = GROWTH_MEASURES[key]
            text = one_day_filter(files) if filter_text == "<one day>" else filter_text
            ours = run_child(what, location, text, timeout)
            peer_what = PEERS.get(what)
            theirs = run_child(peer_what, location, text, timeout) if peer_what and files <= peer_max else None
            results[(files, label)] = ours
            ratio = ""
            if theirs and "error" not in theirs and "error" not in ours:
                ratio = f"{theirs['seconds'] / ours['seconds']:>6.1f}x"
                if theirs["count"] != ours["count"] and what.startswith("plan"):
                    print(f"  tasks differ: icebook {ours['count']:,}, pyiceberg {theirs['count']:,}", file=sys.stderr)
                    status = 1
            per_million = f"{ours['seconds'] / files * 1e6:>15.3f}" if "error" not in ours else ""
            print(f"{files:>11,} {label:<22} {_cell(ours)} {_cell(theirs)} {ratio:>7} {per_million}", flush=True)
    largest = max(sizes)
    if largest > peer_max:
        print(
            f"pyiceberg: not run above --peer-max {peer_max:,} files (its inspect.partitions() and plan_files() "
            "hold a Python object per file, which at these sizes takes longer than the measures); raise --peer-max to run it"
        )
    for label in ("health()", "inspect.partitions()"):
        if (largest, label) not in results:
            continue
        result = results[(largest, label)]
        peak = result.get("peak_mib")
        verdict = "within" if peak is not None and peak <= AGGREGATE_LIMIT_MIB else "NOT within"
        if verdict != "within":
            status = 1
        shown = f"{peak:,.0f} MiB" if peak is not None else result.get("error", "no result")
        print(f"{label} at {largest:,} files: {shown}, {verdict} {AGGREGATE_LIMIT_MIB:,} MiB")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=500_000, help="data files in the first snapshot")
    parser.add_argument("--files-per-manifest", type=int, default=2_500)
    parser.add_argument("--threads", type=int, default=2, help="JVM threads writing manifests")
    parser.add_argument(
        "--measure",
        nargs="?",
        const=",".join(str(n) for n in GROWTH_SIZES),
        help="comma-separated sizes (default: 500k to 20M) of tables grown in 50,000-file commits: health(), "
        "inspect.partitions(), the full and the one-day plan, each cold in its own process",
    )
    parser.add_argument("--build-growth", help="comma-separated sizes: only build the growth tables")
    parser.add_argument("--only", help=f"comma-separated measures of --measure: {', '.join(GROWTH_MEASURES)}")
    parser.add_argument("--peer-max", type=int, default=2_000_000, help="largest table PyIceberg is run on")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds allowed to each measurement")
    args = parser.parse_args(argv)
    if args.build_growth:
        for files in (int(n) for n in args.build_growth.split(",")):
            print(ensure_large_table(files, threads=args.threads, commit_files=GROWTH_COMMIT_FILES), flush=True)
        return 0
    if args.measure:
        sizes = [int(n) for n in args.measure.split(",")]
        only = args.only.split(",") if args.only else None
        unknown = sorted(set(only or ()) - set(GROWTH_MEASURES))
        if unknown:
            parser.error(f"unknown measures {', '.join(unknown)}; known: {', '.join(GROWTH_MEASURES)}")
        return measure_growth(sizes, peer_max=args.peer_max, timeout=args.timeout, threads=args.threads, measures=only)
    started = time.monotonic()
    location = ensure_large_table(args.files, files_per_manifest=args.files_per_manifest, threads=args.threads)
    marker = read_marker(args.files, args.files_per_manifest) or {}
    print(f"table:          {location}")
    print(f"metadata file:  {current_metadata_file(location)}")
    print(f"spark name:     {CATALOG}.{NAMESPACE}.{table_name(args.files, args.files_per_manifest)}")
    for key, value in marker.get("counts", {}).items():
        print(f"{key + ':':<16}{value:,}")
    for key, value in marker.get("timings", {}).items():
        print(f"{key + ':':<24}{value:.1f}")
    print(f"this run:       {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
