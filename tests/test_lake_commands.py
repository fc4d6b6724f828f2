"""``%ice catalogs``, ``%ice tables [NAMESPACE]`` and ``%ice open`` by catalog name, and the same
on the command line, over the PyIceberg-written SQL catalog (configured by environment variables)."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell

from icebook.cli import main


def cli(*words: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(words), out=out)
    return code, out.getvalue()


@pytest.fixture()
def shell(pyiceberg_catalog: str) -> Iterator[InteractiveShell]:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "icebook")
    yield ip
    ip.run_line_magic("reload_ext", "icebook")


def test_catalogs_and_tables_on_the_command_line(pyiceberg_catalog: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, text = cli("catalogs")
    assert code == 0 and "sqlcat" in text and "pyiceberg" in text and "sqlite:///" in text
    code, text = cli("tables", "sqlcat.db")
    assert code == 0 and "sqlcat.db.trips" in text and "sqlcat.db.readings" in text
    code, text = cli("tables", "sqlcat")  # every namespace of the catalog
    assert code == 0 and "sqlcat.db.trips" in text
    code, text = cli("history", "sqlcat.db.trips")  # any command takes a catalog name for its table
    assert code == 0 and text.count("\n") >= 8
    code, _ = cli("tables", "sqlcat.sales")
    assert code == 1 and "no namespace 'sales' in catalog 'sqlcat'; available: db" in capsys.readouterr().err
    code, _ = cli("tables", "nocat.db")
    assert code == 1 and "no catalog 'nocat'" in capsys.readouterr().err


def test_catalogs_tables_and_open_in_a_notebook(shell: InteractiveShell) -> None:
    catalogs = shell.run_line_magic("ice", "catalogs")
    assert "sqlcat" in list(catalogs["catalog"])
    tables = shell.run_line_magic("ice", "tables sqlcat.db")
    assert list(tables["table"]) == ["sqlcat.db.readings", "sqlcat.db.trips"]
    trips = shell.run_line_magic("ice", "open sqlcat.db.trips --as trips")
    assert trips.identifier == "sqlcat.db.trips"
    readings = shell.run_line_magic("ice", "open db.readings --catalog sqlcat --as readings")
    assert readings.identifier == "sqlcat.db.readings" and readings.format_version == 1
    opened = shell.run_line_magic("ice", "tables")  # without a namespace: the open tables
    assert list(opened["name"]) == ["trips", "readings"]
    files = shell.run_line_magic("ice", "files --table trips --at release-1")
    assert len(files) >= 2
