"""The time-lapse in a real JupyterLab: ``%ice timelapse`` shows the scrubber; stepping and the slider move
through the frames, the heatmap and the growth chart follow, play runs to the end, "open in workbench"
opens the chosen snapshot, and the static fallback (small multiples and the growth chart as SVG) renders
with no kernel help and no network."""

from __future__ import annotations

from pathlib import Path

from _lab import LabPage, LabServer
from _widgets import CELLS_PRELUDE, cell, run_notebook
from playwright.sync_api import expect

import icebook
from icebook.scenarios.warehouse import table_location

CELLS = [
    CELLS_PRELUDE + '\n%load_ext icebook\nevents_path = demo_table("events")\n%ice open {{events_path}} --as events',
    "%ice timelapse",
    "lapse = icebook.open(events_path).timelapse()\ndisplay(HTML(D.render_html(lapse)))",
]


def test_scrubber_steps_plays_and_the_views_follow(lab_page: LabPage, lab_server: LabServer, warehouse: Path) -> None:
    page = lab_page.page
    lapse = icebook.open(str(table_location(warehouse, "events"))).timelapse()
    frames = lapse.to_pandas()
    n = len(frames)
    assert n >= 5
    run_notebook(lab_page, lab_server, "timelapse.ipynb", CELLS)

    widget = cell(page, 1).locator(".ib-timelapse-widget")
    expect(widget).to_have_attribute("data-position", "0")
    heatmap = widget.locator("svg.ib-tl-heatmap")
    marker = widget.locator("svg.ib-tl-growth line.ib-tl-marker")
    expect(widget.locator("svg.ib-tl-growth circle.ib-dot")).to_have_count(n)
    expect(widget.locator("svg.ib-tl-growth circle.ib-dot.ib-op-delete")).to_have_count(
        int((frames["operation"] == "delete").sum())
    )

    def at(i: int) -> None:
        """The scrubber is at frame i and every view shows frame i."""
        row = frames.iloc[i]
        expect(widget).to_have_attribute("data-position", str(i))
        expect(heatmap).to_have_attribute("data-frame", str(i))
        expect(heatmap).to_have_attribute("data-total", str(int(row["records"])))  # records is the default metric
        expect(marker).to_have_attribute("data-frame", str(i))
        expect(widget.locator(".ib-tl-label")).to_contain_text(f"snapshot {int(row['snapshot_id'])}")
        expect(widget.locator(".ib-tl-spec")).to_have_text(lapse.specs[int(row["spec_id"])])

    at(0)
    widget.locator("button.ib-tl-forward").click()
    at(1)
    widget.locator("button.ib-tl-forward").click()
    at(2)
    widget.locator("button.ib-tl-back").click()
    at(1)
    widget.locator("input.ib-tl-slider").fill(str(n - 2))
    at(n - 2)
    widget.locator("svg.ib-tl-growth circle.ib-dot").nth(3).click()  # a commit on the chart is a frame too
    at(3)

    widget.locator("select.ib-tl-metric").select_option("files")
    expect(heatmap).to_have_attribute("data-metric", "files")
    expect(heatmap).to_have_attribute("data-total", str(int(frames.iloc[3]["data_files"])))
    widget.locator("select.ib-tl-metric").select_option("records")

    widget.locator("button.ib-tl-forward").click()  # stepped past a delete: delete debt shows on the map
    debt = frames.index[frames["delete_files"] > 0][0]
    widget.locator("input.ib-tl-slider").fill(str(int(debt)))
    expect(heatmap.locator("rect.ib-heat-debt").first).to_be_attached()

    widget.locator("input.ib-tl-slider").fill("0")
    at(0)
    widget.locator("button.ib-tl-play").click()
    expect(widget).to_have_attribute("data-playing", "true")
    expect(widget).to_have_attribute("data-position", str(n - 1), timeout=60_000)  # play runs to the end
    expect(widget).to_have_attribute("data-playing", "false")
    at(n - 1)

    widget.locator("button.ib-tl-open").click()  # the last frame's snapshot opens in the workbench below
    bench = cell(page, 1).locator(".ib-lineage-widget")
    last = str(int(frames.iloc[n - 1]["snapshot_id"]))
    expect(bench.locator(".ib-lrow.ib-selected")).to_have_attribute("data-snapshot-id", last)
    expect(cell(page, 1).locator(".ib-tree-widget .ib-title")).to_have_text(f"snapshot {last}")

    static = cell(page, 2).locator(".ib-timelapse-static")
    expect(static.locator("svg.ib-tl-growth polyline")).to_have_count(4)
    multiples = static.locator(".ib-tl-multiple")
    assert 2 <= multiples.count() <= 6
    expect(multiples.first.locator("svg.ib-tl-heatmap rect.ib-heat").first).to_be_visible()
    lab_page.assert_clean()


def test_the_static_fallback_renders_offline(lab_page: LabPage, warehouse: Path) -> None:
    """The saved form alone, in a page with no kernel and every request to the network refused."""
    from icebook.display.registry import render_html

    lapse = icebook.open(str(table_location(warehouse, "events"))).timelapse()
    page = lab_page.page
    page.set_content(f"<!doctype html><html><body>{render_html(lapse)}</body></html>")
    static = page.locator(".ib-timelapse-static")
    expect(static.locator("svg.ib-tl-growth")).to_be_visible()
    expect(static.locator("svg.ib-tl-growth circle.ib-dot")).to_have_count(len(lapse))
    multiples = static.locator(".ib-tl-multiple")
    assert multiples.count() >= 2
    first = multiples.first.locator("svg.ib-tl-heatmap rect.ib-heat").first
    expect(first).to_be_visible()
    box = first.bounding_box()
    assert box is not None and box["width"] > 0
    # The stylesheet is inlined: cells are filled with the heatmap's colour, not the default black.
    assert first.evaluate("e => getComputedStyle(e).fill") == "rgb(9, 105, 218)"
    lab_page.assert_clean()
