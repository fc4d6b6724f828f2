"""The tree's data: pages, node facts, details with spec explanations, the widget's message protocol."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import icebook
from icebook import display as D
from icebook.analysis.history.lineage import lineage
from icebook.display.lineage_render import layout
from icebook.display.tree_nodes import TreeSource
from icebook.spec.manifest import DataFile, ManifestEntry
from icebook.text import byte_size


@pytest.fixture(scope="module")
def events(scenario_locations: dict[str, Path]) -> icebook.Table:
    return icebook.open(str(scenario_locations["events"]))


@pytest.mark.spark
def test_root_groups_and_snapshots(events: icebook.Table) -> None:
    source = TreeSource(events)
    (root,) = source.root()
    assert root["id"] == "meta" and root["kind"] == "metadata"
    assert [p[1] for p in root["parts"]][:2] == ["prefix", "version"]  # v<N>.metadata.json, annotated
    total, groups = source.children("meta")
    assert [g["id"] for g in groups] == ["g:snapshots", "g:refs", "g:schemas", "g:specs", "g:sorts", "g:props"]
    total, snaps = source.children("g:snapshots")
    assert total == len(events.snapshots)
    assert snaps[0]["id"] == f"s:{events.current_snapshot.snapshot_id}"  # newest first
    assert ["current", "ib-current"] in snaps[0]["badges"]
    json.dumps(snaps)  # plain JSON, ids as strings (64-bit ids do not fit JavaScript numbers)


@pytest.mark.spark
def test_manifest_entries_come_in_pages(events: icebook.Table) -> None:
    source = TreeSource(events, page_size=2)
    sid = events.current_snapshot.snapshot_id
    total, manifests = source.children(f"ml:{sid}", 0, 100)
    assert total == len(events.store.manifest_list(events.current_snapshot))
    biggest = max(manifests, key=lambda m: m["n"] or 0)
    index = int(biggest["id"].rsplit(":", 1)[1])
    entries = events.store.entries(events.store.manifest_list(events.current_snapshot)[index])
    pages = []
    offset = 0
    while True:
        n, page = source.children(biggest["id"], offset)
        assert n == entries.num_rows == biggest["n"]
        assert len(page) <= 2
        pages += page
        offset += len(page)
        if offset >= n:
            break
    assert [p["id"] for p in pages] == [f"e:{sid}:{index}:{i}" for i in range(entries.num_rows)]
    assert [p["label"] for p in pages] == [path.rsplit("/", 1)[1] for path in entries.column("file_path").to_pylist()]
    inherited = entries.column("sequence_number_inherited").to_pylist()
    for node, flag in zip(pages, inherited, strict=True):
        seq = next(f for f in node["facts"] if f[0] == "data seq")
        assert (seq[2] == "inherited") == bool(flag)


@pytest.mark.spark
def test_entry_facts_and_details_explain_every_field(events: icebook.Table) -> None:
    source = TreeSource(events)
    sid = events.current_snapshot.snapshot_id
    _, manifests = source.children(f"ml:{sid}")
    data = next(m for m in manifests if ["content", "DATA", ""] in m["facts"])
    _, files = source.children(data["id"])
    facts = {k: v for k, v, _ in files[0]["facts"]}
    assert facts["status"] in ("ADDED", "EXISTING")
    assert facts["partition"].startswith("(region=")
    assert "event_id:" in facts["bounds"]  # decoded, named by column
    details = source.details(files[0]["id"])
    rows = {name: (value, doc, note) for name, value, doc, note in details["rows"]}
    for name in ("status", "snapshot_id", "sequence_number", "file_sequence_number"):
        assert rows[name][1] == ManifestEntry.FIELD_DOCS[name]
    assert rows["data_file.record_count"][1] == DataFile.FIELD_DOCS["record_count"]
    assert "event_id:" in rows["data_file.lower_bounds"][0]
    manifest_details = source.details(data["id"])
    assert [p[1] for p in manifest_details["parts"]] == ["commit_uuid", "separator", "index", "extension"]


@pytest.mark.spark
def test_deletes_are_marked(events: icebook.Table) -> None:
    source = TreeSource(events)
    sid = events.current_snapshot.snapshot_id
    _, manifests = source.children(f"ml:{sid}")
    deletes = [m for m in manifests if ["content", "DELETES", "delete"] in m["facts"]]
    assert deletes
    _, files = source.children(deletes[0]["id"])
    assert files[0]["kind"] == "delete_file"
    assert ["content", "POSITION_DELETES", "delete"] in files[0]["facts"]


class Sent(list[dict[str, Any]]):
    pass


@pytest.mark.spark
def test_widget_answers_children_and_details_messages(events: icebook.Table) -> None:
    widget = D.tree_widget(events)
    sent = Sent()
    widget.send = sent.append  # type: ignore[method-assign]
    widget._on_message(widget, {"type": "children", "req": 1, "view": "v", "id": "g:snapshots", "offset": 0}, [])
    widget._on_message(widget, {"type": "details", "req": 2, "view": "v", "id": "meta"}, [])
    widget._on_message(widget, {"type": "children", "req": 3, "view": "v", "id": "m:1:99", "offset": 0}, [])
    assert sent[0]["type"] == "children" and sent[0]["total"] == len(events.snapshots) and sent[0]["req"] == 1
    assert sent[1]["type"] == "details" and sent[1]["details"]["title"] == "Table metadata"
    assert sent[2]["type"] == "error" and sent[2]["req"] == 3  # a bad id answers with an error, not silence


@pytest.mark.spark
def test_widget_reroots_at_a_snapshot(events: icebook.Table) -> None:
    first = events.snapshots[0].snapshot_id
    widget = D.tree_widget(events, at=first)
    assert widget.roots[0]["id"] == f"s:{first}"
    assert widget.get_state()["at"] == str(first)  # 64-bit ids travel as strings
    widget.at = None
    assert widget.roots[0]["id"] == "meta"
    assert D.tree_widget(events, at="audit").at == events.refs["audit"].snapshot_id


@pytest.mark.spark
def test_lineage_layout_puts_main_first(events: icebook.Table) -> None:
    rows, lanes = layout(lineage(events.metadata))
    assert lanes == 2
    by_id = {r["id"]: r for r in rows}
    audit = by_id[str(events.refs["audit"].snapshot_id)]
    assert audit["lane"] == 1 and audit["branches"] == ["audit"]
    assert all(r["lane"] == 0 for r in rows if r["main"])
    assert [r["row"] for r in rows] == list(range(len(rows)))
    widget = D.LineageWidget(events)
    widget.set_state({"selected_snapshot_id": audit["id"]})
    assert widget.selected_snapshot_id == int(audit["id"])


@pytest.mark.spark
def test_static_tree_is_bounded(events: icebook.Table) -> None:
    html = D.tree_html(events, entries=1)
    assert "more" in html and html.count("data-kind") == 0
    assert html.count("<details") >= 6


def test_byte_size() -> None:
    assert [byte_size(n) for n in (0, 1023, 1024, 1536, 5 * 1024**3)] == [
        "0 B",
        "1023 B",
        "1.0 KiB",
        "1.5 KiB",
        "5.0 GiB",
    ]
    assert byte_size(None) == "–"
