"""The query cost's live map in a real JupyterLab: one box per row group of each file read, a skipped row
group's reason shown on hover (and its detail on a click), the kernel filtering the files to those with a
row group skipped, and what a file says shown as text, never as markup. And ``t.storage()``'s report with
the chart of its parts."""

from __future__ import annotations

import re
from pathlib import Path

from _lab import ARTIFACTS, REPO, LabPage, LabServer
from _support.cost_table import write_cost_table
from _widgets import CELLS_PRELUDE, INJECTED_JS, cell, record_dialogs, run_notebook
from playwright.sync_api import expect

from icebook.display.cost_render import file_map

PREDICATE = "qty > 90"
PAYLOAD = "<img src=x onerror=alert(2)>"
CELLS = [
    CELLS_PRELUDE + f"\nimport dataclasses, pathlib, sys, tempfile\nsys.path.insert(0, {str(REPO / 'tests')!r})\n"
    "from _support.cost_table import write_cost_table\n"
    "t = write_cost_table(pathlib.Path(tempfile.mkdtemp()))",
    f"cost = t.query_cost({PREDICATE!r}, at=t.snapshots[0].snapshot_id)\ncost",
    f"dataclasses.replace(cost, row_groups=cost.row_groups.assign(reason={PAYLOAD!r}))",
    "t.storage()",
]


def test_cost_map_shows_a_skipped_row_groups_reason(lab_page: LabPage, lab_server: LabServer, tmp_path: Path) -> None:
    table = write_cost_table(tmp_path)  # the kernel writes the same table: the same files and row groups
    expected = file_map(table.query_cost(PREDICATE, at=table.snapshots[0].snapshot_id))
    skipped = [(f, g) for f in expected for g in f["groups"] if not g["kept"]]
    assert skipped and any(g["kept"] for f in expected for g in f["groups"])
    page = lab_page.page
    dialogs = record_dialogs(page)
    run_notebook(lab_page, lab_server, "cost.ipynb", CELLS)

    widget = cell(page, 1).locator(".ib-cost-widget")
    files = widget.locator("tr.ib-cost-file")
    expect(files).to_have_count(len(expected))
    expect(widget.locator(".ib-rg-skipped")).to_have_count(len(skipped))
    expect(widget.locator(".ib-rg-read")).to_have_count(sum(len(f["groups"]) for f in expected) - len(skipped))
    expect(widget.locator(".ib-cost-summary")).to_contain_text(f"{len(skipped)} skipped by their statistics")

    file, group = skipped[0]
    index = [f["name"] for f in expected].index(file["name"])
    row = files.nth(index)
    expect(row.locator(".ib-cost-name")).to_have_text(
        re.compile(r"^00000-[0-9]+-[0-9a-f-]{36}\.parquet$")
    )  # its own uuid
    expect(row.locator(".ib-cost-bytes")).to_have_text(file["bytes_read_text"])
    box = row.locator(f'.ib-rg-skipped[data-row-group="{group["row_group"]}"]')
    assert group["reason"].startswith("qty > 90: row group stats upper bound qty = ")
    expect(box).to_have_attribute("title", group["label"])
    box.hover()
    detail = widget.locator(".ib-cost-detail")
    expect(detail).to_contain_text(group["reason"])
    expect(detail).to_have_class("ib-cost-detail ib-cost-skipped")
    box.click()
    expect(box).to_have_class("ib-rg ib-rg-skipped ib-selected")  # the choice is the model's: `selected` in the kernel

    widget.locator(".ib-cost-only").check()  # the kernel sends only the files with a row group skipped
    expect(files).to_have_count(sum(1 for f in expected if f["skipped"]))
    expect(widget.locator(".ib-rg-skipped")).to_have_count(len(skipped))
    page.screenshot(path=str(ARTIFACTS / "cost-widget.png"))

    hostile = cell(page, 2).locator(".ib-cost-widget")
    hostile.locator(".ib-rg").first.hover()
    expect(hostile.locator(".ib-cost-detail")).to_contain_text(PAYLOAD)
    page.wait_for_timeout(1_000)  # time for an injected handler to fire, were there one
    assert dialogs == [] and page.evaluate(INJECTED_JS) == {"imgs": 0, "scripts": 0, "handlers": 0}

    storage = table.storage()
    view = cell(page, 3).locator(".ib-storage-view")
    expect(view.locator(".ib-grid").first).to_contain_text("metadata: manifests")
    chart = view.locator(".vega-embed svg").first
    expect(chart).to_contain_text("Bytes under the table's location")
    for category in storage.categories["category"]:
        expect(chart).to_contain_text(category)
    expect(chart).to_contain_text("Content files by partition")
    lab_page.assert_clean()
