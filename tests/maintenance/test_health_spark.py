"""The health report names the debt of the ``debt`` scenario, each finding with the procedure that
addresses it; after those procedures run (through icebook, on a copy) the report finds nothing.
The report's measurements agree with Spark's metadata tables on every scenario table."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _copies import age_files
from _support.conformance import spark_readable
from _support.java_oracle import java_files, java_table

from icebook.analysis.maintenance.health import HealthReport
from icebook.scenarios import SCENARIOS
from icebook.spec.schema import DELETE_FILE_PATH_ID
from icebook.table import Table
from icebook.table.table_maintenance import MaintenanceResult

pytestmark = pytest.mark.spark


def _areas(report: HealthReport) -> set[str]:
    return {f.area for f in report.findings}


def _run(result: Any) -> Table:
    assert isinstance(result, MaintenanceResult)
    return result.table


def test_debt_report_names_each_problem_and_maintenance_fixes_it(spark: Any, copy_of: Callable[[str], Table]) -> None:
    t = copy_of("debt")
    root = Path(t.location)
    age_files(root, days=4)  # the debt is old: orphan cleanup may take every stray file
    rows_before = t.read().sort_by("id")
    report = t.maintenance.health()

    assert _areas(report) == {"small files", "delete debt", "manifests", "history", "refs", "orphans"}
    procedures = {f.area: f.procedure.name for f in report.findings if f.procedure}
    assert procedures == {
        "small files": "rewrite_data_files",
        "delete debt": "rewrite_data_files",
        "manifests": "rewrite_manifests",
        "history": "expire_snapshots",
        "refs": "expire_snapshots",
        "orphans": "remove_orphan_files",
    }
    assert report.orphans is not None
    assert any(p.endswith("crashed-writer-00001.parquet") for p in report.orphans.paths)
    assert [r.name for r in report.refs if r.expires] == ["nightly-export"]
    sparse = next(p for p in report.files.partitions if p.partition == "region=sa")
    assert sparse.small_files == 2 and not any(g.partition == "region=sa" for g in report.compaction.groups)
    assert "CALL <catalog>.system.rewrite_manifests(table => 'db.debt')" in set(report.to_pandas().procedure)

    compacted = t.maintenance.rewrite_data_files()
    assert isinstance(compacted, MaintenanceResult)
    t = compacted.table
    assert _areas(t.maintenance.health(list_files=False)) >= {"delete debt"}  # the deletes now dangle
    deletes = t.maintenance.delete_rewrite_preview()
    assert len(deletes.dangling) == deletes.position_delete_files > 0
    rewritten = t.maintenance.rewrite_position_delete_files()
    assert isinstance(rewritten, MaintenanceResult)
    assert rewritten.output["rewritten_delete_files_count"] == len(deletes.rewritten_files)
    assert rewritten.output["added_delete_files_count"] == 0  # every one of them dangled
    t = rewritten.table

    manifests = t.maintenance.manifest_rewrite_preview()
    merged = t.maintenance.rewrite_manifests()
    assert isinstance(merged, MaintenanceResult)
    assert merged.output["rewritten_manifests_count"] == manifests.rewritten_manifests
    assert merged.output["added_manifests_count"] <= manifests.added_manifests_at_most
    t = merged.table

    t = _run(t.maintenance.expire_snapshots(older_than=int(time.time() * 1000), retain_last=1))
    cleaned = t.maintenance.remove_orphan_files(older_than=int((time.time() - 25 * 3600) * 1000))
    assert isinstance(cleaned, MaintenanceResult)
    assert any(p.endswith("crashed-writer-00001.parquet") for p in cleaned.output)

    after = cleaned.table.maintenance.health()
    assert after.healthy, after.to_pandas().to_string()
    assert after.orphans is not None and not after.orphans.files and not after.orphans.too_recent
    assert sorted(r.name for r in after.refs) == ["main"]
    assert after.history.snapshots == 1
    # Maintenance changed the layout, never the rows.
    assert cleaned.table.read().sort_by("id").equals(rows_before)


@pytest.mark.parametrize("name", [n for n, s in SCENARIOS.items() if not s.spark_reads])
def test_health_measures_agree_with_the_java_api_where_spark_cannot_read(
    spark: Any, tables_by_name: dict[str, Table], name: str
) -> None:
    t = tables_by_name[name]
    report = t.maintenance.health(list_files=False)
    java = java_table(spark, t.location)
    current = t.snapshot("main").snapshot_id
    files = java_files(spark, t.location, current)
    data = [f for f in files if f["content"] == 0]
    assert report.files.data_files == len(data)
    assert sum(p.records for p in report.files.partitions) == sum(f["record_count"] for f in data)
    assert report.files.delete_files == len(files) - len(data)
    manifests = list(java.snapshot(current).allManifests(java.io()))
    counts = [sum(1 for m in manifests if m.content().id() == c) for c in (0, 1)]
    assert (report.manifests.data_manifests, report.manifests.delete_manifests) == tuple(counts)
    assert report.history.snapshots == len(list(java.snapshots()))
    assert {r.name for r in report.refs} == {str(k) for k in dict(java.refs())}
    assert report.files.files_with_deletes == 0 == len(files) - len(data)


@pytest.mark.parametrize("name", spark_readable(SCENARIOS))
def test_health_measures_agree_with_spark(spark: Any, tables_by_name: dict[str, Table], name: str) -> None:
    t = tables_by_name[name]
    fq = SCENARIOS[name].table
    report = t.maintenance.health(list_files=False)
    data = spark.sql(f"SELECT count(*) AS n, coalesce(sum(record_count), 0) AS r FROM {fq}.data_files").collect()[0]
    assert report.files.data_files == data.n
    assert sum(p.records for p in report.files.partitions) == data.r
    deletes = spark.sql(f"SELECT count(*) AS n FROM {fq}.delete_files").collect()[0]
    assert report.files.delete_files == deletes.n
    manifests = spark.sql(f"SELECT content, count(*) AS n FROM {fq}.manifests GROUP BY content").collect()
    counts = {r.content: r.n for r in manifests}
    assert (report.manifests.data_manifests, report.manifests.delete_manifests) == (counts.get(0, 0), counts.get(1, 0))
    assert report.history.snapshots == spark.sql(f"SELECT count(*) AS n FROM {fq}.snapshots").collect()[0].n
    assert {r.name for r in report.refs} == {r.name for r in spark.sql(f"SELECT name FROM {fq}.refs").collect()}
    # Data files that Spark reads through delete files: those with a position delete row against them.
    hit = spark.sql(f"SELECT count(DISTINCT file_path) AS n FROM {fq}.position_deletes").collect()[0].n
    # That count is what the planner attaches only when each position delete file names one data file;
    # a file whose file_path bounds are truncated (Java's default truncate(16) metrics) applies, by the
    # spec's scope rules, to every data file of its partition within the bounds.
    if not any(p.equality_delete_files or p.dangling_deletes for p in report.files.partitions) and all(
        _file_scoped(d) for _, d in t.inspect.delete_files().iterrows() if d["content"] == 1
    ):
        assert report.files.files_with_deletes == hit


def _file_scoped(delete_file: Any) -> bool:
    if isinstance(delete_file.get("referenced_data_file"), str):
        return True
    lower = dict(delete_file["lower_bounds"] or []).get(DELETE_FILE_PATH_ID)
    upper = dict(delete_file["upper_bounds"] or []).get(DELETE_FILE_PATH_ID)
    return lower is not None and lower == upper
