"""A ``WhyKept`` shown: text within the terminal's width, HTML escaped, the call as Spark SQL."""

from __future__ import annotations

import pandas as pd
import pytest

from icebook.analysis.maintenance.why_kept import KEEPER_COLUMNS, Removal, WhyKept
from icebook.display.registry import render_html, render_text


def _why(path: str, removal: Removal) -> WhyKept:
    keepers = pd.DataFrame(
        [{"snapshot_id": 1, "refs": "tag <v1> (head)", "committed_at": pd.Timestamp(0, tz="UTC"), "retained_by": "x"}],
        columns=KEEPER_COLUMNS,
    )
    return WhyKept(path=path, kind="data file", status="reached by 1 snapshot", keepers=keepers, removed_by=removal)


def test_text_fits_the_terminal_and_html_is_escaped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    removal = Removal(procedure="expire_snapshots", args={"older_than": 1_700_000_000_001}, first=("drop tag '<v1>'",))
    why = _why("/warehouse/db/t/data/" + "x" * 150 + "<script>.parquet", removal)
    text = render_text(why)
    head = text.split("\n\nkept by")[0]
    assert all(len(line) <= 80 for line in head.splitlines())
    assert "drop tag '<v1>'; then expire_snapshots(older_than=2023-11-14 22:13:20 UTC)" in text.replace("\n  ", " ")
    html = render_html(why)
    assert "<script>" not in html and "&lt;script&gt;" in html and "&lt;v1&gt;" in html


def test_the_call_as_spark_sql() -> None:
    removal = Removal(procedure="expire_snapshots", args={"older_than": 1_700_000_000_001, "retain_last": 2})
    assert removal.call("lake.db.t") == (
        "CALL lake.system.expire_snapshots(table => 'db.t', "
        "older_than => TIMESTAMP '2023-11-14 22:13:20.001000', retain_last => 2)"
    )
    assert Removal(procedure=None, first=("drop branch 'audit'",)).call() == ""
