"""Locating the current metadata file in table directories of each naming style."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from icebook.errors import MetadataError, NotFound
from icebook.io.fileio import ArrowFileIO
from icebook.io.locate import locate_metadata, read_table_metadata

U1 = "11111111-1111-4111-8111-111111111111"
U2 = "22222222-2222-4222-8222-222222222222"
U3 = "33333333-3333-4333-8333-333333333333"


def metadata(updated: int = 1, location: str = "/t") -> dict[str, Any]:
    return {
        "format-version": 2,
        "table-uuid": "fb072c92-a02b-11e9-ae9c-1bb7bc9eca94",
        "location": location,
        "last-sequence-number": 0,
        "last-updated-ms": updated,
        "last-column-id": 1,
        "current-schema-id": 0,
        "schemas": [
            {"type": "struct", "schema-id": 0, "fields": [{"id": 1, "name": "x", "required": False, "type": "int"}]}
        ],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": []}],
        "last-partition-id": 999,
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
    }


def write(path: Path, obj: dict[str, Any] | None = None, *, gz: bool = False, text: str | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (text if text is not None else json.dumps(obj or metadata())).encode()
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.fixture
def io() -> ArrowFileIO:
    return ArrowFileIO()


def test_versioned_names_pick_highest(tmp_path: Path, io: ArrowFileIO) -> None:
    md = tmp_path / "t" / "metadata"
    write(md / f"00000-{U1}.metadata.json")
    write(md / f"00002-{U2}.metadata.json")
    write(md / f"00010-{U3}.metadata.json")
    write(md / f"snap-1-1-{U1}.avro", text="not json")
    found = locate_metadata(io, str(tmp_path / "t"))
    assert found.endswith(f"00010-{U3}.metadata.json")
    # the metadata/ directory itself works too, with or without a trailing slash
    assert locate_metadata(io, str(md) + "/") == found


def test_versioned_gzip_variants(tmp_path: Path, io: ArrowFileIO) -> None:
    md = tmp_path / "metadata"
    write(md / f"00001-{U1}.metadata.json")
    write(md / f"00002-{U2}.gz.metadata.json", gz=True)
    assert locate_metadata(io, str(tmp_path)).endswith(f"00002-{U2}.gz.metadata.json")
    write(md / f"00003-{U3}.metadata.json.gz", gz=True)
    found = locate_metadata(io, str(tmp_path))
    assert found.endswith(f"00003-{U3}.metadata.json.gz")
    assert read_table_metadata(io, found).format_version == 2


def test_versioned_tie_prefers_latest_update(tmp_path: Path, io: ArrowFileIO) -> None:
    md = tmp_path / "metadata"
    write(md / f"00004-{U1}.metadata.json", metadata(updated=50))
    write(md / f"00004-{U2}.metadata.json", metadata(updated=10))
    assert locate_metadata(io, str(tmp_path)).endswith(f"00004-{U1}.metadata.json")


def test_hadoop_names_pick_highest_numerically(tmp_path: Path, io: ArrowFileIO) -> None:
    md = tmp_path / "metadata"
    for n in (1, 2, 9, 10):
        write(md / f"v{n}.metadata.json")
    write(md / f"00099-{U1}.metadata.json")  # Hadoop names win over versioned names
    assert locate_metadata(io, str(tmp_path)).endswith("/v10.metadata.json")


def test_hadoop_gzip_variants(tmp_path: Path, io: ArrowFileIO) -> None:
    md = tmp_path / "metadata"
    write(md / "v1.metadata.json")
    write(md / "v2.gz.metadata.json", gz=True)
    assert locate_metadata(io, str(tmp_path)).endswith("/v2.gz.metadata.json")
    write(md / "v3.metadata.json.gz", gz=True)
    found = locate_metadata(io, str(tmp_path))
    assert found.endswith("/v3.metadata.json.gz")
    assert read_table_metadata(io, found).location == "/t"


def test_version_hint(tmp_path: Path, io: ArrowFileIO) -> None:
    md = tmp_path / "metadata"
    for n in (1, 2, 3):
        write(md / f"v{n}.metadata.json", metadata(updated=n))
    write(md / "version-hint.text", text="2\n")
    found = locate_metadata(io, str(tmp_path))
    assert found.endswith("/v2.metadata.json")
    assert read_table_metadata(io, found).last_updated_ms == 2


def test_version_hint_with_gzip_file(tmp_path: Path, io: ArrowFileIO) -> None:
    md = tmp_path / "metadata"
    write(md / "v4.gz.metadata.json", gz=True)
    write(md / "v5.metadata.json")
    write(md / "version-hint.text", text="4")
    assert locate_metadata(io, str(tmp_path)).endswith("/v4.gz.metadata.json")


def test_stale_version_hint_falls_back_to_listing(tmp_path: Path, io: ArrowFileIO) -> None:
    md = tmp_path / "metadata"
    write(md / "v1.metadata.json")
    write(md / "v2.metadata.json")
    write(md / "version-hint.text", text="7")
    assert locate_metadata(io, str(tmp_path)).endswith("/v2.metadata.json")
    write(md / "version-hint.text", text="garbage")
    assert locate_metadata(io, str(tmp_path)).endswith("/v2.metadata.json")
    write(md / "version-hint.text", text="²")  # a digit to str.isdigit(), not to int()
    assert locate_metadata(io, str(tmp_path)).endswith("/v2.metadata.json")


def test_metadata_file_location_returned_as_is(tmp_path: Path, io: ArrowFileIO) -> None:
    f = write(tmp_path / "metadata" / f"00000-{U1}.metadata.json")
    assert locate_metadata(io, str(f)) == str(f)
    odd = write(tmp_path / "exported.json")
    assert locate_metadata(io, str(odd)) == str(odd)
    with pytest.raises(NotFound, match="metadata file not found"):
        locate_metadata(io, str(tmp_path / "metadata" / "v9.metadata.json"))


def test_file_uri(tmp_path: Path, io: ArrowFileIO) -> None:
    write(tmp_path / "metadata" / "v1.metadata.json")
    found = locate_metadata(io, f"file://{tmp_path}")
    assert found.endswith("/metadata/v1.metadata.json")
    assert read_table_metadata(io, found).format_version == 2


def test_nothing_found_names_directory_and_patterns(tmp_path: Path, io: ArrowFileIO) -> None:
    md = tmp_path / "metadata"
    write(md / "notes.txt", text="hello")
    with pytest.raises(NotFound) as err:
        locate_metadata(io, str(tmp_path))
    msg = str(err.value)
    assert str(md) in msg
    assert "version-hint.text" in msg and "v<N>.metadata.json" in msg and "<NNNNN>-<uuid>.metadata.json" in msg
    assert err.value.available == ("notes.txt",)


def test_missing_directory(tmp_path: Path, io: ArrowFileIO) -> None:
    with pytest.raises(NotFound, match="no table at"):
        locate_metadata(io, str(tmp_path / "nope"))


def test_read_corrupt_metadata_names_file(tmp_path: Path, io: ArrowFileIO) -> None:
    f = write(tmp_path / "metadata" / "v1.metadata.json", text='{"format-version": 2,')
    with pytest.raises(MetadataError) as err:
        read_table_metadata(io, str(f))
    assert str(f) in str(err.value) and "truncated" in str(err.value)
