"""Each scenario leaves behind the snapshots, refs, specs and delete files it claims (checked by Spark)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _support.java_oracle import java_table, manifest_facts

from icebook.scenarios import SCENARIOS, Scenario
from icebook.scenarios.warehouse import read_marker, scenario_hash

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("scenario", SCENARIOS.values(), ids=list(SCENARIOS))
def test_scenario_claims(spark: Any, warehouse: Path, scenario_locations: dict[str, Path], scenario: Scenario) -> None:
    t = scenario.table
    claims = scenario.claims
    operations = tuple(
        r.operation for r in spark.sql(f"SELECT operation FROM {t}.snapshots ORDER BY committed_at").collect()
    )
    assert operations == claims.operations
    refs = {r.name: r.type for r in spark.sql(f"SELECT name, type FROM {t}.refs").collect()}
    assert refs == dict(claims.refs)
    if scenario.spark_reads:
        spec_ids = {r.spec_id for r in spark.sql(f"SELECT DISTINCT spec_id FROM {t}.all_files").collect()}
        delete_formats = {
            r.file_format for r in spark.sql(f"SELECT DISTINCT file_format FROM {t}.all_delete_files").collect()
        }
    else:  # Spark's metadata tables carry the columns' types, which it cannot convert
        spec_ids, delete_formats = manifest_facts(spark, java_table(spark, scenario_locations[scenario.name]))
    assert spec_ids == set(claims.spec_ids)
    assert delete_formats == set(claims.delete_formats)
    if scenario.spark_reads:
        props = {r.key: r.value for r in spark.sql(f"SHOW TBLPROPERTIES {t}").collect()}
        assert props["format-version"] == str(claims.format_version)
    else:
        version = java_table(spark, scenario_locations[scenario.name]).operations().current().formatVersion()
        assert version == claims.format_version


def test_events_branch_and_tag_diverge(spark: Any, warehouse: Path) -> None:
    t = SCENARIOS["events"].table
    main_ids = {r.event_id for r in spark.sql(f"SELECT event_id FROM {t}").collect()}
    branch_ids = {r.event_id for r in spark.sql(f"SELECT event_id FROM {t} VERSION AS OF 'audit'").collect()}
    tag_ids = {r.event_id for r in spark.sql(f"SELECT event_id FROM {t} VERSION AS OF 'release-2024-01'").collect()}
    assert {100, 101} <= branch_ids and not {100, 101} & main_ids
    assert 16 in main_ids and 16 not in branch_ids and 16 not in tag_ids
    assert 1 in main_ids and 1 not in branch_ids
    # merge-on-read delete removed the test events (ids 4, 8, 11) from every later read
    assert not {4, 8, 11} & main_ids
    refs = {r.name: r for r in spark.sql(f"SELECT * FROM {t}.refs").collect()}
    assert refs["audit"].min_snapshots_to_keep == 2
    assert refs["audit"].max_reference_age_in_ms == 7 * 24 * 3600 * 1000
    assert refs["release-2024-01"].max_reference_age_in_ms == 365 * 24 * 3600 * 1000


def test_events_schema_evolution(spark: Any, warehouse: Path) -> None:
    t = SCENARIOS["events"].table
    columns = [
        r.col_name for r in spark.sql(f"DESCRIBE {t}").collect() if r.col_name and not r.col_name.startswith("#")
    ]
    assert "page" in columns and "device" in columns
    assert "payload" not in columns and "kind" not in columns


def test_events_position_deletes_and_v3_deletion_vectors(spark: Any, warehouse: Path) -> None:
    events = spark.sql(f"SELECT content, file_format FROM {SCENARIOS['events'].table}.delete_files").collect()
    assert events and {(r.content, r.file_format) for r in events} == {(1, "PARQUET")}
    dvs = spark.sql(
        f"SELECT content, file_format, referenced_data_file FROM {SCENARIOS['dv_v3'].table}.delete_files"
    ).collect()
    assert dvs and all(r.content == 1 and r.file_format == "PUFFIN" and r.referenced_data_file for r in dvs)


def test_warehouse_is_cached_by_scenario_hash(warehouse: Path) -> None:
    marker = read_marker(warehouse)
    assert marker is not None
    assert marker["hash"] == scenario_hash()
    assert warehouse.name.endswith(scenario_hash())
    assert set(marker["scenarios"]) == set(SCENARIOS)
    for name, scenario in SCENARIOS.items():
        assert len(marker["scenarios"][name]["steps"]) == len(scenario.steps)
