"""The v3 inspector on every v3 scenario at every snapshot, held against Spark: the DV map against
``position_deletes`` and ``delete_files`` (Puffin only: an upgraded table keeps its Parquet position deletes),
row-id ranges against ``data_files.first_row_id`` and ``_row_id``, defaults against the values Spark reads,
variant shredding against the step that turned it on, and geo boxes against the envelopes of the WKB the
files hold."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from _support.conformance import spark_readable

import icebook
from icebook.analysis.v3.default_provenance import Source
from icebook.analysis.v3.file_fields import file_field_ids
from icebook.analysis.v3.findings import Severity
from icebook.display.registry import render_html, render_text
from icebook.scenarios import SCENARIOS

pytestmark = pytest.mark.spark

V3 = sorted(name for name, s in SCENARIOS.items() if s.claims.format_version == 3)
ROW_ID = 2147483540


def _rows(spark: Any, query: str) -> list[Any]:
    return spark.sql(query).collect()


@pytest.mark.parametrize("name", V3)
def test_every_snapshot_of_every_v3_scenario(spark: Any, scenario_locations: dict[str, Path], name: str) -> None:
    t = icebook.open(scenario_locations[name])
    table = SCENARIOS[name].table
    for snapshot in t.snapshots:
        sid = snapshot.snapshot_id
        result = t.v3(sid)
        assert not [f for f in result.findings if f.level == Severity.ERROR], (sid, result.findings)
        assert render_text(result) and render_html(result)
        if not SCENARIOS[name].spark_reads:
            continue  # Spark cannot load this table (its scenario says so): icebook's answers stand alone
        dv_map = result.deletion_vectors
        vectors = (*dv_map.vectors, *dv_map.dangling)
        ours = {(v.referenced_data_file, p) for v in vectors for a, b in v.ranges for p in range(a, b + 1)}
        theirs = {
            (r.file_path, r.pos)
            for r in _rows(
                spark,
                f"SELECT file_path, pos FROM {table}.position_deletes VERSION AS OF {sid} "
                "WHERE delete_file_path LIKE '%.puffin'",
            )
        }
        assert ours == theirs, (name, sid)
        puffin = {
            (r.referenced_data_file, r.file_path, r.content_offset, r.content_size_in_bytes, r.record_count)
            for r in _rows(
                spark,
                "SELECT referenced_data_file, file_path, content_offset, content_size_in_bytes, record_count "
                f"FROM {table}.delete_files VERSION AS OF {sid} WHERE file_format = 'PUFFIN'",
            )
        }
        assert {
            (v.referenced_data_file, v.puffin_path, v.content_offset, v.content_size_in_bytes, v.cardinality)
            for v in vectors
        } == puffin, (name, sid)
        first_row_ids = {
            r.file_path: r.first_row_id
            for r in _rows(spark, f"SELECT file_path, first_row_id FROM {table}.data_files VERSION AS OF {sid}")
        }
        assert {f.file_path: f.first_row_id for f in result.row_lineage.files} == first_row_ids, (name, sid)
        assert {f.file_path for f in dv_map.files} == set(first_row_ids)


@pytest.mark.parametrize("name", spark_readable(V3))  # types_v3's row ids: the Java reader in engines/test_arrow.py
def test_row_ids_spark_reads_lie_in_the_ranges(spark: Any, scenario_locations: dict[str, Path], name: str) -> None:
    t = icebook.open(scenario_locations[name])
    ranges = {f.file_path: f for f in t.v3().row_lineage.files}
    physical = {p for p in ranges if ROW_ID in file_field_ids(t.fileio, p, "PARQUET", None)}
    assert {p for p, f in ranges.items() if f.row_ids_written} == physical
    # Every column is read with the metadata columns: Iceberg 1.12's Spark reader fails on shredded variant
    # files read without their variant column.
    rows = _rows(spark, f"SELECT *, _file, _pos, _row_id FROM {SCENARIOS[name].table}")
    ids = []
    for r in rows:
        f = ranges[r._file]
        if f.first_row_id is None:
            assert r._row_id is None  # written before the upgrade, never assigned
            continue
        ids.append(r._row_id)
        if r._file in physical:  # kept from an earlier commit: an id some snapshot claimed
            assert r._row_id is not None and r._row_id < (t.metadata.next_row_id or 0)
        else:
            assert r._row_id == f.first_row_id + r._pos and r._row_id < (f.end or 0)
    assert len(ids) == len(set(ids)), "row ids are unique"


def test_dangling_and_replaced_vectors(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["dv_lifecycle_v3"])
    dv_map = t.v3().deletion_vectors
    assert len(dv_map.dangling) == 1
    (finding,) = [f for f in dv_map.findings if "dangling" in f.message]
    assert finding.level == Severity.NOTE and dv_map.dangling[0].puffin_path in finding.subject
    # the first file's vector after its fourth replacement: positions 1-3, 10, 20-24 and 40
    (vector,) = [v for v in dv_map.vectors]
    assert vector.ranges_text() == "1-3, 10, 20-24, 40"


def test_defaults_v3_reads_the_initial_default_where_spark_does(
    spark: Any, scenario_locations: dict[str, Path]
) -> None:
    t = icebook.open(scenario_locations["defaults_v3"])
    defaults = t.v3().defaults
    columns = {c.name: c for c in defaults.columns}
    assert (columns["tier"].initial_default, columns["tier"].write_default) == ("standard", "basic")
    assert (columns["credit"].initial_default, columns["credit"].write_default) == (100, 100)
    source = {(f.file_path, f.column): f for f in defaults.files}
    rows = _rows(spark, f"SELECT _file, tier, credit FROM {SCENARIOS['defaults_v3'].table}")
    old = 0
    for r in rows:
        tier, credit = source[(r._file, "tier")], source[(r._file, "credit")]
        if tier.source == Source.INITIAL_DEFAULT:
            assert (r.tier, r.credit) == ("standard", 100) and credit.source == Source.INITIAL_DEFAULT
            old += 1
        else:
            assert tier.source == Source.FILE and credit.source == Source.FILE
    assert old == 3  # the three customers appended before the columns existed


def test_variant_v3_files_are_shredded_after_the_property(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["variant_v3"])
    snapshots = t.snapshots
    before = t.v3(snapshots[1].snapshot_id).variants  # after the UPDATE, before shredding
    assert before.files and not any(f.is_shredded for f in before.files)
    after = t.v3().variants
    shredded = [f for f in after.files if f.is_shredded]
    assert shredded and all(f.column == "payload" for f in shredded)
    paths = {p.path for f in shredded for p in f.shredded}
    assert {"$.page", "$.ms"} <= paths, paths
    assert {f.column for f in after.files} == {"payload", "context.extra"}


def _envelope(wkb: bytes) -> tuple[float, float, float, float]:
    """The 2-D envelope of a little-endian WKB point, line string or polygon."""
    kind = struct.unpack_from("<I", wkb, 1)[0]
    if kind == 1:
        xs, ys = [struct.unpack_from("<d", wkb, 5)[0]], [struct.unpack_from("<d", wkb, 13)[0]]
    else:
        at = 5 if kind == 2 else 9  # a polygon: ring count, then the one ring
        n = struct.unpack_from("<I", wkb, at)[0]
        coords = struct.unpack_from(f"<{2 * n}d", wkb, at + 4)
        xs, ys = list(coords[0::2]), list(coords[1::2])
    return min(xs), min(ys), max(xs), max(ys)


def test_geo_boxes_are_the_envelopes_of_the_files_shapes(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["geo_v3"])
    geo = t.v3().geo
    assert set(geo.columns) == {"shape", "area"}
    assert geo.boxes, "the Java API's file records bounds"
    assert geo.without_bounds, "Spark's files record none"
    for box in geo.boxes:
        values = [v for v in pq.read_table(box.file_path, columns=[box.column]).column(0).to_pylist() if v]
        envelopes = [_envelope(v) for v in values]
        expected = (
            min(e[0] for e in envelopes),
            min(e[1] for e in envelopes),
            max(e[2] for e in envelopes),
            max(e[3] for e in envelopes),
        )
        assert (box.xmin, box.ymin, box.xmax, box.ymax) == expected, box
    assert "<svg" in render_html(geo)


def test_a_manifest_from_before_the_upgrade_inherits_row_ids_only_where_its_list_assigns_them(
    scenario_locations: dict[str, Path],
) -> None:
    """The same manifest file has no first_row_id in the lists before the upgrade and one after: its data files'
    inherited first_row_id follows the list read, whichever snapshot is read first (and from the disk cache)."""
    t = icebook.open(scenario_locations["upgrade_v3"])
    before, after = t.snapshots[0], t.snapshots[-1]
    for order in ((after, before), (before, after)):
        fresh = icebook.open(scenario_locations["upgrade_v3"])
        seen = {
            s.snapshot_id: {f.file_path: f.first_row_id for f in fresh.v3(s.snapshot_id).row_lineage.files}
            for s in order
        }
        old_files = set(seen[before.snapshot_id])
        assert set(seen[before.snapshot_id].values()) == {None}
        assert all(seen[after.snapshot_id][p] is not None for p in old_files), seen
