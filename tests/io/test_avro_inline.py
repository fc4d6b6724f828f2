"""Manifest lists decoded in the kernel's own process only when the decode is provably bounded."""

from __future__ import annotations

import glob
import io
import json
import zlib
from pathlib import Path
from typing import Any

import fastavro
import pytest

from icebook.errors import MetadataError
from icebook.io.avro_decode import avro_records as worker_records
from icebook.io.avro_header import check_framing, write_container_header, write_long
from icebook.io.avro_inline import decode_records_inline
from icebook.io.avro_list import avro_records
from icebook.io.worker_pool import POOL


def _avro(schema: dict[str, Any], records: list[Any], codec: str = "null") -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records, codec=codec)
    return out.getvalue()


def _inline(data: bytes) -> list[dict[str, Any]] | None:
    return decode_records_inline(data, check_framing(data, "t.avro", kind="manifest list"))


@pytest.mark.spark
def test_every_scenario_manifest_list_decodes_in_process_as_the_worker_does(warehouse: Path) -> None:
    lists = sorted(glob.glob(str(warehouse / "**" / "snap-*.avro"), recursive=True))
    assert len(lists) > 20
    for path in lists:
        data = Path(path).read_bytes()
        inline = _inline(data)
        assert inline is not None, path
        assert inline == worker_records(data), path


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy"])
def test_codecs_are_inflated_here(codec: str) -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]}
    records = [{"s": f"value {i}"} for i in range(500)]
    assert _inline(_avro(schema, records, codec)) == records


def _hostile(schema: dict[str, Any], count: int, body: bytes, codec: str = "null") -> bytes:
    """A container whose one block declares ``count`` records in ``body`` (fastavro would not write it)."""
    meta = {"avro.schema": json.dumps(schema).encode(), "avro.codec": codec.encode()}
    sync = b"S" * 16
    return write_container_header(meta, sync) + write_long(count) + write_long(len(body)) + body + sync


def test_a_self_referencing_schema_goes_to_a_worker() -> None:
    # Each level costs one byte (the union index), so a long run of 0x02 would recurse past the C stack.
    schema = {"type": "record", "name": "node", "fields": [{"name": "next", "type": ["null", "node"]}]}
    data = _hostile(schema, 1, b"\x02" * 100_000 + b"\x00")
    assert _inline(data) is None
    with pytest.raises(MetadataError, match=r"t\.avro"):
        avro_records(data, "t.avro", "manifest list")


def test_arrays_of_zero_byte_items_go_to_a_worker() -> None:
    # A huge item count of nulls consumes no input: the loop would be bounded only by the count.
    schema = {"type": "record", "name": "r", "fields": [{"name": "a", "type": {"type": "array", "items": "null"}}]}
    body = write_long(2**60) + write_long(0)
    assert _inline(_hostile(schema, 1, body)) is None


def _deflated(raw: bytes) -> bytes:
    deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
    return deflater.compress(raw) + deflater.flush()


def test_records_of_no_bytes_go_to_a_worker() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "n", "type": "null"}]}
    assert _inline(_hostile(schema, 10**15, _deflated(b""), codec="deflate")) is None


def test_a_compression_bomb_goes_to_a_worker() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "b", "type": "bytes"}]}
    assert _inline(_hostile(schema, 1, _deflated(b"\x00" * (80 << 20)), codec="deflate")) is None


def test_more_records_than_decompressed_bytes_goes_to_a_worker() -> None:
    # The framing check counts compressed bytes; the decompressed block is what the records fill.
    schema = {"type": "record", "name": "r", "fields": [{"name": "x", "type": "long"}]}
    assert _inline(_hostile(schema, 5, _deflated(b"\x02\x04"), codec="deflate")) is None


def test_corrupt_bytes_are_a_metadata_error_naming_the_file() -> None:
    schema = {"type": "record", "name": "r", "fields": [{"name": "s", "type": "string"}]}
    started = POOL.started
    with pytest.raises(MetadataError, match=r"lists/snap-1\.avro"):
        avro_records(_hostile(schema, 1, b"\x7f"), "lists/snap-1.avro", "manifest list")
    assert POOL.started == started  # decided here, without a worker
