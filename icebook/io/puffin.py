"""Puffin files and deletion vectors (puffin-spec.md; table spec "Deletion Vectors").

``read_puffin_footer`` reads the footer (``Magic FooterPayload FooterPayloadSize Flags
Magic``) and its JSON ``FileMetadata``; ``read_deletion_vector`` decodes one
``deletion-vector-v1`` blob into the sorted positions of deleted rows.
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa

from icebook.errors import MetadataError, NotFound, UnsupportedFeature
from icebook.io.fileio import FileIO, read_errors

MAGIC = b"PFA1"
DV_MAGIC = b"\xd1\xd3\x39\x64"
_FOOTER_TAIL = 12  # FooterPayloadSize (4) + Flags (4) + Magic (4)
_SERIAL_COOKIE_NO_RUN = 12346
_SERIAL_COOKIE = 12347
_NO_OFFSET_THRESHOLD = 4
DV_BLOB_TYPE = "deletion-vector-v1"
_COUNT = re.compile(r"[0-9]{1,19}")
_MAX_DECOMPRESSED = 256 << 20  # footers and statistics blobs are small; more is a decompression bomb


@dataclass(frozen=True, slots=True, kw_only=True)
class PuffinBlob:
    """One blob of a Puffin footer: puffin-spec's ``BlobMetadata`` (where the blob lies, how it is
    compressed); the table metadata's statistics blobs are ``spec.snapshots.BlobMetadata``."""

    type: str
    fields: tuple[int, ...]
    snapshot_id: int
    sequence_number: int
    offset: int
    length: int
    compression_codec: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)

    FIELD_DOCS: ClassVar[dict[str, str]] = {
        "type": "blob type, e.g. deletion-vector-v1 or apache-datasketches-theta-v1",
        "fields": "field IDs the blob was computed for",
        "snapshot_id": "snapshot the blob was computed from (-1 for deletion vectors)",
        "sequence_number": "sequence number of that snapshot (-1 for deletion vectors)",
        "offset": "offset in the file where the blob contents start",
        "length": "length of the blob stored in the file (after compression)",
        "compression_codec": "lz4 or zstd; omitted means uncompressed",
        "properties": "arbitrary meta-information, e.g. referenced-data-file and cardinality for DVs",
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class PuffinFile:
    """A Puffin file's footer: blobs, properties, and how the footer was stored."""

    path: str
    blobs: tuple[PuffinBlob, ...]
    properties: Mapping[str, str]
    footer_payload_size: int
    footer_compressed: bool
    file_size: int


def _read_range(fileio: FileIO, path: str, offset: int, length: int, *, what: str | None = None) -> bytes:
    """``length`` bytes at ``offset``; a range outside the file is a MetadataError naming ``what``
    (the field that gave the range), checked before anything is read or allocated."""
    with read_errors(path, "puffin file", what), fileio.open_input(path) as f:
        size = f.size()
        if offset < 0 or length < 0 or offset + length > size:
            raise MetadataError(
                path,
                what,
                f"{length} bytes at offset {offset} do not fit in the file's {size} bytes",
                kind="puffin file",
            )
        f.seek(offset)
        data = bytes(f.read(length))
    if len(data) != length:
        raise MetadataError(
            path, what, f"truncated: wanted {length} bytes at {offset}, got {len(data)}", kind="puffin file"
        )
    return data


def _decompress(data: bytes, codec: str | None, path: str, what: str) -> bytes:
    if codec is None:
        return data
    if codec not in ("lz4", "zstd"):
        raise MetadataError(path, what, f"unknown compression codec {codec!r} (lz4 or zstd)", kind="puffin file")
    try:
        # Both are single frames with content size present; pyarrow's lz4 codec is the LZ4 frame format.
        stream = pa.input_stream(pa.py_buffer(data), compression=codec)
        out = bytes(stream.read(_MAX_DECOMPRESSED + 1))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
        raise MetadataError(path, what, f"cannot decompress {codec}: {exc}", kind="puffin file") from None
    if len(out) > _MAX_DECOMPRESSED:
        raise MetadataError(
            path, what, f"decompresses to more than {_MAX_DECOMPRESSED // (1 << 20)} MiB", kind="puffin file"
        )
    return out


def read_puffin_footer(fileio: FileIO, path: str) -> PuffinFile:
    """The footer of the Puffin file at ``path`` (puffin-spec "Footer structure")."""
    try:
        size = fileio.size(path)
    except NotFound:
        raise NotFound(f"puffin file {path}: file not found") from None
    if size < len(MAGIC) * 2 + _FOOTER_TAIL:
        raise MetadataError(path, None, f"too small for a Puffin file ({size} bytes)", kind="puffin file")
    tail = _read_range(fileio, path, size - _FOOTER_TAIL, _FOOTER_TAIL)
    if tail[8:] != MAGIC:
        raise MetadataError(path, "footer", f"bad trailing magic {tail[8:]!r}", kind="puffin file")
    payload_size = int.from_bytes(tail[0:4], "little", signed=True)
    flags = tail[4:8]
    compressed = bool(flags[0] & 0x01)
    footer_start = size - _FOOTER_TAIL - payload_size - len(MAGIC)
    if payload_size < 0 or footer_start < len(MAGIC):
        raise MetadataError(
            path, "FooterPayloadSize", f"{payload_size} does not fit in {size} bytes", kind="puffin file"
        )
    head = _read_range(fileio, path, 0, len(MAGIC))
    if head != MAGIC:
        raise MetadataError(path, "magic", f"bad leading magic {head!r}", kind="puffin file")
    footer = _read_range(fileio, path, footer_start, len(MAGIC) + payload_size)
    if footer[:4] != MAGIC:
        raise MetadataError(path, "footer", f"bad footer magic {footer[:4]!r}", kind="puffin file")
    payload = _decompress(footer[4:], "lz4" if compressed else None, path, "FooterPayload")
    try:
        meta = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MetadataError(path, "FooterPayload", f"invalid JSON: {exc}", kind="puffin file") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("blobs"), list):
        raise MetadataError(path, "FooterPayload.blobs", "missing or not a list", kind="puffin file")
    blobs = tuple(_blob(b, i, path) for i, b in enumerate(meta["blobs"]))
    for i, blob in enumerate(blobs):
        if blob.type == DV_BLOB_TYPE:
            _check_dv_metadata(blob, path, f"blobs[{i}]")
        # Blobs lie between the leading magic and the footer (puffin-spec "File structure").
        if blob.offset < len(MAGIC) or blob.length < 0 or blob.offset + blob.length > footer_start:
            raise MetadataError(
                path,
                f"blobs[{i}]",
                f"offset {blob.offset} and length {blob.length} fall outside the blob area "
                f"(bytes {len(MAGIC)} to {footer_start})",
                kind="puffin file",
            )
    return PuffinFile(
        path=path,
        blobs=blobs,
        properties=dict(meta.get("properties") or {}),
        footer_payload_size=payload_size,
        footer_compressed=compressed,
        file_size=size,
    )


def _int(raw: dict[str, Any], key: str, path: str, where: str) -> int:
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, int) or not -(2**63) <= value < 2**63:
        raise MetadataError(path, f"{where}.{key}", f"expected a long, found {value!r}"[:120], kind="puffin file")
    return value


def _blob(raw: Any, i: int, path: str) -> PuffinBlob:
    where = f"blobs[{i}]"
    if not isinstance(raw, dict):
        raise MetadataError(path, where, "not an object", kind="puffin file")
    try:
        fields = raw["fields"]
        if not isinstance(fields, list):
            raise MetadataError(path, f"{where}.fields", "expected a list of field ids", kind="puffin file")
        codec = raw.get("compression-codec")
        if codec is not None and not isinstance(codec, str):
            raise MetadataError(path, f"{where}.compression-codec", "expected a string", kind="puffin file")
        properties = raw.get("properties") or {}
        if not isinstance(properties, dict):
            raise MetadataError(path, f"{where}.properties", "expected an object", kind="puffin file")
        return PuffinBlob(
            type=str(raw["type"]),
            fields=tuple(_int({"fields": f}, "fields", path, where) for f in fields),
            snapshot_id=_int(raw, "snapshot-id", path, where),
            sequence_number=_int(raw, "sequence-number", path, where),
            offset=_int(raw, "offset", path, where),
            length=_int(raw, "length", path, where),
            compression_codec=codec,
            properties={str(k): str(v) for k, v in properties.items()},
        )
    except KeyError as exc:
        raise MetadataError(path, f"{where}.{exc.args[0]}", "missing (required)", kind="puffin file") from None


def _check_dv_metadata(blob: PuffinBlob, path: str, where: str) -> None:
    """puffin-spec "deletion-vector-v1 blob type": snapshot-id and sequence-number are -1, the
    properties name the referenced-data-file and the cardinality, and there is no compression."""
    problems = []
    if blob.snapshot_id != -1 or blob.sequence_number != -1:
        problems.append(f"snapshot-id and sequence-number must be -1, found {blob.snapshot_id}, {blob.sequence_number}")
    if blob.compression_codec is not None:
        problems.append(f"must not be compressed, found {blob.compression_codec!r}")
    if not blob.properties.get("referenced-data-file"):
        problems.append("properties.referenced-data-file is missing")
    if not _COUNT.fullmatch(blob.properties.get("cardinality", "")):
        problems.append(f"properties.cardinality must be a count, found {blob.properties.get('cardinality')!r}")
    if problems:
        raise MetadataError(path, where, "deletion vector blob: " + "; ".join(problems), kind="puffin file")


def read_deletion_vector_blob(fileio: FileIO, path: str, blob: PuffinBlob) -> np.ndarray:
    """The positions of a ``deletion-vector-v1`` blob found through the footer, checked against the
    footer's ``cardinality`` property."""
    check_blob_type(blob)
    positions = decode_deletion_vector(read_blob(fileio, path, blob), path=path)
    if str(len(positions)) != blob.properties.get("cardinality"):
        raise MetadataError(
            path,
            "properties.cardinality",
            f"the footer records {blob.properties.get('cardinality')} deleted rows, the vector holds {len(positions)}",
            kind="puffin file",
        )
    return positions


def read_blob(fileio: FileIO, path: str, blob: PuffinBlob) -> bytes:
    """A blob's bytes, decompressed if its metadata names a codec."""
    data = _read_range(fileio, path, blob.offset, blob.length, what="blob offset/length")
    return _decompress(data, blob.compression_codec, path, f"blob at {blob.offset}")


# ------------------------------------------------------------------ deletion vectors


def decode_roaring32(buf: bytes, pos: int, *, path: str = "<dv>") -> tuple[np.ndarray, int]:
    """One 32-bit Roaring bitmap in the portable format at ``buf[pos:]`` -> (sorted uint32 values, end)."""

    def need(n: int) -> None:
        if pos + n > len(buf):
            raise MetadataError(path, "deletion vector", "truncated Roaring bitmap", kind="puffin file")

    need(4)
    cookie = int.from_bytes(buf[pos : pos + 4], "little")
    pos += 4
    run_flags: bytes | None = None
    if cookie & 0xFFFF == _SERIAL_COOKIE:
        n = (cookie >> 16) + 1
        flag_bytes = (n + 7) // 8
        need(flag_bytes)
        run_flags = buf[pos : pos + flag_bytes]
        pos += flag_bytes
    elif cookie == _SERIAL_COOKIE_NO_RUN:
        need(4)
        n = int.from_bytes(buf[pos : pos + 4], "little")
        pos += 4
    else:
        raise MetadataError(path, "deletion vector", f"bad Roaring cookie {cookie:#x}", kind="puffin file")
    need(4 * n)
    desc = np.frombuffer(buf, dtype="<u2", count=2 * n, offset=pos).reshape(n, 2) if n else np.zeros((0, 2), "<u2")
    pos += 4 * n
    if run_flags is None or n >= _NO_OFFSET_THRESHOLD:
        need(4 * n)
        pos += 4 * n  # offset header: not needed when reading sequentially
    parts: list[np.ndarray] = []
    for i in range(n):
        high = np.uint32(int(desc[i, 0]) << 16)
        card = int(desc[i, 1]) + 1
        is_run = run_flags is not None and (run_flags[i // 8] >> (i % 8)) & 1
        if is_run:
            need(2)
            runs = int.from_bytes(buf[pos : pos + 2], "little")
            pos += 2
            need(4 * runs)
            pairs = np.frombuffer(buf, dtype="<u2", count=2 * runs, offset=pos).reshape(runs, 2).astype(np.uint32)
            pos += 4 * runs
            if int(pairs[:, 1].sum()) + runs > 1 << 16:  # a container holds at most 2^16 values
                raise MetadataError(path, "deletion vector", "Roaring run container overflows", kind="puffin file")
            lows = (
                np.concatenate([np.arange(s, s + ln + 1, dtype=np.uint32) for s, ln in pairs])
                if runs
                else np.zeros(0, np.uint32)
            )
        elif card > 4096:  # bitmap container: 2^16 bits
            need(8192)
            bits = np.unpackbits(np.frombuffer(buf, dtype=np.uint8, count=8192, offset=pos), bitorder="little")
            pos += 8192
            lows = np.flatnonzero(bits).astype(np.uint32)
        else:  # array container
            need(2 * card)
            lows = np.frombuffer(buf, dtype="<u2", count=card, offset=pos).astype(np.uint32)
            pos += 2 * card
        parts.append(lows | high)
    values = np.concatenate(parts) if parts else np.zeros(0, np.uint32)
    return values, pos


def decode_deletion_vector(blob: bytes, *, path: str = "<dv>") -> np.ndarray:
    """Positions (sorted int64) set in a ``deletion-vector-v1`` blob (puffin-spec).

    Layout: length of magic + vector (4 bytes, big-endian), magic ``D1 D3 39 64``, the
    portable 64-bit Roaring serialization (bitmap count as 8 bytes LE, then per bitmap a
    4-byte LE key and a 32-bit Roaring bitmap), CRC-32 of magic + vector (4 bytes, BE).
    """
    if len(blob) < 12:
        raise MetadataError(path, "deletion vector", f"blob too short ({len(blob)} bytes)", kind="puffin file")
    length = int.from_bytes(blob[0:4], "big")
    if length + 8 != len(blob):
        raise MetadataError(
            path, "deletion vector", f"length prefix {length} does not match blob size {len(blob)}", kind="puffin file"
        )
    if blob[4:8] != DV_MAGIC:
        raise MetadataError(path, "deletion vector", f"bad magic {blob[4:8].hex()}", kind="puffin file")
    body = blob[4 : 4 + length]
    crc = int.from_bytes(blob[4 + length : 8 + length], "big")
    if zlib.crc32(body) != crc:
        raise MetadataError(path, "deletion vector", "CRC-32 mismatch", kind="puffin file")
    vector = body[4:]
    if len(vector) < 8:
        raise MetadataError(path, "deletion vector", "truncated bitmap count", kind="puffin file")
    count = int.from_bytes(vector[0:8], "little")
    pos = 8
    parts = []
    previous_key = -1
    for _ in range(count):
        if pos + 4 > len(vector):
            raise MetadataError(path, "deletion vector", "truncated bitmap key", kind="puffin file")
        key = int.from_bytes(vector[pos : pos + 4], "little")
        pos += 4
        if key <= previous_key or key & 0x80000000:
            raise MetadataError(
                path, "deletion vector", f"bitmap key {key} out of order or negative", kind="puffin file"
            )
        previous_key = key
        lows, pos = decode_roaring32(vector, pos, path=path)
        parts.append(lows.astype(np.int64) | np.int64(key << 32))
    if pos != len(vector):
        raise MetadataError(path, "deletion vector", f"{len(vector) - pos} trailing bytes", kind="puffin file")
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def read_deletion_vector(fileio: FileIO, path: str, offset: int, length: int) -> np.ndarray:
    """Deleted row positions of the DV blob at ``offset``/``length`` (a data_file's
    ``content_offset``/``content_size_in_bytes``), as a sorted numpy int64 array."""
    blob = _read_range(fileio, path, offset, length, what="content_offset/content_size_in_bytes")
    return decode_deletion_vector(blob, path=path)


def check_blob_type(blob: PuffinBlob) -> None:
    if blob.type != DV_BLOB_TYPE:
        raise UnsupportedFeature(f"blob type {blob.type!r} is not a deletion vector")


__all__ = [
    "PuffinBlob",
    "PuffinFile",
    "decode_deletion_vector",
    "decode_roaring32",
    "read_blob",
    "read_deletion_vector",
    "read_deletion_vector_blob",
    "read_puffin_footer",
]
