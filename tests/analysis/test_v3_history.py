"""Diff and time-lapse on every format version 3 scenario equal what Spark says: the deletion vectors each
change replaced, added and dropped (from Spark's ``delete_files`` at both ends), the row ids its added data
files hold (``data_files`` with ``first_row_id``) and the ids each commit assigned (the Iceberg Java API's
``Snapshot.firstRowId``/``addedRows``). The time-lapse's per-commit facts equal the diff of each commit with
its parent, and both show in text, HTML and on the command line."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from _support.v3_spark import SparkSide, check_diffs, check_timelapse

import icebook
from icebook.analysis.history.diff import diff
from icebook.cli import main
from icebook.display.registry import render_html, render_text
from icebook.scenarios import SCENARIOS
from icebook.table import Table

V3_SCENARIOS = [name for name, s in SCENARIOS.items() if s.claims.format_version >= 3]
"""The v3 scenarios; for those Spark cannot read (``types_v3``: Spark 4.1 has no nanosecond timestamps) Iceberg's
Java manifest readers answer instead (``SparkSide`` with a location)."""
DIFFED = V3_SCENARIOS


@pytest.fixture(scope="module")
def tables(scenario_locations: dict[str, Path]) -> dict[str, Table]:
    return {name: icebook.open(str(scenario_locations[name])) for name in V3_SCENARIOS}


def test_the_v3_scenarios_are_there() -> None:
    assert "dv_v3" in V3_SCENARIOS


@pytest.mark.spark
@pytest.mark.parametrize("name", DIFFED)
def test_every_commit_and_the_whole_history_equal_spark(spark: Any, tables: dict[str, Table], name: str) -> None:
    replaced = check_diffs(_side(spark, tables[name], name), tables[name])
    if "PUFFIN" in SCENARIOS[name].claims.delete_formats:  # a scenario with vectors deletes from a file twice
        assert replaced, f"{name}: no commit replaced a deletion vector"


@pytest.mark.spark
@pytest.mark.parametrize("name", DIFFED)
def test_the_timelapse_shows_each_commit_as_its_diff(spark: Any, tables: dict[str, Table], name: str) -> None:
    check_timelapse(_side(spark, tables[name], name), tables[name])


def _side(spark: Any, t: Table, name: str) -> SparkSide:
    return SparkSide(spark, SCENARIOS[name].table, None if SCENARIOS[name].spark_reads else t.location)


@pytest.mark.spark
def test_views_and_the_command_line_name_the_replacement(tables: dict[str, Table]) -> None:
    t = tables["dv_v3"]
    steps = [s for s in t.snapshots if s.parent_snapshot_id is not None]
    d, step = next(
        (d, s) for s in steps if (d := diff(t, s.parent_snapshot_id, s.snapshot_id, progress=False)).v3.replacements
    )
    r = d.v3.replacements[0]
    name = r.data_file.rsplit("/", 1)[-1]
    sentence = f"DV for file {name} replaced: {r.before_rows} → {r.after_rows} deleted rows"
    assert f"  v3: {sentence}" in render_text(d).splitlines()
    assert sentence in render_html(d)
    lapse = t.timelapse()
    assert any(line.strip() == f"v3: {sentence}" for line in render_text(lapse).splitlines())
    assert sentence in render_html(lapse)

    out = io.StringIO()
    assert main(["diff", str(t.location), str(step.parent_snapshot_id), str(step.snapshot_id)], out=out) == 0
    assert f"  v3: {sentence}" in out.getvalue().splitlines()
    out = io.StringIO()
    assert main(["timelapse", str(t.location)], out=out) == 0
    assert any(line.strip() == f"v3: {sentence}" for line in out.getvalue().splitlines())


@pytest.mark.spark
def test_upgrade_v3_merges_its_v2_position_deletes_into_vectors(tables: dict[str, Table]) -> None:
    t = tables["upgrade_v3"]
    merged = [c for c in t.timelapse().v3 for c in c.replacements if c.before is not None and not c.before.is_vector]
    assert merged, "no v2 position delete file was merged into a deletion vector"
    assert all(m.after is not None and m.after.deleted_rows >= m.before_rows for m in merged)  # type: ignore[operator]
