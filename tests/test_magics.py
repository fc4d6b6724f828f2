"""``%ice`` / ``%%ice`` driven through a real IPython InteractiveShell against the scenario tables."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import icebook

pytestmark = pytest.mark.spark


def ice(ip: InteractiveShell, line: str) -> Any:
    return ip.run_line_magic("ice", line)


def test_open_and_listings_equal_the_python_api(shell: InteractiveShell, scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    pd.testing.assert_frame_equal(ice(shell, "history"), t.inspect.history())
    pd.testing.assert_frame_equal(ice(shell, "snapshots"), t.inspect.snapshots())
    pd.testing.assert_frame_equal(ice(shell, "refs"), t.inspect.refs())
    pd.testing.assert_frame_equal(ice(shell, "manifests --at audit"), t.inspect.manifests(at="audit"))
    first = t.snapshots[0].snapshot_id
    pd.testing.assert_frame_equal(ice(shell, f"files --at {first}"), t.inspect.files(at=first))


def test_files_where(shell: InteractiveShell) -> None:
    deletes = ice(shell, 'files --where "content == 1"')
    assert len(deletes) > 0 and set(deletes["content"]) == {1}


def test_several_open_tables_one_current(shell: InteractiveShell, scenario_locations: dict[str, Path]) -> None:
    ice(shell, f"open {scenario_locations['orders_cow']}")
    tables = ice(shell, "tables")
    assert list(tables["name"]) == ["events", "orders_cow"]
    assert tables.set_index("name").loc["orders_cow", "current"]
    assert len(ice(shell, "snapshots")) == 6
    ice(shell, "use events")
    assert len(ice(shell, "snapshots")) == 9
    assert len(ice(shell, "snapshots --table orders_cow")) == 6


def test_cell_sql_through_spark_pinned_and_stored(shell: InteractiveShell, spark: Any) -> None:
    result = shell.run_cell_magic(
        "ice", "--at release-2024-01 -o counts", "SELECT region, count(*) AS n FROM t GROUP BY region"
    )
    expected = spark.sql(
        "SELECT region, count(*) AS n FROM lake.db.events VERSION AS OF 'release-2024-01' GROUP BY region"
    ).toPandas()
    got = result.sort_values("region").reset_index(drop=True)
    assert got["region"].tolist() == sorted(expected["region"].tolist())
    assert got["n"].tolist() == expected.sort_values("region")["n"].tolist()
    assert shell.user_ns["counts"] is result


def test_cell_branch_and_named_views_and_template(shell: InteractiveShell, spark: Any) -> None:
    shell.user_ns["min_id"] = 99
    result = shell.run_cell_magic(
        "ice", "--branch audit", "SELECT count(*) AS n FROM events WHERE event_id > {{min_id}}"
    )
    assert int(result["n"][0]) == 2  # the two rows committed only to the audit branch


def test_no_dollar_expansion(shell: InteractiveShell) -> None:
    shell.user_ns["x"] = "SHOULD-NOT-APPEAR"
    result = shell.run_cell_magic("ice", "", "SELECT '$x' AS v")
    assert result["v"][0] == "$x"


def test_help(shell: InteractiveShell, capsys: pytest.CaptureFixture[str]) -> None:
    ice(shell, "help")
    out = capsys.readouterr().out
    for command in ("open", "tree", "history", "files", "diff", "branch", "tag", "rollback", "cherrypick", "explain"):
        assert command in out
    ice(shell, "files --help")
    assert "--where" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("frobnicate", "invalid choice"),
        ("files --at nope", "no branch, tag or snapshot named 'nope'"),
        ("files --at 42", "snapshot 42"),
        ("use nothing", "no open table named 'nothing'"),
        ("open /definitely/not/a/table", "/definitely/not/a/table"),
        ('files --where "no_such_column > 1"', "--where"),
        ("branch create", "the following arguments are required"),
    ],
)
def test_bad_arguments_fail_with_one_line(shell: InteractiveShell, line: str, message: str) -> None:
    with pytest.raises(UsageError) as info:
        ice(shell, line)
    text = str(info.value)
    assert message in text and "\n" not in text


def test_bad_cell_fails_the_cell(shell: InteractiveShell) -> None:
    result = shell.run_cell("%%ice\nSELECT nope FROM t\n")
    assert not result.success
    assert isinstance(result.error_in_exec, UsageError)
    assert "nope" in str(result.error_in_exec) and "\n" not in str(result.error_in_exec)


def test_config_options(shell: InteractiveShell) -> None:
    before = pd.get_option("display.max_rows"), pd.get_option("display.min_rows")
    try:
        shell.run_line_magic("config", "IceMagics.display_limit = 7")
        snapshots = ice(shell, "snapshots")
        # The result is shown cut to the limit (first and last rows, "..." between); pandas' global
        # options stay as they were.
        shown, _ = shell.display_formatter.format(snapshots)
        assert len(snapshots) == 9 and "[9 rows x" in shown["text/plain"]
        assert "<th>...</th>" in shown["text/html"] and "9 rows ×" in shown["text/html"]
        assert "<th>...</th>" not in shell.display_formatter.format(pd.DataFrame(snapshots))[0]["text/html"]
        assert (pd.get_option("display.max_rows"), pd.get_option("display.min_rows")) == before
        shell.run_line_magic("config", "IceMagics.default_engine = 'nope'")
        with pytest.raises(UsageError, match="unknown engine"):
            shell.run_cell_magic("ice", "", "SELECT 1")
    finally:
        shell.run_line_magic("config", "IceMagics.default_engine = 'spark'")
        shell.run_line_magic("config", "IceMagics.display_limit = 50")


def test_line_template_and_verbatim_explain(shell: InteractiveShell, scenario_locations: dict[str, Path]) -> None:
    shell.user_ns["where"] = str(scenario_locations["orders_cow"])
    ice(shell, "open {{where}} --as orders")
    assert ice(shell, "tables").set_index("name").loc["orders", "current"]
    ice(shell, "use events")
    plan = ice(shell, "explain ts >= '2024-01-04' and region = 'eu'")
    assert "Partition filter for spec 1: (ts_day >= '2024-01-04' and region = 'eu')" in plan
    assert "SKIP" in plan and "KEEP" in plan
    with pytest.raises(UsageError, match="no variable named 'nope'"):
        ice(shell, "open {{nope}}")


def test_analysis_subcommands_return_the_python_results(shell: InteractiveShell) -> None:
    d = ice(shell, "diff release-2024-01 audit")
    assert len(d.added_files) >= 2 and len(d.removed_files) == 0
    graph = ice(shell, "lineage")
    assert set(graph.refs) == {"main", "audit", "release-2024-01"}
    ev = ice(shell, "evolution")
    assert [e.id for e in ev.specs] == [0, 1]
    changes = ice(shell, "changes release-2024-01 main")
    assert set(changes["_change_type"]) <= {"INSERT", "DELETE"} and 16 in set(changes["event_id"])
    assert ice(shell, "tree") is not None
    assert ice(shell, "explore") is not None


@pytest.mark.parametrize("at", ["²", "'   '", "99999999999999999999"])
def test_a_bad_at_fails_with_one_line(shell: InteractiveShell, at: str) -> None:
    for line in (f"files --at {at}", f"manifests --at {at}", f"diff {at} main"):
        with pytest.raises(UsageError) as info:
            ice(shell, line)
        text = str(info.value)
        assert ("no branch, tag or snapshot named" in text or "empty text" in text) and "\n" not in text


def test_open_as_binds_the_name_and_says_so(
    shell: InteractiveShell, scenario_locations: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    table = ice(shell, f"open {scenario_locations['debt']} --as debt_table")
    assert shell.user_ns["debt_table"] is table
    assert "debt_table = the table at" in capsys.readouterr().out
    shell.run_cell("rows = len(debt_table.inspect.snapshots())", store_history=False).raise_error()
    assert shell.user_ns["rows"] == len(table.snapshots)
    # the last table opened is the one commands use when none is named
    pd.testing.assert_frame_equal(ice(shell, "refs"), table.inspect.refs())
    ice(shell, "use events")
    pd.testing.assert_frame_equal(ice(shell, "refs"), icebook.open(scenario_locations["events"]).inspect.refs())
