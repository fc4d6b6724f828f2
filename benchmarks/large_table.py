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

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

CATALOG = "bench"
NAMESPACE = "db"
# Bump when BenchTableWriter.java or the history below changes what gets written: cached tables rebuild.
GENERATOR_VERSION = 1
JAVA_SOURCE = Path(__file__).with_name("BenchTableWriter.java")
_writer_class: Any = None

# Collecting the files metadata table of 500k files into the driver needs more than the default 3g.
os.environ.setdefault("ICEBOOK_SPARK_DRIVER_MEMORY", "8g")


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


def icebook_home() -> Path:
    return Path(os.environ.get("ICEBOOK_HOME") or Path.home() / ".cache" / "icebook").expanduser()


def bench_dir() -> Path:
    return icebook_home() / "bench"


def warehouse_dir() -> Path:
    return bench_dir() / "warehouse"


def table_name(files: int, files_per_manifest: int = 2_500) -> str:
    # The default size keeps the short name the other benchmarks talk about (bench.db.big).
    name = "big" if files == 500_000 else f"big_{files}"
    return name if files_per_manifest == 2_500 else f"{name}_m{files_per_manifest}"


def table_dir(files: int, files_per_manifest: int = 2_500) -> Path:
    return warehouse_dir() / NAMESPACE / table_name(files, files_per_manifest)


def marker_path(files: int, files_per_manifest: int = 2_500) -> Path:
    return bench_dir() / f"{table_name(files, files_per_manifest)}.complete.json"


def current_metadata_file(location: Path) -> Path:
    """The current ``vN.metadata.json`` of a Hadoop-catalog table, from its ``version-hint.text``."""
    metadata = location / "metadata"
    version = (metadata / "version-hint.text").read_text().strip()
    return metadata / f"v{version}.metadata.json"


def read_marker(files: int, files_per_manifest: int = 2_500) -> dict[str, Any] | None:
    path = marker_path(files, files_per_manifest)
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def get_spark() -> SparkSession:
    from icebook.engines.spark_session import get_session

    return get_session(warehouse=warehouse_dir(), catalog=CATALOG)


def compile_writer() -> Path:
    """Compile BenchTableWriter.java once per source version; returns the classes directory."""
    from icebook.engines.spark_session import iceberg_runtime_jar

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
        [str(javac), "-nowarn", "--release", "17", "-cp", str(iceberg_runtime_jar()), "-d", str(tmp), str(JAVA_SOURCE)],
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


def build(layout: Layout, threads: int = 2) -> dict[str, Any]:
    """Create the table and commit its five snapshots; returns timings and counts."""
    spark = get_spark()
    name = table_name(layout.files, layout.files_per_manifest)
    location = table_dir(layout.files, layout.files_per_manifest)
    # A table without a marker is a leftover from an interrupted build: start over. The directory goes
    # first (its metadata may be half-written); DROP then only clears the catalog's cached table.
    shutil.rmtree(location, ignore_errors=True)
    spark.sql(f"DROP TABLE IF EXISTS {CATALOG}.{NAMESPACE}.{name}")
    marker_path(layout.files, layout.files_per_manifest).unlink(missing_ok=True)

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

    step("append_bulk", lambda: writer.appendFiles(table, 0, layout.files, layout.files_per_manifest, threads))
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
    """Counts through Spark's metadata tables: proves Spark can read what was committed."""
    qualified = f"{CATALOG}.{NAMESPACE}.{name}"
    by_content = {
        row["content"]: row["n"]
        for row in spark.sql(f"SELECT content, count(*) AS n FROM {qualified}.files GROUP BY content").collect()
    }
    manifests = spark.sql(f"SELECT count(*) AS n FROM {qualified}.manifests").collect()[0]["n"]
    snapshots = spark.sql(f"SELECT count(*) AS n FROM {qualified}.snapshots").collect()[0]["n"]
    return {
        "files": sum(by_content.values()),
        "data_files": by_content.get(0, 0),
        "delete_files": by_content.get(1, 0) + by_content.get(2, 0),
        "manifests": manifests,
        "snapshots": snapshots,
    }


def ensure_large_table(files: int = 500_000, *, files_per_manifest: int = 2_500, threads: int = 2) -> Path:
    """Return the directory of the synthetic table, building it first unless a matching marker exists."""
    layout = Layout(files=files, files_per_manifest=files_per_manifest)
    marker = read_marker(files, files_per_manifest)
    location = table_dir(files, files_per_manifest)
    if marker and marker.get("layout") == asdict(layout) and (location / "metadata" / "version-hint.text").is_file():
        return location
    _log(f"building {files:,} files in {warehouse_dir()} (one-off; cached afterwards)")
    report = build(layout, threads=threads)
    report["location"] = str(location)
    report["metadata_file"] = str(current_metadata_file(location))
    # Written last, atomically: its presence means every commit above succeeded.
    tmp = marker_path(files, files_per_manifest).with_suffix(".tmp")
    tmp.write_text(json.dumps(report, indent=2))
    tmp.replace(marker_path(files, files_per_manifest))
    return location


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=500_000, help="data files in the first snapshot")
    parser.add_argument("--files-per-manifest", type=int, default=2_500)
    parser.add_argument("--threads", type=int, default=2, help="JVM threads writing manifests")
    args = parser.parse_args(argv)
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


if __name__ == "__main__":
    main()
