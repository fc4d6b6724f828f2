"""What the lake browser's endpoints answer for the catalogs of a running Spark session (Hadoop catalogs,
browsed by their warehouse directories): listed only while a session runs, tables with the same cards as
the tables opened by path, opened by their location."""

from __future__ import annotations

from pathlib import Path

import pytest

import icebook
from icebook.engines import spark_session
from icebook.scenarios.build import CATALOG, table_location
from icebook.server import lake


@pytest.mark.spark
def test_a_running_sessions_catalogs_are_listed_with_their_tables(warehouse: Path) -> None:
    listed = {c["name"]: c for c in lake.catalog_list()}
    assert listed[CATALOG]["source"] == "spark" and listed[CATALOG]["warehouse"] == str(warehouse.resolve())
    namespaces = lake.namespace_list(CATALOG)["namespaces"]
    events = table_location(warehouse, "events")
    namespace = events.parent.name
    assert namespace in namespaces
    page = lake.table_page(CATALOG, namespace, text="events")
    rows = [t for t in page["tables"] if t["name"] == "events"]
    assert len(rows) == 1 and rows[0]["error"] is None
    row = rows[0]
    assert row["identifier"] == f"{CATALOG}.{namespace}.events"
    table = icebook.open(row["open"])
    assert Path(table.location.removeprefix("file:")).resolve() == events.resolve()
    card = row["card"]
    current = table.current_snapshot
    assert current is not None
    assert card["current_snapshot_id"] == str(current.snapshot_id)
    assert card["snapshots"] == len(table.snapshots) and card["refs"] == len(table.refs)
    assert card["metadata_location"] == table.metadata_location
    assert card["records"] == int(current.summary["total-records"])


@pytest.mark.spark
def test_no_session_no_spark_catalogs(warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spark_session, "session_running", lambda: False)
    assert CATALOG not in {c["name"] for c in lake.catalog_list()}
    assert "error" in lake.namespace_list(CATALOG)
