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

import threading
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlparse

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis._frames import frame, utc_timestamp
from icebook.analysis.maintenance.expiry_rules import clock_ms, gc_enabled
from icebook.analysis.store.manifests import ManifestStore
from icebook.analysis.store.reachable import files_table, listed_manifests, reach_tables, snapshots_by_id
from icebook.analysis.store.table_like import TableLike
from icebook.analysis.string_lookup import StringLookup
from icebook.errors import IcebookError
from icebook.io.fileio import FileInfo, FileIO
from icebook.spec.manifest import FileKind, ManifestFile
from icebook.spec.metadata import TableMetadata
from icebook.text import DAY_MS

DEFAULT_AGE_MS = 3 * DAY_MS
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
                    "modified_at": utc_timestamp(f.modified_ms),
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


def walk(
    fileio: FileIO, location: str, partition_prefixes: tuple[str, ...] = (), *, hidden: bool = False
) -> Iterator[FileInfo]:
    """Every non-hidden file under ``location``, depth first (hidden directories are not entered); with
    ``hidden``, every file."""
    stack = [location]
    while stack:
        directory = stack.pop()
        for child in fileio.list_dir(directory):
            name = child.path.rstrip("/").rsplit("/", 1)[-1]
            if not hidden and _hidden(name, partition_prefixes):
                continue
            if child.is_dir:
                stack.append(child.path)
            else:
                yield child


def _key(path: str) -> tuple[str | None, str | None, str]:
    """(scheme, authority, path) of one path as the procedure compares them (``path_keys`` sends here
    only the URL forms a plain split cannot read)."""
    parsed = urlparse(path)
    if not parsed.scheme or len(parsed.scheme) == 1:  # a plain path (or a Windows drive letter)
        return None, None, path
    scheme = _EQUAL_SCHEMES.get(parsed.scheme, parsed.scheme)
    return scheme, parsed.netloc or None, parsed.path


_ODD = r"[?#;\[\]\t\r\n]|^[\x00-\x20]"
"""Paths that ``path_keys`` reads with ``urlparse`` (whose path may not end where the text does)."""


def _last_names(paths: pa.Array) -> pa.Array:
    """What follows the last ``/`` of each path (the whole path where there is none; null for null)."""
    parts = pc.split_pattern(pc.fill_null(paths, ""), "/", max_splits=1, reverse=True)
    last = np.asarray(parts.offsets.to_numpy(), dtype=np.int64)[1:] - 1
    return pc.if_else(pc.is_valid(paths), parts.flatten().take(pa.array(last)), pa.scalar(None, pa.string()))


def path_keys(paths: pa.Array) -> tuple[pa.Array, pa.Array, pa.Array]:
    """(scheme, authority, path) of each path as the procedure compares them, column-wise: a plain path
    (no scheme, or a one-letter Windows drive) is itself with neither; else the scheme lower-cased (s3a
    and s3n as s3), the authority after ``//`` (null when empty) and the rest. Paths with a query,
    fragment, parameters, brackets or control characters are read by ``urlparse`` one at a time."""
    parsed = pc.extract_regex(paths, r"^(?P<scheme>[A-Za-z][A-Za-z0-9+.\-]+):(?P<rest>.*)$")
    rest = pc.struct_field(parsed, "rest")
    scheme = pc.replace_substring_regex(pc.utf8_lower(pc.struct_field(parsed, "scheme")), "^s3[an]$", "s3")
    split = pc.extract_regex(rest, r"^//(?P<netloc>[^/?#]*)(?P<path>.*)$")
    has_netloc = pc.is_valid(split)
    netloc = pc.if_else(has_netloc, pc.struct_field(split, "netloc"), pa.scalar(None, pa.string()))
    authority = pc.if_else(pc.equal(netloc, ""), pa.scalar(None, pa.string()), netloc)
    path = pc.if_else(has_netloc, pc.struct_field(split, "path"), rest)
    plain = pc.is_null(parsed)
    path = pc.if_else(plain, paths, path)
    odd = np.flatnonzero(np.asarray(pc.match_substring_regex(paths, _ODD).to_numpy(zero_copy_only=False)))
    if len(odd):
        keys = [_key(p) for p in paths.take(pa.array(odd)).to_pylist()]
        mask = np.zeros(len(paths), dtype=bool)
        mask[odd] = True
        picked = pa.array(mask)

        def patch(column: pa.Array, values: list[str | None]) -> pa.Array:
            filled = np.full(len(paths), None, dtype=object)
            filled[odd] = values
            return pc.if_else(picked, pa.array(filled, pa.string()), column)

        scheme = patch(scheme, [k[0] for k in keys])
        authority = patch(authority, [k[1] for k in keys])
        path = patch(path, [k[2] for k in keys])
    return scheme, authority, path


def find_orphans(
    table: TableLike,
    *,
    older_than_ms: int | None = None,
    location: str | None = None,
    now_ms: int | None = None,
    progress: bool = True,
) -> OrphanReport:
    """Files under ``location`` (default: the table location) that the table does not reference and
    that were last modified before ``older_than_ms`` (default: three days ago)."""
    pending = PendingOrphans(
        table.metadata,
        table.metadata_location,
        table.store,
        table.fileio,
        older_than_ms=older_than_ms,
        location=location,
        now_ms=now_ms,
    )
    return pending.report(progress=progress)


class PendingOrphans:
    """An orphan search under way: the location listed (held column-wise), and everything the table
    references (content files, manifests and manifest lists of every snapshot, the current metadata
    file and its log, the version hint, statistics files) marked against it, a manifest at a time. A
    listed file is referenced when its path (without scheme and authority) is; the first reference, in
    the order snapshots list their manifests, decides the scheme and authority the conflict check
    compares, whatever order manifests arrive in. ``visit`` takes a manifest's live files read by
    someone else (the health report's pass), so that it is not read again."""

    def __init__(
        self,
        metadata: TableMetadata,
        metadata_location: str,
        store: ManifestStore,
        fileio: FileIO,
        *,
        older_than_ms: int | None = None,
        location: str | None = None,
        now_ms: int | None = None,
    ) -> None:
        self._metadata, self._metadata_location, self._store = metadata, metadata_location, store
        self.now = clock_ms(now_ms)
        self.cutoff = self.now - DEFAULT_AGE_MS if older_than_ms is None else int(older_than_ms)
        self.root = location or metadata.location
        prefixes = tuple(
            f"{pf.name}="
            for spec in metadata.partition_specs.values()
            for pf in spec.fields
            if pf.name.startswith(("_", "."))
        )
        self._listing = list(walk(fileio, self.root, prefixes))
        listed = pa.array([info.path for info in self._listing], pa.string())
        self._scheme, self._authority, self._path = path_keys(listed)
        # Indexed once: each manifest's references are looked up in them, not they hashed for each manifest.
        self._names = StringLookup(pc.unique(_last_names(self._path)))
        self._paths = StringLookup(self._path)
        n = len(listed)
        # Per listed file: the position of its first reference, and that reference's scheme and authority.
        self._first = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
        self._ref_scheme = np.full(n, None, dtype=object)
        self._ref_authority = np.full(n, None, dtype=object)
        self._listed = listed_manifests(store, snapshots_by_id(metadata, None))
        self._positions = {path: i for i, path in enumerate(self._listed.paths())}
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def visit(self, manifest: ManifestFile, live: pa.Table) -> None:
        """Mark what one manifest of the table references, from its live files."""
        position = self._positions.get(manifest.manifest_path)
        with self._lock:
            if position is None or manifest.manifest_path in self._seen:
                return
            self._seen.add(manifest.manifest_path)
        self._mark(position, live)

    def _mark(self, position: int, reached: pa.Table) -> None:
        if not len(self._first) or not reached.num_rows:
            return
        paths = reached.column("path").combine_chunks()
        # Equal paths end in equal names: only the references whose last name some listed file has can be
        # listed, and only those are split into scheme, authority and path.
        named = pc.or_(pa.array(self._names.contains(_last_names(paths))), pc.match_substring_regex(paths, _ODD))
        if named.false_count:
            paths = paths.filter(named)
            if not len(paths):
                return
        scheme, authority, path = path_keys(paths)
        references, rows = self._paths.matches(path)
        if not len(rows):
            return
        # Each listed file's first reference in this manifest (pairs come in reference order).
        rows, first = np.unique(rows, return_index=True)
        index = references[first]
        order = (position << 32) + index
        with self._lock:
            better = order < self._first[rows]
            rows, index = rows[better], pa.array(index[better])
            self._first[rows] = order[better]
            self._ref_scheme[rows] = scheme.take(index).to_pylist()
            self._ref_authority[rows] = authority.take(index).to_pylist()

    def report(self, *, progress: bool = False) -> OrphanReport:
        """The report, once the manifests not yet visited are read."""
        with self._lock:
            seen = set(self._seen)
        tail = len(self._positions)
        for manifest, reached in reach_tables(
            self._metadata, self._store, None, skip_entries=seen, progress=progress, listed=self._listed
        ):
            self._mark(tail if manifest is None else self._positions[manifest.manifest_path], reached)
        hint = self._metadata.location.rstrip("/") + "/metadata/" + VERSION_HINT
        metadata_files = [
            (self._metadata_location, FileKind.METADATA, None),
            *((e.metadata_file, FileKind.METADATA, None) for e in self._metadata.metadata_log),
            (hint, FileKind.VERSION_HINT, None),
        ]
        self._mark(tail + 1, files_table(metadata_files))
        matched = self._first < np.iinfo(np.int64).max
        conflicts: set[tuple[str | None, str | None]] = set()
        for row in np.flatnonzero(matched).tolist():
            v_scheme, v_authority = self._ref_scheme[row], self._ref_authority[row]
            scheme, authority = self._scheme[row].as_py(), self._authority[row].as_py()
            if v_scheme and scheme and v_scheme.lower() != scheme.lower():
                conflicts.add((v_scheme, scheme))
            if v_authority and v_authority != authority:
                conflicts.add((v_authority, authority))
        if conflicts:
            shown = ", ".join(f"{a} vs {b}" for a, b in sorted(conflicts, key=str))
            raise PrefixConflict(
                f"cannot tell whether some files under {self.root} are orphans: the metadata references the same "
                f"paths under another scheme or authority ({shown})"
            )
        orphans: list[OrphanFile] = []
        recent: list[OrphanFile] = []
        for row in np.flatnonzero(~matched).tolist():
            info = self._listing[row]
            orphan = OrphanFile(path=info.path, size_in_bytes=info.size, modified_ms=info.mtime_ms)
            if info.mtime_ms is not None and info.mtime_ms < self.cutoff:
                orphans.append(orphan)
            else:
                recent.append(orphan)
        return OrphanReport(
            location=self.root,
            older_than_ms=self.cutoff,
            now_ms=self.now,
            files=tuple(sorted(orphans, key=lambda f: f.path)),
            listed=len(self._listing),
            too_recent=tuple(sorted(recent, key=lambda f: f.path)),
            referenced=int(matched.sum()),
            gc_enabled=gc_enabled(self._metadata),
        )


__all__ = ["OrphanFile", "OrphanReport", "PendingOrphans", "PrefixConflict", "find_orphans", "path_keys", "walk"]
