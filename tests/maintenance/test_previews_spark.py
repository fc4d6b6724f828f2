"""Previews equal what Spark's procedures really do, on copies of scenario tables.

- ``expire_preview`` lists exactly the files ``expire_snapshots`` deletes from storage, and the
  snapshots and refs it removes;
- ``orphans`` equals ``remove_orphan_files(dry_run => true)``;
- ``compaction_preview``'s groups equal the groups of Iceberg's own bin-pack planner, and the data
  files ``rewrite_data_files`` then replaces.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _copies import age_files, files_on_disk

from icebook.engines import spark_maintenance
from icebook.engines.spark_engine import writable_identifier
from icebook.table import Table
from icebook.text import spark_call, spark_timestamp

EXPIRE_CASES = [
    ("debt", None),  # the stale tag goes, every snapshot before the middle one expires
    ("events", 1),  # a branch keeping 2 snapshots and a year-long tag hold history back
    ("orders_cow", None),  # copy-on-write: expiring drops the data files that overwrites replaced
    ("equality_deletes", 2),
    ("legacy_v1", None),
    ("dv_v3", 1),  # deletion vectors: Puffin files replaced by merged vectors go
]


def _location(t: Table) -> Path:
    return Path(t.location.removeprefix("file:"))


@pytest.mark.spark
@pytest.mark.parametrize(("name", "retain_last"), EXPIRE_CASES, ids=[c[0] for c in EXPIRE_CASES])
def test_expire_preview_equals_the_files_expire_snapshots_deletes(
    spark: Any, copy_of: Callable[[str], Table], name: str, retain_last: int | None
) -> None:
    t = copy_of(name)
    snapshots = t.snapshots
    older_than = snapshots[len(snapshots) // 2].timestamp_ms + 1
    preview = t.maintenance.expire_preview(older_than=older_than, retain_last=retain_last)
    assert preview.expired_snapshot_ids, f"{name}: the case should expire something"
    before = files_on_disk(_location(t))

    result = t.maintenance.expire_snapshots(older_than=older_than, retain_last=retain_last)

    deleted = before - files_on_disk(_location(t))
    assert deleted == {f.path for f in preview.files}
    after = result.table
    assert {s.snapshot_id for s in after.snapshots} == set(preview.kept_snapshot_ids)
    assert set(after.refs) == set(t.refs) - set(preview.removed_refs)
    counts = preview.counts()
    output = result.output
    assert output["deleted_data_files_count"] == counts["data file"]
    assert output["deleted_position_delete_files_count"] == counts["position delete file"]
    assert output["deleted_equality_delete_files_count"] == counts["equality delete file"]
    assert output["deleted_manifest_files_count"] == counts["manifest"]
    assert output["deleted_manifest_lists_count"] == counts["manifest list"]
    assert set(result.diff.removed_snapshots) == set(preview.expired_snapshot_ids)


@pytest.mark.spark
def test_expire_with_the_table_defaults_keeps_a_fresh_table_whole(spark: Any, copy_of: Callable[[str], Table]) -> None:
    # events keeps the default 5 days of history: nothing is old enough, nothing goes.
    t = copy_of("events")
    preview = t.maintenance.expire_preview()
    assert not preview.expired_snapshot_ids and not preview.files
    before = files_on_disk(_location(t))
    t.maintenance.expire_snapshots()
    assert files_on_disk(_location(t)) == before


@pytest.mark.spark
@pytest.mark.parametrize("name", ["debt", "events"])
def test_orphans_equal_remove_orphan_files_dry_run(spark: Any, copy_of: Callable[[str], Table], name: str) -> None:
    t = copy_of(name)
    root = _location(t)
    (root / "data" / "stray.parquet").write_bytes(b"not referenced")
    (root / "data" / "_temporary").mkdir()
    (root / "data" / "_temporary" / "part-0.parquet").write_bytes(b"hidden directory: never listed")
    (root / "metadata" / ".hidden.json").write_text("{}")
    fresh = root / "data" / "in-flight.parquet"
    fresh.write_bytes(b"a write still in progress")
    age_files(root, days=2, keep_fresh=(fresh,))
    older_than = int((time.time() - 25 * 3600) * 1000)

    ours = t.maintenance.orphans(older_than=older_than)
    identifier = writable_identifier(t.location, None)
    theirs = spark_maintenance.remove_orphan_files(identifier, older_than_ms=older_than, dry_run=True)

    assert {p.removeprefix("file:") for p in theirs} == set(ours.paths)
    assert str(root / "data" / "stray.parquet") in ours.paths
    assert str(fresh) not in ours.paths and str(fresh) in {f.path for f in ours.too_recent}
    assert not any("_temporary" in p or ".hidden" in p for p in ours.paths)
    assert files_on_disk(root) >= set(ours.paths)  # a dry run deletes nothing


def _spark_plan(spark: Any, identifier: str, options: dict[str, str]) -> set[frozenset[str]]:
    """The groups of Iceberg's own BinPackRewriteFilePlanner, through the JVM."""
    jvm = spark._jvm
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, identifier)
    planner = jvm.org.apache.iceberg.actions.BinPackRewriteFilePlanner(table)
    java_options = jvm.java.util.HashMap()
    for k, v in options.items():
        java_options.put(k, v)
    planner.init(java_options)
    groups = set()
    iterator = planner.plan().groups().iterator()
    while iterator.hasNext():
        group = iterator.next()
        groups.add(frozenset(str(task.file().location()) for task in group.fileScanTasks()))
    return groups


COMPACTION_CASES = [
    ("debt", {}),  # defaults: three partitions of small files; 'sa' has too few to bother
    ("events", {"min-input-files": "2"}),  # files of the old spec group together
    ("equality_deletes", {"delete-file-threshold": "1"}),  # statistics rule some equality deletes out
    ("dv_v3", {"min-input-files": "2"}),
    ("orders_cow", {}),
]


@pytest.mark.spark
@pytest.mark.parametrize(("name", "options"), COMPACTION_CASES, ids=[c[0] for c in COMPACTION_CASES])
def test_compaction_preview_equals_rewrite_data_files(
    spark: Any, copy_of: Callable[[str], Table], name: str, options: dict[str, str]
) -> None:
    t = copy_of(name)
    preview = t.maintenance.compaction_preview(options=options)
    identifier = writable_identifier(t.location, None)
    assert {g.paths for g in preview.groups} == _spark_plan(spark, identifier, options)

    result = t.maintenance.rewrite_data_files(options=options)

    if not preview.groups:
        assert result.output["rewritten_data_files_count"] == 0
        return
    replaced = result.diff.snapshot_diff.removed_files
    assert set(replaced[replaced.content == 0].file_path) == {f.file_path for f in preview.rewritten_files}
    assert result.output["rewritten_data_files_count"] == len(preview.rewritten_files)
    assert result.output["rewritten_bytes_count"] == preview.rewritten_bytes


def test_procedure_sql_names_the_table_and_arguments() -> None:
    sql = spark_call(
        "lake.db.debt", "rewrite_data_files", [("options", spark_maintenance.options_sql({"min-input-files": 2}))]
    )
    assert sql == "CALL lake.system.rewrite_data_files(table => 'db.debt', options => map('min-input-files', '2'))"
    assert spark_timestamp(0) == "TIMESTAMP '1970-01-01 00:00:00.000000'"
