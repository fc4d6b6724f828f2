"""The one rule for values decoded from a table's files (``icebook.errors.decoded_values``): a compute over
them that fails is one ``MetadataError`` naming the file and the field."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _synthetic import manifest_file

from icebook.errors import MetadataError, NotFound, decoded_values
from icebook.io.avro_entries import _inherit
from icebook.io.fileio import ArrowFileIO
from icebook.io.position_delete_files import FILE_PATH_ID, POS_ID, read_position_deletes


def _delete_file(tmp_path: Path, paths: pa.Array, positions: pa.Array) -> str:
    schema = pa.schema(
        [
            pa.field("file_path", paths.type, metadata={"PARQUET:field_id": str(FILE_PATH_ID)}),
            pa.field("pos", positions.type, metadata={"PARQUET:field_id": str(POS_ID)}),
        ]
    )
    path = str(tmp_path / "deletes.parquet")
    pq.write_table(pa.table([paths, positions], schema=schema), path)
    return path


def test_a_position_delete_file_whose_paths_are_not_utf8_names_the_file_and_column(tmp_path: Path) -> None:
    path = _delete_file(tmp_path, pa.array([b"s3://b/t/data/a.parquet", b"\xff\xfe"], pa.binary()), pa.array([0, 1]))
    with pytest.raises(MetadataError) as info:
        read_position_deletes(ArrowFileIO(), path)
    assert info.value.file == path and info.value.field == "file_path"
    assert "delete file" in str(info.value)


def test_a_position_delete_file_whose_positions_are_not_integers_names_the_file_and_column(tmp_path: Path) -> None:
    path = _delete_file(tmp_path, pa.array(["s3://b/t/data/a.parquet"]), pa.array(["seven"]))
    with pytest.raises(MetadataError) as info:
        read_position_deletes(ArrowFileIO(), path)
    assert info.value.file == path and info.value.field == "pos"


def test_the_rule_passes_icebook_errors_through_and_turns_any_other_into_one() -> None:
    with pytest.raises(NotFound), decoded_values("m.avro", "lower_bounds"):
        raise NotFound("gone")
    with pytest.raises(MetadataError) as info, decoded_values("m.avro", "lower_bounds", kind="manifest"):
        pa.array([b"\xff"], pa.binary()).cast(pa.string())
    assert str(info.value).startswith("manifest m.avro: lower_bounds: values cannot be used as written (ArrowInvalid")


def test_first_row_ids_past_int64_are_an_error_naming_the_manifest_not_ids_wrapped_around() -> None:
    manifest = replace(manifest_file(b"m"), first_row_id=0, format_version=3)  # a v3 data manifest
    decoded = {
        "content": pa.array([0, 0, 0], pa.int32()),
        "record_count": pa.array([2**62, 2**62, 2**62], pa.int64()),  # a damaged count
        "first_row_id": pa.nulls(3, pa.int64()),
    }
    with pytest.raises(MetadataError) as info:
        _inherit(decoded, 3, manifest, 3)
    assert info.value.file == manifest.manifest_path and info.value.field == "first_row_id"
