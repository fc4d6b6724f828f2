"""Every benchmark that runs without Spark, run on a small table, so that none rots: each must finish with
exit status 0, which each gives only when the engines it compares agree (tasks, rows, partitions, files).
Nothing here looks at a time.

The large tables are ``synthetic_table.py``'s (``ICEBOOK_BENCH_TABLES=synthetic``), written into a
temporary ``ICEBOOK_HOME`` by the first benchmark that needs one. The benchmarks that need Spark to build
their table or to answer (``read.py``, ``maintenance_previews.py``, ``spark_aggregates.py``, the time-lapse
table of ``timelapse.py``) or a browser (``tree_paging.py``) are named in ``NOT_SMOKED`` with the reason.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "benchmarks"
FILES = 4_000  # at least three days of the layout's 1,280 files a day (the one-day filter)

SMOKED: dict[str, list[str]] = {
    "scan_planning": ["scan_planning.py", "--files", str(FILES)],
    "scan_planning warm start": ["scan_planning.py", "--files", str(FILES), "--warm-start"],
    "warm_start": ["warm_start.py", "--files", str(FILES), "--runs", "2"],
    "files_listing": ["files_listing.py", "--files", str(FILES), "--no-spark"],
    "diff": ["diff.py", "--files", str(FILES)],
    "partitions_table": ["partitions_table.py", "--table", "<table>", "--timeout", "300"],
    "health": ["health.py", "--location", "<table>"],
    "health with data files": ["health.py", "--location", "<table>", "--with-data-files"],
    "large_table growth": ["large_table.py", "--measure", str(FILES), "--timeout", "300"],
    "avro_decode": ["avro_decode.py", "--entries", "2000", "--repeat", "1"],
    "history": ["history.py", "--snapshots", "300", "--peer-timeout", "120"],
    "lake_browser": ["lake_browser.py", "--tables", "12", "--page", "5"],
    "variant_columns": ["variant_columns.py", "--rows", "2000"],
}
NOT_SMOKED = {
    "read.py": "its table is written by Spark",
    "maintenance_previews.py": "its peer is the reference implementation's planning in Spark's JVM",
    "spark_aggregates.py": "it measures engine='spark'",
    "timelapse.py": "its 200-snapshot table is written by Spark",
    "tree_paging.py": "it drives JupyterLab in a browser",
    "lake_load.py": "it runs a Jupyter server with catalogs under load (the lake server's tests run one)",
    "spark_start.py": "it starts Spark sessions, one cold from an empty Ivy home",
    "query_cost.py": "its footer reads are timed cold and warm in fresh processes (tests/analysis/test_query_cost.py checks the answers)",
    "synthetic_table.py": "the table builder the others run",
    "synthetic_growth.py": "the growth tables' builder, run by the large_table growth smoke (and read back below)",
    "table_bytes.py": "its tables are the scenario warehouse Spark builds",
    "large_table.py": "(smoked above with --measure)",
}


@pytest.fixture(scope="module")
def bench_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bench-home")


def test_every_benchmark_is_smoked_or_says_why_not() -> None:
    scripts = {p.name for p in BENCHMARKS.glob("*.py")}
    smoked = {args[0] for args in SMOKED.values()}
    assert scripts == smoked | set(NOT_SMOKED), scripts ^ (smoked | set(NOT_SMOKED))


@pytest.mark.parametrize("name", list(SMOKED))
def test_benchmark_runs_and_the_engines_agree(name: str, bench_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICEBOOK_HOME", str(bench_home))
    monkeypatch.setenv("ICEBOOK_BENCH_TABLES", "synthetic")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import synthetic_table

    table = synthetic_table.build(FILES)
    script, *args = SMOKED[name]
    args = [str(table) if a == "<table>" else a for a in args]
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / script), *args],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    assert done.returncode == 0, f"{script} {' '.join(args)}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), script


def test_the_growth_tables_entries_read_back_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``synthetic_growth.py`` encodes entries by hand: fastavro, the reference decoder, reads back each data
    file's path, partition, counts and ``id``/``ts`` bounds, and the snapshots' totals add up."""
    import fastavro

    monkeypatch.setenv("ICEBOOK_HOME", str(tmp_path))
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import synthetic_growth as growth
    import synthetic_table as st

    location = growth.build(FILES, 2_500, workers=1)
    layout = st.Layout(files=FILES)
    variants = [growth.Variant(j) for j in range(growth.POOL)]
    manifests = sorted((location / "metadata").glob("*-0000?-m0.avro"))
    assert len(manifests) == 2
    index = 0
    for manifest in manifests:
        with manifest.open("rb") as f:
            for entry in fastavro.reader(f):
                data_file, v = entry["data_file"], variants[index % growth.POOL]
                assert entry["status"] == 1 and entry["snapshot_id"] is None
                assert data_file["file_path"] == st.data_path(location, layout, index)
                day = st.day_of(layout, index)
                assert (data_file["partition"]["ts_day"] - st.dt.date(1970, 1, 1)).days == day
                assert data_file["partition"]["id_bucket"] == st.bucket_of(layout, index)
                assert data_file["record_count"] == v.records
                lower = {p["key"]: p["value"] for p in data_file["lower_bounds"]}
                upper = {p["key"]: p["value"] for p in data_file["upper_bounds"]}
                assert lower[1] == st._long(index * 1_000_000) and upper[1] == st._long(
                    index * 1_000_000 + v.records - 1
                )
                assert lower[5] == upper[5] == st._int(day)
                assert lower[6] == st._long(day * st.MICROS_PER_DAY + v.ts_start)
                assert data_file["split_offsets"] == [4] and data_file["sort_order_id"] == 0
                index += 1
    assert index == FILES
    import icebook

    table = icebook.open(str(location))
    assert len(table.snapshots) == 3  # two appends of 2,500 files (rounded up), then the position deletes
    assert len(table.inspect.files()) == FILES + len(st.deleted(layout))
