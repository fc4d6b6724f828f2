"""One grammar for the command line and the magics: the same commands through ``icebook`` and ``%ice``
(a real IPython InteractiveShell) parse alike and give the same results, text on one side and
displayed objects on the other."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell

import icebook
from icebook.cli import main
from icebook.commands import COMMANDS, CommandError, Context, HelpShown, build_parser, parse, parse_cell
from icebook.display.registry import registered, render_html, render_text

# (the %ice line, the same command's words after the table on the command line, as a shell passes them)
SAME_COMMANDS = [
    ("diff release-2024-01 audit", ["release-2024-01", "audit"]),
    ("history", []),
    ("snapshots", []),
    ("refs", []),
    ("manifests --at audit", ["--at", "audit"]),
    ("files --at release-2024-01 --where 'content == 0 and record_count > 1'", ["--at", "release-2024-01", "--where", "content == 0 and record_count > 1"]),
    ("tree --at audit", ["--at", "audit"]),
    ("lineage", []),
    ("evolution", []),
    ("changes {first} release-2024-01", ["{first}", "release-2024-01"]),
    ("explain --at main ts >= '2024-01-04' and region = 'eu'", ["--at", "main", "ts >= '2024-01-04' and region = 'eu'"]),
    ("explain region = '--at x'", ["region = '--at x'"]),
    ("sql --engine arrow SELECT region, count(*) AS n FROM t GROUP BY region ORDER BY region", ["--engine", "arrow", "SELECT region, count(*) AS n FROM t GROUP BY region ORDER BY region"]),
    ("version", []),
    ("entries --at audit", ["--at", "audit"]),
    ("partitions --at release-2024-01", ["--at", "release-2024-01"]),
    ("position-deletes --at audit", ["--at", "audit"]),
    ("metadata-log", []),
    ("all-files", []),
    ("all-data-files", []),
    ("all-delete-files", []),
    ("all-entries", []),
    ("all-manifests", []),
    ("maintain compact --dry-run --option min-input-files=2", ["compact", "--dry-run", "--option", "min-input-files=2"]),
    ("maintain rewrite-manifests --dry-run", ["rewrite-manifests", "--dry-run"]),
    ("maintain rewrite-deletes --dry-run", ["rewrite-deletes", "--dry-run"]),
    ("maintain orphans --dry-run --older-than 2100-01-01", ["orphans", "--dry-run", "--older-than", "2100-01-01"]),
]  # fmt: skip
NOT_PARSED = {"table", "output", "wide", "json", "csv"}  # how each context names the table and shows the result


def cli(*words: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(words), out=out)
    return code, out.getvalue()


def _parsed(args: Any) -> dict[str, Any]:
    return {k: v for k, v in vars(args).items() if k not in NOT_PARSED}


@pytest.mark.spark
def test_the_same_commands_through_the_command_line_and_the_magic(
    shell: InteractiveShell, scenario_locations: dict[str, Path]
) -> None:
    location = str(scenario_locations["events"])
    first = str(icebook.open(location).snapshots[0].snapshot_id)
    cli_parser, notebook_parser = build_parser(Context.CLI), build_parser(Context.NOTEBOOK)
    for line, rest in SAME_COMMANDS:
        line = line.format(first=first)
        command = line.split()[0]
        words = [command, *([] if command == "version" else [location]), *(w.format(first=first) for w in rest)]
        # One grammar: the same arguments whichever way the command came.
        from_cli, from_notebook = parse(cli_parser, words), parse(notebook_parser, line)
        assert _parsed(from_cli) == _parsed(from_notebook), line
        assert command == "version" or (from_notebook.table is None and from_cli.table == location)
        # The same result: the command line's text is the text of what the magic returns ...
        code, text = cli(*words)
        assert code == 0, line
        shown = shell.run_line_magic("ice", line)
        assert text == render_text(shown) + "\n", line
        # ... and IPython shows the magic's result through the same renderers.
        data, _ = shell.display_formatter.format(shown)
        if type(shown) in registered():
            assert data["text/plain"] == text.rstrip("\n") and data["text/html"] == render_html(shown), line
        elif isinstance(shown, pd.DataFrame):
            assert len(shown) and "<table" in data["text/html"], line


@pytest.mark.spark
def test_notebook_only_commands(shell: InteractiveShell, scenario_locations: dict[str, Path]) -> None:
    code, _ = cli("explore", str(scenario_locations["events"]))
    assert code == 2
    assert shell.run_line_magic("ice", "explore") is not None
    code, _ = cli("tables")  # on the command line, tables lists a catalog namespace: it needs one
    assert code == 1
    assert list(shell.run_line_magic("ice", "tables")["name"]) == ["events"]


def test_help_is_shown_once(capsys: pytest.CaptureFixture[str]) -> None:
    for words in (["--help"], [], ["help"]):
        code, text = cli(*words)
        assert code == 0 and text.count("usage: icebook") == 1 and "history" in text, words
    assert capsys.readouterr().out == ""  # nothing printed behind the caller's back
    exe = Path(sys.executable).parent / "icebook"
    result = subprocess.run([str(exe), "--help"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.count("usage: icebook") == 1 and not result.stderr


def test_every_command_is_in_both_grammars() -> None:
    for context in Context:
        parser = build_parser(context)
        for command in COMMANDS:
            with pytest.raises(HelpShown) as shown:
                parse(parser, [command.name, "--help"])
            assert " ".join(command.help.split()) in " ".join(shown.value.text.split())


def test_cell_options_are_split_like_a_shell() -> None:
    parser = build_parser(Context.NOTEBOOK)
    args = parse_cell(parser, "--at '2024-01-05 10:00:00' -o rows --engine arrow", "SELECT '--at' AS x\nFROM t")
    assert args.command == "sql" and args.at == "2024-01-05 10:00:00" and args.output == "rows"
    assert args.engine == "arrow" and args.query == ["SELECT '--at' AS x\nFROM t"]
    with pytest.raises(CommandError, match="cannot parse"):
        parse_cell(parser, "--at 'unclosed", "SELECT 1")
    with pytest.raises(CommandError, match="not allowed with argument"):
        parse_cell(parser, "--at 1 --branch b", "SELECT 1")


def test_free_text_keeps_its_quotes_in_a_line() -> None:
    parser = build_parser(Context.NOTEBOOK)
    args = parse(parser, "explain --table events --at 'release-2024-01'  region = 'eu' and kind != \"x\"")
    assert (args.table, args.at) == ("events", "release-2024-01")
    assert args.expr == ["region = 'eu' and kind != \"x\""]
    assert parse(parser, 'files --where "content == 1"').where == "content == 1"
