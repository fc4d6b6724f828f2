"""The ``icebook`` console script: each subcommand's text output on the scenario tables."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

import icebook
from icebook.cli import main

pytestmark = pytest.mark.spark


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(args), out=out)
    return code, out.getvalue()


def test_history_snapshots_refs(scenario_locations: dict[str, Path]) -> None:
    path = str(scenario_locations["events"])
    t = icebook.open(path)
    code, text = run("history", path)
    assert code == 0 and all(
        str(s.snapshot_id) in text
        for s in t.snapshots
        if s.snapshot_id in {e.snapshot_id for e in t.metadata.snapshot_log}
    )
    code, text = run("snapshots", path)
    assert code == 0 and text.count("append") >= 6 and "overwrite" in text
    code, text = run("refs", path)
    assert code == 0 and "release-2024-01" in text and "TAG" in text and "audit" in text


def test_files_and_manifests(scenario_locations: dict[str, Path]) -> None:
    path = str(scenario_locations["orders_cow"])
    t = icebook.open(path)
    code, text = run("files", path, "--where", "record_count > 0")
    assert code == 0
    for file_path in t.inspect.files()["file_path"]:
        assert file_path in text
    code, text = run("manifests", path, "--at", str(t.snapshots[0].snapshot_id))
    assert code == 0 and t.inspect.manifests(at=t.snapshots[0].snapshot_id)["path"][0] in text


def test_tree(scenario_locations: dict[str, Path]) -> None:
    path = str(scenario_locations["events"])
    t = icebook.open(path)
    code, text = run("tree", path, "--at", "audit")
    assert code == 0
    assert text.startswith("metadata v")
    assert f"snapshot {t.snapshot('audit').snapshot_id}" in text and "[audit]" in text
    assert "manifest list snap-" in text and "attempt=1" in text and "commit_uuid=" in text
    assert "ADDED data" in text and "position deletes" in text and "(inherited)" not in text.splitlines()[0]
    for m in t.inspect.manifests(at="audit")["path"]:
        assert m.rsplit("/", 1)[-1] in text


def test_help_and_errors(scenario_locations: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, text = run()
    assert code == 0 and "history" in text and "diff" in text
    code, text = run("files", "--help")
    assert code == 0 and "--where" in text
    code, _ = run("files", str(scenario_locations["events"]), "--at", "nope")
    assert code == 1 and "no branch, tag or snapshot named 'nope'" in capsys.readouterr().err
    code, _ = run("history", "/no/such/table")
    assert code == 1 and "/no/such/table" in capsys.readouterr().err


def test_console_script_is_installed(scenario_locations: dict[str, Path]) -> None:
    exe = Path(sys.executable).parent / "icebook"
    result = subprocess.run([str(exe), "refs", str(scenario_locations["legacy_v1"])], capture_output=True, text=True)
    assert result.returncode == 0 and "main" in result.stdout and "BRANCH" in result.stdout
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True)
    assert version.stdout.strip() == f"icebook {icebook.__version__}"


def test_analysis_subcommands_print_text(scenario_locations: dict[str, Path]) -> None:
    path = str(scenario_locations["events"])
    t = icebook.open(path)
    code, text = run("diff", path, "release-2024-01", "audit")
    assert code == 0 and text.startswith("SnapshotDiff") and "data files: +2" in text
    code, text = run("lineage", path)
    assert code == 0 and "(tag: release-2024-01)" in text and "(audit)" in text
    code, text = run("evolution", path)
    assert code == 0 and "renamed: page (id 5): payload -> page" in text and "ts_day=day(ts)" in text
    code, text = run("explain", path, "--at", "main", "region = 'eu'")
    assert code == 0 and "Partition filter for spec 0: region = 'eu'" in text
    first = str(t.snapshots[0].snapshot_id)
    code, text = run("changes", path, first, "release-2024-01")
    assert code == 0 and "_change_type" in text and "DELETE" in text and "INSERT" in text
    code, _ = run("explore", path)
    assert code == 2
