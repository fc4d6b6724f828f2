"""Tables are untrusted: every static view of the hostile table escapes its payloads, and the widgets'
JavaScript never parses table data as HTML."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

import icebook
from icebook import display as D
from icebook.display._base import esc, frame_table_html
from icebook.display.diff_view import compute_diff
from icebook.display.evolution_view import compute_evolution
from icebook.scenarios.hostile import IMG, SCRIPT

WIDGETS = Path(__file__).resolve().parents[2] / "widgets"
RAW = ("<img", "<script>alert", "onerror=alert(1)>")


@pytest.fixture(scope="module")
def hostile(scenario_locations: dict[str, Path]) -> icebook.Table:
    return icebook.open(str(scenario_locations["hostile"]))


def assert_escaped(html: str) -> None:
    for raw in RAW:
        assert raw not in html, f"unescaped {raw!r} in {html[max(html.find(raw) - 200, 0) : html.find(raw) + 80]}"
    assert "&lt;img src=x onerror=alert(1)&gt;" in html or "&lt;script&gt;alert(2)&lt;/script&gt;" in html


@pytest.mark.spark
def test_the_hostile_table_really_is_hostile(hostile: icebook.Table) -> None:
    names = [f.name for f in hostile.metadata.current_schema().columns]
    assert IMG in names and SCRIPT in names
    assert IMG in hostile.refs and SCRIPT in hostile.refs
    assert SCRIPT in hostile.metadata.properties.values() and IMG in hostile.metadata.properties


@pytest.mark.spark
def test_every_static_view_escapes(hostile: icebook.Table) -> None:
    first, last = hostile.snapshots[0].snapshot_id, hostile.snapshots[-1].snapshot_id
    views = {
        "table": D.table_html(hostile),
        "snapshot": D.snapshot_html(hostile.snapshots[0], hostile.metadata),  # the one the payload refs name
        "tree": D.tree_html(hostile),
        "lineage": D.lineage_html(hostile.metadata),
        "diff": D.diff_html(compute_diff(hostile, first, last), hostile.location),
        "evolution": D.evolution_html(compute_evolution(hostile)),
        "workbench": D.explore(hostile)._repr_html_(),
        "tree widget": D.tree_widget(hostile)._repr_html_(),
    }
    for name, html in views.items():
        try:
            assert_escaped(html)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in views["tree"]  # the tag shows, as text


@pytest.mark.spark
def test_tree_details_carry_payloads_as_plain_strings(hostile: icebook.Table) -> None:
    # The widget sends JSON strings; the browser writes them with textContent (checked below).
    tree = D.tree_widget(hostile, at=hostile.current_snapshot.snapshot_id)
    sid = hostile.current_snapshot.snapshot_id
    _, manifests = tree.source.children(f"ml:{sid}")
    _, files = tree.source.children(manifests[0]["id"])
    details = tree.source.details(files[0]["id"])
    partition = next(v for name, v, _doc, _note in details["rows"] if name == "data_file.partition")
    assert IMG in partition


def test_result_tables_escape_cells_and_headers() -> None:
    df = pd.DataFrame({IMG: [SCRIPT, None, b"\x00<"]})
    html = frame_table_html(df)
    assert_escaped(html)
    assert "null" in html and "0x003C" in html


def test_esc_quotes_attributes() -> None:
    assert esc('" onmouseover="x') == "&quot; onmouseover=&quot;x"


@pytest.mark.parametrize("path", sorted(WIDGETS.glob("*.js")), ids=lambda p: p.name)
def test_widget_javascript_never_parses_html(path: Path) -> None:
    source = path.read_text()
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function", source)
    assert "textContent" in source
