"""FileIO: the only way icebook touches storage.

Read-only by design: exploring a table never writes into its directory. Local paths, ``file:``
URIs and object stores (``s3://``, ``s3a://``, ``s3n://``, ``gs://``, ``abfs://``, ``abfss://``,
``hdfs://``) go through ``pyarrow.fs``; other schemes through fsspec (see ``filesystems``).
``properties`` are FileIO properties as Iceberg names them (a catalog's, including credentials
it vends per table); without them each store's SDK reads its usual environment.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow.fs as pafs

from icebook.errors import IcebookError, MetadataError, NotFound
from icebook.io.filesystems import Filesystems, not_found, storage_errors


@dataclass(frozen=True, slots=True)
class FileInfo:
    path: str
    size: int
    is_dir: bool
    mtime_ms: int | None = None
    """Last modification time in ms from the epoch, when the store reports one."""


class FileIO(Protocol):
    """Read access to a table's files, by the paths written in its metadata."""

    def read_bytes(self, path: str) -> bytes: ...

    def exists(self, path: str) -> bool: ...

    def size(self, path: str) -> int: ...

    def list_dir(self, path: str) -> list[FileInfo]: ...

    def open_input(self, path: str) -> pafs.NativeFile: ...


class ArrowFileIO:
    """FileIO over ``pyarrow.fs`` (and fsspec), configured by FileIO ``properties``."""

    def __init__(self, properties: Mapping[str, Any] | None = None) -> None:
        self._filesystems = Filesystems(properties)

    @property
    def properties(self) -> dict[str, str]:
        """The FileIO properties in use (credentials included: do not print them)."""
        return dict(self._filesystems.properties)

    def _resolve(self, location: str) -> tuple[pafs.FileSystem, str]:
        if "\x00" in location:  # no file system names a file with NUL; os and pyarrow raise bare ValueError
            raise IcebookError(f"cannot open {location!r}: a path cannot contain a NUL character")
        return self._filesystems.resolve(location)

    def open_input(self, path: str) -> pafs.NativeFile:
        fs, p = self._resolve(path)
        if isinstance(fs, pafs.LocalFileSystem):
            _require_regular_file(p, path)
        with storage_errors(fs, path):
            return fs.open_input_file(p)

    def read_bytes(self, path: str) -> bytes:
        with self.open_input(path) as f:
            return bytes(f.read())

    def local_path(self, path: str) -> str | None:
        """The local file system's path of ``path``, or None when it lives elsewhere (an object store)."""
        fs, p = self._resolve(path)
        return p if isinstance(fs, pafs.LocalFileSystem) else None

    def exists(self, path: str) -> bool:
        fs, p = self._resolve(path)
        with storage_errors(fs, path, "look up"):
            return bool(fs.get_file_info(p).type != pafs.FileType.NotFound)

    def size(self, path: str) -> int:
        fs, p = self._resolve(path)
        with storage_errors(fs, path, "look up"):
            info = fs.get_file_info(p)
        if info.type == pafs.FileType.NotFound:
            raise not_found(fs, path)
        return int(info.size or 0)

    def list_dir(self, path: str) -> list[FileInfo]:
        fs, p = self._resolve(path)
        with storage_errors(fs, path, "list"):
            info = fs.get_file_info(p)
            if info.type == pafs.FileType.NotFound:
                raise not_found(fs, path, what="directory")
            children = fs.get_file_info(pafs.FileSelector(p, recursive=False))
        return [
            FileInfo(
                path=join(path, c.base_name),
                size=int(c.size or 0),
                is_dir=c.type == pafs.FileType.Directory,
                mtime_ms=None if c.mtime_ns is None else c.mtime_ns // 1_000_000,
            )
            for c in children
        ]


@contextmanager
def read_errors(path: str, kind: str, field: str | None = None) -> Iterator[None]:
    """The one rule for a failure reading one of a table's files (a manifest, a manifest list, a Puffin
    file): a missing file is ``NotFound`` naming its kind and path; any other failure of the FileIO, or of
    a read midway (``OSError``, then naming ``field``, the one that gave the range), one ``MetadataError``
    naming the file. A ``MetadataError`` raised inside passes through (it already names them)."""
    try:
        yield
    except NotFound:
        raise NotFound(f"{kind} {path}: file not found") from None
    except MetadataError:
        raise
    except IcebookError as exc:
        raise MetadataError(path, None, str(exc), kind=kind) from None
    except OSError as exc:
        raise MetadataError(path, field, f"cannot read: {exc}", kind=kind) from None


def _require_regular_file(local_path: str, path: str) -> None:
    """Opening a FIFO blocks until something writes to it, and a device never ends: only regular
    files are table files."""
    try:
        mode = os.stat(local_path).st_mode
    except FileNotFoundError:
        raise NotFound(f"file not found: {path}") from None
    except OSError as exc:
        raise IcebookError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:  # a name no file can have (a NUL byte in a damaged manifest list)
        raise IcebookError(f"cannot read {path!r}: {exc}") from None
    if not stat.S_ISREG(mode):
        if stat.S_ISDIR(mode):
            what = "a directory"
        elif stat.S_ISFIFO(mode):
            what = "a named pipe (FIFO)"
        else:
            what = "a device or socket"
        raise IcebookError(f"cannot read {path}: it is {what}, not a regular file")


def join(base: str, name: str) -> str:
    """Join a directory location and a child name without normalising the URI scheme away."""
    return base.rstrip("/") + "/" + name


def default_fileio(properties: Mapping[str, Any] | None = None) -> FileIO:
    return ArrowFileIO(properties)
