"""The health report's format version 3 section equals what Spark says: dangling deletion vectors (Spark's
``delete_files`` whose data file is not in ``data_files``), the vectors written per data file over the kept
snapshots (``all_delete_files``), a finding from ``MANY_DV_REPLACEMENTS`` on; and for every v2 scenario,
what an upgrade would change, counted as Spark counts the table's delete files and rows."""

from __future__ import annotations

from typing import Any

import pytest
from _support.conformance import spark_readable
from _support.java_oracle import java_files

from icebook.analysis.maintenance.health_v3 import MANY_DV_REPLACEMENTS
from icebook.display.registry import render_html, render_text
from icebook.scenarios import SCENARIOS
from icebook.spec.schema import DELETE_FILE_PATH_ID
from icebook.table import Table

pytestmark = pytest.mark.spark

V3 = spark_readable(name for name, s in SCENARIOS.items() if s.claims.format_version >= 3)
V2 = [name for name in ("debt", "equality_deletes", "orders_cow") if SCENARIOS[name].claims.format_version == 2]
_PUFFIN = "upper(file_format) = 'PUFFIN'"


@pytest.mark.parametrize("name", V3)
def test_dangling_vectors_and_churn_equal_spark(spark: Any, tables_by_name: dict[str, Table], name: str) -> None:
    t, fq = tables_by_name[name], SCENARIOS[name].table
    report = t.maintenance.health(list_files=False)
    v3 = report.v3
    assert v3.upgrade is None
    live = spark.sql(f"SELECT count(*) AS n FROM {fq}.delete_files WHERE {_PUFFIN}").collect()[0].n
    assert v3.deletion_vectors == live
    dangling = spark.sql(
        f"SELECT d.file_path, d.content_offset, d.referenced_data_file, d.record_count FROM {fq}.delete_files d "
        f"LEFT ANTI JOIN {fq}.data_files f ON d.referenced_data_file = f.file_path WHERE {_PUFFIN}"
    ).collect()
    assert {(d.path, d.offset, d.data_file, d.deleted_rows) for d in v3.dangling} == {tuple(r) for r in dangling}
    written = spark.sql(
        f"SELECT referenced_data_file AS f, count(DISTINCT file_path, content_offset) AS n "
        f"FROM {fq}.all_delete_files WHERE {_PUFFIN} GROUP BY referenced_data_file HAVING n > 1"
    ).collect()
    assert {(c.data_file, c.vectors) for c in v3.churn} == {(r.f, r.n) for r in written}
    data = {r.file_path for r in spark.sql(f"SELECT file_path FROM {fq}.data_files").collect()}
    assert {c.data_file for c in v3.churn if c.live} == {c.data_file for c in v3.churn} & data

    titles = [f.title for f in report.findings]
    many = [c for c in v3.churn if c.replacements >= MANY_DV_REPLACEMENTS]
    assert any("replaced" in title for title in titles) == bool(many)
    assert any("deletion vectors name a data file" in title for title in titles) == bool(dangling)
    for finding in report.findings:
        if "deletion vector" in finding.title:
            assert finding.procedure is not None and finding.procedure.name == "rewrite_data_files"
    text = render_text(report)
    assert f"Format version 3: {live} live deletion vectors, {len(dangling)} dangling" in text
    assert "Format v3" in render_html(report)


@pytest.mark.parametrize(
    "name", [n for n, s in SCENARIOS.items() if s.claims.format_version >= 3 and not s.spark_reads]
)
def test_v3_health_equals_the_java_listing_where_spark_cannot_read(
    spark: Any, tables_by_name: dict[str, Table], name: str
) -> None:
    t = tables_by_name[name]
    v3 = t.maintenance.health(list_files=False).v3
    vectors = [r for r in java_files(spark, t.location, t.snapshot("main").snapshot_id) if r["content_offset"]]
    assert v3.upgrade is None and v3.deletion_vectors == len(vectors)
    assert not v3.dangling and not v3.churn


def test_dv_v3_has_a_data_file_whose_vector_was_replaced(tables_by_name: dict[str, Table]) -> None:
    churn = tables_by_name["dv_v3"].maintenance.health(list_files=False).v3.churn
    assert churn and churn[0].replacements >= 2


@pytest.mark.parametrize("name", V2)
def test_a_v2_table_is_told_what_an_upgrade_changes(spark: Any, tables_by_name: dict[str, Table], name: str) -> None:
    t, fq = tables_by_name[name], SCENARIOS[name].table
    report = t.maintenance.health(list_files=False)
    advice = report.v3.upgrade
    assert advice is not None
    deletes = spark.sql(
        f"SELECT content, count(*) AS n, coalesce(sum(record_count), 0) AS r, "
        f"sum(CASE WHEN referenced_data_file IS NOT NULL OR lower_bounds[{DELETE_FILE_PATH_ID}] = "
        f"upper_bounds[{DELETE_FILE_PATH_ID}] THEN 1 ELSE 0 END) AS one FROM {fq}.delete_files GROUP BY content"
    ).collect()
    by = {r.content: r for r in deletes}
    position, equality = by.get(1), by.get(2)
    assert advice.position_delete_files == (position.n if position else 0)
    assert advice.position_delete_records == (position.r if position else 0)
    assert advice.file_scoped_position_deletes == (position.one if position else 0)
    assert advice.equality_delete_files == (equality.n if equality else 0)
    rows = spark.sql(f"SELECT coalesce(sum(record_count), 0) AS r FROM {fq}.data_files").collect()[0].r
    assert advice.live_records == rows
    assert not any("upgrade" in f.title for f in report.findings)  # advice, not debt
    text = render_text(report)
    assert advice.sql(report.identifier) in text
    assert f"the {advice.position_delete_files} live position delete files" in text
    assert "next-row-id 0" in render_html(report)


def test_dv_lifecycle_v3_has_a_dangling_vector_and_one_replaced_too_often(tables_by_name: dict[str, Table]) -> None:
    report = tables_by_name["dv_lifecycle_v3"].maintenance.health(list_files=False)
    assert len(report.v3.dangling) == 1
    assert [c.vectors for c in report.v3.many_replacements] == [4]  # three replacements
    procedures = {f.title: f.procedure for f in report.findings if "deletion vector" in f.title}
    assert len(procedures) == 2, [f.title for f in report.findings]
    assert {p.name for p in procedures.values() if p} == {"rewrite_data_files"}
