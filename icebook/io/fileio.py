"""FileIO: the only way icebook touches storage.

Read-only by design: exploring a table never writes into its directory. Local paths,
``file://`` URIs and every filesystem ``pyarrow.fs`` understands (s3://, gs://, hdfs://,
...) go through ``pyarrow.fs``; other schemes fall back to fsspec when it is installed.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlparse

import pyarrow as pa
import pyarrow.fs as pafs

from icebook.errors import EnvironmentProblem, IcebookError, NotFound, UnsupportedFeature

_S3_ALIASES = ("s3a", "s3n")


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
        scheme, rest = location.split("://", 1)
        if scheme.lower() in _S3_ALIASES:
            # Hadoop's s3a:// and s3n:// name the same objects as s3:// (pyarrow knows only s3://).
            location = f"s3://{rest}"
        try:
            fs, path = pafs.FileSystem.from_uri(location)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError) as exc:  # a scheme pyarrow lacks
            fs, path = _fsspec_fallback(location, scheme, exc)
        except OSError as exc:  # pyarrow knows the scheme but cannot reach it (network, credentials, libjvm)
            raise IcebookError(f"cannot open {location}: {exc}") from None
        return fs, path

    def open_input(self, path: str) -> pafs.NativeFile:
        fs, p = self._resolve(path)
        if isinstance(fs, pafs.LocalFileSystem):
            _require_regular_file(p, path)
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

    def _info(self, path: str, p: str, fs: pafs.FileSystem) -> pafs.FileInfo:
        try:
            return fs.get_file_info(p)
        except OSError as exc:  # credentials, network, permissions: say which file
            raise IcebookError(f"cannot look up {path}: {exc}") from None

    def exists(self, path: str) -> bool:
        fs, p = self._resolve(path)
        return self._info(path, p, fs).type != pafs.FileType.NotFound

    def size(self, path: str) -> int:
        fs, p = self._resolve(path)
        info = self._info(path, p, fs)
        if info.type == pafs.FileType.NotFound:
            raise NotFound(f"file not found: {path}")
        return int(info.size or 0)

    def list_dir(self, path: str) -> list[FileInfo]:
        fs, p = self._resolve(path)
        info = self._info(path, p, fs)
        if info.type == pafs.FileType.NotFound:
            raise NotFound(f"directory not found: {path}")
        out = []
        try:
            children = fs.get_file_info(pafs.FileSelector(p, recursive=False))
        except OSError as exc:
            raise IcebookError(f"cannot list {path}: {exc}") from None
        for child in children:
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


def _require_regular_file(local_path: str, path: str) -> None:
    """Opening a FIFO blocks until something writes to it, and a device never ends: only regular
    files are table files."""
    try:
        mode = os.stat(local_path).st_mode
    except FileNotFoundError:
        raise NotFound(f"file not found: {path}") from None
    except OSError as exc:
        raise IcebookError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        if stat.S_ISDIR(mode):
            what = "a directory"
        elif stat.S_ISFIFO(mode):
            what = "a named pipe (FIFO)"
        else:
            what = "a device or socket"
        raise IcebookError(f"cannot read {path}: it is {what}, not a regular file")


def _fsspec_fallback(location: str, scheme: str, cause: Exception) -> tuple[pafs.FileSystem, str]:
    try:
        import fsspec
    except ImportError:
        raise UnsupportedFeature(
            f"cannot open {location}: pyarrow has no filesystem for '{scheme}://' ({cause}) and fsspec is not installed"
        ) from None
    try:
        fs = fsspec.filesystem(scheme)
    except ImportError as exc:  # fsspec knows the scheme; its driver package is missing
        raise EnvironmentProblem(f"cannot open {location}: {exc}") from None
    except (ValueError, TypeError, OSError) as exc:
        raise UnsupportedFeature(
            f"cannot open {location}: no filesystem for '{scheme}://' in pyarrow or fsspec ({exc})"
        ) from None
    return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), location.split("://", 1)[1]


def join(base: str, name: str) -> str:
    """Join a directory location and a child name without normalising the URI scheme away."""
    return base.rstrip("/") + "/" + name


def default_fileio() -> FileIO:
    return ArrowFileIO()
