"""The snapshot DAG against Spark's ``snapshots``, ``refs`` and ``history`` tables, on the scenario
tables and on a table that went through a rollback, a cherry-pick, write-audit-publish and an expiry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import icebook
from icebook.analysis.history.lineage import Lineage, history_path, lineage
from icebook.display.registry import render_html, render_text
from icebook.engines.spark_session import add_catalog
from icebook.scenarios import SCENARIOS
from icebook.table import Table

pytestmark = pytest.mark.spark

LAB = "lineage_lab"


def assert_agrees_with_spark(spark: Any, fq: str, lin: Lineage) -> None:
    snapshots = spark.sql(f"SELECT snapshot_id, parent_id, operation, summary FROM {fq}.snapshots").collect()
    assert {r.snapshot_id: r.parent_id for r in snapshots} == {sid: n.parent_id for sid, n in lin.nodes.items()}
    assert {r.snapshot_id: r.operation for r in snapshots} == {
        sid: n.snapshot.operation for sid, n in lin.nodes.items()
    }
    for r in snapshots:
        node = lin.nodes[r.snapshot_id]
        source = r.summary.get("source-snapshot-id")
        assert node.cherry_picked_from == (int(source) if source else None)
        assert node.published_wap_id == r.summary.get("published-wap-id")
        assert node.wap_id == r.summary.get("wap.id")
    for r in spark.sql(f"SELECT snapshot_id, is_current_ancestor FROM {fq}.history").collect():
        if r.snapshot_id in lin.nodes:
            assert lin.nodes[r.snapshot_id].on_main_ancestry == r.is_current_ancestor, r.snapshot_id
        else:
            assert not r.is_current_ancestor
    refs = {
        r.name: (r.type, r.snapshot_id) for r in spark.sql(f"SELECT name, type, snapshot_id FROM {fq}.refs").collect()
    }
    assert dict(lin.refs) == {name: kind.lower() for name, (kind, _) in refs.items()}
    labelled = {name: sid for sid, n in lin.nodes.items() for name in n.refs}
    assert labelled == {name: sid for name, (_, sid) in refs.items()}
    # Ref heads are reachable from themselves, and the main ancestry is the current snapshot's.
    for name, (_, sid) in refs.items():
        assert name in lin.nodes[sid].reachable_from
    assert lin.main_ancestry[0] == refs["main"][1]
    assert all(lin.nodes[sid].on_main_ancestry for sid in lin.main_ancestry)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_scenarios_agree_with_spark(spark: Any, scenario_locations: dict[str, Path], name: str) -> None:
    t = icebook.open(scenario_locations[name])
    lin = lineage(t.metadata)
    assert_agrees_with_spark(spark, SCENARIOS[name].table, lin)
    # Unreachable: snapshots no ref's ancestry contains (e.g. rolled back), walked on Spark's tables.
    parents = {
        r.snapshot_id: r.parent_id for r in spark.sql(f"SELECT * FROM {SCENARIOS[name].table}.snapshots").collect()
    }
    reachable: set[int] = set()
    for r in spark.sql(f"SELECT snapshot_id FROM {SCENARIOS[name].table}.refs").collect():
        cursor = r.snapshot_id
        while cursor is not None and cursor not in reachable:
            reachable.add(cursor)
            cursor = parents.get(cursor)
    assert set(lin.unreachable) == set(parents) - reachable and lin.expired_parents == ()
    frame = lin.to_pandas()
    assert list(frame["snapshot_id"]) == [s.snapshot_id for s in t.snapshots]
    assert list(frame.columns)[:11] == [
        "snapshot_id",
        "parent_id",
        "committed_at",
        "operation",
        "sequence_number",
        "refs",
        "on_main_ancestry",
        "reachable",
        "cherry_picked_from",
        "published_wap_id",
        "parent_expired",
    ]


def test_events_branch_graph(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    lin = lineage(t.metadata)
    audit, main, tag = (t.snapshot(r).snapshot_id for r in ("audit", "main", "release-2024-01"))
    assert lin.common_ancestor(main, audit) == tag
    assert not lin.nodes[audit].on_main_ancestry and lin.nodes[audit].reachable_from == ("audit",)
    assert lin.nodes[tag].reachable_from == ("main", "audit", "release-2024-01")
    assert set(lin.nodes[tag].children) == {main, lin.ancestors(audit)[1]}
    text = render_text(lin)
    lines = text.splitlines()[1:]
    # git log --graph: main's head first, the branch in a second lane that joins back at the tag.
    assert lines[0].startswith("* ") and str(main) in lines[0] and "(main)" in lines[0]
    assert lines[1].startswith("| * ") and str(audit) in lines[1] and "(audit)" in lines[1]
    assert "|/" in lines
    assert any(str(tag) in line and "tag: release-2024-01" in line for line in lines)
    assert len([line for line in lines if "*" in line]) == len(t.snapshots)
    path = history_path(t.metadata, main, audit)
    assert path.relation == "diverged" and path.common_ancestor == tag


@pytest.fixture(scope="module")
def lab(spark: Any, warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A table through rollback, cherry-pick, WAP publish and expiring one snapshot, built by Spark."""
    root = tmp_path_factory.mktemp("lineage_lab")
    add_catalog(LAB, root)
    fq = f"{LAB}.db.t"
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {LAB}.db")
    spark.sql(
        f"CREATE TABLE {fq} (id INT) USING iceberg TBLPROPERTIES ('format-version'='2', 'write.wap.enabled'='true')"
    )

    def current() -> int:
        return int(spark.sql(f"SELECT snapshot_id FROM {fq}.refs WHERE name = 'main'").collect()[0].snapshot_id)

    ids: dict[str, int] = {}
    spark.sql(f"INSERT INTO {fq} VALUES (1)")
    ids["s1"] = current()
    spark.sql(f"INSERT INTO {fq} VALUES (2)")
    ids["s2"] = current()
    spark.sql(f"INSERT INTO {fq} VALUES (3)")
    ids["s3"] = current()
    spark.sql(f"CALL {LAB}.system.rollback_to_snapshot('db.t', {ids['s2']})")
    spark.sql(f"INSERT INTO {fq} VALUES (4)")
    ids["s4"] = current()
    spark.sql(f"CALL {LAB}.system.cherrypick_snapshot('db.t', {ids['s3']})")
    ids["picked"] = current()
    spark.conf.set("spark.wap.id", "wap-1")
    try:
        spark.sql(f"INSERT INTO {fq} VALUES (5)")
    finally:
        spark.conf.unset("spark.wap.id")
    spark.sql(f"INSERT INTO {fq} VALUES (6)")
    ids["s6"] = current()
    spark.sql(f"CALL {LAB}.system.publish_changes('db.t', 'wap-1')")
    ids["published"] = current()
    spark.sql(f"CALL {LAB}.system.expire_snapshots(table => 'db.t', snapshot_ids => array({ids['s1']}))")
    staged = spark.sql(f"SELECT snapshot_id FROM {fq}.snapshots WHERE summary['wap.id'] = 'wap-1'").collect()
    ids["staged"] = int(staged[0].snapshot_id)
    return {"fq": fq, "location": root / "db" / "t", "ids": ids}


def test_rollback_cherry_pick_wap_and_expiry(spark: Any, lab: dict[str, Any]) -> None:
    ids = lab["ids"]
    t = icebook.open(lab["location"])
    lin = lineage(t.metadata)
    assert_agrees_with_spark(spark, lab["fq"], lin)
    # Rolled back, then picked onto the new main: the original stays unreachable.
    assert ids["s3"] in lin.unreachable and not lin.nodes[ids["s3"]].on_main_ancestry
    assert lin.nodes[ids["picked"]].cherry_picked_from == ids["s3"]
    assert lin.cherry_picked[ids["picked"]] == ids["s3"]
    # The staged WAP snapshot is on no ref; its published copy is on main.
    assert lin.nodes[ids["staged"]].wap_id == "wap-1" and not lin.nodes[ids["staged"]].reachable
    assert lin.nodes[ids["published"]].published_wap_id == "wap-1"
    assert lin.published == {ids["published"]: "wap-1"}
    assert lin.nodes[ids["published"]].on_main_ancestry
    # s1 expired: s2 names a parent that no longer exists.
    assert ids["s1"] not in lin.nodes
    assert lin.nodes[ids["s2"]].parent_expired and lin.expired_parents == (ids["s1"],)
    assert set(lin.unreachable) == {ids["s3"], ids["staged"]}
    frame = lin.to_pandas().set_index("snapshot_id")
    assert frame.loc[ids["picked"], "cherry_picked_from"] == ids["s3"]
    assert not frame.loc[ids["s3"], "reachable"]
    assert frame.loc[ids["s2"], "parent_expired"]
    text = render_text(lin)
    assert f"cherry-picked from {ids['s3']}" in text and "unreachable" in text and f"parent {ids['s1']} expired" in text


def test_html_escapes_ref_names(tmp_path: Path, scenario_locations: dict[str, Path]) -> None:
    import json

    source: Table = icebook.open(scenario_locations["events"])
    obj = json.loads(Path(source.metadata_location).read_text())
    obj["refs"]['<img src=x onerror="alert(1)">'] = {"type": "branch", "snapshot-id": obj["current-snapshot-id"]}
    copy = tmp_path / "v99.metadata.json"
    copy.write_text(json.dumps(obj))
    page = render_html(lineage(icebook.open(copy).metadata))
    assert "<img" not in page and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page


def test_a_parent_cycle_names_the_metadata_file_and_the_snapshots(
    tmp_path: Path, scenario_locations: dict[str, Path]
) -> None:
    import json

    from icebook.analysis.history.changes import snapshot_path
    from icebook.errors import MetadataError

    source: Table = icebook.open(scenario_locations["events"])
    obj = json.loads(Path(source.metadata_location).read_text())
    by_id = {s["snapshot-id"]: s for s in obj["snapshots"]}
    current = obj["current-snapshot-id"]
    parent = by_id[current]["parent-snapshot-id"]
    grandparent = by_id[parent]["parent-snapshot-id"]
    by_id[grandparent]["parent-snapshot-id"] = current  # current -> parent -> grandparent -> current
    copy = tmp_path / "v99.metadata.json"
    copy.write_text(json.dumps(obj))
    t = icebook.open(copy)
    index = next(i for i, s in enumerate(obj["snapshots"]) if s["snapshot-id"] == grandparent)
    expected = rf"{copy.name}: snapshots\[{index}\]\.parent-snapshot-id: .*cycle: {current} -> {parent} -> {grandparent} -> {current}"
    for walk in (t.inspect.history, lambda: snapshot_path(t, None, current)):
        with pytest.raises(MetadataError, match=expected):
            walk()
    # The graph shows the damage instead of refusing it (every other walk reports it as an error).
    graph = t.lineage()
    assert {sid for sid, node in graph.nodes.items() if node.parent_cycle} == {current, parent, grandparent}
    # A walk that starts below the cycle's entry still meets it.
    with pytest.raises(MetadataError, match=r"cycle"):
        history_path(t.metadata, parent, current)
