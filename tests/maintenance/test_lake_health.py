"""The namespace health report on a SQL catalog holding the ``debt`` scenario (registered from its
metadata file, as a catalog migration does) beside clean tables written by PyIceberg: each kind of
debt is named on the right table, and that table ranks first; the same through ``icebook health``."""

from __future__ import annotations

import io
from pathlib import Path

import pyarrow as pa
import pytest

import icebook
from icebook.analysis.maintenance.health import Area, HealthReport
from icebook.analysis.maintenance.lake_health import (
    LakeHealth,
    TableHealth,
    lake_health,
)
from icebook.cli import main
from icebook.io.fileio import default_fileio
from icebook.io.locate import locate_metadata

pytestmark = pytest.mark.spark

CATALOG = "lake"
NAMESPACE = "ops"
CLEAN = ("clean_orders", "clean_events")


@pytest.fixture(scope="module")
def lake(scenario_locations: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    from pyiceberg.catalog.sql import SqlCatalog

    root = tmp_path_factory.mktemp("lake")
    (root / "warehouse").mkdir()
    properties = {"type": "sql", "uri": f"sqlite:///{root / 'catalog.db'}", "warehouse": (root / "warehouse").as_uri()}
    catalog = SqlCatalog(CATALOG, **properties)
    catalog.create_namespace(NAMESPACE)
    debt = locate_metadata(default_fileio(), str(scenario_locations["debt"]))
    catalog.register_table((NAMESPACE, "debt"), debt)
    for name in CLEAN:
        rows = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", "c"]})
        table = catalog.create_table((NAMESPACE, name), rows.schema)
        table.append(rows)
    return properties["uri"], properties["warehouse"]


@pytest.fixture
def configured(lake: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    uri, warehouse = lake
    monkeypatch.setenv(f"PYICEBERG_CATALOG__{CATALOG.upper()}__TYPE", "sql")
    monkeypatch.setenv(f"PYICEBERG_CATALOG__{CATALOG.upper()}__URI", uri)
    monkeypatch.setenv(f"PYICEBERG_CATALOG__{CATALOG.upper()}__WAREHOUSE", warehouse)


def _by_table(report: LakeHealth) -> dict[str, TableHealth]:
    return {row.identifier.rsplit(".", 1)[-1]: row for row in report.rows}


def test_cheap_pass_names_the_metadata_debts_on_the_debt_table(configured: None) -> None:
    report = lake_health(CATALOG, NAMESPACE, progress=False)
    assert not report.deep
    assert report.rows[0].identifier == f"{CATALOG}.{NAMESPACE}.debt"
    rows = _by_table(report)
    assert set(rows) == {"debt", *CLEAN}
    assert {Area.SMALL_FILES, Area.DELETE_DEBT, Area.HISTORY, Area.REFS} <= set(rows["debt"].kinds)
    for name in CLEAN:
        assert rows[name].debts == () and rows[name].badge == "ok" and rows[name].error is None
        card = rows[name].card
        assert card is not None and card.records == 3 and card.snapshots == 1 and card.refs == 1
    debt_card = rows["debt"].card
    assert debt_card is not None
    metadata = icebook.open(str(debt_card.metadata_location)).metadata
    current = metadata.current_snapshot()
    assert current is not None
    assert debt_card.current_snapshot_id == current.snapshot_id
    assert debt_card.snapshots == len(metadata.snapshots) and debt_card.refs == len(metadata.refs)
    assert debt_card.records == int(current.summary["total-records"])
    assert debt_card.delete_files == int(current.summary["total-delete-files"])
    for debt in rows["debt"].debts:
        assert debt.procedure is not None


def test_full_pass_adds_orphans_and_manifests_and_ranks_debt_first(configured: None) -> None:
    def deep(identifier: str) -> HealthReport:
        return icebook.open(identifier).maintenance.health()

    report = lake_health(CATALOG, NAMESPACE, deep=deep, progress=False)
    assert report.deep
    assert report.rows[0].identifier == f"{CATALOG}.{NAMESPACE}.debt"
    rows = _by_table(report)
    debt = rows["debt"]
    assert debt.deep
    assert {Area.SMALL_FILES, Area.DELETE_DEBT, Area.HISTORY, Area.ORPHANS, Area.MANIFESTS} <= set(debt.kinds)
    procedures = {d.kind: d.procedure.name for d in debt.debts if d.procedure is not None}
    assert procedures[Area.SMALL_FILES] == "rewrite_data_files"
    assert procedures[Area.HISTORY] == "expire_snapshots"
    assert procedures[Area.ORPHANS] == "remove_orphan_files"
    assert procedures[Area.MANIFESTS] == "rewrite_manifests"
    orphans = next(d for d in debt.debts if d.kind == Area.ORPHANS)
    assert "orphan files" in orphans.title
    for name in CLEAN:
        assert rows[name].debts == () and rows[name].deep
    frame = report.to_pandas()
    assert list(frame.columns) == ["rank", "table", "badge", "debt", "detail", "procedure"]
    assert set(frame[frame["table"] == f"{CATALOG}.{NAMESPACE}.debt"]["rank"]) == {1}
    expected = f"CALL {CATALOG}.system.rewrite_manifests(table => '{NAMESPACE}.debt')"
    assert expected in set(frame["procedure"].dropna())


def test_icebook_health_on_a_namespace(configured: None, capsys: pytest.CaptureFixture[str]) -> None:
    out = io.StringIO()
    assert main(["health", f"{CATALOG}.{NAMESPACE}", "--quick"], out=out) == 0
    text = out.getvalue()
    assert f"{CATALOG}.{NAMESPACE}: 3 tables, 1 with maintenance debt (metadata only" in text
    lines = [ln for ln in text.splitlines() if f"{CATALOG}.{NAMESPACE}." in ln]
    assert f"{CATALOG}.{NAMESPACE}.debt" in lines[0]
    assert "rewrite_data_files" in text and "expire_snapshots" in text
    out = io.StringIO()
    assert main(["health", f"{CATALOG}.{NAMESPACE}.debt", "--quick"], out=out) == 1
    assert "--quick is for CATALOG.NAMESPACE" in capsys.readouterr().err
