"""Checking an Avro object container file's framing before any decoder sees it.

Avro spec, "Object Container Files": a file is the magic ``Obj\\x01``, a metadata map (with
``avro.schema`` and ``avro.codec``), a 16-byte sync marker, then blocks, each a record count
(long), a byte size (long), that many (possibly compressed) bytes, and the sync marker again.

Walking only those lengths is cheap (a few varints per block) and proves that every block is
whole and where the file says it is. A file cut at a block boundary still frames correctly,
which is why the record counts found here are compared with what the decoder returns, and the
file's length with the ``manifest_length`` its manifest list records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from icebook.errors import MetadataError, UnsupportedFeature
from icebook.io.avro_header import _read_long, _Truncated, parse_container_header

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


def check_framing(data: bytes, path: str, *, kind: str, expected_length: int | None = None) -> AvroFraming:
    """The framing of the Avro file ``data`` read from ``path``, or a MetadataError naming what is wrong.

    ``expected_length`` is the length another file records for this one (a manifest list's
    ``manifest_length``); a file of any other length has been cut short, grown, or replaced.
    """
    if expected_length is not None and len(data) != expected_length:
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


__all__ = ["AVRO_CODECS", "DECODABLE_CODECS", "AvroBlock", "AvroFraming", "check_framing"]
