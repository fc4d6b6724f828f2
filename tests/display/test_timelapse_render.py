"""The time-lapse's views: one payload for the static form and the widget, the static form escaped and
self-contained, the widget module built from the one helper module and writing text only."""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest

import icebook
from icebook.display.registry import render_html, render_text
from icebook.display.timelapse_render import chosen_frames, timelapse_payload
from icebook.display.timelapse_view import TimelapseView, TimelapseWidget
from icebook.scenarios.hostile import IMG, SCRIPT
from icebook.widgets import bundle

pytestmark = pytest.mark.spark

WIDGETS = Path(__file__).resolve().parents[2] / "widgets"


@pytest.fixture(scope="module")
def events(scenario_locations: dict[str, Path]) -> icebook.Table:
    return icebook.open(str(scenario_locations["events"]))


def test_the_payload_holds_every_frame_and_its_partitions(events: icebook.Table) -> None:
    lapse = events.timelapse()
    payload = timelapse_payload(lapse)
    frames = lapse.to_pandas()
    assert [f["id"] for f in payload["frames"]] == [str(s) for s in frames["snapshot_id"]]
    assert payload["hidden"] == 0
    # Down: the first partition field (region); across: the day, null for files written before it existed.
    assert payload["rows"] == ["region=apac", "region=eu", "region=us"]
    assert payload["columns"][0] == "ts_day=null" and len(payload["columns"]) > 1
    for i, row in frames.iterrows():
        cells = payload["cells"][int(i)]
        assert sum(c[2] for c in cells) == row["data_files"]
        assert sum(c[3] for c in cells) == row["records"]
        assert sum(c[4] for c in cells) == row["bytes"]
        assert sum(c[5] for c in cells) == row["delete_files"]
    chosen = chosen_frames(payload)
    assert chosen[0] == 0 and chosen[-1] == len(frames) - 1 and len(chosen) <= 6
    changed = frames.index[frames["spec_id"] != frames["spec_id"].shift()][1:]
    assert set(int(i) for i in changed) <= set(chosen)  # a partition change is always pictured


def test_text_and_static_html(events: icebook.Table) -> None:
    lapse = events.timelapse(ref="main")
    text = render_text(lapse)
    assert text.splitlines()[0] == repr(lapse) and len(text.splitlines()) == 1 + len(lapse)
    html = render_html(lapse)
    assert html.count('class="ib-tl-multiple"') == len(chosen_frames(timelapse_payload(lapse)))
    assert html.count("<polyline") == 4 and "ib-tl-debt" in html
    assert "http" not in html.replace("http://www.w3.org", "")  # offline: nothing to fetch
    assert 'class="ib-dot ib-op-delete"' in html  # operations in the lineage graph's colours
    first = min(s.timestamp_ms for s in events.snapshots)
    empty = events.timelapse(until=datetime.datetime.fromtimestamp((first - 1) / 1000, tz=datetime.UTC))
    assert len(empty) == 0 and "no snapshots" in render_html(empty)


def test_the_hostile_table_is_escaped(scenario_locations: dict[str, Path]) -> None:
    hostile = icebook.open(str(scenario_locations["hostile"]))
    html = render_html(hostile.timelapse())
    for raw in ("<img", "<script>alert", "onerror=alert(1)>"):
        assert raw not in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html  # a partition value, shown as text
    payload = timelapse_payload(hostile.timelapse())
    assert any(IMG in r or SCRIPT in r for r in payload["rows"])  # the widget gets it as plain text


def test_the_widget_and_its_module(events: icebook.Table) -> None:
    lapse = events.timelapse()
    view = TimelapseView(lapse)
    assert view._repr_html_() == render_html(lapse)
    assert view.scrubber.payload == timelapse_payload(lapse)
    assert view.workbench is None
    view.scrubber.selected_snapshot_id = int(lapse.to_pandas()["snapshot_id"].iloc[2])
    assert view.workbench is not None
    assert view.workbench.lineage.selected_snapshot_id == view.scrubber.selected_snapshot_id
    source = (WIDGETS / "timelapse.js").read_text()
    assert 'from "./dom.js";' in source and "function h(" not in source
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function", source)
    assert str(TimelapseWidget._esm) == bundle("timelapse.js").read_text()
