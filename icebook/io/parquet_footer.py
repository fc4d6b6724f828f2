"""Parquet footers, read alone and cached on local disk like decoded manifests.

A data file is immutable once a snapshot references it (spec: "Overview": files are never changed in
place), so its footer (``FileMetaData``: row groups, column chunks, statistics) is read once, with two
ranged reads of the file's tail, and kept in the footer cache (``$ICEBOOK_HOME/footers``, the
``ManifestCache`` class with its checksums and size cap; ``ICEBOOK_MANIFEST_CACHE=off`` turns both
off; ``shared_cache(FOLDER)``). An entry is keyed by the path, the file's length as its manifest records it and, for a local
file, its modification time.
"""

from __future__ import annotations

import struct

import pyarrow as pa
import pyarrow.parquet as pq

from icebook.errors import MetadataError
from icebook.io.fileio import FileIO
from icebook.io.manifest_cache import ManifestCache, local_mtime_ns, shared_cache

MAGIC = b"PAR1"
_ENCRYPTED = b"PARE"
_TAIL = 8  # the footer's length (4 bytes, little-endian) and the magic
_KEY_PART = "parquet-footer-1"

FOLDER = "footers"


def _fail(path: str, problem: str) -> MetadataError:
    return MetadataError(path, "footer", problem, kind="Parquet file")


def read_footer_bytes(fileio: FileIO, path: str) -> bytes:
    """The file's footer as stored, with its length and magic (``FileMetaData | length | PAR1``)."""
    try:
        with fileio.open_input(path) as f:
            size = f.size()
            if size < len(MAGIC) + _TAIL:
                raise _fail(path, f"{size} bytes is too short for a Parquet file")
            tail = f.read_at(_TAIL, size - _TAIL)
            length, magic = struct.unpack("<I4s", tail)
            if magic == _ENCRYPTED:
                raise _fail(path, "the footer is encrypted (PARE): its statistics cannot be read")
            if magic != MAGIC:
                raise _fail(path, f"ends with {magic!r}, not the Parquet magic {MAGIC!r}")
            if length + _TAIL + len(MAGIC) > size:
                raise _fail(path, f"footer length {length} exceeds the file's {size} bytes")
            return bytes(f.read_at(length + _TAIL, size - _TAIL - length))
    except OSError as exc:
        raise _fail(path, f"cannot read ({exc})") from None


def parse_footer(raw: bytes, path: str) -> pq.FileMetaData:
    """A footer's ``FileMetaData`` (``raw`` as ``read_footer_bytes`` returns it)."""
    try:
        # A reader finds the footer from the end; the leading magic makes the buffer a whole (empty) file.
        return pq.read_metadata(pa.BufferReader(MAGIC + raw))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise _fail(path, f"not a readable Parquet footer ({exc})") from None


def read_footer(fileio: FileIO, path: str, size_in_bytes: int | None) -> pq.FileMetaData:
    """The footer of the Parquet file ``path`` (``size_in_bytes`` as its manifest records it), from the
    footer cache when it holds it, else read from the file and cached."""
    cache = shared_cache(FOLDER)
    key = ManifestCache.key(path, size_in_bytes, _KEY_PART, mtime_ns=local_mtime_ns(path))
    cached = cache.get(key)
    if cached is not None and cached.num_rows == 1 and cached.schema.names == ["footer"]:
        return parse_footer(cached.column(0)[0].as_py(), path)
    raw = read_footer_bytes(fileio, path)
    meta = parse_footer(raw, path)  # only a footer that parses is cached
    cache.put(key, pa.table({"footer": pa.array([raw], pa.large_binary())}))
    return meta


__all__ = ["FOLDER", "parse_footer", "read_footer", "read_footer_bytes"]
