"""``icebook timelapse`` and ``%ice timelapse``: the same frames as ``Table.timelapse``, as text or displayed."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
from IPython.core.interactiveshell import InteractiveShell

import icebook
from icebook.analysis.history.timelapse import Timelapse
from icebook.cli import main

pytestmark = pytest.mark.spark


def run(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(args), out=out)
    return code, out.getvalue()


def test_the_command_line_prints_one_line_per_frame(
    scenario_locations: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(scenario_locations["events"])
    t = icebook.open(path)
    code, text = run("timelapse", path)
    assert code == 0
    lines = text.strip().splitlines()
    assert lines[0] == repr(t.timelapse())
    assert len(lines) == 1 + len(t.snapshots)
    assert all(str(s.snapshot_id) in text for s in t.snapshots)
    code, text = run("timelapse", path, "--ref", "audit")
    audit = t.timelapse(ref="audit").to_pandas()
    assert code == 0 and len(text.strip().splitlines()) == 1 + len(audit)
    assert "of ref audit" in text
    code, text = run("timelapse", path, "--partitions")
    assert code == 0 and "record_count" in text
    code, _ = run("timelapse", path, "--ref", "no-such-ref")
    assert code == 1 and "no-such-ref" in capsys.readouterr().err


def test_the_magic_returns_the_time_lapse(shell: InteractiveShell, scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    lapse = shell.run_line_magic("ice", "timelapse --ref main")
    assert isinstance(lapse, Timelapse)
    pd.testing.assert_frame_equal(lapse.to_pandas(), t.timelapse(ref="main").to_pandas())
    first = t.timelapse().to_pandas()["snapshot_id"].iloc[1]
    since = shell.run_line_magic("ice", f"timelapse --since {first}")
    assert int(since.to_pandas()["snapshot_id"].iloc[0]) == int(first)
    partitions = shell.run_line_magic("ice", "timelapse --partitions")
    pd.testing.assert_frame_equal(pd.DataFrame(partitions), t.timelapse().partitions_frame())
