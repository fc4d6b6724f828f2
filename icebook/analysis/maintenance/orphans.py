"""Orphan files: files under the table location that no metadata file, manifest list or manifest
references, found the way ``remove_orphan_files`` finds them.

The reference implementation lists the location recursively, skipping hidden names (a file or
directory whose name starts with ``_`` or ``.``, except partition directories ``_field=...`` of a
partition field so named) and files modified at or after ``older_than`` (default: three days ago,
so that files of writes still in flight are left alone). A listed file is valid when it is the
current metadata file, a file of its metadata log, the version hint, a statistics file, a manifest
list or manifest of any snapshot, or a live data or delete file of any snapshot. Paths compare
without scheme and authority; the same path under a different scheme or authority is a conflict
the procedure refuses to decide.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlparse

import pandas as pd

from icebook.analysis._frames import frame
from icebook.analysis.maintenance.expire import gc_enabled
from icebook.analysis.store.manifests import ManifestStore
from icebook.analysis.store.reachable import FileKind, TableFile, reachable
from icebook.errors import IcebookError
from icebook.io.fileio import FileInfo, FileIO
from icebook.spec.metadata import TableMetadata

DEFAULT_AGE_MS = 3 * 24 * 3600 * 1000
VERSION_HINT = "version-hint.text"
_EQUAL_SCHEMES = {"s3n": "s3", "s3a": "s3"}


class PrefixConflict(IcebookError):
    """A listed file matches a referenced one except for its scheme or authority."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OrphanFile:
    path: str
    size_in_bytes: int
    modified_ms: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class OrphanReport:
    """Files ``remove_orphan_files(older_than => ...)`` would delete, and what was looked at."""

    location: str
    older_than_ms: int
    now_ms: int
    files: tuple[OrphanFile, ...]
    listed: int
    """Files listed under the location (not hidden), of any age."""
    too_recent: tuple[OrphanFile, ...]
    """Unreferenced files modified at or after ``older_than``: possibly a write still in flight."""
    referenced: int
    gc_enabled: bool

    @property
    def bytes(self) -> int:
        return sum(f.size_in_bytes for f in self.files)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.files)

    def to_pandas(self) -> pd.DataFrame:
        return frame(
            (
                {
                    "orphan_file_location": f.path,
                    "file_size_in_bytes": f.size_in_bytes,
                    "modified_at": None if f.modified_ms is None else pd.Timestamp(f.modified_ms, unit="ms", tz="UTC"),
                }
                for f in self.files
            ),
            ["orphan_file_location", "file_size_in_bytes", "modified_at"],
            ints=["file_size_in_bytes"],
        )

    def summary(self) -> str:
        recent = (
            f"; {len(self.too_recent)} more unreferenced files are newer than older_than" if self.too_recent else ""
        )
        gc = "" if self.gc_enabled else " (gc.enabled=false: the procedure refuses to delete them)"
        return f"{len(self.files)} orphan files, {self.bytes} bytes, among {self.listed} files listed{recent}{gc}"

    def __repr__(self) -> str:
        return f"<OrphanReport: {self.summary()}>"


def _hidden(name: str, partition_prefixes: tuple[str, ...]) -> bool:
    if name.startswith(partition_prefixes):
        return False
    return name.startswith(("_", "."))


def walk(fileio: FileIO, location: str, partition_prefixes: tuple[str, ...] = ()) -> Iterator[FileInfo]:
    """Every non-hidden file under ``location``, depth first (hidden directories are not entered)."""
    stack = [location]
    while stack:
        directory = stack.pop()
        for child in fileio.list_dir(directory):
            name = child.path.rstrip("/").rsplit("/", 1)[-1]
            if _hidden(name, partition_prefixes):
                continue
            if child.is_dir:
                stack.append(child.path)
            else:
                yield child


def _key(path: str) -> tuple[str | None, str | None, str]:
    """(scheme, authority, path) as the procedure compares them."""
    parsed = urlparse(path)
    if not parsed.scheme or len(parsed.scheme) == 1:  # a plain path (or a Windows drive letter)
        return None, None, path
    scheme = _EQUAL_SCHEMES.get(parsed.scheme, parsed.scheme)
    return scheme, parsed.netloc or None, parsed.path


def valid_files(
    metadata: TableMetadata, metadata_location: str, store: ManifestStore, *, progress: bool
) -> list[TableFile]:
    """Everything the table references: content files, manifests and manifest lists of every snapshot,
    the current metadata file and its log, the version hint, statistics files."""
    found = reachable(metadata, store, None, progress=progress)
    files = list(found.files.values())
    files.append(TableFile(path=metadata_location, kind=FileKind.METADATA, size_in_bytes=None))
    files += [
        TableFile(path=e.metadata_file, kind=FileKind.METADATA, size_in_bytes=None) for e in metadata.metadata_log
    ]
    hint = metadata.location.rstrip("/") + "/metadata/" + VERSION_HINT
    files.append(TableFile(path=hint, kind=FileKind.VERSION_HINT, size_in_bytes=None))
    return files


def find_orphans(
    metadata: TableMetadata,
    metadata_location: str,
    store: ManifestStore,
    fileio: FileIO,
    *,
    older_than_ms: int | None = None,
    location: str | None = None,
    now_ms: int | None = None,
    progress: bool = True,
) -> OrphanReport:
    """Files under ``location`` (default: the table location) that the table does not reference and
    that were last modified before ``older_than_ms`` (default: three days ago)."""
    now = int(time.time() * 1000) if now_ms is None else int(now_ms)
    cutoff = now - DEFAULT_AGE_MS if older_than_ms is None else int(older_than_ms)
    root = location or metadata.location
    prefixes = tuple(
        f"{pf.name}="
        for spec in metadata.partition_specs.values()
        for pf in spec.fields
        if pf.name.startswith(("_", "."))
    )
    valid: dict[str, tuple[str | None, str | None]] = {}
    for f in valid_files(metadata, metadata_location, store, progress=progress):
        scheme, authority, path = _key(f.path)
        valid.setdefault(path, (scheme, authority))
    orphans: list[OrphanFile] = []
    recent: list[OrphanFile] = []
    listed = referenced = 0
    conflicts: set[tuple[str | None, str | None]] = set()
    for info in walk(fileio, root, prefixes):
        listed += 1
        scheme, authority, path = _key(info.path)
        match = valid.get(path)
        if match is not None:
            v_scheme, v_authority = match
            if v_scheme and scheme and v_scheme.lower() != scheme.lower():
                conflicts.add((v_scheme, scheme))
            if v_authority and v_authority != authority:
                conflicts.add((v_authority, authority))
            referenced += 1
            continue
        orphan = OrphanFile(path=info.path, size_in_bytes=info.size, modified_ms=info.mtime_ms)
        if info.mtime_ms is not None and info.mtime_ms < cutoff:
            orphans.append(orphan)
        else:
            recent.append(orphan)
    if conflicts:
        shown = ", ".join(f"{a} vs {b}" for a, b in sorted(conflicts, key=str))
        raise PrefixConflict(
            f"cannot tell whether some files under {root} are orphans: the metadata references the same paths "
            f"under another scheme or authority ({shown})"
        )
    return OrphanReport(
        location=root,
        older_than_ms=cutoff,
        now_ms=now,
        files=tuple(sorted(orphans, key=lambda f: f.path)),
        listed=listed,
        too_recent=tuple(sorted(recent, key=lambda f: f.path)),
        referenced=referenced,
        gc_enabled=gc_enabled(metadata),
    )


__all__ = ["OrphanFile", "OrphanReport", "PrefixConflict", "find_orphans", "walk"]
