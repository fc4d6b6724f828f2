"""What the lake browser's endpoints answer for Spark's catalogs (Hadoop catalogs, browsed by their warehouse
directories): the catalogs a kernel's session has by Spark's configuration, read without starting Spark, and
those of a session running in this process; tables with the same cards as the tables opened by path, opened
by their location."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import icebook
from icebook.engines import spark_session
from icebook.errors import NotFound
from icebook.scenarios.warehouse import CATALOG, NAMESPACE, read_marker, table_location, warehouse_path
from icebook.server import lake_browser

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def built_warehouse() -> Path:
    """The test scenario warehouse, built by Spark in another process when missing: this one must not start Spark."""
    path = warehouse_path("test")
    if read_marker(path) is None:
        subprocess.run([sys.executable, "-m", "icebook.scenarios.warehouse", "test"], check=True, capture_output=True)
    assert read_marker(path) is not None
    return path


@pytest.fixture
def fresh_kernel(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, built_warehouse: Path) -> Iterator[Path]:
    """A process like a notebook kernel's before it starts Spark (an earlier test may have started this
    process's session: hidden, and starting one fails), with its own SPARK_CONF_DIR; yields that dir."""

    def refuse(**_settings: object) -> None:
        raise AssertionError("the lake browser started Spark")

    monkeypatch.setattr(spark_session, "_session", None)
    monkeypatch.setattr(spark_session, "_catalogs", {})
    monkeypatch.setattr(spark_session, "_start", refuse)
    conf = tmp_path / "spark-conf"
    conf.mkdir()
    monkeypatch.setenv("SPARK_CONF_DIR", str(conf))
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    monkeypatch.setenv("ICEBOOK_DEMO_WAREHOUSE", str(built_warehouse))
    yield conf
    assert not spark_session.session_running()


def test_a_kernels_spark_catalogs_come_from_spark_configuration_without_starting_spark(
    fresh_kernel: Path, tmp_path: Path, built_warehouse: Path
) -> None:
    copied = tmp_path / "copied-warehouse"
    for name in ("events", "orders_cow"):
        shutil.copytree(table_location(built_warehouse, name), copied / NAMESPACE / name)
    (fresh_kernel / "spark-defaults.conf").write_text(
        "# a kernel's Spark configuration\n"
        "spark.sql.catalog.copied   org.apache.iceberg.spark.SparkCatalog\n"
        "spark.sql.catalog.copied.type   hadoop\n"
        f"spark.sql.catalog.copied.warehouse   {copied.as_uri()}\n"
        f"spark.sql.catalog.{CATALOG}=org.apache.iceberg.spark.SparkCatalog\n"
        f"spark.sql.catalog.{CATALOG}.type=hadoop\n"
        f"spark.sql.catalog.{CATALOG}.warehouse={built_warehouse}\n"
        "spark.sql.catalog.hms org.apache.iceberg.spark.SparkCatalog\n"
        "spark.sql.catalog.hms.type hive\n"
        "spark.sql.catalog.gone org.apache.iceberg.spark.SparkCatalog\n"
        "spark.sql.catalog.gone.type hadoop\n"
        f"spark.sql.catalog.gone.warehouse {tmp_path / 'no-such-warehouse'}\n"
        "spark.sql.catalog.other org.example.NotIceberg\n"
    )
    listed = {c["name"]: c for c in lake_browser.catalog_list() if c.get("source") == "spark"}
    assert sorted(listed) == ["copied", "gone", "hms", CATALOG]
    assert "error" not in listed["copied"] and "error" not in listed[CATALOG]
    assert listed[CATALOG]["warehouse"] == str(built_warehouse)
    assert "lists only Hadoop catalogs" in listed["hms"]["error"] and "\n" not in listed["hms"]["error"]
    assert "no-such-warehouse does not exist" in listed["gone"]["error"]
    assert lake_browser.namespace_list("copied") == {"namespaces": [NAMESPACE]}
    assert "lists only Hadoop catalogs" in lake_browser.namespace_list("hms")["error"]
    assert "does not exist" in lake_browser.namespace_list("gone")["error"]
    assert "does not exist" in lake_browser.table_page("gone", NAMESPACE)["error"]

    page = lake_browser.table_page("copied", NAMESPACE)
    assert page["total"] == 2 and [t["name"] for t in page["tables"]] == ["events", "orders_cow"]
    for row in page["tables"]:
        original = icebook.open(str(table_location(built_warehouse, row["name"])))
        current = original.current_snapshot
        assert row["error"] is None and row["identifier"] == f"copied.{NAMESPACE}.{row['name']}"
        assert row["card"]["metadata_location"].removeprefix("file:").startswith(str(copied / NAMESPACE / row["name"]))
        assert current is not None and row["card"]["current_snapshot_id"] == str(current.snapshot_id)
        assert row["card"]["snapshots"] == len(original.snapshots)
        assert row["card"]["records"] == int(current.summary["total-records"])

    built = sorted((read_marker(built_warehouse) or {})["scenarios"])
    demo = lake_browser.table_page(CATALOG, NAMESPACE, limit=500)
    assert demo["total"] == len(built) and [t["name"] for t in demo["tables"]] == built
    assert all(t["error"] is None for t in demo["tables"]), [t["error"] for t in demo["tables"] if t["error"]]


def test_the_panel_lists_a_spark_catalog_exactly_when_a_kernel_resolves_names_through_it(
    fresh_kernel: Path, built_warehouse: Path
) -> None:
    # The demo warehouse alone is no catalog: a fresh kernel resolves lake.db.events only through Spark's
    # configuration, and the panel lists what the kernel resolves.
    assert CATALOG not in {c["name"] for c in lake_browser.catalog_list()}
    with pytest.raises(NotFound, match=f"no Spark catalog '{CATALOG}' is configured"):
        icebook.open(f"{CATALOG}.{NAMESPACE}.events")
    (fresh_kernel / "spark-defaults.conf").write_text(
        f"spark.sql.catalog.{CATALOG}=org.apache.iceberg.spark.SparkCatalog\n"
        f"spark.sql.catalog.{CATALOG}.type=hadoop\n"
        f"spark.sql.catalog.{CATALOG}.warehouse={built_warehouse}\n"
    )
    assert spark_session.catalog_configured_for_startup(CATALOG)
    assert {c["name"]: c["source"] for c in lake_browser.catalog_list()}.get(CATALOG) == "spark"


def test_a_name_pyiceberg_also_configures_stays_pyicebergs(
    fresh_kernel: Path, tmp_path: Path, built_warehouse: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (fresh_kernel / "spark-defaults.conf").write_text(
        "spark.sql.catalog.both org.apache.iceberg.spark.SparkCatalog\n"
        "spark.sql.catalog.both.type hadoop\n"
        f"spark.sql.catalog.both.warehouse {built_warehouse}\n"
    )
    monkeypatch.setenv("PYICEBERG_CATALOG__BOTH__TYPE", "sql")
    monkeypatch.setenv("PYICEBERG_CATALOG__BOTH__URI", f"sqlite:///{tmp_path / 'both.db'}")
    rows = [c for c in lake_browser.catalog_list() if c["name"] == "both"]
    assert [row.get("source") for row in rows] == ["pyiceberg"]


def test_a_running_sessions_catalogs_are_listed_with_their_tables(warehouse: Path) -> None:
    listed = {c["name"]: c for c in lake_browser.catalog_list()}
    assert listed[CATALOG]["source"] == "spark" and listed[CATALOG]["warehouse"] == str(warehouse.resolve())
    namespaces = lake_browser.namespace_list(CATALOG)["namespaces"]
    events = table_location(warehouse, "events")
    namespace = events.parent.name
    assert namespace in namespaces
    page = lake_browser.table_page(CATALOG, namespace, text="events")
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


def test_no_session_no_spark_catalogs(warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spark_session, "session_running", lambda: False)
    assert CATALOG not in {c["name"] for c in lake_browser.catalog_list()}
    assert "error" in lake_browser.namespace_list(CATALOG)
