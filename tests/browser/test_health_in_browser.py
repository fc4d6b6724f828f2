"""The health report in a real JupyterLab: ``%ice health`` on the debt table shows live (findings, tabs,
the partition chart drawn offline), a dry run shows its preview, and on the hostile table the report's
static HTML and live view show every payload as text and run none."""

from __future__ import annotations

from _lab import LabPage, LabServer
from _widgets import CELLS_PRELUDE, INJECTED_JS, cell, record_dialogs, run_notebook
from playwright.sync_api import expect

from icebook.scenarios.hostile import IMG, SCRIPT

CELLS = [
    CELLS_PRELUDE + '\n%load_ext icebook\ndebt_path = demo_table("debt")\n%ice open {{debt_path}} --as debt',
    "%ice health",
    "%ice maintain compact --dry-run",
    'h = icebook.open(demo_table("hostile")).maintenance.health()\ndisplay(HTML(D.render_html(h)))',
    "h",
]


def test_health_report_renders_live_and_static(lab_page: LabPage, lab_server: LabServer) -> None:
    page = lab_page.page
    dialogs = record_dialogs(page)
    run_notebook(lab_page, lab_server, "health.ipynb", CELLS)

    live = cell(page, 1).locator(".ib-health-view")
    expect(live).to_be_visible()
    findings = live.locator(".ib-health-finding")
    expect(findings).to_have_count(6)
    for area in ("small files", "delete debt", "manifests", "history", "refs", "orphans"):
        expect(live.locator(f'.ib-health-finding[data-area="{area}"]')).to_be_visible()
    expect(live.locator(".ib-health-fix", has_text="rewrite_manifests").first).to_be_visible()
    # The first tab holds the partition chart, drawn by JupyterLab's own vega renderer (no network).
    expect(live.locator(".vega-embed .marks").first).to_be_visible()
    live.locator(".lm-TabBar-tab", has_text="Orphans").click()
    expect(live.locator("code", has_text="crashed-writer").first).to_be_visible()

    expect(cell(page, 2)).to_contain_text("rewrite_data_files would rewrite 33 of 35 data files")

    static = cell(page, 3).locator(".ib-health")
    expect(static.locator("summary", has_text="Findings")).to_be_visible()
    hostile_live = cell(page, 4).locator(".ib-health-view")
    expect(hostile_live).to_be_visible()
    hostile_live.locator(".lm-TabBar-tab", has_text="History & refs").click()
    expect(hostile_live.get_by_role("cell", name=SCRIPT, exact=True)).to_be_visible()  # the tag

    text = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)").inner_text()
    for payload in (IMG, SCRIPT):
        assert payload in text, f"{payload!r} should be shown as text"
    page.wait_for_timeout(1_000)  # give any injected handler time to run
    assert dialogs == [], f"a payload ran: {dialogs}"
    assert page.evaluate(INJECTED_JS) == {"imgs": 0, "scripts": 0, "handlers": 0}
    lab_page.assert_clean()
