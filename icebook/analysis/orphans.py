"""Which files under a table's location its metadata reaches, and which it does not (orphans).

Writers put data files, manifests and manifest lists in place *before* they commit (spec:
"Optimistic Concurrency"); a commit that fails validation, or a writer that dies, leaves those
files behind with nothing pointing at them. They are invisible to every reader and only cost
storage until a maintenance job (Spark's ``remove_orphan_files``) deletes them.

A file is reachable when the current metadata leads to it: the current metadata file and those
of its metadata log, the Hadoop ``version-hint.text``, the manifest list of every snapshot (any
branch, tag or none), every manifest those list, every data and delete file in those manifests,
and every statistics and partition-statistics file. Hidden files (names starting with ``.`` or
``_``, such as Hadoop's ``.crc`` checksums) are not table files and are left out, as Spark does.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import unquote, urlparse

import pandas as pd
import pyarrow.compute as pc

from icebook.analysis.manifests import ManifestStore
from icebook.io.fileio import FileIO
from icebook.spec.filenames import base_name
from icebook.spec.manifest import ManifestFile
from icebook.spec.metadata import TableMetadata

VERSION_HINT = "version-hint.text"


class TableLike(Protocol):
    metadata: TableMetadata
    metadata_location: str
    fileio: FileIO
    store: ManifestStore


def normalize(location: str) -> str:
    """A location compared by path: ``file:/x``, ``file:///x`` and ``/x`` are the same file, and so
    is a local path reached through a symbolic link."""
    if location.startswith("file:"):
        location = unquote(urlparse(location).path) or location[len("file:") :]
    return os.path.realpath(location) if location.startswith("/") else location


@dataclass(frozen=True, slots=True, kw_only=True)
class ReachableFiles:
    """Every file the table's current metadata reaches, by kind (normalized locations)."""

    metadata_files: frozenset[str]
    manifest_lists: frozenset[str]
    manifests: frozenset[str]
    content_files: frozenset[str]
    """Data files, delete files and deletion-vector Puffin files."""
    statistics_files: frozenset[str]

    def all(self) -> frozenset[str]:
        return self.metadata_files | self.manifest_lists | self.manifests | self.content_files | self.statistics_files

    def kind_of(self, location: str) -> str | None:
        path = normalize(location)
        for kind, files in (
            ("metadata", self.metadata_files),
            ("manifest list", self.manifest_lists),
            ("manifest", self.manifests),
            ("data or delete file", self.content_files),
            ("statistics", self.statistics_files),
        ):
            if path in files:
                return kind
        return None


def reachable_files(table: TableLike) -> ReachableFiles:
    """What the current metadata reaches (reads every manifest of every snapshot once)."""
    metadata = table.metadata
    metadata_files = {normalize(table.metadata_location)}
    metadata_files |= {normalize(e.metadata_file) for e in metadata.metadata_log}
    metadata_dir = normalize(table.metadata_location).rsplit("/", 1)[0]
    metadata_files.add(f"{metadata_dir}/{VERSION_HINT}")
    lists: set[str] = set()
    manifests: dict[str, ManifestFile] = {}
    for snapshot in metadata.snapshots:
        if snapshot.manifest_list is None:
            continue
        lists.add(normalize(snapshot.manifest_list))
        for manifest in table.store.manifest_list(snapshot):
            manifests.setdefault(normalize(manifest.manifest_path), manifest)
    content: set[str] = set()
    for entries in table.store.many_entries(list(manifests.values()), progress=False):
        content.update(normalize(p) for p in pc.unique(entries.column("file_path")).to_pylist() if p)
    statistics = {normalize(s.statistics_path) for s in metadata.statistics}
    statistics |= {normalize(s.statistics_path) for s in metadata.partition_statistics}
    return ReachableFiles(
        metadata_files=frozenset(metadata_files),
        manifest_lists=frozenset(lists),
        manifests=frozenset(manifests),
        content_files=frozenset(content),
        statistics_files=frozenset(statistics),
    )


def _walk(fileio: FileIO, directory: str) -> Iterator[tuple[str, int]]:
    for info in fileio.list_dir(directory):
        if base_name(info.path).startswith((".", "_")):
            continue
        if info.is_dir:
            yield from _walk(fileio, info.path)
        else:
            yield info.path, info.size


def orphan_files(table: TableLike) -> pd.DataFrame:
    """Files under the table's location that its metadata does not reach, with their sizes.

    Reads only: listing the table's directory and its manifests. Columns: ``file_path``,
    ``file_size_in_bytes``, ``folder`` (``data`` or ``metadata``, relative to the table location).
    """
    reachable = reachable_files(table).all()
    root = normalize(table.metadata.location).rstrip("/")
    rows = [
        {
            "file_path": path,
            "file_size_in_bytes": size,
            "folder": normalize(path)[len(root) + 1 :].split("/", 1)[0] if normalize(path).startswith(root) else "",
        }
        for path, size in _walk(table.fileio, table.metadata.location)
        if normalize(path) not in reachable
    ]
    return pd.DataFrame(rows, columns=["file_path", "file_size_in_bytes", "folder"]).sort_values(
        "file_path", ignore_index=True
    )
