"""Decoding a small Avro file (a manifest list) in the kernel's own process, when that is provably safe.

Worker processes (``icebook.io.worker_pool``) guard the kernel against decoders that hang or crash on
hostile bytes, at the price of a process start and a round trip per file. A manifest list is small and
read once per snapshot, so that price dominates history analyses over thousands of snapshots. fastavro,
unlike the columnar decoder, is memory-safe Python/Cython code that raises on bad input; what it can
still do on hostile input is loop for a very long time, recurse until the C stack overflows, or inflate a
compression bomb. Each is ruled out here before it sees a byte, and a file that cannot be proven safe
goes to a worker as before:

- the framing is already checked (``check_framing``): every block is whole;
- blocks are decompressed here with a bound on the output (deflate, and snappy by its declared length),
  and the decoder reads records from those bytes, so it never decompresses anything itself;
- the writer schema is walked first: no named type refers to itself (no recursion), nesting is shallow,
  every record and every array item encodes to at least one byte. With that, every record and every
  item the decoder reads consumes input, so the work is bounded by the (bounded) decompressed size;
- a block may not declare more records than it has bytes.
"""

from __future__ import annotations

import io
import json
import threading
import zlib
from typing import Any

from icebook.errors import one_line
from icebook.io.avro_header import AvroFraming

MAX_INLINE_FILE_BYTES = 8 << 20
"""Larger files are not manifest lists of any real table; they go to a worker."""
MAX_INLINE_DECOMPRESSED_BYTES = 64 << 20
_MAX_SCHEMA_DEPTH = 32
_PRIMITIVE_MIN_BYTES = {
    "null": 0,
    "boolean": 1,
    "int": 1,
    "long": 1,
    "float": 4,
    "double": 8,
    "bytes": 1,
    "string": 1,
}


class _Unsafe(Exception):
    """The schema or the blocks are outside what the in-process decode can prove bounded."""


class _SchemaWalk:
    """Minimum encoded size of each type of a writer schema, refusing anything unbounded."""

    def __init__(self) -> None:
        self.named: dict[str, int] = {}
        self.defining: set[str] = set()

    def min_bytes(self, t: Any, depth: int = 0, namespace: str = "") -> int:
        if depth > _MAX_SCHEMA_DEPTH:
            raise _Unsafe("schema nested too deeply")
        if isinstance(t, str):
            if t in _PRIMITIVE_MIN_BYTES:
                return _PRIMITIVE_MIN_BYTES[t]
            full = t if "." in t or not namespace else f"{namespace}.{t}"
            for name in (t, full):
                if name in self.defining:
                    raise _Unsafe(f"type {name!r} refers to itself")
            for name in (full, t):
                if name in self.named:
                    return self.named[name]
            raise _Unsafe(f"unknown type {t!r}")
        if isinstance(t, list):
            for branch in t:
                self.min_bytes(branch, depth + 1, namespace)
            return 1  # the branch index
        if not isinstance(t, dict):
            raise _Unsafe("malformed type")
        kind = t.get("type")
        if kind in ("record", "error"):
            return self._record(t, depth, namespace)
        if kind == "enum":
            self._name(t, namespace, 1)
            return 1
        if kind == "fixed":
            size = t.get("size")
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                raise _Unsafe("bad fixed size")
            self._name(t, namespace, size)
            return size
        if kind == "array":
            if self.min_bytes(t.get("items"), depth + 1, namespace) < 1:
                raise _Unsafe("array items that encode to no bytes")
            return 1  # the closing zero count
        if kind == "map":
            self.min_bytes(t.get("values"), depth + 1, namespace)
            return 1  # every map entry has a string key, so entries consume bytes
        if isinstance(kind, str) and kind in _PRIMITIVE_MIN_BYTES:
            return _PRIMITIVE_MIN_BYTES[kind]
        if isinstance(kind, (list, dict)):
            return self.min_bytes(kind, depth + 1, namespace)
        raise _Unsafe(f"unknown type {kind!r}")

    def _full_name(self, t: dict[str, Any], namespace: str) -> tuple[str, str]:
        name = t.get("name")
        if not isinstance(name, str) or not name:
            raise _Unsafe("a named type without a name")
        own = t.get("namespace")
        space = own if isinstance(own, str) else namespace
        full = name if "." in name or not space else f"{space}.{name}"
        return name, full

    def _name(self, t: dict[str, Any], namespace: str, size: int) -> None:
        name, full = self._full_name(t, namespace)
        self.named[full] = self.named[name] = size

    def _record(self, t: dict[str, Any], depth: int, namespace: str) -> int:
        name, full = self._full_name(t, namespace)
        space = full.rsplit(".", 1)[0] if "." in full else ""
        fields = t.get("fields")
        if not isinstance(fields, list):
            raise _Unsafe("a record without fields")
        self.defining.update((name, full))
        total = 0
        for f in fields:
            if not isinstance(f, dict):
                raise _Unsafe("malformed field")
            total += self.min_bytes(f.get("type"), depth + 1, space)
        self.defining.difference_update((name, full))
        self.named[full] = self.named[name] = total
        return total


def _schema_is_bounded(schema_json: bytes) -> bool:
    try:
        schema = json.loads(schema_json)
        return _SchemaWalk().min_bytes(schema) >= 1
    except (_Unsafe, ValueError, RecursionError, TypeError):
        return False


_UNSAFE = object()
_parsed: dict[bytes, Any] = {}
_PARSED_LIMIT = 256
_parsed_lock = threading.Lock()


def _parsed_schema(schema_json: bytes) -> Any:
    """fastavro's parsed form of a writer schema proven bounded, or ``_UNSAFE``. Kept by schema text:
    every manifest list of a table usually shares one schema, and parsing it costs more than decoding."""
    with _parsed_lock:
        known = _parsed.get(schema_json)
    if known is not None:
        return known
    verdict: Any = _UNSAFE
    if _schema_is_bounded(schema_json):
        import fastavro

        try:
            verdict = fastavro.parse_schema(json.loads(schema_json))
        except Exception as exc:  # fastavro raises several types on a schema it rejects
            raise InlineDecodeFailed(f"invalid Avro schema: {one_line(exc)}") from None
    with _parsed_lock:
        if len(_parsed) >= _PARSED_LIMIT:
            _parsed.clear()
        _parsed[schema_json] = verdict
    return verdict


def _inflate(block: bytes, codec: str, budget: int) -> bytes:
    if codec == "null":
        return block
    if codec == "deflate":
        inflater = zlib.decompressobj(-15)
        try:
            out = inflater.decompress(block, budget + 1)
        except zlib.error as exc:
            raise _Unsafe(f"corrupt deflate block: {exc}") from None
        if len(out) > budget or inflater.unconsumed_tail:
            raise _Unsafe("a block decompresses beyond the in-process limit")
        return out
    if codec == "snappy":
        return _unsnappy(block, budget)
    raise _Unsafe(f"codec {codec} is decoded in a worker")


def _unsnappy(block: bytes, budget: int) -> bytes:
    # Avro's snappy blocks: raw snappy, then the big-endian CRC-32 of the uncompressed bytes.
    import cramjam

    body, crc = block[:-4], block[-4:]
    declared, shift, pos = 0, 0, 0
    while pos < len(body) and pos < 5:  # the raw format opens with the uncompressed length (varint)
        b = body[pos]
        declared |= (b & 0x7F) << shift
        pos += 1
        if not b & 0x80:
            break
        shift += 7
    if declared > budget or len(block) < 4:
        raise _Unsafe("a block decompresses beyond the in-process limit")
    try:
        out = bytes(cramjam.snappy.decompress_raw(body))
    except Exception as exc:  # cramjam raises its own DecompressionError
        raise _Unsafe(f"corrupt snappy block: {exc}") from None
    if zlib.crc32(out).to_bytes(4, "big") != crc:
        raise _Unsafe("snappy block checksum mismatch")
    return out


def _blocks(data: bytes, framing: AvroFraming) -> list[tuple[int, bytes]]:
    """(record count, decompressed bytes) of every block, within the in-process budget."""
    budget = MAX_INLINE_DECOMPRESSED_BYTES
    out: list[tuple[int, bytes]] = []
    for block in framing.blocks:
        raw = _inflate(data[block.offset : block.offset + block.size], framing.codec, budget)
        budget -= len(raw)
        if block.count > len(raw):  # every record encodes to at least one byte (the schema walk proved it)
            raise _Unsafe("a block declares more records than it has bytes")
        out.append((block.count, raw))
    return out


class InlineDecodeFailed(Exception):
    """The decoder raised on bytes that were safe to hand it: the file is corrupt (``str()`` says how)."""


def decode_records_inline(data: bytes, framing: AvroFraming) -> list[dict[str, Any]] | None:
    """Every record of ``data`` decoded in this process, or None when that cannot be proven safe (the
    caller then decodes in a worker). Raises ``InlineDecodeFailed`` when the decoder rejects the bytes."""
    if len(data) > MAX_INLINE_FILE_BYTES:
        return None
    schema_json = framing.metadata.get("avro.schema")
    if schema_json is None:
        return None
    parsed = _parsed_schema(schema_json)
    if parsed is _UNSAFE:
        return None
    try:
        blocks = _blocks(data, framing)
    except _Unsafe:
        return None
    from fastavro import schemaless_reader

    records: list[dict[str, Any]] = []
    try:
        for count, raw in blocks:
            source = io.BytesIO(raw)
            for _ in range(count):
                records.append(schemaless_reader(source, parsed, None, return_record_name=False))  # type: ignore[arg-type]
    except Exception as exc:  # fastavro raises many types on corrupt input; each means a corrupt file
        raise InlineDecodeFailed(one_line(exc)) from None
    return records


__all__ = ["MAX_INLINE_FILE_BYTES", "InlineDecodeFailed", "decode_records_inline"]
