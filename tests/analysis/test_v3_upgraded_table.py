"""A table written here by Spark: format version 2 with merge-on-read position deletes, upgraded to 3, then
deleted from five more times, four of them on one data file. Before the upgrade the health report says what
it would change; after it, diff and time-lapse equal Spark (the position deletes merged into a vector are a
replacement, snapshots before the upgrade hold no row ids, the first commit after it assigns ids to every
existing row), and the health report finds the data file whose vector was replaced too often."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _support.v3_spark import SparkSide, check_diffs, check_timelapse

import icebook
from icebook.analysis.history.v3_changes import DvChangeKind
from icebook.analysis.maintenance.health_v3 import MANY_DV_REPLACEMENTS
from icebook.engines.spark_session import add_catalog
from icebook.table import Table

pytestmark = pytest.mark.spark

CATALOG = "v3upgrade"
FQ = f"{CATALOG}.db.up"
ROWS = 40


@pytest.fixture(scope="module")
def upgraded(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    warehouse = tmp_path_factory.mktemp("v3upgrade")
    add_catalog(CATALOG, warehouse)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.db")
    spark.sql(
        f"CREATE TABLE {FQ} (id BIGINT, g STRING) USING iceberg PARTITIONED BY (g) TBLPROPERTIES "
        "('format-version'='2', 'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', "
        "'write.merge.mode'='merge-on-read')"
    )
    spark.sql(f"INSERT INTO {FQ} SELECT id, IF(id % 2 = 0, 'a', 'b') FROM range(0, {ROWS}) r(id)")
    spark.sql(f"DELETE FROM {FQ} WHERE id % 10 = 0")  # v2: one position delete file per data file of g=a
    spark.sql(f"ALTER TABLE {FQ} SET TBLPROPERTIES ('format-version'='3')")
    for k in (2, 4, 6, 8):  # even ids: always the g=a file, whose vector is replaced each time
        spark.sql(f"DELETE FROM {FQ} WHERE id % 10 = {k}")
    spark.sql(f"DELETE FROM {FQ} WHERE id % 10 = 3")  # the g=b file's first vector
    return warehouse / "db" / "up"


def test_before_the_upgrade_health_says_what_it_would_change(upgraded: Path) -> None:
    # v3.metadata.json: created, appended, deleted from, not yet upgraded.
    before = icebook.open(str(upgraded / "metadata" / "v3.metadata.json"))
    assert before.metadata.format_version == 2
    advice = before.maintenance.health(list_files=False).v3.upgrade
    assert advice is not None
    assert (advice.position_delete_files, advice.position_delete_records) == (1, ROWS // 10)
    assert advice.file_scoped_position_deletes == 1  # Spark writes a delete file per data file
    assert advice.live_records == ROWS
    assert any(
        f"assigns row ids to the existing data files as well as the new ones ({ROWS} live" in c for c in advice.changes
    )


def test_diff_and_timelapse_equal_spark_across_the_upgrade(spark: Any, upgraded: Path) -> None:
    t: Table = icebook.open(str(upgraded))
    side = SparkSide(spark, FQ)
    assert check_diffs(side, t) == 4
    check_timelapse(side, t)

    lapse = t.timelapse()
    ops = [(c.commits[0].assigned if c.commits else None, {d.kind for d in c.dv_changes}) for c in lapse.v3]
    # Before the upgrade: no row ids. The first commit after it assigns ids to all existing rows, and its
    # vector merges the v2 position delete file.
    assert [a for a, _ in ops[:2]] == [None, None]
    assert ops[2][0] is not None and (ops[2][0].first, ops[2][0].count) == (0, ROWS)
    merged = lapse.v3[2].replacements[0]
    assert merged.before is not None and not merged.before.is_vector
    assert merged.text("f").startswith("position deletes for file f merged into a DV: 4 → 8")
    assert [len(c.replacements) for c in lapse.v3[3:6]] == [1, 1, 1]
    assert {d.kind for d in lapse.v3[6].dv_changes} == {DvChangeKind.NEW}
    assert lapse.v3[0].row_ids == ()  # files written before the upgrade carry no first_row_id there


def test_health_finds_the_data_file_replaced_too_often(spark: Any, upgraded: Path) -> None:
    report = icebook.open(str(upgraded)).maintenance.health(list_files=False)
    (churned,) = report.v3.churn
    assert churned.vectors == 4 and churned.replacements >= MANY_DV_REPLACEMENTS and churned.live
    assert churned.deleted_rows == 20  # every even id of the file: ids ending 0, 2, 4, 6, 8
    written = spark.sql(
        f"SELECT count(DISTINCT file_path, content_offset) AS n FROM {FQ}.all_delete_files "
        f"WHERE upper(file_format) = 'PUFFIN' AND referenced_data_file = '{churned.data_file}'"
    ).collect()[0]
    assert written.n == churned.vectors
    (finding,) = [f for f in report.findings if "deletion vector replaced" in f.title]
    assert finding.procedure is not None and finding.procedure.name == "rewrite_data_files"
    assert churned.data_file in finding.detail
    assert report.v3.dangling == () and report.v3.deletion_vectors == 2
