"""FileIO: the only way icebook touches storage.

Read-only by design: exploring a table never writes into its directory. Local paths,
``file://`` URIs and every filesystem ``pyarrow.fs`` understands (s3://, gs://, hdfs://,
...) go through ``pyarrow.fs``; other schemes fall back to fsspec when it is installed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlparse

import pyarrow.fs as pafs

from icebook.errors import IcebookError, NotFound


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


def _strip_file_scheme(location: str) -> str:
    if location.startswith("file:"):
        parsed = urlparse(location)
        return parsed.path or location[len("file:") :]
    return location


class ArrowFileIO:
    """FileIO over ``pyarrow.fs``; paths may be local, ``file:`` or any pyarrow URI."""

    def __init__(self) -> None:
        self._filesystems: dict[str, pafs.FileSystem] = {}

    def _resolve(self, location: str) -> tuple[pafs.FileSystem, str]:
        location = _strip_file_scheme(location)
        if "://" not in location:
            fs = self._filesystems.setdefault("local", pafs.LocalFileSystem())
            return fs, os.path.abspath(location)
        scheme = location.split("://", 1)[0]
        try:
            fs, path = pafs.FileSystem.from_uri(location)
        except (pafs.ArrowInvalid, pafs.ArrowNotImplementedError, ValueError) as exc:  # type: ignore[attr-defined]
            fs, path = _fsspec_fallback(location, scheme, exc)
        return fs, path

    def open_input(self, path: str) -> pafs.NativeFile:
        fs, p = self._resolve(path)
        try:
            return fs.open_input_file(p)
        except FileNotFoundError:
            raise NotFound(f"file not found: {path}") from None
        except OSError as exc:
            if "not found" in str(exc).lower() or "no such file" in str(exc).lower():
                raise NotFound(f"file not found: {path}") from None
            raise IcebookError(f"cannot read {path}: {exc}") from None

    def read_bytes(self, path: str) -> bytes:
        with self.open_input(path) as f:
            return bytes(f.read())

    def exists(self, path: str) -> bool:
        fs, p = self._resolve(path)
        return fs.get_file_info(p).type != pafs.FileType.NotFound

    def size(self, path: str) -> int:
        fs, p = self._resolve(path)
        info = fs.get_file_info(p)
        if info.type == pafs.FileType.NotFound:
            raise NotFound(f"file not found: {path}")
        return int(info.size or 0)

    def list_dir(self, path: str) -> list[FileInfo]:
        fs, p = self._resolve(path)
        info = fs.get_file_info(p)
        if info.type == pafs.FileType.NotFound:
            raise NotFound(f"directory not found: {path}")
        out = []
        for child in fs.get_file_info(pafs.FileSelector(p, recursive=False)):
            name = child.base_name
            out.append(
                FileInfo(
                    path=join(path, name),
                    size=int(child.size or 0),
                    is_dir=child.type == pafs.FileType.Directory,
                    mtime_ms=None if child.mtime_ns is None else child.mtime_ns // 1_000_000,
                )
            )
        return out


def _fsspec_fallback(location: str, scheme: str, cause: Exception) -> tuple[pafs.FileSystem, str]:
    try:
        import fsspec
    except ImportError:
        raise IcebookError(
            f"cannot open {location}: pyarrow has no filesystem for '{scheme}://' ({cause}) and fsspec is not installed"
        ) from None
    fs = fsspec.filesystem(scheme)
    return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), location.split("://", 1)[1]


def join(base: str, name: str) -> str:
    """Join a directory location and a child name without normalising the URI scheme away."""
    return base.rstrip("/") + "/" + name


def default_fileio() -> FileIO:
    return ArrowFileIO()
