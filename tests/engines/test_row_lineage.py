"""Row lineage rules of the Arrow engine on their own (spec: "Row Lineage"): no Spark needed."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from _support.metadata_examples import FILE, v2, v3

from icebook.analysis.scan.plan_items import ScanFile
from icebook.engines.arrow_lineage import check_unique, last_updated, row_ids, split_columns
from icebook.engines.sql_lineage import expand_stars, named_lineage, prepare
from icebook.errors import MetadataError, UnsupportedFeature
from icebook.spec.manifest import FileContent, FileFormat
from icebook.spec.metadata import parse_table_metadata


def _file(path: str, first_row_id: int | None, record_count: int = 3, sequence_number: int = 4) -> ScanFile:
    return ScanFile(
        content=FileContent.DATA,
        file_path=path,
        file_format=FileFormat.PARQUET,
        spec_id=0,
        partition=(),
        record_count=record_count,
        file_size_in_bytes=10,
        sequence_number=sequence_number,
        file_sequence_number=sequence_number,
        snapshot_id=1,
        manifest_path="/m.avro",
        first_row_id=first_row_id,
    )


def test_null_ids_are_first_row_id_plus_position_and_written_ones_kept() -> None:
    written = pa.array([None, 7, None], pa.int64())
    assert row_ids(_file("a", 100), written, np.array([0, 1, 2])).to_pylist() == [100, 7, 102]
    assert row_ids(_file("a", 100), pa.nulls(2, pa.int64()), np.array([1, 2])).to_pylist() == [101, 102]
    assert last_updated(_file("a", 100), pa.array([None, 2], pa.int64())).to_pylist() == [4, 2]


def test_a_file_without_first_row_id_reads_both_columns_null() -> None:
    # Spark 4.1 (Iceberg 1.12) reads a file of a snapshot from before a v3 upgrade with both columns null.
    assert row_ids(_file("a", None), pa.array([5, None], pa.int64()), np.array([0, 1])).to_pylist() == [None, None]
    assert last_updated(_file("a", None), pa.array([5, None], pa.int64())).to_pylist() == [None, None]


def test_overlapping_ranges_are_one_error_naming_the_files() -> None:
    files = [_file("/d/a.parquet", 0), _file("/d/b.parquet", 2)]
    check_unique(pa.array([0, 1, 2, 3, None, None]), files)  # unique, nulls aside
    with pytest.raises(MetadataError) as err:
        check_unique(pa.array([0, 1, 2, 2, 3, 4]), files)
    text = str(err.value)
    assert text.startswith("manifest /m.avro: first_row_id: row id 2 is read more than once")
    assert "/d/a.parquet (first_row_id 0, 3 rows); /d/b.parquet (first_row_id 2, 3 rows)" in text


def test_lineage_columns_are_told_from_table_columns() -> None:
    md = parse_table_metadata(v3(), file=FILE)
    schema = md.current_schema()
    assert split_columns(md, schema, ["_ROW_ID", "id", "_last_updated_sequence_number"]) == (
        ["id"],
        ("_row_id", "_last_updated_sequence_number"),
    )
    assert split_columns(md, schema, None) == (None, ())
    old = parse_table_metadata(v2(), file=FILE)
    with pytest.raises(UnsupportedFeature, match="format version 2 has no row lineage"):
        split_columns(old, old.current_schema(), ["_row_id"])


def test_sql_naming_lineage_writes_out_star_items() -> None:
    md = parse_table_metadata(v3(), file=FILE)
    schema = md.current_schema()
    names = ", ".join(f"`{f.name}`" for f in schema.columns)
    query, lineage = prepare("SELECT _row_id, _last_updated_sequence_number, * FROM t", md, schema)
    assert query == f"SELECT _row_id, _last_updated_sequence_number, {names} FROM t"
    assert lineage == ("_row_id", "_last_updated_sequence_number")
    assert prepare("SELECT * FROM t", md, schema) == ("SELECT * FROM t", ())
    assert named_lineage("SELECT count(*) FROM t WHERE `_ROW_ID` > 3 AND '_last_updated_sequence_number' = v") == (
        "_row_id",
    )
    assert expand_stars("SELECT a.*, count(*), 2 * 3 FROM t a", ["x"]) == "SELECT a.`x`, count(*), 2 * 3 FROM t a"
    with pytest.raises(UnsupportedFeature):
        old = parse_table_metadata(v2(), file=FILE)
        prepare("SELECT _row_id FROM t", old, old.current_schema())
