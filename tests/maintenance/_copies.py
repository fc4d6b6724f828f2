"""Copy a scenario table to another directory with every path inside it rewritten, so that Spark's
maintenance procedures can run on the copy without touching the cached warehouse.

A plain directory copy is not enough: metadata files, manifest lists, manifests and position
delete files hold absolute paths, so procedures run on a plain copy would delete the originals.
Here metadata JSON is rewritten as JSON; manifest lists and manifests are re-encoded record by
record under their original Avro header (schema with field ids, codec, Iceberg's keys); position
delete files are rewritten with their field ids; sizes and lengths that change are carried into
the files that record them. Every other file (data files, equality deletes, strays, old metadata)
is copied byte for byte with its modification time. Checksum (``.crc``) files are dropped.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import time
import zlib
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

MAGIC = b"Obj\x01"
DAY_S = 86_400


def _swap(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return new + value[len(old) :] if value.startswith(old) else value
    if isinstance(value, bytes):
        ob, nb = old.encode(), new.encode()
        return nb + value[len(ob) :] if value.startswith(ob) else value
    if isinstance(value, dict):
        return {k: _swap(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [_swap(v, old, new) for v in value]
    return value


def _zigzag(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _rewrite_avro(src: Path, dst: Path, fix: Any) -> None:
    """Re-encode every record (through ``fix``) under the original header: schema, codec, metadata."""
    with open(src, "rb") as fo:
        reader = fastavro.reader(fo)
        metadata = dict(reader.metadata)
        codec = reader.codec
        records = [fix(r) for r in reader]
    schema = fastavro.parse_schema(json.loads(metadata["avro.schema"]))
    body = io.BytesIO()
    for r in records:
        fastavro.schemaless_writer(body, schema, r)
    data = body.getvalue()
    if codec == "deflate":
        compressor = zlib.compressobj(6, zlib.DEFLATED, -15)
        data = compressor.compress(data) + compressor.flush()
    elif codec != "null":
        raise AssertionError(f"{src}: codec {codec} not handled by the test copy")
    header = io.BytesIO()
    fastavro.schemaless_writer(header, {"type": "map", "values": "bytes"}, {k: v.encode() for k, v in metadata.items()})
    sync = os.urandom(16)
    with open(dst, "wb") as out:
        out.write(MAGIC + header.getvalue() + sync)
        if records:
            out.write(_zigzag(len(records)) + _zigzag(len(data)) + data + sync)


def relocate_table(src: Path, dst: Path) -> Path:
    """Copy the table directory ``src`` to ``dst`` with paths rewritten; returns ``dst``."""
    old, new = str(src), str(dst)
    files = [p for p in src.rglob("*") if p.is_file() and not p.name.endswith(".crc")]
    sizes: dict[str, int] = {}  # new path -> new size, for files whose size changed

    def target(p: Path) -> Path:
        out = dst / p.relative_to(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        return out

    def copy_raw(p: Path) -> None:
        shutil.copy2(p, target(p))

    manifests, lists, jsons = [], [], []
    for p in files:
        name = p.name
        if p.parent.name == "metadata" and name.endswith(".avro"):
            (lists if name.startswith("snap-") else manifests).append(p)
        elif name.endswith(".metadata.json"):
            jsons.append(p)
        elif name.endswith("-deletes.parquet") and _is_position_delete(p):
            out = target(p)
            table = pq.read_table(p)
            column = table.column("file_path").to_pylist()
            table = table.set_column(
                table.schema.get_field_index("file_path"),
                table.schema.field("file_path"),
                pa.array([_swap(v, old, new) for v in column], pa.string()),
            )
            pq.write_table(table, out)
            sizes[str(out)] = out.stat().st_size
        else:
            copy_raw(p)

    def fix_entry(r: dict[str, Any]) -> dict[str, Any]:
        r = _swap(r, old, new)
        f = r["data_file"]
        if f["file_path"] in sizes:
            f["file_size_in_bytes"] = sizes[f["file_path"]]
        return r

    for p in manifests:
        out = target(p)
        _rewrite_avro(p, out, fix_entry)
        sizes[str(out)] = out.stat().st_size

    def fix_manifest(r: dict[str, Any]) -> dict[str, Any]:
        r = _swap(r, old, new)
        if r["manifest_path"] in sizes:
            r["manifest_length"] = sizes[r["manifest_path"]]
        return r

    for p in lists:
        _rewrite_avro(p, target(p), fix_manifest)
    for p in jsons:
        target(p).write_text(json.dumps(_swap(json.loads(p.read_text()), old, new), indent=2))
    for p in [*manifests, *lists, *jsons]:
        stat = p.stat()
        os.utime(target(p), ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return dst


def _is_position_delete(p: Path) -> bool:
    return "file_path" in pq.read_schema(p).names and "pos" in pq.read_schema(p).names


def age_files(root: Path, *, days: float, keep_fresh: tuple[Path, ...] = ()) -> None:
    """Set every file's modification time ``days`` back, except ``keep_fresh`` (orphan cleanup only
    considers files older than its cutoff, and Spark refuses a cutoff under 24 hours)."""
    when = time.time() - days * DAY_S
    fresh = {p.resolve() for p in keep_fresh}
    for p in root.rglob("*"):
        if p.is_file() and p.resolve() not in fresh:
            os.utime(p, (when, when))


def files_on_disk(root: Path) -> set[str]:
    """Every file under ``root`` except hidden ones (Hadoop's checksum files)."""
    return {str(p) for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")}
