"""The files a set of snapshots reaches: manifest lists, manifests, live data and delete files, and
statistics files. Expiring snapshots deletes what only expired snapshots reach; a file under the
table location that nothing reaches is an orphan.

The reference implementation counts a content file as reachable when a manifest of a snapshot lists
it as ADDED or EXISTING; a DELETED entry only records a removal and keeps nothing alive.

A table with a long history lists the same manifests again in every snapshot's list: 400 lists of a few
thousand manifests each are over a million listings of a few thousand manifests. So the lists are read
column-wise, only each manifest's path and length (``listed_manifests``), and a ``ManifestFile`` is built
only for a manifest whose entries are read, from the list that first names it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.store.entries import Entries
from icebook.analysis.store.manifests import ManifestStore, parallel_map
from icebook.io.avro_list import manifest_after_snapshot
from icebook.io.list_columns import read_list_columns
from icebook.io.worker_pool import SETTINGS
from icebook.spec.manifest import FileKind, ManifestFile
from icebook.spec.metadata import TableMetadata
from icebook.spec.snapshots import PartitionStatisticsFile, Snapshot, StatisticsFile, snapshot_sequence_number

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


@dataclass(frozen=True, slots=True)
class ListedManifests:
    """Every manifest some snapshots list, once per path, the first listing winning (``unique_manifests``'
    order), as columns: ``path``, ``length``, and where it is first listed (``list``: an index into
    ``snapshots``; ``position``: its row in that list)."""

    snapshots: tuple[Snapshot, ...]
    table: pa.Table

    def paths(self) -> list[str]:
        return [str(p) for p in self.table.column("path").to_pylist()]

    def manifest(self, store: ManifestStore, row: int) -> ManifestFile:
        """Row ``row``'s ``ManifestFile``, from the list that first names it (read whole, and kept by the store)."""
        snapshot = self.snapshots[self.table.column("list")[row].as_py()]
        return store.manifest_list(snapshot)[self.table.column("position")[row].as_py()]

    def files(self) -> pa.Table:
        """The manifests as a ``live_files`` table."""
        return pa.table(
            {
                "path": self.table.column("path").cast(pa.string()),
                "kind": pa.array([FileKind.MANIFEST.value] * self.table.num_rows, pa.string()),
                "size": self.table.column("length"),
            }
        )


def listed_manifests(
    store: ManifestStore, snapshots: Iterable[Snapshot], *, keep: bool = False, progress: bool = False
) -> ListedManifests:
    """The manifests ``snapshots`` list (``unique_manifests``) with no object per listing: the lists the
    store holds are taken from it, the others read column-wise (none kept), with the checks of a list read
    whole that bear on these fields: a path and a non-negative length in every record, and no manifest
    added after the snapshot whose list names it. ``keep``: every list is read whole and kept by the store
    instead, as a procedure's before/after diff needs (the procedure deletes some of them)."""
    with_list = tuple(s for s in snapshots if s.manifest_list is not None)
    held = [store.manifest_list(s) if keep else store.held_manifest_list(s) for s in with_list]
    unread = np.array([i for i, h in enumerate(held) if h is None], dtype=np.int64)
    read = read_list_columns(
        store.fileio,
        [with_list[i].manifest_list or "" for i in unread.tolist()],
        names=("manifest_path", "manifest_length", "sequence_number"),
        progress=progress,
    )
    read_index = np.asarray(read.column("list_index").to_numpy(), dtype=np.int64)
    # Rows come in list order, and in file order within a list.
    read_position = np.arange(len(read_index), dtype=np.int64) - np.searchsorted(read_index, read_index, side="left")
    index, position = unread[read_index], read_position
    _check_sequence_numbers(read, index, position, with_list)
    paths: list[pa.Array] = [read.column("manifest_path").combine_chunks()]
    lengths: list[pa.Array] = [read.column("manifest_length").combine_chunks()]
    indexes, positions = [index], [position]
    for i, manifests in enumerate(held):
        if manifests is not None:
            paths.append(pa.array([m.manifest_path for m in manifests], pa.large_string()))
            lengths.append(pa.array([m.manifest_length for m in manifests], pa.int64()))
            indexes.append(np.full(len(manifests), i, dtype=np.int64))
            positions.append(np.arange(len(manifests), dtype=np.int64))
    all_index, all_position = np.concatenate(indexes), np.concatenate(positions)
    order = np.lexsort((all_position, all_index))  # back to list order, then file order
    path = pa.concat_arrays(paths).take(pa.array(order))
    rows = np.arange(0, dtype=np.int64)
    if len(order):
        codes = pc.dictionary_encode(path).indices
        _, first = np.unique(np.asarray(codes.to_numpy(zero_copy_only=False)), return_index=True)
        rows = np.sort(first)
    picked = order[rows]
    table = pa.table(
        {
            "path": path.take(pa.array(rows)),
            "length": pa.concat_arrays(lengths).take(pa.array(picked)),
            "list": pa.array(all_index[picked]),
            "position": pa.array(all_position[picked]),
        }
    )
    return ListedManifests(with_list, table)


def _check_sequence_numbers(
    read: pa.Table, index: np.ndarray, position: np.ndarray, snapshots: Sequence[Snapshot]
) -> None:
    """``read_manifest_list``'s check, column-wise: no manifest of a list added after the list's snapshot."""
    if not len(index):
        return
    limits = np.array([snapshot_sequence_number(s) for s in snapshots], dtype=np.int64)[index]
    sequence = read.column("sequence_number")
    late = pc.fill_null(pc.greater(sequence, pa.array(limits)), False)
    if not pc.any(late).as_py():
        return
    row = int(np.flatnonzero(np.asarray(late.to_numpy(zero_copy_only=False), dtype=bool))[0])
    snapshot = snapshots[int(index[row])]
    raise manifest_after_snapshot(
        snapshot.manifest_list or "",
        int(position[row]),
        sequence[row].as_py(),
        snapshot_sequence_number(snapshot),
        snapshot.snapshot_id,
    )


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
    listed: ListedManifests | None = None,
) -> Iterator[tuple[ManifestFile | None, pa.Table]]:
    """What ``snapshot_ids`` (every valid snapshot when None) reach, as ``live_files`` tables: each
    manifest's live content files with the manifest (a few manifests read at a time, none kept), then
    (with None) the manifests, manifest lists and statistics files. ``skip_entries``: manifest paths
    whose entries are not read (the caller has them); the manifests themselves are still listed.
    ``keep``: the store keeps the entries it reads (``store.entries``). ``listed``: the snapshots' manifests
    when the caller has them (``listed_manifests`` of the same snapshots), so that the lists are not read again."""
    snapshots = snapshots_by_id(metadata, snapshot_ids)
    if listed is None:
        listed = listed_manifests(store, snapshots, keep=keep, progress=progress)
    to_read = [row for row, path in enumerate(listed.paths()) if path not in skip_entries]
    step = 2 * max(1, SETTINGS.workers)
    for start in range(0, len(to_read), step):
        batch = [listed.manifest(store, row) for row in to_read[start : start + step]]
        tables = parallel_map(
            lambda m: live_files(store.entries(m, REACH_COLUMNS, keep=keep)),
            batch,
            progress=progress,
            label="manifests",
        )
        yield from zip(batch, tables, strict=True)
    rows: list[tuple[str, FileKind, int | None]] = [
        (s.manifest_list, FileKind.MANIFEST_LIST, None) for s in snapshots if s.manifest_list is not None
    ]
    ids = {s.snapshot_id for s in snapshots} if snapshot_ids is not None else None
    registered: list[StatisticsFile | PartitionStatisticsFile] = [*metadata.statistics, *metadata.partition_statistics]
    rows += [
        (f.statistics_path, FileKind.STATISTICS, f.file_size_in_bytes)
        for f in registered
        if ids is None or f.snapshot_id in ids
    ]
    yield None, pa.concat_tables([listed.files(), files_table(rows)])


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
    "ListedManifests",
    "Reachable",
    "TableFile",
    "files_table",
    "listed_manifests",
    "live_files",
    "reach_tables",
    "reachable",
    "snapshots_by_id",
    "unique_manifests",
]
