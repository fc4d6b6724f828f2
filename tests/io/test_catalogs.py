"""Catalogs configured the way Python users configure PyIceberg: ``.pyiceberg.yaml`` and
``PYICEBERG_CATALOG__<NAME>__<KEY>`` variables; names resolve to the current metadata file."""

from __future__ import annotations

import socket
import sqlite3
from pathlib import Path

import pytest

import icebook
from icebook.errors import CatalogError, NotFound
from icebook.io import catalogs
from icebook.scenarios.sql_catalog.pyiceberg_warehouse import catalog_properties, ensure_pyiceberg_warehouse


def _current_in_catalog_db(root: Path, name: str) -> str:
    with sqlite3.connect(root / "catalog.db") as db:
        row = db.execute(
            "SELECT metadata_location FROM iceberg_tables WHERE table_namespace = 'db' AND table_name = ?", (name,)
        ).fetchone()
    return str(row[0])


def test_env_configured_catalog_resolves_names(pyiceberg_catalog: str) -> None:
    root = ensure_pyiceberg_warehouse("test", progress=False)
    t = icebook.open(f"{pyiceberg_catalog}.db.trips")
    assert t.identifier == "sqlcat.db.trips"
    assert t.metadata_location == _current_in_catalog_db(root, "trips")
    same = icebook.open("db.trips", catalog=pyiceberg_catalog)
    assert same.metadata_location == t.metadata_location and same.metadata == t.metadata
    assert t.reopen().metadata_location == t.metadata_location
    assert catalogs.list_namespaces(pyiceberg_catalog) == ["db"]
    assert catalogs.list_tables(pyiceberg_catalog, "db") == ["db.readings", "db.trips"]
    assert pyiceberg_catalog in catalogs.catalog_names()
    shown = catalogs.describe(pyiceberg_catalog)
    assert shown["type"] == "sql" and shown["uri"].startswith("sqlite:///")


def test_pyiceberg_yaml_in_pyiceberg_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = ensure_pyiceberg_warehouse("test", progress=False)
    props = catalog_properties(root)
    (tmp_path / ".pyiceberg.yaml").write_text(
        "catalog:\n  sqlcat:\n" + "".join(f"    {k}: {v}\n" for k, v in props.items())
    )
    monkeypatch.setenv("PYICEBERG_HOME", str(tmp_path))
    t = icebook.open("sqlcat.db.readings")
    assert t.format_version == 1 and t.metadata_location == _current_in_catalog_db(root, "readings")


def test_unknown_catalog_namespace_and_table_list_what_exists(pyiceberg_catalog: str) -> None:
    with pytest.raises(NotFound) as info:
        icebook.open("db.trips", catalog="nope")
    assert "no catalog 'nope'" in str(info.value) and pyiceberg_catalog in info.value.available
    with pytest.raises(NotFound) as info:
        icebook.open(f"{pyiceberg_catalog}.sales.trips")
    assert "no namespace 'sales'" in str(info.value) and info.value.available == ("db",)
    with pytest.raises(NotFound) as info:
        icebook.open(f"{pyiceberg_catalog}.db.tripz")
    assert "no table 'db.tripz'" in str(info.value) and info.value.available == ("db.readings", "db.trips")
    with pytest.raises(NotFound) as info:
        catalogs.list_tables(pyiceberg_catalog, "sales")
    assert info.value.available == ("db",)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_catalog_is_one_line_naming_catalog_and_uri(monkeypatch: pytest.MonkeyPatch) -> None:
    uri = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("PYICEBERG_CATALOG__DOWN__TYPE", "rest")
    monkeypatch.setenv("PYICEBERG_CATALOG__DOWN__URI", uri)
    with pytest.raises(CatalogError) as info:
        icebook.open("down.db.events")
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"catalog 'down' at {uri}: ")
    assert "Connection" in message


def test_a_broken_sql_catalog_is_one_line_and_nothing_is_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "empty.db"
    sqlite3.connect(db).close()  # an empty database: no iceberg_tables table
    before = db.stat().st_size
    monkeypatch.setenv("PYICEBERG_CATALOG__EMPTY__TYPE", "sql")
    monkeypatch.setenv("PYICEBERG_CATALOG__EMPTY__URI", f"sqlite:///{db}")
    with pytest.raises(CatalogError) as info:
        icebook.open("empty.db.events")
    assert "\n" not in str(info.value) and "catalog 'empty' at sqlite:///" in str(info.value)
    assert db.stat().st_size == before  # reading never creates the catalog's tables


def test_credentials_in_uris_are_not_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYICEBERG_CATALOG__PG__TYPE", "sql")
    monkeypatch.setenv("PYICEBERG_CATALOG__PG__URI", "postgresql+psycopg2://etl:hunter2@127.0.0.1:1/lake")
    assert catalogs.describe("pg")["uri"] == "postgresql+psycopg2://etl:***@127.0.0.1:1/lake"
    with pytest.raises(CatalogError) as info:
        icebook.open("pg.db.events")
    assert "hunter2" not in str(info.value) and "\n" not in str(info.value)
