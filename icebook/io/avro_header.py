"""Avro object container framing: magic, key-value metadata, sync marker, blocks.

Reading only the header lets icebook show a manifest's partition spec, schema and
format version without decoding a single entry (spec: "Manifests", the key-value
metadata table).

Avro spec, "Object Container Files": after the header come blocks, each a record count (long),
a byte size (long), that many (possibly compressed) bytes, and the sync marker again.
``check_framing`` walks only those lengths (a few varints per block) before any decoder sees
the bytes, proving every block is whole and where the file says it is. A file cut at a block
boundary still frames correctly, which is why the record counts found here are compared with
what the decoder returns, and the file's length with the ``manifest_length`` its manifest
list records.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from icebook.errors import MetadataError, UnsupportedFeature
from icebook.spec.manifest import ManifestContent, ManifestHeader

if TYPE_CHECKING:  # only named: the decoder worker imports this module, and reads no file itself
    from icebook.io.fileio import FileIO

MAGIC = b"Obj\x01"
_FIRST_READ = 64 * 1024


class _Truncated(Exception):
    pass


def _read_long(buf: bytes, pos: int) -> tuple[int, int]:
    """Avro zig-zag varint long."""
    shift = 0
    acc = 0
    while True:
        if pos >= len(buf):
            raise _Truncated
        b = buf[pos]
        pos += 1
        acc |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
        if shift > 63:
            raise ValueError("varint longer than 10 bytes")
    return (acc >> 1) ^ -(acc & 1), pos


def _read_bytes(buf: bytes, pos: int) -> tuple[bytes, int]:
    n, pos = _read_long(buf, pos)
    if n < 0:
        raise ValueError(f"negative length {n}")
    if pos + n > len(buf):
        raise _Truncated
    return buf[pos : pos + n], pos + n


def parse_container_header(buf: bytes) -> tuple[dict[str, bytes], bytes, int]:
    """(metadata, sync marker, header length) of an Avro container file; raises _Truncated/ValueError."""
    if len(buf) < 4:
        raise _Truncated
    if buf[:4] != MAGIC:
        raise ValueError(f"not an Avro object container file (magic {buf[:4]!r})")
    pos = 4
    meta: dict[str, bytes] = {}
    while True:
        count, pos = _read_long(buf, pos)
        if count == 0:
            break
        if count < 0:  # a negative count is followed by the block's byte size
            count = -count
            _, pos = _read_long(buf, pos)
        for _ in range(count):
            key, pos = _read_bytes(buf, pos)
            value, pos = _read_bytes(buf, pos)
            meta[key.decode("utf-8")] = value
    if pos + 16 > len(buf):
        raise _Truncated
    return meta, buf[pos : pos + 16], pos + 16


def write_long(value: int) -> bytes:
    """Avro zig-zag varint long (the inverse of ``_read_long``)."""
    zigzag = (value << 1) ^ (value >> 63)
    out = bytearray()
    while True:
        byte = zigzag & 0x7F
        zigzag >>= 7
        if zigzag:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def write_container_header(meta: dict[str, bytes], sync: bytes) -> bytes:
    """The bytes of an Avro container header (the inverse of ``parse_container_header``)."""
    header = bytearray(MAGIC)
    header += write_long(len(meta))
    for key, value in meta.items():
        k = key.encode("utf-8")
        header += write_long(len(k)) + k + write_long(len(value)) + value
    header += write_long(0) + sync
    return bytes(header)


def read_container_metadata(fileio: FileIO, path: str, *, kind: str = "manifest") -> dict[str, bytes]:
    """The key-value metadata of an Avro file, reading only as much of it as needed."""
    from icebook.io.fileio import read_errors  # here: the decoder worker imports this module, and reads no file

    with read_errors(path, kind), fileio.open_input(path) as f:
        buf = bytes(f.read(_FIRST_READ))
        while True:
            try:
                return parse_container_header(buf)[0]
            except _Truncated:
                more = bytes(f.read(max(len(buf), _FIRST_READ)))
                if not more:
                    raise MetadataError(path, None, "truncated Avro header", kind=kind) from None
                buf += more
            except (ValueError, UnicodeDecodeError) as exc:
                raise MetadataError(path, None, f"corrupt Avro header: {exc}", kind=kind) from None


def _int_or_none(meta: dict[str, str], key: str, path: str) -> int | None:
    text = meta.get(key)
    if text is None:
        return None
    try:
        return int(text)
    except ValueError:
        raise MetadataError(path, key, f"expected an integer, found {text!r}", kind="manifest") from None


def header_from_metadata(path: str, raw: dict[str, bytes]) -> ManifestHeader:
    meta = {k: v.decode("utf-8", errors="replace") for k, v in raw.items()}
    if "avro.schema" not in meta:
        raise MetadataError(path, "avro.schema", "missing from the Avro header", kind="manifest")
    content_text = meta.get("content")
    content: ManifestContent | None
    if content_text is None:
        content = None
    elif content_text == "data":
        content = ManifestContent.DATA
    elif content_text == "deletes":
        content = ManifestContent.DELETES
    else:
        raise MetadataError(path, "content", f"expected 'data' or 'deletes', found {content_text!r}", kind="manifest")
    known = {"schema", "schema-id", "partition-spec", "partition-spec-id", "format-version", "content", "avro.schema"}
    return ManifestHeader(
        path=path,
        schema=meta.get("schema"),
        schema_id=_int_or_none(meta, "schema-id", path),
        partition_spec=meta.get("partition-spec"),
        partition_spec_id=_int_or_none(meta, "partition-spec-id", path),
        format_version=_int_or_none(meta, "format-version", path),
        content=content,
        avro_schema=meta["avro.schema"],
        codec=meta.get("avro.codec", "null"),
        extras={k: v for k, v in meta.items() if k not in known and k != "avro.codec"},
    )


AVRO_CODECS = ("null", "deflate", "snappy", "zstandard", "bzip2", "xz")
"""Every codec the Avro specification defines."""
DECODABLE_CODECS = ("null", "deflate", "snappy", "zstandard")
"""The codecs Iceberg writers use (uncompressed, gzip, snappy, zstd), which every decoder reads."""


@dataclass(frozen=True, slots=True, kw_only=True)
class AvroBlock:
    """One data block: where its bytes start, how many, and how many records they hold."""

    offset: int
    size: int
    count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class AvroFraming:
    """The header and block layout of one Avro object container file."""

    metadata: Mapping[str, bytes]
    """The header's key-value metadata (``avro.schema``, ``avro.codec`` and the writer's own keys)."""
    sync: bytes
    header_length: int
    codec: str
    blocks: tuple[AvroBlock, ...]

    @property
    def record_count(self) -> int:
        """Records the blocks declare; a decoder must return exactly this many."""
        return sum(b.count for b in self.blocks)


def check_framing(
    data: bytes, path: str, *, kind: str, expected_length: int | None = None, counts_recorded: bool = False
) -> AvroFraming:
    """The framing of the Avro file ``data`` read from ``path``, or a MetadataError naming what is wrong.

    ``expected_length`` is the length another file records for this one (a manifest list's
    ``manifest_length``); a file of any other length has been cut short, grown, or replaced.
    When the manifest list also records the file's entry counts (``counts_recorded``; required
    in v2 and later), a length that differs is accepted as long as the blocks fill the file
    exactly: the counts are checked against the decoded entries instead, which a cut at a
    block boundary fails. Iceberg's own reader ignores the length, and Spark's
    ``rewrite_table_path`` (Iceberg 1.10) writes copies whose manifest lists keep the old lengths.
    """
    if expected_length is not None and len(data) != expected_length and not counts_recorded:
        raise MetadataError(
            path,
            "manifest_length",
            f"the manifest list records {expected_length} bytes but the file has {len(data)}",
            kind=kind,
        )
    try:
        meta, sync, header_length = parse_container_header(data)
    except _Truncated:
        raise MetadataError(path, None, "truncated Avro header", kind=kind) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise MetadataError(path, None, f"corrupt Avro header: {exc}", kind=kind) from None
    codec = _codec(meta, path, kind)
    blocks: list[AvroBlock] = []
    pos = header_length
    while pos < len(data):
        index = len(blocks)
        try:
            count, pos = _read_long(data, pos)
            size, pos = _read_long(data, pos)
        except (_Truncated, ValueError):
            raise MetadataError(path, None, f"truncated Avro block {index} header", kind=kind) from None
        if count < 0 or size < 0:
            raise MetadataError(path, None, f"corrupt Avro block {index}: {count} records in {size} bytes", kind=kind)
        if pos + size + len(sync) > len(data):
            raise MetadataError(
                path,
                None,
                f"truncated Avro block {index}: {size} bytes and a sync marker declared at byte {pos}, "
                f"but the file ends at byte {len(data)}",
                kind=kind,
            )
        if codec == "null" and count > size:  # every Iceberg record encodes to at least one byte
            raise MetadataError(
                path, None, f"corrupt Avro block {index}: {count} records cannot fit in {size} bytes", kind=kind
            )
        blocks.append(AvroBlock(offset=pos, size=size, count=count))
        pos += size
        if data[pos : pos + len(sync)] != sync:
            raise MetadataError(path, None, f"corrupt Avro block {index}: sync marker mismatch", kind=kind)
        pos += len(sync)
    return AvroFraming(
        metadata=MappingProxyType(meta), sync=sync, header_length=header_length, codec=codec, blocks=tuple(blocks)
    )


def _codec(meta: Mapping[str, bytes], path: str, kind: str) -> str:
    raw = meta.get("avro.codec", b"null")
    codec = raw.decode("utf-8", errors="replace") or "null"
    if codec not in AVRO_CODECS:
        raise MetadataError(path, "avro.codec", f"unknown Avro codec {codec!r}", kind=kind)
    if codec not in DECODABLE_CODECS:
        raise UnsupportedFeature(
            f"{kind} {path}: Avro codec {codec!r} is valid Avro but not one Iceberg writes; "
            f"icebook reads {', '.join(DECODABLE_CODECS)}"
        )
    return codec


def header_from_bytes(data: bytes, path: str, *, expected_length: int | None = None) -> ManifestHeader:
    """The header of an in-memory manifest, after ``check_framing``: a truncated or spliced file is
    reported here rather than decoded into fewer rows than it claims."""
    framing = check_framing(data, path, kind="manifest", expected_length=expected_length)
    return header_from_metadata(path, dict(framing.metadata))


def read_manifest_header(fileio: FileIO, path: str) -> ManifestHeader:
    """The Avro file metadata of a manifest (schema, partition-spec, ids, format-version, content).

    Only the header bytes are read; no entry is decoded.
    """
    return header_from_metadata(path, read_container_metadata(fileio, path))


def inflate_blocks(data: bytes, framing: AvroFraming, path: str, *, kind: str) -> list[bytes]:
    """Every deflate block of ``data`` inflated by zlib's rules, in order (a ``MetadataError`` naming the block
    when one does not inflate, or stops short). polars-avro inflates a back-reference that reaches before a
    block's start as zero bytes, where zlib and fastavro refuse it: without this check, a damaged block decodes
    into other paths and values."""
    blocks = []
    for index, block in enumerate(framing.blocks):
        inflater = zlib.decompressobj(-15)  # Avro's deflate is raw (no zlib header)
        try:
            raw = inflater.decompress(data[block.offset : block.offset + block.size]) + inflater.flush()
        except zlib.error as exc:
            raise MetadataError(path, None, f"corrupt Avro block {index}: deflate: {exc}", kind=kind) from None
        if not inflater.eof:
            raise MetadataError(path, None, f"corrupt Avro block {index}: deflate stream cut short", kind=kind)
        blocks.append(raw)
    return blocks


def check_deflate_blocks(data: bytes, framing: AvroFraming, path: str, *, kind: str) -> None:
    """Every deflate block inflates by zlib's rules (``inflate_blocks``); decoders that inflate leniently run
    after it."""
    if framing.codec == "deflate":
        inflate_blocks(data, framing, path, kind=kind)


def inflated(data: bytes, framing: AvroFraming, path: str, *, kind: str) -> bytes:
    """The same container with its deflate blocks inflated by zlib (checked as ``check_deflate_blocks``) and
    stored uncompressed (codec ``null``), so a columnar decoder reads the blocks zlib inflated instead of
    inflating them again by its own, lenient rules; a file of another codec is returned as it is."""
    if framing.codec != "deflate":
        return data
    meta = {**framing.metadata, "avro.codec": b"null"}
    parts = [write_container_header(meta, framing.sync)]
    for block, raw in zip(framing.blocks, inflate_blocks(data, framing, path, kind=kind), strict=True):
        parts += (write_long(block.count), write_long(len(raw)), raw, framing.sync)
    return b"".join(parts)


__all__ = [
    "AVRO_CODECS",
    "DECODABLE_CODECS",
    "MAGIC",
    "AvroBlock",
    "AvroFraming",
    "check_deflate_blocks",
    "check_framing",
    "header_from_bytes",
    "header_from_metadata",
    "inflate_blocks",
    "inflated",
    "parse_container_header",
    "read_manifest_header",
    "write_container_header",
]
