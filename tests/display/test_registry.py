"""The renderer registry: every result type has text and escaped static HTML (and its widget where one
exists); IPython shows results through it without %load_ext; the tree is walked once for every view."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell

import icebook
from icebook import display as D
from icebook.analysis.maintenance.before_after import maintenance_diff
from icebook.analysis.maintenance.lake_health import LakeHealth, TableHealth, metadata_debts, table_card
from icebook.display._base import esc
from icebook.display.formatters import WIDGET_MIMETYPE, register_formatters
from icebook.display.registry import registered, render_html, render_text, render_widget
from icebook.display.tree_ids import Group, Item, NodeId, NodeKind
from icebook.display.tree_nodes import TreeSource
from icebook.display.tree_render import Expansion, MetadataTree, Walked, tree_html, tree_text, walk
from icebook.errors import NotFound
from icebook.table.table_maintenance import MaintenanceResult


@pytest.fixture(scope="module")
def events(scenario_locations: dict[str, Path]) -> icebook.Table:
    return icebook.open(str(scenario_locations["events"]))


@pytest.fixture(scope="module")
def results(events: icebook.Table) -> dict[type, Any]:
    """One result of every registered type, from the events table."""
    # A before/after diff of a table with itself: what a procedure that changed nothing reports.
    unchanged = maintenance_diff("rewrite_manifests", events, events)
    made = [
        events.diff("release-2024-01", "audit"),
        events.lineage(),
        events.timelapse(),
        events.evolution(),
        events.evolution().explain_predicate("ts", ">=", "2024-01-03"),
        events.scan(filter="region = 'eu'"),
        events.current_snapshot,
        MetadataTree(table=events, snapshot_id=events.snapshot("audit").snapshot_id),
        events,
        events.maintenance.health(),
        events.maintenance.expire_preview(older_than=events.snapshots[-1].timestamp_ms),
        events.maintenance.orphans(),
        events.maintenance.compaction_preview(options={"min-input-files": 2}),
        events.maintenance.manifest_rewrite_preview(),
        events.maintenance.delete_rewrite_preview(),
        unchanged,
        MaintenanceResult(table=events, diff=unchanged, output={"rewritten_manifests_count": 0}),
        _lake_health(events),
        events.query_cost("region = 'eu'"),
        events.storage(),
        events.compare_plans("region = 'eu'"),
        events.maintenance.why_kept(events.inspect.files()["file_path"].iloc[0]),
        *_v3(events),
    ]
    return {type(r): r for r in made}


def _v3(table: icebook.Table) -> list[Any]:
    """The v3 inspector and each of its sections (empty on a v2 table, and shown all the same)."""
    inspection = table.v3()
    return [
        inspection,
        inspection.deletion_vectors,
        inspection.row_lineage,
        inspection.defaults,
        inspection.variants,
        inspection.geo,
    ]


def _lake_health(table: icebook.Table) -> LakeHealth:
    """A namespace report of one table, from its metadata (what the cheap pass reads)."""
    card = table_card("demo.db.events", table.metadata, table.metadata_location)
    row = TableHealth(identifier=card.identifier, card=card, debts=metadata_debts(table.metadata, card, now_ms=0))
    return LakeHealth(namespace="demo.db", rows=(row,), deep=False, seconds=0.0)


@pytest.mark.spark
def test_every_registered_type_has_text_html_and_its_widget(results: dict[type, Any]) -> None:
    assert set(results) == set(registered()), "a registered type without a result here, or the reverse"
    for cls, entry in registered().items():
        result = results[cls]
        text, html = render_text(result), render_html(result)
        assert text.strip(), cls
        assert html.startswith('<div class="icebook') and "<style>" in html, cls
        assert "\n" not in repr(result), f"{cls.__name__}: the repr of a result is one line"
        widget = render_widget(result)
        assert (widget is None) == (entry.widget is None), cls
        if widget is not None:
            bundle, _ = widget._repr_mimebundle_()
            assert WIDGET_MIMETYPE in bundle and bundle["text/html"] == html, cls  # the same static view


@pytest.mark.spark
def test_analysis_results_are_plain_data(results: dict[type, Any]) -> None:
    checked = 0
    for cls in results:
        if cls.__module__.startswith("icebook.analysis"):
            assert not hasattr(cls, "_repr_html_"), cls
            checked += 1
    assert checked, "no result type from icebook.analysis: nothing was checked"


@pytest.mark.spark
def test_ipython_shows_results_without_load_ext(scenario_locations: dict[str, Path]) -> None:
    # A fresh IPython that never loads the extension: opening a table teaches it the registry.
    code = (
        "import sys, icebook\n"
        "assert not [m for m in sys.modules if m.startswith('icebook.display')], 'import icebook loads display'\n"
        f"t = icebook.open({str(scenario_locations['events'])!r})\n"
        "get_ipython().display_formatter.formatters['text/html'].enabled = True  # on in a kernel, off in a terminal\n"
        "data, _ = get_ipython().display_formatter.format(t.lineage())\n"
        "from icebook.display import render_html, render_text\n"
        "assert data['text/html'] == render_html(t.lineage()), 'html'\n"
        "assert data['text/plain'] == render_text(t.lineage()), 'text'\n"
        "assert 'application/vnd.jupyter.widget-view+json' not in data  # no kernel, no widget\n"
        "print('shown', len(data['text/html']))\n"
    )
    ipython = Path(sys.executable).parent / "ipython"
    result = subprocess.run(
        [str(ipython), "--quick", "--no-banner", "--colors=nocolor", "-c", code],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0 and "shown" in result.stdout, result.stdout + result.stderr


@pytest.fixture()
def kernel_shell(monkeypatch: pytest.MonkeyPatch) -> Iterator[InteractiveShell]:
    """The test process's shell, as if a kernel ran it (widgets can be shown)."""
    shell = InteractiveShell.instance()
    monkeypatch.setattr(shell, "kernel", object(), raising=False)
    register_formatters(shell)
    yield shell


@pytest.mark.spark
def test_a_kernel_gets_the_live_widget_beside_the_static_html(
    kernel_shell: InteractiveShell, events: icebook.Table
) -> None:
    graph = events.lineage()
    data, _ = kernel_shell.display_formatter.format(graph)
    assert WIDGET_MIMETYPE in data and data["text/html"] == render_html(graph)
    assert data["text/plain"] == render_text(graph)
    diff = events.diff("release-2024-01", "audit")
    data, _ = kernel_shell.display_formatter.format(diff)
    assert WIDGET_MIMETYPE not in data and data["text/html"] == render_html(diff)  # a diff has no widget


# ---------------------------------------------------------------------- the tree


def test_node_ids_parse_back() -> None:
    ids = [
        NodeId(kind=NodeKind.METADATA),
        NodeId(kind=NodeKind.GROUP, group=Group.PROPS),
        NodeId(kind=NodeKind.REF, name="feature:x/y"),
        NodeId(kind=NodeKind.SNAPSHOT, snapshot_id=-9_223_372_036_854_775_807),
        NodeId(kind=NodeKind.MANIFEST_LIST, snapshot_id=12),
        NodeId(kind=NodeKind.MANIFEST, snapshot_id=12, manifest=3),
        NodeId(kind=NodeKind.ENTRY, snapshot_id=12, manifest=3, position=45),
        NodeId(kind=NodeKind.ITEM, item=Item.PROP, name="write.format:default"),
        NodeId(kind=NodeKind.ITEM, item=Item.SCHEMA, name="2"),
    ]
    for node in ids:
        assert NodeId.parse(str(node)) == node, node
    assert (
        str(NodeId(kind=NodeKind.ENTRY, snapshot_id=12, manifest=3, position=45)) == "e:12:3:45"
        and NodeId.parse("g:snapshots").group is Group.SNAPSHOTS
    )
    for bad in ("", "meta:1", "g:nothing", "s:abc", "m:1", "e:1:2", "q:1", "x:table:1", "x:schema:one", "r:"):
        with pytest.raises(NotFound):
            NodeId.parse(bad)


def _nodes(items: tuple[Walked, ...]) -> list[dict[str, Any]]:
    out = []
    for item in items:
        out.append(item.node)
        out += _nodes(item.children)
    return out


def _in_html(node: dict[str, Any], html: str) -> bool:
    """The static view writes a file name part by part (each part with its meaning as a tooltip)."""
    if node.get("parts"):
        return all(f">{esc(text)}</span>" in html for text, _role, _meaning in node["parts"])
    return esc(node["label"]) in html


def _find(items: tuple[Walked, ...], node_id: NodeId) -> Walked | None:
    for item in items:
        if item.node["id"] == str(node_id):
            return item
        found = _find(item.children, node_id)
        if found is not None:
            return found
    return None


@pytest.mark.spark
def test_text_and_static_html_show_the_one_walk(events: icebook.Table) -> None:
    audit = events.snapshot("audit").snapshot_id
    source = TreeSource(events)
    walked = walk(source, source.root(), Expansion(snapshot_id=audit, manifests=3, entries=2))
    nodes = _nodes(walked)
    assert len([n for n in nodes if n["kind"] == "data_file"]) == 6 and len(nodes) > 30
    text = tree_text(events, "audit", manifests=3, entries=2)
    html = tree_html(events, "audit", manifests=3, entries=2)
    for node in nodes:
        assert node["label"] in text and _in_html(node, html), node["id"]
    assert text.count("└─ … ") == html.count('class="ib-muted ib-more"') > 0  # the same children left out
    # The live widget pages through the same source: its first manifests are the walk's.
    manifest_list = _find(walked, NodeId(kind=NodeKind.MANIFEST_LIST, snapshot_id=audit))
    assert manifest_list is not None and manifest_list.more > 0
    _, page = TreeSource(events, page_size=2).children(NodeId(kind=NodeKind.MANIFEST_LIST, snapshot_id=audit))
    assert [m["label"] for m in page] == [c.node["label"] for c in manifest_list.children][:2]
    assert NodeId.parse(page[0]["id"]).kind is NodeKind.MANIFEST


@pytest.mark.spark
def test_lineage_widget_and_static_view_draw_the_same_layout(events: icebook.Table) -> None:
    widget = D.LineageWidget(events.lineage())
    html = render_html(events.lineage())
    for row in widget.graph:
        assert f"<code>{row['id']}</code>" in html
    assert html.count("<circle") == len(widget.graph) == len(events.snapshots)
