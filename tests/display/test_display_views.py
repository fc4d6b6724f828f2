"""Charts, diff, evolution, query panel and workbench: data shapes, paging and wiring (no browser)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import icebook
from icebook import display as D
from icebook.display.charts import size_bins, snapshot_metrics
from icebook.display.query_panel import PAGE_ROWS, QueryPanel
from icebook.display.workbench import TABS


@pytest.fixture(scope="module")
def events(scenario_locations: dict[str, Path]) -> icebook.Table:
    return icebook.open(str(scenario_locations["events"]))


@pytest.mark.spark
def test_charts_compile_to_vega5_with_aggregated_data(events: icebook.Table) -> None:
    files = events.inspect.files()
    bins = size_bins(files["file_size_in_bytes"], files["content"])
    assert bins["files"].sum() == len(files)
    assert set(bins["content"]) == {"data", "position deletes"}
    metrics = snapshot_metrics(events)
    assert set(metrics["metric"]) == {"records", "data files", "bytes"}
    assert len(metrics) == 3 * len(events.snapshots)
    for chart in (D.snapshot_timeline_chart(events), D.file_size_histogram(events), D.partition_heatmap(events)):
        bundle, metadata = chart._repr_mimebundle_()
        assert set(bundle) == {"application/vnd.vega.v5+json", "text/plain"}  # svg would outrank vega in Lab
        assert metadata["application/vnd.vega.v5+json"]["embed_options"]["renderer"] == "svg"
        assert "vega/v5" in bundle["application/vnd.vega.v5+json"]["$schema"]


@pytest.mark.spark
def test_diff_view_defaults_to_the_last_commit(events: icebook.Table) -> None:
    view = D.DiffView(events)
    current = events.current_snapshot
    assert (view.a.value, view.b.value) == (current.parent_snapshot_id, current.snapshot_id)
    assert view.diff is not None and view.diff.counts()["added_data_files"] == 1
    assert 'class="ib-added">+1</span>' in view.output.value
    view.a.value, view.b.value = "release-2024-01", "audit"
    view.refresh()
    assert "Snapshot" in view.output.value and 'class="ib-error"' not in view.output.value


@pytest.mark.spark
def test_the_diff_of_an_unpartitioned_table_shows_its_files_as_unpartitioned(
    scenario_locations: dict[str, Path],
) -> None:
    """An unpartitioned table's file listings have no partition column (as Spark's files table): the diff's
    HTML says so instead of failing (found by the fuzz over several tables)."""
    from icebook.display.registry import render_html

    t = icebook.open(str(scenario_locations["schema_evolution"]))
    d = t.diff(t.snapshots[0].snapshot_id)
    assert len(d.added_files) and "partition" not in d.added_files.columns
    html = render_html(d)
    assert "<td>unpartitioned</td>" in html


@pytest.mark.spark
def test_evolution_timeline_lists_every_epoch(events: icebook.Table) -> None:
    view = D.EvolutionView(events, chart=False)
    html = view.html.value
    assert html.count('class="ib-ev-item') == len(events.metadata.schemas) + len(events.metadata.partition_specs) + len(
        events.metadata.sort_orders
    )
    assert "ts_day" in html and "renamed" in html


class FakeTable:
    """Enough of a Table for the query panel, with engines that fail or answer on demand."""

    def __init__(self, real: icebook.Table, rows: int) -> None:
        self.real = real
        self.rows = rows
        self.calls: list[tuple[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def sql(self, query: str, at: Any = None) -> pd.DataFrame:
        self.calls.append(("sql", at))
        return pd.DataFrame({"n": range(self.rows), "payload": ["<b>x</b>"] * self.rows})

    def read(self, at: Any = None, filter: str | None = None, engine: str = "arrow", **_: Any) -> Any:
        raise icebook.errors.NotFound(f"engine {engine!r} <i>not here</i>")


@pytest.mark.spark
def test_query_panel_points_paging_and_errors(events: icebook.Table) -> None:
    fake = FakeTable(events, rows=PAGE_ROWS * 2 + 5)
    panel = QueryPanel(fake)  # type: ignore[arg-type]
    assert panel.at() is None
    panel.point.value = "tag"
    assert panel.at() == "release-2024-01"
    panel.point.value = "snapshot"
    assert panel.at() == events.snapshots[-1].snapshot_id
    panel.point.value = "branch"
    panel.branch.value = "audit"
    result = panel.run()
    assert result is not None and len(result) == PAGE_ROWS * 2 + 5
    assert fake.calls == [("sql", "audit")]
    assert f"1–{PAGE_ROWS} of {len(result)}" in panel.rows.value and panel.prev_button.disabled
    panel.show_page(5)  # clamps to the last page
    assert panel.page == 2 and panel.next_button.disabled
    assert "&lt;b&gt;x&lt;/b&gt;" in panel.rows.value
    panel.engine.value = "arrow"
    assert panel.run() is None
    assert "&lt;i&gt;not here&lt;/i&gt;" in panel.status.value


@pytest.mark.spark
def test_workbench_links_graph_to_tree_and_builds_tabs_lazily(events: icebook.Table) -> None:
    bench = D.explore(events)
    first = events.snapshots[0].snapshot_id
    bench.lineage.selected_snapshot_id = first
    assert bench.tree.at == first and bench.tree.roots[0]["id"] == f"s:{first}"
    assert len(bench._built) == 1
    diff = bench.show_tab("Diff")
    assert isinstance(diff, D.DiffView) and bench.tabs.titles == TABS
    bundle, _ = bench._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and "Iceberg table" in bundle["text/html"]


def test_an_unknown_count_shows_as_a_dash() -> None:
    # A v1 manifest list may leave its counts out; frames (the evolution's files per spec) hold that as NA.
    from icebook.display._base import human_count

    assert [human_count(v) for v in (None, pd.NA, float("nan"), pd.array([5], dtype="Int64")[0], 1234)] == [
        "–",
        "–",
        "–",
        "5",
        "1,234",
    ]
