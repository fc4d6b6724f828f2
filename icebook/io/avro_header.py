"""Avro object container header: magic, key-value metadata, sync marker.

Reading only the header lets icebook show a manifest's partition spec, schema and
format version without decoding a single entry (spec: "Manifests", the key-value
metadata table).
"""

from __future__ import annotations

from icebook.errors import IcebookError, MetadataError, NotFound
from icebook.io.fileio import FileIO
from icebook.spec.manifest import ManifestContent, ManifestHeader

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


def _write_long(value: int) -> bytes:
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
    header += _write_long(len(meta))
    for key, value in meta.items():
        k = key.encode("utf-8")
        header += _write_long(len(k)) + k + _write_long(len(value)) + value
    header += _write_long(0) + sync
    return bytes(header)


def read_container_metadata(fileio: FileIO, path: str, *, kind: str = "manifest") -> dict[str, bytes]:
    """The key-value metadata of an Avro file, reading only as much of it as needed."""
    try:
        with fileio.open_input(path) as f:
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
    except NotFound:
        raise NotFound(f"{kind} {path}: file not found") from None
    except MetadataError:
        raise
    except IcebookError as exc:
        raise MetadataError(path, None, str(exc), kind=kind) from None


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


def header_from_bytes(data: bytes, path: str) -> ManifestHeader:
    """The header of an in-memory manifest, after checking the file's block framing.

    Every data block must be whole and end with the header's sync marker; a truncated or
    spliced file is reported here rather than decoded into fewer rows than it claims.
    """
    try:
        meta, sync, pos = parse_container_header(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MetadataError(path, None, f"corrupt Avro header: {exc}", kind="manifest") from None
    except _Truncated:
        raise MetadataError(path, None, "truncated Avro header", kind="manifest") from None
    block = 0
    while pos < len(data):
        try:
            count, pos = _read_long(data, pos)
            size, pos = _read_long(data, pos)
        except (_Truncated, ValueError):
            raise MetadataError(path, None, f"truncated Avro block {block} header", kind="manifest") from None
        if count < 0 or size < 0 or pos + size + 16 > len(data):
            raise MetadataError(
                path, None, f"truncated Avro block {block} ({count} records, {size} bytes)", kind="manifest"
            )
        pos += size
        if data[pos : pos + 16] != sync:
            raise MetadataError(path, None, f"corrupt Avro block {block}: sync marker mismatch", kind="manifest")
        pos += 16
        block += 1
    return header_from_metadata(path, meta)


def read_manifest_header(fileio: FileIO, path: str) -> ManifestHeader:
    """The Avro file metadata of a manifest (schema, partition-spec, ids, format-version, content).

    Only the header bytes are read; no entry is decoded.
    """
    return header_from_metadata(path, read_container_metadata(fileio, path))


__all__ = [
    "MAGIC",
    "header_from_bytes",
    "header_from_metadata",
    "parse_container_header",
    "read_manifest_header",
    "write_container_header",
]
