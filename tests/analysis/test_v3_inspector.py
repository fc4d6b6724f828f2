"""The v3 inspector (``Table.v3``) on dv_v3, on damaged copies of it, and on variant files Spark writes (every
v3 scenario is held against Spark in ``test_v3_scenarios.py``): a deletion vector whose cardinality disagrees
with its bitmap is one ``MetadataError`` naming the Puffin file and the field; overlapping row-id ranges are a
finding naming both files; a default of the wrong type is one ``MetadataError`` naming the metadata file and
the field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _support.damaged import ServingFileIO, rewrite_avro, with_edited_entry

import icebook
from icebook.analysis.v3.default_provenance import Source
from icebook.analysis.v3.findings import Severity
from icebook.display.registry import render_html, render_text
from icebook.engines.spark_session import add_catalog
from icebook.errors import MetadataError
from icebook.table.opening import open_table

pytestmark = pytest.mark.spark

DV_V3 = "dv_v3"


def test_the_view_shows_each_vector_and_range(scenario_locations: dict[str, Path]) -> None:
    result = icebook.open(scenario_locations[DV_V3]).v3()
    text, html = render_text(result), render_html(result)
    for v in result.deletion_vectors.vectors:
        assert v.ranges_text() in text and v.ranges_text() in html
        assert Path(v.puffin_path).name in html
    assert "Row lineage" in html and "next-row-id" in html


# ------------------------------------------------------------------ damaged copies


def test_a_manifest_cardinality_the_bitmap_disagrees_with_names_the_puffin_file(
    scenario_locations: dict[str, Path], tmp_path: Path
) -> None:
    location = scenario_locations[DV_V3]

    def one_more(df: dict[str, Any]) -> None:
        df["record_count"] += 1

    fileio = with_edited_entry(location, 1, one_more)
    # The manifest list's count of added rows follows, so that only the vector disagrees.
    (victim,) = (p for p in fileio.files if p.endswith(".avro") and "snap-" not in p)
    (listing,) = (p for p in fileio.files if p != victim)
    copy = tmp_path / "list.avro"  # rewrite_avro reads a file
    copy.write_bytes(fileio.files[listing])

    def count_it(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for r in records:
            if r["manifest_path"] == victim:
                r["added_rows_count"] += 1
        return records

    fileio.files[listing] = rewrite_avro(str(copy), count_it)

    def summary(doc: dict[str, Any]) -> None:  # and the snapshot's total
        current = next(s for s in doc["snapshots"] if s["snapshot-id"] == doc["current-snapshot-id"])
        current["summary"]["total-position-deletes"] = str(int(current["summary"]["total-position-deletes"]) + 1)

    t = open_table(str(_metadata_copy(location, tmp_path, summary)), fileio=fileio)
    with pytest.raises(
        MetadataError, match=r"puffin file .*\.puffin: record_count: the manifest .* records \d+ deleted rows"
    ):
        t.v3().deletion_vectors  # noqa: B018


def _damaged_footer(path: str, edit: Any) -> bytes:
    """The Puffin file with its (uncompressed) footer JSON edited, the blobs untouched."""
    data = Path(path).read_bytes()
    payload_size = int.from_bytes(data[-12:-8], "little")
    start = len(data) - 12 - payload_size
    footer = json.loads(data[start : len(data) - 12])
    edit(footer)
    payload = json.dumps(footer).encode()
    return data[:start] + payload + len(payload).to_bytes(4, "little") + data[-8:]


def test_a_footer_cardinality_the_bitmap_disagrees_with_names_the_puffin_file(
    scenario_locations: dict[str, Path],
) -> None:
    location = scenario_locations[DV_V3]
    vector = icebook.open(location).v3().deletion_vectors.vectors[0]

    def wrong(footer: dict[str, Any]) -> None:
        for blob in footer["blobs"]:
            blob["properties"]["cardinality"] = str(int(blob["properties"]["cardinality"]) + 3)

    fileio = ServingFileIO({vector.puffin_path: _damaged_footer(vector.puffin_path, wrong)})
    t = open_table(str(location), fileio=fileio)
    with pytest.raises(MetadataError, match=r"puffin file .*\.puffin: properties\.cardinality: the footer records"):
        t.v3()


def test_overlapping_row_id_ranges_are_a_finding_naming_both_files(scenario_locations: dict[str, Path]) -> None:
    location = scenario_locations[DV_V3]
    files = icebook.open(location).v3().row_lineage.files
    first = files[0]

    def overlap(df: dict[str, Any]) -> None:
        df["first_row_id"] = first.first_row_id

    t = open_table(str(location), fileio=with_edited_entry(location, 0, overlap))
    lineage = t.v3().row_lineage
    errors = [f for f in lineage.findings if f.level == Severity.ERROR and f.field == "first_row_id"]
    assert len(errors) == 1, lineage.findings
    assert first.file_path in errors[0].message or first.file_path == errors[0].subject
    other = errors[0].subject if errors[0].subject != first.file_path else errors[0].message
    assert other != first.file_path and ".parquet" in other
    assert "overlap" in errors[0].message
    shown = str(errors[0]).replace(t.location.rstrip("/") + "/", "")  # the text writes paths from the location
    assert " ".join(shown.split()) in " ".join(render_text(t.v3()).split())


def _metadata_copy(location: Path, tmp_path: Path, edit: Any) -> Path:
    """A private copy of the table's current metadata JSON, edited (manifests and data files stay the
    original's)."""
    copy = tmp_path / "table" / "metadata"
    copy.mkdir(parents=True)
    current = Path(icebook.open(location).metadata_location)
    doc = json.loads(current.read_text())
    edit(doc)
    target = copy / current.name
    target.write_text(json.dumps(doc))
    return target


def _with_field(location: Path, tmp_path: Path, field: dict[str, Any]) -> Path:
    """The metadata copy whose current schema gains ``field``: no data file holds the new field id."""

    def add(doc: dict[str, Any]) -> None:
        schema = next(s for s in doc["schemas"] if s["schema-id"] == doc["current-schema-id"])
        schema["fields"].append(field)
        doc["last-column-id"] = max(doc["last-column-id"], field["id"])

    return _metadata_copy(location, tmp_path, add)


def test_a_column_added_with_defaults_reads_its_initial_default_in_every_older_file(
    scenario_locations: dict[str, Path], tmp_path: Path
) -> None:
    field = {
        "id": 90,
        "name": "site",
        "type": "string",
        "required": False,
        "initial-default": "roof",
        "write-default": "yard",
    }
    t = icebook.open(str(_with_field(scenario_locations[DV_V3], tmp_path, field)))
    result = t.v3().defaults
    (column,) = result.columns
    assert (column.name, column.initial_default, column.write_default) == ("site", "roof", "yard")
    live = {f.file_path for f in t.v3().deletion_vectors.files}
    assert {f.file_path for f in result.files} == live
    assert {(f.source, f.value) for f in result.files} == {(Source.INITIAL_DEFAULT, "roof")}
    # The reader the inspector describes: the Arrow engine fills the same value.
    assert set(t.read(columns=["site"]).column("site").to_pylist()) == {"roof"}
    assert "initial-default" in render_html(result)


def test_a_default_of_the_wrong_type_names_the_metadata_file_and_field(
    scenario_locations: dict[str, Path], tmp_path: Path
) -> None:
    # The schema's defaults are checked when the metadata is parsed (spec/defaults.py): opening fails.
    field = {"id": 91, "name": "level", "type": "int", "required": False, "initial-default": "high"}
    with pytest.raises(MetadataError, match=r"metadata\.json: schemas\[0\]\.level\.initial-default: .*type int"):
        icebook.open(str(_with_field(scenario_locations[DV_V3], tmp_path, field)))


# ------------------------------------------------------------------ variant shredding written by Spark


def test_variant_shredding_of_files_spark_wrote_before_and_after_shredding(spark: Any, tmp_path: Path) -> None:
    add_catalog("v3shred", tmp_path)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS v3shred.db")
    spark.sql(
        "CREATE TABLE v3shred.db.var (id BIGINT, v VARIANT, s STRUCT<inner: VARIANT>) USING iceberg "
        "TBLPROPERTIES ('format-version'='3')"
    )
    insert = (
        "INSERT INTO v3shred.db.var SELECT id, parse_json(format_string("
        '\'{"a": %d, "b": "x%d", "tags": ["p", "q"]}\', id, id)), '
        "named_struct('inner', parse_json('{\"k\": 1.5}')) FROM range({lo}, {hi}) AS r(id)"
    )
    spark.sql(insert.replace("{lo}", "0").replace("{hi}", "5"))
    spark.sql("ALTER TABLE v3shred.db.var SET TBLPROPERTIES ('write.parquet.shred-variants'='true')")
    spark.sql(insert.replace("{lo}", "5").replace("{hi}", "10"))
    t = icebook.open(tmp_path / "db" / "var")
    first, second = (s.snapshot_id for s in t.snapshots)
    before = t.v3(first).variants
    assert before.columns == ("v", "s.inner") and before.files
    assert not any(f.is_shredded for f in before.files)
    after = t.v3(second).variants
    new_files = {f.file_path for f in after.files} - {f.file_path for f in before.files}
    shredded = {(f.file_path, f.column): f for f in after.files if f.file_path in new_files}
    assert {c for _, c in shredded} == {"v", "s.inner"}
    for (_, column), f in shredded.items():
        if column == "v":
            assert [p.path for p in f.shredded] == ["$.a", "$.b", "$.tags[*]"]
            assert [p.column for p in f.shredded][1] == "v.typed_value.b.typed_value"
            assert f.shredded[1].logical_type == "String"
    spark_files = {r.file_path for r in spark.sql("SELECT file_path FROM v3shred.db.var.data_files").collect()}
    assert {f.file_path for f in after.files} == spark_files
    assert "$.tags[*]" in render_text(after)
