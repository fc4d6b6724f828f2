"""Schema, partition spec and sort order timelines against what Spark did and what the metadata files say,
and predicate projection (hidden partitioning) checked against the files Spark reads."""

from __future__ import annotations

import datetime as dt
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from _support.conformance import spark_readable
from _support.fuzz import DamagedFileIO

import icebook
from icebook.analysis.expr.projection import explain_in_spec
from icebook.analysis.history.evolution import evolution, explain_predicate
from icebook.display.registry import render_html, render_text
from icebook.errors import NotFound, UnsupportedFeature
from icebook.scenarios import SCENARIOS
from icebook.spec.partitioning import PartitionField, PartitionSpec
from icebook.spec.schema import Schema
from icebook.spec.transforms import parse_transform
from icebook.spec.types import NestedField, PrimitiveType, StructType
from icebook.table import Table
from icebook.table.opening import open_table


@pytest.fixture(scope="module")
def events(scenario_locations: dict[str, Path]) -> Table:
    return icebook.open(scenario_locations["events"])


@pytest.mark.spark
def test_events_schema_changes_are_the_ones_spark_made(spark: Any, events: Table) -> None:
    ev = evolution(events)
    changes = {e.id: [(c.kind, c.field_id, c.name, c.before, c.after) for c in e.changes] for e in ev.schemas}
    assert changes[0] == []
    assert changes[1] == [("added", 7, "device", None, "string optional, doc 'client device'")]
    assert changes[2] == [("renamed", 5, "page", "payload", "page")]
    assert changes[3] == [("dropped", 4, "kind", "string optional", None)]
    assert [e.is_current for e in ev.schemas] == [False, False, False, True]
    # Spark reads every snapshot with the schema evolution says it was written with.
    by_snapshot = dict(zip(ev.snapshots["snapshot_id"], ev.snapshots["schema_id"], strict=True))
    for sid, schema_id in by_snapshot.items():
        columns = spark.sql(f"SELECT * FROM lake.db.events VERSION AS OF {sid}").columns
        assert columns == [f.name for f in events.metadata.schemas[schema_id].columns], sid
    described = [r.col_name for r in spark.sql("DESCRIBE TABLE lake.db.events").collect()]
    current = [f.name for f in events.metadata.current_schema().columns]
    assert described[: len(current)] == current
    # Schema 2 (the rename) was current only between two metadata commits: no snapshot used it.
    assert ev.schemas[2].first_snapshot_id is None and ev.schemas[2].became_current_ms is not None
    assert ev.schemas[1].first_snapshot_id == events.snapshot("release-2024-01").snapshot_id


@pytest.mark.spark
def test_events_spec_change_is_the_one_spark_made(spark: Any, events: Table) -> None:
    ev = evolution(events)
    assert [e.id for e in ev.specs] == [0, 1]
    assert ev.specs[0].definition == "region=identity(region)"
    assert [(c.kind, c.field_id, c.name, c.after) for c in ev.specs[1].changes] == [
        ("added", 1001, "ts_day", "day(ts)")
    ]
    partitioning = [
        r.data_type for r in spark.sql("DESCRIBE TABLE lake.db.events").collect() if r.col_name.startswith("Part ")
    ]
    assert partitioning == ["region", "days(ts)"]
    # First snapshot with spec-1 files is the first append after ALTER TABLE ... ADD PARTITION FIELD.
    first_spec_1 = ev.specs[1].first_snapshot_id
    spark_specs = {
        sid: {
            r.spec_id
            for r in spark.sql(f"SELECT DISTINCT spec_id FROM lake.db.events.files VERSION AS OF {sid}").collect()
        }
        for sid in ev.snapshots["snapshot_id"]
    }
    first_by_spark = next(sid for sid in ev.snapshots["snapshot_id"] if 1 in spark_specs[sid])
    assert first_spec_1 == first_by_spark
    assert {
        sid: set(s) for sid, s in zip(ev.snapshots["snapshot_id"], ev.snapshots["spec_ids"], strict=True)
    } == spark_specs


@pytest.mark.spark
@pytest.mark.parametrize("name", [n for n, s in SCENARIOS.items() if not s.spark_reads])
def test_files_per_spec_equal_the_full_listing_where_spark_cannot_read(
    scenario_locations: dict[str, Path], name: str
) -> None:
    """What the Spark comparison below cannot check on a table Spark cannot read: the counts from manifest
    lists alone equal those of the full listing, file by file, at every snapshot."""
    t = icebook.open(scenario_locations[name])
    ev = evolution(t)
    ours = {(r.snapshot_id, r.spec_id, 0): r.data_files for r in ev.files_per_spec.itertuples(index=False)}
    ours |= {(r.snapshot_id, r.spec_id, 1): r.delete_files for r in ev.files_per_spec.itertuples(index=False)}
    listed: dict[tuple[int, int, int], int] = {}
    for sid in ev.snapshots["snapshot_id"]:
        for spec_id, content in t.inspect.files(at=int(sid))[["spec_id", "content"]].itertuples(index=False):
            key = (int(sid), int(spec_id), 0 if content == 0 else 1)
            listed[key] = listed.get(key, 0) + 1
    assert listed and {k: v for k, v in ours.items() if v} == listed


@pytest.mark.spark
@pytest.mark.parametrize("name", spark_readable(SCENARIOS))
def test_files_per_spec_equal_spark_counts_without_reading_manifests(
    spark: Any, scenario_locations: dict[str, Path], name: str
) -> None:
    t = icebook.open(scenario_locations[name])
    ev = evolution(t)
    assert t.store.reads == 0  # manifest lists only
    ours = {}
    for r in ev.files_per_spec.itertuples(index=False):
        ours[(r.snapshot_id, r.spec_id, 0)] = r.data_files
        ours[(r.snapshot_id, r.spec_id, 1)] = r.delete_files
    theirs: dict[tuple[int, int, int], int] = {}
    for sid in ev.snapshots["snapshot_id"]:
        for r in spark.sql(
            f"SELECT spec_id, content, count(*) AS n FROM {SCENARIOS[name].table}.files VERSION AS OF {sid} "
            "GROUP BY spec_id, content"
        ).collect():
            key = (sid, r.spec_id, 0 if r.content == 0 else 1)
            theirs[key] = theirs.get(key, 0) + r.n
    assert {k: v for k, v in ours.items() if v} == theirs


@pytest.mark.spark
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_became_current_matches_the_metadata_files(scenario_locations: dict[str, Path], name: str) -> None:
    t = icebook.open(scenario_locations[name])
    ev = evolution(t)
    files = [e.metadata_file for e in t.metadata.metadata_log] + [t.metadata_location]
    first_seen: dict[tuple[str, int], int | None] = {}
    for index, f in enumerate(files):
        raw = Path(f).read_bytes()
        obj = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)  # .gz.metadata.json too
        # Every file of the log is readable here; the log's first is where something became current only
        # if it is the table's first file (a log cut by retention starts later: then it is unknown).
        known = index > 0 or not obj.get("metadata-log")
        for key, kind in (("current-schema-id", "schema"), ("default-spec-id", "partition spec")):
            first_seen.setdefault((kind, obj[key]), obj["last-updated-ms"] if known else None)
    for e in (*ev.schemas, *ev.specs):
        assert e.became_current_ms == first_seen.get((e.kind, e.id)), (e.kind, e.id)
    assert not ev.notes
    frame = ev.to_pandas()
    assert set(frame["kind"]) == {"schema", "partition spec", "sort order"}
    assert frame["first_snapshot_id"].dropna().isin(list(ev.snapshots["snapshot_id"])).all()


@pytest.mark.spark
def test_missing_history_is_reported_as_unknown(tmp_path: Path, events: Table) -> None:
    obj = json.loads(Path(events.metadata_location).read_text())
    for entry in obj["metadata-log"]:
        entry["metadata-file"] = str(tmp_path / "gone" / Path(entry["metadata-file"]).name)
    copy = tmp_path / "v99.metadata.json"
    copy.write_text(json.dumps(obj))
    t = icebook.open(copy)
    ev = evolution(t)
    assert any("could not be read" in n for n in ev.notes)
    # Only the current file is known, and the files before it are gone: no time is known, not even for
    # the current schema, which may have become current in any of them.
    assert all(e.became_current_ms is None for e in (*ev.schemas, *ev.specs, *ev.sort_orders))
    # What the snapshots and manifest lists say does not need the log.
    assert ev.schemas[3].first_snapshot_id is not None and ev.specs[1].first_snapshot_id is not None
    # Changes by id never need history.
    assert [c.kind for c in ev.schemas[2].changes] == ["renamed"]


@pytest.mark.spark
def test_explain_predicate_hidden_partitioning(events: Table) -> None:
    ex = evolution(events).explain_predicate("ts", ">=", "2024-01-03")
    by_spec = {p.spec_id: p for p in ex.projections}
    assert by_spec[0].predicate is None and "region" in by_spec[0].reason
    assert by_spec[1].predicate == "ts_day >= 2024-01-03"
    frame = ex.to_pandas()
    assert list(frame["partition_predicate"]) == [None, "ts_day >= 2024-01-03"]
    assert "spec 1: ts_day >= 2024-01-03" in render_text(ex)
    assert explain_predicate(events.metadata, "region", "=", "us").projections[0].predicate == "region = us"
    assert explain_predicate(events.metadata, "ts", "!=", "2024-01-03").projections[1].predicate is None
    assert explain_predicate(events.metadata, "ts", "is null").projections[1].predicate == "ts_day IS NULL"
    # kind was dropped but old schemas still know it; no spec partitions by it.
    assert all(p.predicate is None for p in explain_predicate(events.metadata, "kind", "=", "x").projections)
    with pytest.raises(NotFound):
        explain_predicate(events.metadata, "nope", "=", 1)
    with pytest.raises(UnsupportedFeature):
        explain_predicate(events.metadata, "ts", "~", 1)


def _ts_schema() -> Schema:
    return Schema(
        schema_id=0,
        fields=StructType(
            (
                NestedField(field_id=1, name="ts", required=False, type=PrimitiveType("timestamp")),
                NestedField(field_id=2, name="n", required=False, type=PrimitiveType("long")),
                NestedField(field_id=3, name="s", required=False, type=PrimitiveType("string")),
                NestedField(field_id=4, name="d", required=False, type=PrimitiveType("date")),
            )
        ),
    )


def _spec(source: int, transform: str, name: str) -> PartitionSpec:
    pf = PartitionField(
        source_id=source, source_ids=(source,), field_id=1000, name=name, transform=parse_transform(transform)
    )
    return PartitionSpec(spec_id=0, fields=(pf,))


@pytest.mark.parametrize(
    ("column", "transform", "op", "value", "expected"),
    [
        ("ts", "day", "<", "2024-01-03T00:00:00", "p <= 2024-01-02"),  # nothing of Jan 3 can match
        ("ts", "day", "<", "2024-01-03T00:00:01", "p <= 2024-01-03"),
        ("ts", "day", ">", "2024-01-03T23:59:59.999999", "p >= 2024-01-04"),
        ("ts", "day", "<=", "2024-01-03T12:00:00", "p <= 2024-01-03"),
        ("ts", "day", "=", "2024-01-03T12:00:00", "p = 2024-01-03"),
        ("ts", "hour", ">=", "2024-01-03T05:30:00", "p >= 2024-01-03-05"),
        ("ts", "month", "<", "2024-03-01", "p <= 2024-02"),
        ("ts", "year", ">", "2023-12-31T23:59:59.999999", "p >= 2024"),
        ("ts", "day", "<", "1969-12-31T00:00:00", "p <= 1969-12-30"),  # before the epoch: floor, not truncation
        ("d", "month", ">=", "2024-02-29", "p >= 2024-02"),
        ("d", "day", ">", "2024-02-29", "p >= 2024-03-01"),
        ("n", "truncate[10]", "<", 20, "p <= 10"),
        ("n", "truncate[10]", "<=", 20, "p <= 20"),
        ("n", "truncate[10]", ">", 19, "p >= 20"),
        ("n", "truncate[10]", "=", -5, "p = -10"),
        ("s", "truncate[2]", ">", "abc", "p >= ab"),
        ("n", "bucket[16]", "=", 34, "p = 3"),
        ("n", "bucket[16]", "<", 34, None),
        ("n", "identity", "<", 5, "p < 5"),
        ("n", "void", "=", 5, None),
    ],
)
def test_projection_rules(column: str, transform: str, op: str, value: Any, expected: str | None) -> None:
    schema = _ts_schema()
    source = schema.find_field_by_name(column)
    assert source is not None
    (projection,) = explain_in_spec(_spec(source.field_id, transform, "p"), schema, column, op, value)
    assert projection.predicate == expected, projection.reason


@pytest.mark.spark
def test_projection_is_inclusive_for_the_files_spark_reads(spark: Any, events: Table) -> None:
    # Every file holding a row that matches `ts op v` must lie in a partition the projection keeps.
    files = events.inspect.files(at="main")
    day_of = {r.file_path: r.partition["ts_day"] for r in files.itertuples() if r.spec_id == 1 and r.content == 0}
    assert day_of
    ops = {
        "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b,
        ">": lambda a, b: a > b,
        ">=": lambda a, b: a >= b,
        "=": lambda a, b: a == b,
    }
    pruned_somewhere = False
    for op in ops:
        for value in ("2024-01-03 00:00:00", "2024-01-04 16:20:00", "2024-01-05 00:00:00"):
            projection = explain_predicate(events.metadata, "ts", op, value).projections[1]
            assert projection.predicate is not None
            _, partition_op, text = projection.predicate.split(" ")
            bound = dt.date.fromisoformat(text)
            kept = {path for path, day in day_of.items() if ops[partition_op](day, bound)}
            matching = {
                r._file
                for r in spark.sql(
                    f"SELECT DISTINCT _file FROM lake.db.events WHERE ts {op} TIMESTAMP '{value}'"
                ).collect()
            }
            assert matching & set(day_of) <= kept, (op, value, projection.predicate)
            pruned_somewhere |= kept != set(day_of)
    assert pruned_somewhere


@pytest.mark.spark
def test_html_and_repr_escape(events: Table) -> None:
    ev = evolution(events)
    page = render_html(ev)
    assert "Schemas" in page and "renamed: page (id 5): payload -&gt; page" in page
    assert "<script" not in page
    text = render_text(ev)
    assert "dropped: kind (id 4)" in text and "added: ts_day (id 1001): day(ts)" in text
    ex = ev.explain_predicate("region", "=", "<script>")
    assert "&lt;script&gt;" in render_html(ex) and "<script>" not in render_html(ex)


@pytest.mark.spark
def test_a_gap_in_the_log_makes_unknown_only_what_first_shows_after_it(tmp_path: Path, events: Table) -> None:
    files = [e.metadata_file for e in events.metadata.metadata_log] + [events.metadata_location]
    schema_ids = [json.loads(Path(f).read_text())["current-schema-id"] for f in files]
    first = {sid: schema_ids.index(sid) for sid in dict.fromkeys(schema_ids)}
    # The file just before the one where schema 1 first shows current goes missing.
    gap = first[1] - 1
    assert gap > 0
    obj = json.loads(Path(events.metadata_location).read_text())
    obj["metadata-log"][gap]["metadata-file"] = str(tmp_path / "gone.metadata.json")
    copy = tmp_path / "v99.metadata.json"
    copy.write_text(json.dumps(obj))
    t = icebook.open(copy)
    ev = evolution(t)
    by_id = {e.id: e for e in ev.schemas}
    assert by_id[1].became_current_ms is None  # may have become current in the missing file
    for sid, index in first.items():
        if sid != 1 and index - 1 != gap:
            expected = json.loads(Path(files[index]).read_text())["last-updated-ms"]
            assert by_id[sid].became_current_ms == expected, sid


@pytest.mark.spark
def test_an_earlier_file_that_is_not_utf8_is_noted_by_name(events: Table) -> None:
    # Found by the fuzz test: a byte flipped in the key "properties" of an earlier file left the file readable to
    # the typed decoder, with no properties, so the property history changed and nothing said why.
    damaged_file = events.metadata.metadata_log[-1].metadata_file
    data = Path(damaged_file).read_bytes()
    at = data.index(b'"properties"') + 2
    fileio = DamagedFileIO(damaged_file, data[:at] + b"\x9e" + data[at + 1 :])
    t = open_table(events.metadata_location, fileio=fileio)
    ev = evolution(t)
    clean = evolution(events)
    assert ev.notes == (
        f"1 of {len(events.metadata.metadata_log) + 1} metadata files of the log could not be read (the first: "
        f"metadata {damaged_file}: not valid UTF-8 at byte {at}): for them, what was current is unknown",
    )
    assert f"note: {ev.notes[0]}" in render_text(ev) and damaged_file in render_html(ev)
    # The files before the damaged one say what they said; after the gap, the current file's properties are
    # each "initial" (no one commit can be said to have set them), and none is attributed to the damaged file.
    earlier = [e.metadata_file for e in events.metadata.metadata_log[:-1]]
    ours, theirs = ev.property_history, clean.property_history
    assert ours[ours["metadata_file"].isin(earlier)].equals(theirs[theirs["metadata_file"].isin(earlier)])
    after = ours[~ours["metadata_file"].isin(earlier)]
    assert set(after["metadata_file"]) == {None} and set(after["kind"]) == {"initial"}
    assert dict(zip(after["name"], after["after"], strict=True)) == dict(events.metadata.properties)
