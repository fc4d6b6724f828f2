"""A persistent cache of decoded manifests on local disk (Arrow IPC files under ``$ICEBOOK_HOME/manifests``).

Manifests are immutable once written (spec: "Manifests": a new version is a new file), so a decoded
manifest can be kept across processes and a hit needs no revalidation against the table. An entry is
keyed by what identifies the file and its decoding: the path, its length (and for a local file its
modification time), and the manifest-list fields the decoder applies to it (inherited snapshot id and
sequence numbers). Only the output of the full, validated decode is stored, so a hit never skips a check
a cold read would make.

Each entry file is ``Arrow IPC file | MAGIC | xxh3-64 | length``: an entry that is truncated, altered or
unreadable fails its checksum or its IPC framing, is deleted and decoded again; it is never trusted.
Writes go to a temporary file in the same directory, then ``os.replace``: concurrent kernels see either
the whole entry or none, and an entry file is never written again once in place.

Checking every byte of a 500 MB listing on every load costs more than the rest of a warm start, so a load
that has checked an entry leaves a stamp beside it (``<key>.ok``): the entry file's identity and status
(device, inode, size, modification and status-change times) and its checksum. A later load whose entry
still has that identity and status holds the bytes that load hashed and validated: it skips both and reads the
trailer and the IPC framing as always. Any write to the file, a truncation or a replacement changes its size,
inode or times. A stamp
is trusted only when it was written well after the entry's last status change (``STAMP_MARGIN_NS``), as git
treats a file changed within its index's timestamp as racy: a write within the same tick of the file
system's clock as the check would otherwise keep the times unchanged. The stamp's modification time is the
entry's last use: the cache holds at most ``max_bytes``, and the least recently used entries go first.
Nothing is ever written into a table's directory.

``ICEBOOK_MANIFEST_CACHE=off`` turns it off; ``ICEBOOK_MANIFEST_CACHE_MB`` sets the size cap.
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import os
import struct
import threading
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import xxhash

from icebook import config

MAGIC = b"ICEBOOK-MANIFEST-3\n"
# The checksum of the IPC bytes (XXH3, 64 bits: a hit checks every byte of a 500 MB listing at memory
# speed, where crc32 took half of a warm start), and their length.
_HEADER = struct.Struct("<QQ")
SUFFIX = ".arrow"
STAMP_SUFFIX = ".ok"
# magic, the entry's device, inode, size, mtime and ctime, the stamp's own mtime (0: not trusted), checksum
_STAMP = struct.Struct("<8sQQQqqqQ")
_STAMP_MAGIC = b"ICEBOOK1"
STAMP_MARGIN_NS = 2_000_000_000
"""How long after an entry's last status change a check must be stamped for the stamp to be trusted: two
seconds, the coarsest timestamp of a common file system (FAT); finer ones are far below it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheInfo:
    """What ``icebook cache info`` prints."""

    root: str
    enabled: bool
    entries: int
    bytes: int
    max_bytes: int


class ManifestCache:
    """Decoded manifests as Arrow tables, on local disk, shared by every process of one user."""

    def __init__(self, root: Path, *, max_bytes: int = config.MANIFEST_CACHE_MB << 20, enabled: bool = True) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.enabled = enabled
        self.hits = 0
        self.misses = 0
        self.rejected = 0
        """Entries found corrupt or unreadable (deleted, then decoded again)."""
        self._lock = threading.Lock()

    @classmethod
    def from_environment(cls, folder: str = "manifests") -> ManifestCache:
        """The cache under ``$ICEBOOK_HOME/folder``, on or off and capped as the environment says (other
        immutable files, Parquet footers, are cached the same way in their own folder)."""
        return cls(
            config.icebook_home() / folder,
            max_bytes=config.manifest_cache_max_mb() << 20,
            enabled=config.manifest_cache_enabled(),
        )

    # ------------------------------------------------------------------ keys

    @staticmethod
    def key(path: str, length: int | None, *parts: object, mtime_ns: int | None = None) -> str:
        """The entry name for a file: its path and length (and local modification time), and whatever
        else decides the decoded table (``parts``)."""
        text = "\x00".join(str(p) for p in (path, length, mtime_ns, *parts))
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}{SUFFIX}"

    def _stamp_path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}{STAMP_SUFFIX}"

    # ------------------------------------------------------------------ read and write

    def holds(self, key: str) -> bool:
        """Whether an entry is stored under ``key`` (not read or checked: ``get`` may still miss)."""
        return self.enabled and self._path(key).is_file()

    def get(self, key: str) -> pa.Table | None:
        """The cached table, or None (a miss, or an entry that failed its checks and was deleted).

        The entry is memory-mapped: its table's buffers are the file's pages, shared with the OS page cache
        (a listing of 500,000 files is over 500 MB) and read only where used once the entry's stamp spares
        the checksum. Entries are never rewritten in place (see ``put``), so a mapping stays valid when its
        file is replaced or deleted.
        """
        if not self.enabled:
            return None
        path = self._path(key)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError:
            self._count(miss=True)
            return None
        try:
            # The identity and status of the very file mapped (not of whatever the path names later).
            status = os.fstat(fd)
            data = pa.py_buffer(mmap.mmap(fd, 0, access=mmap.ACCESS_READ)) if status.st_size else pa.py_buffer(b"")
        except (OSError, ValueError):
            self._count(miss=True)
            return None
        finally:
            os.close(fd)
        stamp_path = self._stamp_path(key)
        checked = _stamped(stamp_path, status)
        table = _decode(data, checked)
        if table is None:
            self._count(rejected=True)
            path.unlink(missing_ok=True)
            stamp_path.unlink(missing_ok=True)
            return None
        self._count(hit=True)
        if checked is None:
            _stamp(stamp_path, status, _trailer_digest(data))
        else:
            with contextlib.suppress(OSError):
                os.utime(stamp_path)  # most recently used
        return table

    def put(self, key: str, table: pa.Table) -> None:
        """Store ``table`` atomically; failures to write only lose the caching.

        The IPC stream goes straight into a temporary file in the entry's directory (a listing of 500,000
        files is over 500 MB, too much to build in memory first); its checksum is then taken over the
        written bytes and appended with the magic and the length, and the file renamed into place.
        """
        if not self.enabled or self.max_bytes <= 0:
            return
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            import tempfile  # only to write: a warm listing does without

            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=SUFFIX)
            os.close(fd)
            try:
                # The IPC file first: its footer records offsets from the start of the file.
                with pa.OSFile(tmp, "wb") as sink, ipc.new_file(sink, table.schema) as writer:
                    writer.write_table(table)
                size = os.path.getsize(tmp)
                if size > self.max_bytes:
                    Path(tmp).unlink(missing_ok=True)
                    return
                written = pa.memory_map(tmp, "r").read_buffer()
                digest = _checksum(written)
                del written
                with open(tmp, "ab") as fh:
                    fh.write(MAGIC + _HEADER.pack(digest, size))
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except (OSError, pa.ArrowException):
            return
        self._evict()

    # ------------------------------------------------------------------ housekeeping

    def _entries(self) -> list[tuple[Path, os.stat_result, int]]:
        """Every entry file with its status and its last use (its stamp's modification time, else its own)."""
        out: list[tuple[Path, os.stat_result, int]] = []
        if not self.root.is_dir():
            return out
        for sub in self.root.iterdir():
            if not sub.is_dir():
                continue
            files: dict[str, os.stat_result] = {}
            for entry in os.scandir(sub):
                if entry.name.startswith(".tmp-"):
                    continue
                with contextlib.suppress(OSError):
                    files[entry.name] = entry.stat()
            for name, st in files.items():
                if name.endswith(SUFFIX):
                    stamp = files.get(name[: -len(SUFFIX)] + STAMP_SUFFIX)
                    used = max(st.st_mtime_ns, stamp.st_mtime_ns if stamp else 0)
                    out.append((sub / name, st, used))
        return out

    def _evict(self) -> None:
        entries = self._entries()
        total = sum(st.st_size for _, st, _ in entries)
        if total <= self.max_bytes:
            return
        for path, st, _ in sorted(entries, key=lambda e: e[2]):
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            path.with_suffix(STAMP_SUFFIX).unlink(missing_ok=True)
            total -= st.st_size

    def info(self) -> CacheInfo:
        entries = self._entries()
        return CacheInfo(
            root=str(self.root),
            enabled=self.enabled,
            entries=len(entries),
            bytes=sum(st.st_size for _, st, _ in entries),
            max_bytes=self.max_bytes,
        )

    def clear(self) -> int:
        """Delete every entry (and leftover temporary files); returns how many entries were deleted."""
        removed = 0
        if not self.root.is_dir():
            return 0
        for sub in self.root.iterdir():
            if not sub.is_dir():
                continue
            for entry in os.scandir(sub):
                if entry.name.endswith((SUFFIX, STAMP_SUFFIX)):
                    Path(entry.path).unlink(missing_ok=True)
                    removed += entry.name.endswith(SUFFIX) and not entry.name.startswith(".tmp-")
            with contextlib.suppress(OSError):
                sub.rmdir()
        return removed

    def _count(self, *, hit: bool = False, miss: bool = False, rejected: bool = False) -> None:
        with self._lock:
            self.hits += hit
            self.misses += miss or rejected
            self.rejected += rejected


def _checksum(data: pa.Buffer) -> int:
    return int(xxhash.xxh3_64_intdigest(memoryview(data)))


_TRAILER = len(MAGIC) + _HEADER.size


def _trailer_digest(data: pa.Buffer) -> int:
    return int(_HEADER.unpack_from(memoryview(data), data.size - _HEADER.size)[0])


def _decode(data: pa.Buffer, checked: int | None = None) -> pa.Table | None:
    """The table of one entry file, or None when anything about it is wrong. ``checked``: the checksum a
    trusted stamp holds for this very file, whose bytes are then those an earlier load hashed and validated:
    neither is done again; the trailer and the IPC framing are read as always."""
    if data.size < _TRAILER or data.slice(data.size - _TRAILER, len(MAGIC)).to_pybytes() != MAGIC:
        return None
    digest, length = _HEADER.unpack_from(memoryview(data), data.size - _HEADER.size)
    if length != data.size - _TRAILER:
        return None
    body = data.slice(0, length)
    if digest != checked and _checksum(body) != digest:
        return None
    try:
        table = ipc.open_file(body).read_all()
        if checked is None:  # bytes checked and stamped were validated by the load that stamped them
            table.validate(full=False)
    except (pa.ArrowException, ValueError, OSError):
        return None
    return table


def _identity(status: os.stat_result) -> tuple[int, int, int, int, int]:
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns)


def _stamped(stamp_path: Path, status: os.stat_result) -> int | None:
    """The checksum a trusted stamp records for the entry file of ``status``, or None (no stamp, another
    file, a changed one, or a stamp written too soon after the file's last change to tell)."""
    try:
        raw = stamp_path.read_bytes()
    except OSError:
        return None
    if len(raw) != _STAMP.size:
        return None
    magic, *identity, stamped_at, digest = _STAMP.unpack(raw)
    if magic != _STAMP_MAGIC or tuple(identity) != _identity(status):
        return None
    if stamped_at - status.st_ctime_ns < STAMP_MARGIN_NS:
        return None
    return int(digest)


def _stamp(stamp_path: Path, status: os.stat_result, digest: int) -> None:
    """Record that the entry file of ``status`` passed every check, with its checksum (atomically; a failure
    only means the next load checks every byte again)."""
    try:
        import tempfile

        fd, tmp = tempfile.mkstemp(dir=stamp_path.parent, prefix=".tmp-", suffix=STAMP_SUFFIX)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(_STAMP.pack(_STAMP_MAGIC, *_identity(status), 0, digest))
                fh.flush()
                # The stamp's own modification time is the file system's clock now: the check is trusted
                # only when that is well after the entry's last status change.
                now = os.fstat(fh.fileno()).st_mtime_ns
                if now - status.st_ctime_ns >= STAMP_MARGIN_NS:
                    fh.seek(0)
                    fh.write(_STAMP.pack(_STAMP_MAGIC, *_identity(status), now, digest))
            os.replace(tmp, stamp_path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError:
        return


_shared: dict[str, ManifestCache] = {}
_shared_lock = threading.Lock()


def shared_cache(folder: str = "manifests") -> ManifestCache:
    """The process's cache of ``folder`` (decoded manifests; ``footers``: Parquet footers), configured from
    the environment when first asked for."""
    with _shared_lock:
        cache = _shared.get(folder)
        if cache is None:
            cache = _shared[folder] = ManifestCache.from_environment(folder)
        return cache


def reset_shared_cache() -> None:
    """Forget the process's caches (the environment is read again on next use)."""
    with _shared_lock:
        _shared.clear()


_fingerprints: dict[tuple[str, ...], str] = {}


def decoder_fingerprint(folders: tuple[str, ...] = ("io", "spec")) -> str:
    """A hash of the decoding code (the ``io`` and ``spec`` packages, and any other ``folders`` of
    icebook whose code shapes a cached table): entries written by another version of that code are
    never read back as this one's output."""
    if folders not in _fingerprints:
        digest = hashlib.sha256(MAGIC)
        package = Path(__file__).resolve().parent.parent
        for folder in folders:
            for source in sorted((package / folder).rglob("*.py")):
                digest.update(source.relative_to(package).as_posix().encode())
                digest.update(source.read_bytes())
        _fingerprints[folders] = digest.hexdigest()[:16]
    return _fingerprints[folders]


def local_mtime_ns(path: str) -> int | None:
    """The modification time of a local file (None for object stores and other URIs)."""
    local = path[len("file:") :] if path.startswith("file:") else path
    if "://" in local:
        return None
    try:
        return os.stat(local.removeprefix("//")).st_mtime_ns
    except OSError:
        return None


__all__ = [
    "CacheInfo",
    "ManifestCache",
    "decoder_fingerprint",
    "local_mtime_ns",
    "reset_shared_cache",
    "shared_cache",
]
