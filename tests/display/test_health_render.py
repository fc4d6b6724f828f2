"""The health report and the maintenance previews as text, static HTML and a live view; the grammar's
health, maintain and metadata-table subcommands. Hostile names stay text."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
from _support.disk import file_states
from IPython.core.interactiveshell import InteractiveShell

import icebook
from icebook.analysis.maintenance.compaction import CompactionPreview
from icebook.analysis.maintenance.expire import ExpirePreview
from icebook.analysis.maintenance.health import HealthReport
from icebook.cli import main
from icebook.display._base import esc
from icebook.display.health_view import HealthView, partition_sizes
from icebook.display.registry import render_html, render_text, render_widget
from icebook.scenarios.hostile import IMG, SCRIPT

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def debt(scenario_locations: dict[str, Path]) -> icebook.Table:
    return icebook.open(str(scenario_locations["debt"]))


@pytest.fixture(scope="module")
def debt_report(debt: icebook.Table) -> HealthReport:
    return debt.maintenance.health()


def test_report_text_and_html_name_each_finding_and_its_procedure(debt_report: HealthReport) -> None:
    text, html = render_text(debt_report), render_html(debt_report)
    assert debt_report.findings
    for f in debt_report.findings:
        assert f.title in text and f.procedure is not None
        call = f.procedure.sql(debt_report.identifier)
        assert call in text
        assert esc(call) in html
    for section in ("Findings", "Files &amp; deletes", "Manifests", "History &amp; refs", "Orphans"):
        assert f"<summary>{section}</summary>" in html
    assert "region=sa" in text and "crashed-writer" in text
    assert debt_report.identifier == "<catalog>.db.debt" and "&lt;catalog&gt;.system." in html


def test_live_view_has_the_findings_tabs_and_a_chart(debt_report: HealthReport) -> None:
    view = render_widget(debt_report)
    assert isinstance(view, HealthView)
    assert [view.tabs.get_title(i) for i in range(len(view.tabs.children))] == [
        "Files & deletes",
        "Manifests",
        "History & refs",
        "Orphans",
        "Format v3",
    ]
    assert "rewrite_data_files" in view.header.value
    sizes = partition_sizes(debt_report)
    assert sizes.groupby("partition")["files"].sum().to_dict() == {
        p.partition: p.data_files for p in debt_report.files.partitions
    }
    chart = view.tabs.children[0].children[0]
    assert chart.outputs and "application/vnd.vega.v5+json" in chart.outputs[0]["data"]
    assert view._repr_html_() == render_html(debt_report)


def test_hostile_names_stay_text(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(str(scenario_locations["hostile"]))
    report = t.maintenance.health()
    results = [
        report,
        t.maintenance.expire_preview(older_than=t.snapshots[-1].timestamp_ms + 1),
        t.maintenance.orphans(older_than=2**62),
        t.maintenance.compaction_preview(options={"min-input-files": 1}),
        t.maintenance.manifest_rewrite_preview(),
        t.maintenance.delete_rewrite_preview(),
    ]
    for result in results:
        html = render_html(result)
        assert (
            "<img" not in html and "<script>alert" not in html and "onerror=" not in html.replace("onerror=alert", "")
        )
    html = render_html(report)
    assert esc(IMG) in html  # a partition value, escaped
    assert esc(SCRIPT) in html  # a ref name
    assert IMG in render_text(report)
    view = render_widget(report)
    assert "<img" not in view.header.value and all("<img" not in page.value for page in view.tabs.children[1:])


def cli(*words: str) -> tuple[int, str]:
    out = io.StringIO()
    code = main(list(words), out=out)
    return code, out.getvalue()


def test_command_line_health_and_dry_runs(debt: icebook.Table) -> None:
    path = debt.location
    code, text = cli("health", path)
    assert code == 0 and "rewrite_data_files" in text and "remove_orphan_files" in text
    code, text = cli("maintain", path, "compact", "--dry-run")
    assert code == 0 and text.startswith("rewrite_data_files would rewrite 33 of 35 data files")
    code, text = cli("maintain", path, "expire", "--dry-run", "--older-than-days", "0", "--retain-last", "2")
    assert code == 0 and text.startswith(
        "expire_snapshots would expire 10 of 12 snapshots; refs removed: nightly-export"
    )
    code, _ = cli("maintain", path, "compact", "--retain-last", "1", "--dry-run")
    assert code == 1
    code, _ = cli("maintain", path, "compact", "--option", "min-input-files", "--dry-run")
    assert code == 1


def test_magics_return_the_results_and_dry_runs_change_nothing(scenario_locations: dict[str, Path]) -> None:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "icebook")
    ip.run_line_magic("ice", f"open {scenario_locations['debt']} --as debt")
    try:
        table = ip.run_line_magic("ice", "use debt")
        on_disk = file_states(scenario_locations["debt"])
        assert isinstance(ip.run_line_magic("ice", "health --no-listing"), HealthReport)
        assert isinstance(ip.run_line_magic("ice", "maintain compact --dry-run"), CompactionPreview)
        assert isinstance(ip.run_line_magic("ice", "maintain expire --dry-run --older-than-days 0"), ExpirePreview)
        assert file_states(scenario_locations["debt"]) == on_disk  # no file written, changed or deleted
        assert ip.run_line_magic("ice", "use debt") is table  # a dry run leaves the open table as it was
        entries = ip.run_line_magic("ice", "all-entries")
        pd.testing.assert_frame_equal(pd.DataFrame(entries), table.inspect.all_entries())
    finally:
        ip.run_line_magic("reload_ext", "icebook")
