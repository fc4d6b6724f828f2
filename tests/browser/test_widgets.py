"""icebook's widgets in a real JupyterLab: the tree expands and explains, the snapshot graph drives the tree,
the query panel returns rows through Spark (and Arrow), charts draw offline, and nothing logs an error."""

from __future__ import annotations

import itertools
import re
from typing import Any

from _lab import ARTIFACTS, LabPage, LabServer
from _widgets import CELLS_PRELUDE, SPARK_TIMEOUT_MS, cell, expand, run_notebook
from playwright.sync_api import expect

import icebook
from icebook.scenarios.warehouse import table_location

TREE = ".ib-tree-widget"


def test_tree_expands_to_files_and_explains_fields(lab_page: LabPage, lab_server: LabServer) -> None:
    page = lab_page.page
    run_notebook(
        lab_page,
        lab_server,
        "tree.ipynb",
        [CELLS_PRELUDE + '\nt = icebook.open(demo_table("events"))', "D.tree_widget(t)"],
    )
    tree = cell(page, 1).locator(TREE)
    # The root (the metadata file, its name annotated part by part) opens on its own and shows the groups.
    expect(tree.locator('.ib-row[data-kind="metadata"] .ib-part-version')).to_be_visible()
    snapshots = tree.locator('.ib-row[data-node-id="g:snapshots"]')
    expect(snapshots).to_be_visible()
    expand(snapshots)
    first_snapshot = tree.locator('.ib-row[data-kind="snapshot"]').first
    expect(first_snapshot.locator(".ib-badge.ib-current")).to_be_visible()  # newest first: the current one
    expand(first_snapshot)
    manifest_list = tree.locator('.ib-row[data-kind="manifest_list"]').first
    expect(manifest_list.locator(".ib-part-commit_uuid")).to_be_visible()
    expand(manifest_list)
    manifests = tree.locator('.ib-row[data-kind="manifest"]')
    expect(manifests.first).to_be_visible()
    assert manifests.count() >= 2
    expand(manifests.first)
    data_file = tree.locator('.ib-row[data-kind="data_file"]').first
    expect(data_file).to_be_visible()
    for fact in ("status", "data seq", "file seq", "partition", "records", "size", "bounds"):
        expect(data_file.locator(".ib-fk", has_text=fact).first).to_be_visible()
    expect(data_file.locator(".ib-f-inherited").first).to_be_visible()  # an ADDED entry inherits its seq numbers

    data_file.click()  # select: the details pane shows the raw record with the spec's explanation of each field
    details = tree.locator(".ib-details")
    expect(details.locator(".ib-fname", has_text="data_file.file_path")).to_be_visible()
    expect(details.locator(".ib-doc", has_text="100: full URI for the file")).to_be_visible()
    expect(details.locator("tr.ib-inherited .ib-note").first).to_contain_text("Sequence Number Inheritance")

    manifests.first.click()
    expect(details.locator(".ib-details-title")).to_have_text("Manifest")
    expect(details.locator(".ib-legend")).to_contain_text("commit_uuid")
    lab_page.assert_clean()


def test_selecting_a_snapshot_in_the_graph_reroots_the_tree(lab_page: LabPage, lab_server: LabServer) -> None:
    page = lab_page.page
    table = icebook.open(_events(lab_server))
    first = table.snapshots[0].snapshot_id
    run_notebook(
        lab_page,
        lab_server,
        "explore.ipynb",
        [CELLS_PRELUDE + '\nt = icebook.open(demo_table("events"))', "w = D.explore(t)\nw"],
    )
    bench = cell(page, 1)
    graph = bench.locator(".ib-lineage-widget")
    expect(graph.locator(".ib-lrow")).to_have_count(len(table.snapshots))
    expect(graph.locator("svg.ib-graph circle.ib-dot")).to_have_count(len(table.snapshots))
    expect(graph.locator(".ib-badge.ib-branch", has_text="audit")).to_be_visible()
    expect(graph.locator(".ib-badge.ib-tag", has_text="release-2024-01")).to_be_visible()
    assert graph.locator("path.ib-edge-main").count() >= 2  # the current ancestry is drawn thick

    graph.locator(f'.ib-lrow[data-snapshot-id="{first}"]').click()
    tree = bench.locator(TREE)
    expect(tree.locator(".ib-title")).to_have_text(f"snapshot {first}")
    expect(tree.locator(f'.ib-row[data-node-id="s:{first}"]')).to_be_visible()
    expect(tree.locator('.ib-row[data-kind="manifest"]').first).to_be_visible()  # snapshot + list open by themselves
    expect(graph.locator(".ib-lrow.ib-selected")).to_have_attribute("data-snapshot-id", str(first))

    tree.locator(".ib-toolbar .ib-button", has_text="show whole table").click()
    expect(tree.locator('.ib-row[data-kind="metadata"]')).to_be_visible()
    lab_page.assert_clean()


def _events(server: LabServer) -> str:
    assert server.demo_warehouse is not None
    return str(table_location(server.demo_warehouse, "events"))


def test_query_panel_returns_rows_through_spark_and_arrow(lab_page: LabPage, lab_server: LabServer, spark: Any) -> None:
    page = lab_page.page
    run_notebook(
        lab_page,
        lab_server,
        "query.ipynb",
        [CELLS_PRELUDE + '\nt = icebook.open(demo_table("events"))', "q = D.QueryPanel(t)\nq"],
    )
    panel = cell(page, 1).locator(".ib-query-panel")
    expect(panel).to_be_visible()
    panel.locator(".widget-toggle-buttons button", has_text="tag").click()
    panel.locator("textarea").fill("SELECT event_id, region FROM t ORDER BY event_id")
    panel.locator("button", has_text="Run").click()
    rows = panel.locator(".ib-query-rows table tbody tr")
    expect(rows.first).to_be_visible(timeout=SPARK_TIMEOUT_MS)
    expected = spark.sql("SELECT count(*) AS n FROM lake.db.events VERSION AS OF 'release-2024-01'").collect()[0].n
    expect(panel.locator(".ib-caption")).to_contain_text(f"of {expected}")
    expect(panel).to_contain_text("rows from spark at release-2024-01")

    panel.locator(".widget-toggle-buttons button", has_text="Arrow").click()
    panel.locator(".widget-toggle-buttons button", has_text="current").click()
    panel.locator("input[placeholder*='event_id']").fill("region = 'eu'")
    panel.locator("button", has_text="Run").click()
    expect(panel).to_contain_text("rows from arrow at current", timeout=60_000)
    expect(rows.first).to_be_visible()
    panel.get_by_text("scan explanation").click()
    expect(panel.locator(".ib-explain")).to_contain_text("Filter:")
    lab_page.assert_clean()


HOURLY_PARTITIONS = """
import pandas as pd

class Hourly:  # a table-like with 400 hourly partitions: enough for the heatmap's top-N and "other"
    def __init__(self):
        self.inspect = self
    def partitions(self, at=None):
        hours = pd.date_range("2024-03-01", periods=400, freq="h")
        return pd.DataFrame({
            "partition": [{"ts_hour": h.strftime("%Y-%m-%d-%H"), "region": f"r{i % 7}"} for i, h in enumerate(hours)],
            "spec_id": 0, "record_count": [1 + (i * 37) % 101 for i in range(400)],
            "file_count": 1, "total_data_file_size_in_bytes": 1000})

D.partition_heatmap(Hourly())"""


def _labels(chart: Any) -> list[dict[str, Any]]:
    """Text and box of every axis label of a rendered Vega chart."""
    return chart.locator(".role-axis-label text").evaluate_all(
        "ts => ts.map(t => { const b = t.getBoundingClientRect();"
        " return {text: t.textContent, x: b.x, y: b.y, w: b.width, h: b.height,"
        " rotated: (t.getAttribute('transform') || '').includes('rotate')}; })"
    )


def _overlapping(labels: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Pairs of labels that collide: boxes that intersect (level labels), or rotated labels whose
    ends (where they meet their tick) are closer than a line of text."""
    out = []
    rotated = sorted((lab for lab in labels if lab["rotated"]), key=lambda lab: lab["x"] + lab["w"])
    for a, b in itertools.pairwise(rotated):
        if abs(a["y"] + a["h"] - b["y"] - b["h"]) < 20 and (b["x"] + b["w"]) - (a["x"] + a["w"]) < 9:
            out.append((a["text"], b["text"]))
    level = [lab for lab in labels if not lab["rotated"]]
    for i, a in enumerate(level):
        for b in level[i + 1 :]:
            if (
                a["x"] < b["x"] + b["w"] - 1
                and b["x"] < a["x"] + a["w"] - 1
                and a["y"] < b["y"] + b["h"] - 1
                and b["y"] < a["y"] + a["h"] - 1
            ):
                out.append((a["text"], b["text"]))
    return out


def test_charts_render_offline(lab_page: LabPage, lab_server: LabServer) -> None:
    """The charts draw with no network, and read well: commit times in whole seconds (never ".500"),
    file sizes in round bins whose labels do not collide, a heatmap of 400 partitions kept small."""
    page = lab_page.page
    run_notebook(
        lab_page,
        lab_server,
        "charts.ipynb",
        [
            CELLS_PRELUDE + '\nt = icebook.open(demo_table("events"))\nsales = icebook.open(demo_table("transforms"))',
            "D.snapshot_timeline_chart(t)",
            "D.file_size_histogram(t)",
            "D.partition_heatmap(t)",
            "from icebook.display.evolution_view import compute_evolution\nD.files_per_spec_chart(compute_evolution(t))",
            "D.snapshot_timeline_chart(icebook.open(demo_table('concurrent_writes')))",
            "D.file_size_histogram(sales)",
            "D.partition_heatmap(sales)",
            HOURLY_PARTITIONS,
        ],
    )
    shots = ARTIFACTS / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    names = ["", "timeline-events", "sizes-events", "heatmap-events", "specs-events", "timeline-seconds-apart"]
    names += ["sizes-236-files", "heatmap-236-partitions", "heatmap-400-partitions"]
    for index, mark in (
        (1, "symbol"),
        (2, "rect"),
        (3, "rect"),
        (4, "area"),
        (5, "symbol"),
        (6, "rect"),
        (7, "rect"),
        (8, "rect"),
    ):
        marks = cell(page, index).locator(".vega-embed .marks").first
        expect(marks).to_be_visible(timeout=30_000)
        assert marks.evaluate("m => m.tagName.toLowerCase()") == "svg", "charts render as SVG"
        assert marks.locator(f".mark-{mark} path").count() >= 1, f"chart {index} drew no {mark} marks"
        labels = _labels(cell(page, index))
        assert labels, f"chart {index} has no axis labels"
        assert not [lab["text"] for lab in labels if re.fullmatch(r"\.\d+", lab["text"] or "")], "sub-second ticks"
        assert _overlapping(labels) == [], f"chart {index}: overlapping labels {_overlapping(labels)[:3]}"
        cell(page, index).locator(".jp-OutputArea").screenshot(path=str(shots / f"chart-{names[index]}.png"))
    for index in (1, 5):  # commits seconds apart: whole-second labels
        times = [lab["text"] for lab in _labels(cell(page, index)) if ":" in (lab["text"] or "")]
        assert times and all(re.fullmatch(r"\d\d:\d\d(:\d\d)?", t) for t in times), times
    heatmap = _labels(cell(page, 8))
    assert any("other values" in (lab["text"] or "") for lab in heatmap)
    assert len(heatmap) <= 20 + 24 + 10  # rows + columns (+ a few legend labels), not 400
    lab_page.assert_clean()
