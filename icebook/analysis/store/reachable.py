"""The files a set of snapshots reaches: manifest lists, manifests, live data and delete files, and
statistics files. Expiring snapshots deletes what only expired snapshots reach; a file under the
table location that nothing reaches is an orphan.

The reference implementation counts a content file as reachable when a manifest of a snapshot lists
it as ADDED or EXISTING; a DELETED entry only records a removal and keeps nothing alive.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass

import pyarrow as pa

from icebook.analysis.store.entries import Entries
from icebook.analysis.store.manifests import ManifestStore, parallel_map
from icebook.io.worker_pool import SETTINGS
from icebook.spec.manifest import FileKind, ManifestFile
from icebook.spec.metadata import TableMetadata
from icebook.spec.snapshots import PartitionStatisticsFile, Snapshot, StatisticsFile

REACH_COLUMNS = ("status", "content", "file_path", "file_size_in_bytes")
"""The entry columns reachability reads."""


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


def live_files(entries: pa.Table) -> pa.Table:
    """The live (ADDED or EXISTING) content files among one manifest's entries, as columns ``path``,
    ``kind`` (a ``FileKind`` value) and ``size``."""
    live = Entries(entries).alive()
    return pa.table(
        {
            "path": live.column("file_path"),
            "kind": live.kinds(),
            "size": live.column("file_size_in_bytes").cast(pa.int64()),
        }
    )


def reach_tables(
    metadata: TableMetadata,
    store: ManifestStore,
    snapshot_ids: Collection[int] | None = None,
    *,
    skip_entries: Collection[str] = (),
    progress: bool = False,
    keep: bool = False,
) -> Iterator[tuple[ManifestFile | None, pa.Table]]:
    """What ``snapshot_ids`` (every valid snapshot when None) reach, as ``live_files`` tables: each
    manifest's live content files with the manifest (a few manifests read at a time, none kept), then
    (with None) the manifests, manifest lists and statistics files. ``skip_entries``: manifest paths
    whose entries are not read (the caller has them); the manifests themselves are still listed.
    ``keep``: the store keeps the entries it reads (``store.entries``)."""
    snapshots = snapshots_by_id(metadata, snapshot_ids)
    manifests = unique_manifests(store, snapshots)
    to_read = [m for m in manifests if m.manifest_path not in skip_entries]
    step = 2 * max(1, SETTINGS.workers)
    for start in range(0, len(to_read), step):
        batch = to_read[start : start + step]
        tables = parallel_map(
            lambda m: live_files(store.entries(m, REACH_COLUMNS, keep=keep)),
            batch,
            progress=progress,
            label="manifests",
        )
        yield from zip(batch, tables, strict=True)
    rows: list[tuple[str, FileKind, int | None]] = [
        (m.manifest_path, FileKind.MANIFEST, m.manifest_length) for m in manifests
    ]
    rows += [(s.manifest_list, FileKind.MANIFEST_LIST, None) for s in snapshots if s.manifest_list is not None]
    ids = {s.snapshot_id for s in snapshots} if snapshot_ids is not None else None
    registered: list[StatisticsFile | PartitionStatisticsFile] = [*metadata.statistics, *metadata.partition_statistics]
    rows += [
        (f.statistics_path, FileKind.STATISTICS, f.file_size_in_bytes)
        for f in registered
        if ids is None or f.snapshot_id in ids
    ]
    yield None, files_table(rows)


def files_table(rows: Sequence[tuple[str, FileKind, int | None]]) -> pa.Table:
    """(path, kind, size) rows as a ``live_files`` table."""
    return pa.table(
        {
            "path": pa.array([r[0] for r in rows], pa.string()),
            "kind": pa.array([r[1].value for r in rows], pa.string()),
            "size": pa.array([r[2] for r in rows], pa.int64()),
        }
    )


def reachable(
    metadata: TableMetadata, store: ManifestStore, snapshot_ids: Collection[int] | None = None, *, progress: bool = True
) -> Reachable:
    """Manifest lists, manifests, live content files and statistics files of ``snapshot_ids``
    (every valid snapshot when None), one object per file. The store keeps the entries it reads: a
    before/after diff reads the table as it was after a procedure deleted some of them."""
    files: dict[tuple[str, FileKind], TableFile] = {}
    for _, table in reach_tables(metadata, store, snapshot_ids, progress=progress, keep=True):
        for path, kind, size in zip(*(table.column(c).to_pylist() for c in ("path", "kind", "size")), strict=True):
            key = (path, FileKind(kind))
            if key not in files:
                files[key] = TableFile(path=path, kind=key[1], size_in_bytes=size)
    return Reachable(files=files)


__all__ = [
    "REACH_COLUMNS",
    "Reachable",
    "TableFile",
    "files_table",
    "live_files",
    "reach_tables",
    "reachable",
    "snapshots_by_id",
    "unique_manifests",
]
