"""Puffin footers and deletion vectors: Spark-written v3 DVs and hand-built bitmaps."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _spark_tables import add_catalog
from pyroaring import BitMap

from icebook.errors import MetadataError, NotFound
from icebook.io.avro import read_manifest_entries, read_manifest_list
from icebook.io.fileio import ArrowFileIO
from icebook.io.puffin import (
    MAGIC,
    decode_deletion_vector,
    read_blob,
    read_deletion_vector,
    read_puffin_footer,
)

FIO = ArrowFileIO()
DELETED_IDS = {i for i in range(40) if i % 5 == 0} | {7, 8, 39}


@pytest.fixture(scope="module")
def puffin_spark_table(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A v3 merge-on-read table with two DELETEs (deletion vectors, the second merged into the first)."""
    warehouse = tmp_path_factory.mktemp("puffin_wh")
    add_catalog(spark, "lake_puffin", warehouse)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS lake_puffin.db")
    spark.sql(
        "CREATE TABLE lake_puffin.db.dv (id bigint, cat string) USING iceberg PARTITIONED BY (bucket(4, id)) "
        "TBLPROPERTIES ('format-version'='3', 'write.delete.mode'='merge-on-read')"
    )
    spark.sql("INSERT INTO lake_puffin.db.dv SELECT id, CAST(id AS string) FROM range(0, 40)")
    spark.sql("DELETE FROM lake_puffin.db.dv WHERE id % 5 = 0")
    spark.sql("DELETE FROM lake_puffin.db.dv WHERE id = 7 OR id = 8 OR id = 39")
    assert spark.sql("SELECT count(*) FROM lake_puffin.db.dv").collect()[0][0] == 40 - len(DELETED_IDS)
    return warehouse / "db" / "dv"


def _live_delete_entries(table: Path) -> list[dict[str, Any]]:
    metas = sorted((table / "metadata").glob("v*.metadata.json"), key=lambda p: int(p.name[1:].split(".")[0]))
    md = json.loads(metas[-1].read_text())
    snap = next(s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"])
    rows = []
    for m in read_manifest_list(FIO, snap["manifest-list"], format_version=3):
        rows += [r for r in read_manifest_entries(FIO, m).to_pylist() if r["content"] == 1 and r["status"] != 2]
    return rows


@pytest.mark.spark
def test_spark_deletion_vectors_delete_exactly_the_deleted_rows(puffin_spark_table: Path) -> None:
    entries = _live_delete_entries(puffin_spark_table)
    assert entries and all(e["file_format"] == "PUFFIN" for e in entries)
    deleted: set[int] = set()
    for e in entries:
        footer = read_puffin_footer(FIO, e["file_path"])
        blob = next(b for b in footer.blobs if b.offset == e["content_offset"])
        # "these values are required and must exactly match the offset and length stored in the Puffin footer"
        assert blob.length == e["content_size_in_bytes"]
        assert blob.type == "deletion-vector-v1"
        assert (blob.snapshot_id, blob.sequence_number) == (-1, -1)
        assert blob.properties["referenced-data-file"] == e["referenced_data_file"]
        positions = read_deletion_vector(FIO, e["file_path"], e["content_offset"], e["content_size_in_bytes"])
        assert positions.dtype == np.int64 and list(positions) == sorted(positions)
        assert len(positions) == int(blob.properties["cardinality"]) == e["record_count"]
        ids = pq.read_table(e["referenced_data_file"], columns=["id"]).column("id").to_pylist()
        deleted |= {ids[p] for p in positions}
        assert footer.properties["created-by"].startswith("Apache Iceberg")
        assert not footer.footer_compressed
        assert read_blob(FIO, e["file_path"], blob)[4:8] == b"\xd1\xd3\x39\x64"
    assert deleted == DELETED_IDS


def _dv(positions: list[int], *, run_optimize: bool = True) -> bytes:
    keys = sorted({p >> 32 for p in positions})
    body = len(keys).to_bytes(8, "little")
    for k in keys:
        bm = BitMap([p & 0xFFFFFFFF for p in positions if p >> 32 == k])
        if run_optimize:
            bm.run_optimize()
        body += k.to_bytes(4, "little") + bm.serialize()
    vector = b"\xd1\xd3\x39\x64" + body
    return len(vector).to_bytes(4, "big") + vector + zlib.crc32(vector).to_bytes(4, "big")


@pytest.mark.parametrize("run_optimize", [True, False])
def test_all_container_kinds_and_64_bit_keys(run_optimize: bool) -> None:
    rng = np.random.default_rng(7)
    sparse = set(rng.integers(0, 1 << 22, 3000).tolist())  # array containers
    dense = set(rng.integers(1 << 23, (1 << 23) + 60000, 30000).tolist())  # bitmap containers
    runs = set(range(50_000_000, 50_200_000))  # run containers (when optimized)
    wide = {(5 << 32) + 1, (5 << 32) + 65536, (1 << 62) + 3}  # keys beyond 32 bits
    positions = sorted(sparse | dense | runs | wide)
    got = decode_deletion_vector(_dv(positions, run_optimize=run_optimize))
    assert np.array_equal(got, np.array(positions, dtype=np.int64))


def test_small_bitmaps_and_empty() -> None:
    for positions in ([], [0], [1, 2, 3], [65535, 65536], list(range(10))):
        assert decode_deletion_vector(_dv(positions)).tolist() == positions


def test_corrupt_deletion_vectors_are_reported() -> None:
    good = _dv([1, 5, 9])
    with pytest.raises(MetadataError, match="CRC-32 mismatch"):
        decode_deletion_vector(good[:-1] + bytes([good[-1] ^ 1]), path="x.puffin")
    with pytest.raises(MetadataError, match="bad magic"):
        decode_deletion_vector(good[:4] + b"\x00\x00\x00\x00" + good[8:], path="x.puffin")
    with pytest.raises(MetadataError, match="length prefix"):
        decode_deletion_vector(good[:-2], path="x.puffin")


def _puffin(tmp: Path, blobs: list[bytes], *, compress: bool) -> Path:
    data = bytearray(MAGIC)
    meta = []
    for i, b in enumerate(blobs):
        meta.append(
            {
                "type": "deletion-vector-v1",
                "fields": [],
                "snapshot-id": -1,
                "sequence-number": -1,
                "offset": len(data),
                "length": len(b),
                "properties": {
                    "referenced-data-file": f"s3://bucket/t/data/{i:05d}.parquet",
                    "cardinality": str(len(decode_deletion_vector(b))),
                },
            }
        )
        data += b
    payload = json.dumps({"blobs": meta, "properties": {"created-by": "icebook test"}}).encode()
    if compress:  # a single LZ4 frame with content size
        sink = pa.BufferOutputStream()
        with pa.CompressedOutputStream(sink, "lz4") as out:
            out.write(payload)
        payload = sink.getvalue().to_pybytes()
    data += MAGIC + payload + len(payload).to_bytes(4, "little") + bytes([1 if compress else 0, 0, 0, 0]) + MAGIC
    path = tmp / ("c.puffin" if compress else "u.puffin")
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("compress", [False, True])
def test_footer_compressed_and_not(tmp_path: Path, compress: bool) -> None:
    path = _puffin(tmp_path, [_dv([1, 2, 3]), _dv([4, 5, 6])], compress=compress)
    footer = read_puffin_footer(FIO, str(path))
    assert footer.footer_compressed is compress
    assert [b.offset for b in footer.blobs] == [4, 4 + len(_dv([1, 2, 3]))]
    assert footer.properties == {"created-by": "icebook test"}
    b = footer.blobs[1]
    assert read_deletion_vector(FIO, str(path), b.offset, b.length).tolist() == [4, 5, 6]


def test_footer_errors(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match=r"nope\.puffin"):
        read_puffin_footer(FIO, str(tmp_path / "nope.puffin"))
    bad = tmp_path / "bad.puffin"
    bad.write_bytes(MAGIC + b"x" * 20)
    with pytest.raises(MetadataError, match=r"puffin file .*bad\.puffin: footer: bad trailing magic"):
        read_puffin_footer(FIO, str(bad))
    good = _puffin(tmp_path, [_dv([1])], compress=False).read_bytes()
    lying = tmp_path / "lying.puffin"
    lying.write_bytes(good[:-12] + (10**6).to_bytes(4, "little") + good[-8:])
    with pytest.raises(MetadataError, match="FooterPayloadSize"):
        read_puffin_footer(FIO, str(lying))
