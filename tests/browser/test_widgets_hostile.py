"""The hostile table (HTML/JS payloads in column names, a property, a branch, a tag, partition values and
rows) goes through every icebook view in a real browser: no script runs, no element is injected, and the
payloads show up as text."""

from __future__ import annotations

from _lab import LabPage, LabServer
from _widgets import CELLS_PRELUDE, INJECTED_JS, SPARK_TIMEOUT_MS, cell, expand, record_dialogs, run_notebook
from playwright.sync_api import expect

from icebook.scenarios.hostile import IMG, SCRIPT

CELLS = [
    CELLS_PRELUDE + '\nt = icebook.open(demo_table("hostile"))',
    "display(HTML(D.table_html(t)))\ndisplay(HTML(D.snapshot_html(t.current_snapshot, t.metadata)))",
    "display(HTML(D.tree_html(t)))\ndisplay(HTML(D.lineage_html(t.metadata)))",
    "tree = D.tree_widget(t, at=t.current_snapshot.snapshot_id)\ntree",
    "from icebook.display.workbench import TABS\nw = D.explore(t)\ndisplay(w)\nfor name in TABS[1:]:\n    w.show_tab(name)\n_ = w.show_tab('History')",
    "q = D.QueryPanel(t)\nq.run()\nq",
    "D.partition_heatmap(t)",
]


def test_hostile_table_runs_no_script(lab_page: LabPage, lab_server: LabServer) -> None:
    page = lab_page.page
    dialogs = record_dialogs(page)
    run_notebook(lab_page, lab_server, "hostile.ipynb", CELLS, timeout=SPARK_TIMEOUT_MS)

    # Drive the live tree to the payload-laden leaves: a data file and its details.
    tree = cell(page, 3).locator(".ib-tree-widget")
    manifest = tree.locator('.ib-row[data-kind="manifest"]').first
    expect(manifest).to_be_visible()
    expand(manifest)
    data_file = tree.locator('.ib-row[data-kind="data_file"]').first
    expect(data_file).to_be_visible()
    data_file.click()
    expect(tree.locator(".ib-details .ib-fname", has_text="data_file.partition")).to_be_visible()
    # Refs and properties too.
    bench = cell(page, 4)
    expect(bench.locator(".ib-lineage-widget .ib-badge.ib-branch", has_text=IMG)).to_have_count(1)
    expect(bench.locator(".ib-lineage-widget .ib-badge.ib-tag", has_text=SCRIPT)).to_have_count(1)
    bench_tree = bench.locator(".ib-tree-widget")
    expand(bench_tree.locator('.ib-row[data-node-id="g:props"]'))
    expect(bench_tree.locator(".ib-row", has_text=IMG).first).to_be_visible()
    expect(cell(page, 5).locator(".ib-query-rows")).to_contain_text(SCRIPT, timeout=SPARK_TIMEOUT_MS)
    expect(cell(page, 6).locator(".vega-embed .marks").first).to_be_visible()

    text = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)").inner_text()
    for payload in (IMG, SCRIPT):
        assert payload in text, f"{payload!r} should be shown as text"
    page.wait_for_timeout(1_000)  # give any injected handler (onerror fires on load failure) time to run
    assert dialogs == [], f"a payload ran: {dialogs}"
    assert page.evaluate(INJECTED_JS) == {"imgs": 0, "scripts": 0, "handlers": 0}
    lab_page.assert_clean()
