"""Bad command lines give one line, never a traceback: in the ``icebook`` command line (its ``main``
and the installed process) and in ``%ice`` (a real IPython shell)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from icebook.cli import main

DEEP_FILTER = "(" * 3000 + "event_id = 1" + ")" * 3000
CASES = [
    # (words after the table, what the one line must say)
    (["files", "{table}", "--at", "²"], "no branch, tag or snapshot named '²'"),
    (["files", "{table}", "--at", "0001-01-01T00:00:00+14:00"], "years 1 to 9999"),
    (["files", "{table}", "--at", "9999-12-31T23:59:59-14:00"], "years 1 to 9999"),
    (["explain", "{table}", DEEP_FILTER], "nested more than 200 levels"),
    (["explain", "{table}", " or ".join(f"event_id = {i}" for i in range(500))], "column in (...)"),
]


def _words(words: list[str], table: Path) -> list[str]:
    return [w.replace("{table}", str(table)) for w in words]


@pytest.mark.spark
@pytest.mark.parametrize(("words", "says"), CASES)
def test_command_line_errors_are_one_line(
    scenario_locations: dict[str, Path], capsys: pytest.CaptureFixture[str], words: list[str], says: str
) -> None:
    code = main(_words(words, scenario_locations["events"]))
    captured = capsys.readouterr()
    assert code == 1, captured
    assert says in captured.err and "Traceback" not in captured.err
    assert captured.err.count("\n") == 1 and captured.err.startswith("icebook: ")


@pytest.mark.spark
@pytest.mark.parametrize(("words", "says"), CASES)
def test_magic_errors_are_one_line(shell: InteractiveShell, words: list[str], says: str) -> None:
    command, _, *rest = words  # the open table stands in for {table}; explain takes its filter verbatim
    line = " ".join([command, *rest])
    with pytest.raises(UsageError) as info:
        shell.run_line_magic("ice", line)
    assert says in str(info.value) and "\n" not in str(info.value)


def _run_cli(*words: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_SUBMIT_ARGS", "SPARK_CONF_DIR", "SPARK_HOME")}
    return subprocess.run(
        [sys.executable, "-c", "import sys; from icebook.cli import main; sys.exit(main())", *words],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def test_a_mistyped_catalog_name_says_so_without_starting_spark() -> None:
    # Without the `spark` marker this runs with no Java (tests/_support/tiers.py): had the command started
    # Spark, its one line would say that no Java runtime was found.
    result = _run_cli("files", "lake.db.evnets")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "icebook: no table lake.db.evnets: it is not a path, and no Spark catalog 'lake' is configured "
        "(start one with icebook.spark.session(warehouse=..., catalog=...), or open the table by its path)"
    ], result.stderr
    assert "Spark" not in result.stdout


def test_help_is_printed_once() -> None:
    result = _run_cli("--help")
    assert result.returncode == 0
    assert result.stdout.count("usage: icebook") == 1
