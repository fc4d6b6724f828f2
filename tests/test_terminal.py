"""The command line in a terminal: every command's output fits ``COLUMNS`` and shows values as Iceberg
writes them for people (no Python repr); ``--wide``, ``--json``, ``--csv``; the demo guides; a warehouse
directory lists its tables; ``--help`` is grouped."""

from __future__ import annotations

import datetime as dt
import io
import json
import re
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell

import icebook
from icebook.cli import main
from icebook.commands import COMMANDS, GROUPS, Context
from icebook.display._base import cell_text
from icebook.display.terminal import frame_text, shorten, value_text

WIDTH = 100
REPR = re.compile(
    r"datetime\.|Decimal\(|Timestamp\(|\bb'|\\x[0-9a-f]{2}|array\(|<NA>|\bNaT\b|\bnan\b|\d{6,}: 0x|object at 0x"
)
# Commands that write to the table (run on copies by their own tests) and the book (kernels for every
# lesson: the packaging test builds one) are not run here.
NOT_RUN = {"branch", "tag", "rollback", "cherrypick", "book"}


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(args), out=out)
    return code, out.getvalue()


def _invocations(locations: dict[str, Path], warehouse: Path, tmp: Path) -> list[tuple[str, ...]]:
    events, exact, debt = (str(locations[n]) for n in ("events", "exact_values", "debt"))
    out: list[tuple[str, ...]] = [
        ("--help",),
        ("demo",),
        ("tables", str(warehouse)),
        ("catalogs",),
        ("cache", "info"),
        ("version",),
        ("help",),
        ("lessons", str(tmp / "lessons")),
        ("diff", events, "release-2024-01", "audit"),
        ("changes", exact, "first", "main"),
        ("explain", events, "region = 'eu'"),
        ("sql", exact, "SELECT * FROM t", "--engine", "arrow"),
        ("sql", events, "SELECT region, count(*) FROM t GROUP BY region", "--engine", "arrow"),
        ("health", debt),
        ("storage", debt),
        ("maintain", debt, "compact", "--dry-run"),
        ("maintain", debt, "expire", "--dry-run"),
        ("why", debt, str(Path(debt) / "metadata" / "version-hint.text")),
    ]
    given = {o[0] for o in out}
    for command in COMMANDS:  # every other table command, on two tables
        if command.on_table and Context.CLI in command.contexts and command.name not in given | NOT_RUN:
            out += [(command.name, events), (command.name, exact)]
    return out


@pytest.mark.spark
def test_every_command_fits_100_columns_without_python_repr(
    scenario_locations: dict[str, Path], warehouse: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    monkeypatch.setenv("ICEBOOK_DEMO_WAREHOUSE", str(warehouse))
    runs = _invocations(scenario_locations, warehouse, tmp_path)
    ran = {r[0] for r in runs}
    cli_commands = {c.name for c in COMMANDS if Context.CLI in c.contexts}
    assert cli_commands - ran == NOT_RUN
    for words in runs:
        code, text = run(*words)
        assert code == 0, words
        assert text.strip(), words
        for line in text.splitlines():
            assert len(line) <= WIDTH, f"{words}: {len(line)} columns: {line}"
        found = REPR.search(text)
        assert found is None, f"{words}: Python repr {found.group(0)!r} in\n{text}"


@pytest.mark.spark
def test_values_read_as_iceberg_writes_them(
    scenario_locations: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert value_text(dt.date(2024, 1, 7)) == "2024-01-07"
    assert value_text(Decimal("12345678901.123456")) == "12345678901.123456"
    assert value_text({"region": "eu", "day": None}) == "{region=eu, day=null}"
    assert value_text([("a", 1), ("b", None)]) == "{a: 1, b: null}"
    assert value_text(b"\x2f\x74") == "0x2F74"
    # the query panel's HTML cells of exact (Arrow-backed) results: a null, a map, a decimal
    assert cell_text(pd.NA) == "null" and cell_text([("a", 1)]) == "{a: 1}" and cell_text(Decimal("1E-6")) == "0.000001"
    monkeypatch.setenv("COLUMNS", "200")
    path = str(scenario_locations["events"])
    code, text = run("delete-files", path, "--json")
    rows = json.loads(text)
    assert code == 0 and rows
    for row in rows:  # position-delete bounds decoded by their reserved columns' types
        assert set(row["lower_bounds"]) <= {"file_path", "pos"} and row["lower_bounds"]["file_path"].startswith("/")
        assert isinstance(row["partition"]["ts_day"], str | None)
    code, text = run("files", path, "--csv")
    frame = pd.read_csv(io.StringIO(text))
    assert code == 0 and len(frame) == len(icebook.open(path).inspect.files())
    assert "ts=2024-01-0" in text and "event_id=" in text  # data file bounds by column name and type
    code, text = run("files", str(scenario_locations["exact_values"]), "--wide")
    assert code == 0 and "9007199254740993" in text and "12345678901.123456" in text
    assert max(len(line) for line in text.splitlines()) > 200  # --wide ignores the width


def test_long_paths_shortened_in_the_middle() -> None:
    path = "/warehouse/db/events/data/region=eu/ts_day=2024-01-04/00000-92-08365711-c66e-0-00002.parquet"
    short = shorten(path, 40)
    assert len(short) == 40 and short.startswith("/warehouse/db/") and short.endswith("00002.parquet")
    text = frame_text(pd.DataFrame({"file_path": [path] * 3, "n": [1, 2, 3]}), width=50)
    assert all(len(line) <= 50 for line in text.splitlines()) and "…" in text


@pytest.mark.spark
def test_demo_guides_and_refuses_a_wrong_kind(
    warehouse: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ICEBOOK_DEMO_WAREHOUSE", str(warehouse))
    code, text = run("demo")
    assert code == 0 and str(warehouse) in text
    for name in ("events", "debt", "exact_values"):
        assert f"db/{name}" in text
    tries = text.split("Try next:", 1)[1].strip().splitlines()
    assert len(tries) == 3 and all(line.strip().startswith("icebook ") for line in tries)
    for line in tries:  # the commands it suggests run
        assert run(*line.split()[1:])[0] == 0, line
    code, text = run("demo", "--help")
    assert code == 0 and "{demo,test}" in text and "Try next" not in text  # help, not a build
    code, _ = run("demo", "events")
    err = capsys.readouterr().err
    assert code == 1 and "invalid choice: 'events'" in err and "'demo'" in err and "'test'" in err


@pytest.mark.spark
def test_tables_of_a_warehouse_directory(
    warehouse: Path, scenario_locations: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    code, text = run("tables", str(warehouse))
    assert code == 0
    for name, location in scenario_locations.items():
        assert f"db/{name}" in text and str(location) in text
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "icebook")
    try:
        listed = ip.run_line_magic("ice", f"tables {warehouse}")
        assert sorted(listed["location"]) == sorted(str(p) for p in scenario_locations.values())
    finally:
        ip.run_line_magic("reload_ext", "icebook")
    code, _ = run("tables", str(warehouse / "db" / "events" / "data"))
    assert code == 1 and "no Iceberg table under" in capsys.readouterr().err


def test_help_is_grouped_in_order() -> None:
    code, text = run("--help")
    assert code == 0
    positions = [text.index(f"  {group}: ") for group, _ in GROUPS]
    assert positions == sorted(positions)
    for command in COMMANDS:
        assert f"    {command.name} " in text
    assert text.index("    demo ") > positions[-1] and text.index("    files ") < positions[1]


def test_a_frame_is_text_inside_a_notebook_kernel_too(monkeypatch: pytest.MonkeyPatch) -> None:
    # In a kernel rich would display its table as a notebook output of its own and write nothing to its file:
    # the text/plain of a result would come out empty, and a stray table would show above the live view.
    import rich.console

    shown: list[object] = []
    monkeypatch.setattr(rich.console, "_is_jupyter", lambda: True)
    monkeypatch.setattr("rich.jupyter.display", lambda *args: shown.append(args))
    text = frame_text(pd.DataFrame({"file_path": ["a.parquet"], "rows": [3]}), width=40)
    assert "a.parquet" in text and shown == []
