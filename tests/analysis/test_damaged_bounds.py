"""Bytes flipped inside the column bounds of a data manifest (a small table PyIceberg writes, uncompressed
Avro so that each bound's bytes sit in the file as written): the views that decode bounds raise one
``MetadataError`` naming the manifest and the column, ``health()`` lists every damaged bound as a finding,
and the views that only prune with bounds still answer as before."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest

import icebook
from icebook.analysis.store.metrics import decode_bound_column
from icebook.errors import MetadataError
from icebook.spec.types import DATE, LONG, STRING, DecimalType

# PyIceberg truncates string bounds to 16 characters (an upper bound's last one incremented): these first 15
# are in the manifest as written.
LOWER_NAME, UPPER_NAME = b"aardvark-lower-", b"zebra-upper-nam"
LOWER_CITY, UPPER_CITY = b"amsterdam-lower", b"zurich-upper-ci"


@dataclass(frozen=True)
class Written:
    metadata_location: str
    manifest: Path


@pytest.fixture
def written(tmp_path: Path) -> Written:
    return _write(tmp_path)


def _write(tmp_path: Path, *, appended_before: int = 0) -> Written:
    """The table, its bounds' rows written by the last of ``appended_before + 1`` appends."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    catalog = SqlCatalog("damage", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=(tmp_path / "wh").as_uri())
    catalog.create_namespace("db")
    schema = Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "name", StringType(), required=False),
        NestedField(3, "city", StringType(), required=False),
    )
    table = catalog.create_table("db.people", schema, properties={"write.avro.compression-codec": "null"})
    names = [LOWER_NAME.decode() + "name", "middle", UPPER_NAME.decode() + "e-last"]
    cities = [LOWER_CITY.decode() + "-x", "paris", UPPER_CITY.decode() + "ty"]
    for i in range(appended_before):
        table.append(pa.table({"id": pa.array([10 + i], pa.int64()), "name": ["middle"], "city": ["paris"]}))
    table.append(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": names, "city": cities}))
    snapshot = table.current_snapshot()
    assert snapshot is not None
    manifest = next(m for m in snapshot.manifests(table.io) if m.added_snapshot_id == snapshot.snapshot_id)
    return Written(
        metadata_location=table.metadata_location, manifest=Path(manifest.manifest_path.removeprefix("file://"))
    )


def _flip(manifest: Path, *bounds: bytes) -> None:
    """One byte of each bound (its second) made 0xFF, which no UTF-8 text holds; the file keeps its length."""
    data = bytearray(manifest.read_bytes())
    for bound in bounds:
        assert data.count(bound) == 1, bound
        data[data.index(bound) + 1] = 0xFF
    manifest.write_bytes(bytes(data))


def test_a_flipped_byte_in_a_string_lower_bound(written: Written) -> None:
    before = icebook.open(written.metadata_location)
    files, rows = before.inspect.files(), before.read()
    tasks = before.scan().task_count
    _flip(written.manifest, LOWER_NAME)
    table = icebook.open(written.metadata_location)
    for view in (lambda: table.inspect.files(), lambda: table.inspect.entries()):
        with pytest.raises(MetadataError) as raised:
            view()
        message = str(raised.value)
        assert raised.value.file.endswith(written.manifest.name), message
        assert "lower_bounds of column 'name' (field id 2)" in message and "not valid UTF-8" in message, message
        assert "\n" not in message
    assert len(files) == 1
    # Reading and planning prune with bounds: a damaged one prunes nothing, and the answers stay the same.
    assert table.read().equals(rows)
    assert table.scan().task_count == tasks == 1
    report = table.maintenance.health(list_files=False)
    (finding,) = [f for f in report.findings if "column bounds" in f.title]
    assert finding.title.startswith("1 column bounds") and written.manifest.name in finding.detail
    assert "lower_bounds of column 'name'" in finding.detail


def test_a_diff_showing_a_file_with_a_damaged_bound_names_its_manifest(tmp_path: Path) -> None:
    written = _write(tmp_path, appended_before=1)
    _flip(written.manifest, UPPER_CITY)
    table = icebook.open(written.metadata_location)
    with pytest.raises(MetadataError) as raised:
        table.diff(table.snapshots[0].snapshot_id)  # the second append's file is added: its bounds are shown
    assert raised.value.file.endswith(written.manifest.name), str(raised.value)
    assert "upper_bounds of column 'city' (field id 3)" in str(raised.value)


def test_every_damaged_bound_is_a_finding(written: Written) -> None:
    _flip(written.manifest, LOWER_NAME, UPPER_NAME, LOWER_CITY, UPPER_CITY)
    table = icebook.open(written.metadata_location)
    with pytest.raises(MetadataError, match=r"lower_bounds of column 'city' \(field id 3\)"):
        table.inspect.files()  # the first column by name is the first reported
    (finding,) = [f for f in table.maintenance.health(list_files=False).findings if "column bounds" in f.title]
    assert finding.title.startswith("4 column bounds")
    for bound in ("lower_bounds", "upper_bounds"):
        for column in ("name", "city"):
            assert f"{bound} of column {column!r}" in finding.detail


def test_an_undamaged_table_has_no_bounds_finding(written: Written) -> None:
    table = icebook.open(written.metadata_location)
    assert not [f for f in table.maintenance.health(list_files=False).findings if "column bounds" in f.title]
    metrics = table.inspect.files()["readable_metrics"][0]
    assert metrics["name"]["lower_bound"] == LOWER_NAME.decode() + "n"


@pytest.mark.parametrize(
    ("raw", "t", "problem"),
    [
        ([b"ok", b"\xff\xfe"], STRING, r"row 1: string bound is not valid UTF-8"),
        ([b"\x01\x00\x00\x00\x00\x00\x00\x00", b"\x01\x02\x03"], LONG, r"row 1: long must be 8 bytes"),
        ([b"\x01\x00\x00\x00", b"\x01"], DATE, r"row 1: date must be 4 bytes"),
        ([b"\x01" * 17], DecimalType(10, 2), r"row 0: not a valid decimal\(10,2\)"),
    ],
)
def test_every_decode_failure_is_one_error_naming_file_field_and_row(raw: list[bytes], t: object, problem: str) -> None:
    decode: Callable[[], object] = lambda: decode_bound_column(  # noqa: E731
        pa.array(raw, pa.binary()), t, file="m.avro", column="lower_bounds of column 'c' (field id 1)"
    )
    with pytest.raises(MetadataError, match=rf"m\.avro: lower_bounds of column 'c' \(field id 1\): {problem}"):
        decode()
