"""The files a set of snapshots reaches: manifest lists, manifests, live data and delete files, and
statistics files. Expiring snapshots deletes what only expired snapshots reach; a file under the
table location that nothing reaches is an orphan.

The reference implementation counts a content file as reachable when a manifest of a snapshot lists
it as ADDED or EXISTING; a DELETED entry only records a removal and keeps nothing alive.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from icebook.analysis.store.manifests import ManifestStore
from icebook.spec.manifest import ManifestFile
from icebook.spec.metadata import TableMetadata
from icebook.spec.snapshots import PartitionStatisticsFile, Snapshot, StatisticsFile


class FileKind(StrEnum):
    """What a file is to the table, named as the reference implementation counts deletions."""

    DATA = "data file"
    POSITION_DELETES = "position delete file"
    EQUALITY_DELETES = "equality delete file"
    MANIFEST = "manifest"
    MANIFEST_LIST = "manifest list"
    STATISTICS = "statistics file"
    METADATA = "metadata file"
    VERSION_HINT = "version hint"


CONTENT_KINDS = {0: FileKind.DATA, 1: FileKind.POSITION_DELETES, 2: FileKind.EQUALITY_DELETES}


@dataclass(frozen=True, slots=True, kw_only=True)
class TableFile:
    """One file a table's metadata points at."""

    path: str
    kind: FileKind
    size_in_bytes: int | None
    """As the metadata records it (file_size_in_bytes, manifest_length, file-size-in-bytes); None for
    manifest lists and metadata files, whose size no metadata records."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reachable:
    """The files reached from some snapshots, keyed by (path, kind) like the reference implementation."""

    files: dict[tuple[str, FileKind], TableFile]

    def __contains__(self, key: object) -> bool:
        return key in self.files

    def paths(self) -> set[str]:
        return {path for path, _ in self.files}

    def minus(self, other: Reachable) -> list[TableFile]:
        """Files reached here and not from ``other``, in a stable order (kind, then path)."""
        gone = [f for key, f in self.files.items() if key not in other.files]
        return sorted(gone, key=lambda f: (list(FileKind).index(f.kind), f.path))


def snapshots_by_id(metadata: TableMetadata, ids: Collection[int] | None) -> list[Snapshot]:
    if ids is None:
        return list(metadata.snapshots)
    wanted = set(ids)
    return [s for s in metadata.snapshots if s.snapshot_id in wanted]


def unique_manifests(store: ManifestStore, snapshots: Iterable[Snapshot]) -> list[ManifestFile]:
    """Every manifest listed by any of ``snapshots``, once per path (first listing wins)."""
    seen: dict[str, ManifestFile] = {}
    for snapshot in snapshots:
        if snapshot.manifest_list is None:
            continue
        for m in store.manifest_list(snapshot):
            seen.setdefault(m.manifest_path, m)
    return list(seen.values())


def reachable(
    metadata: TableMetadata, store: ManifestStore, snapshot_ids: Collection[int] | None = None, *, progress: bool = True
) -> Reachable:
    """Manifest lists, manifests, live content files and statistics files of ``snapshot_ids``
    (every valid snapshot when None)."""
    snapshots = snapshots_by_id(metadata, snapshot_ids)
    files: dict[tuple[str, FileKind], TableFile] = {}

    def add(path: str, kind: FileKind, size: int | None) -> None:
        files.setdefault((path, kind), TableFile(path=path, kind=kind, size_in_bytes=size))

    manifests = unique_manifests(store, snapshots)
    tables = store.many_entries(manifests, progress=progress)
    for table in tables:
        live = table.column("status").to_numpy() != 2
        if not live.any():
            continue
        paths = np.asarray(table.column("file_path").to_numpy(zero_copy_only=False))[live]
        contents = table.column("content").to_numpy()[live]
        sizes = table.column("file_size_in_bytes").to_numpy()[live]
        for path, content, size in zip(paths.tolist(), contents.tolist(), sizes.tolist(), strict=True):
            add(path, CONTENT_KINDS.get(int(content), FileKind.DATA), int(size))
    for m in manifests:
        add(m.manifest_path, FileKind.MANIFEST, m.manifest_length)
    for snapshot in snapshots:
        if snapshot.manifest_list is not None:
            add(snapshot.manifest_list, FileKind.MANIFEST_LIST, None)
    ids = {s.snapshot_id for s in snapshots} if snapshot_ids is not None else None
    registered: list[StatisticsFile | PartitionStatisticsFile] = [*metadata.statistics, *metadata.partition_statistics]
    for stats in registered:
        if ids is None or stats.snapshot_id in ids:
            add(stats.statistics_path, FileKind.STATISTICS, stats.file_size_in_bytes)
    return Reachable(files=files)


__all__ = ["CONTENT_KINDS", "FileKind", "Reachable", "TableFile", "reachable", "snapshots_by_id", "unique_manifests"]
