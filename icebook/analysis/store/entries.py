"""A typed, column-wise view over one manifest's decoded entries (a ``ManifestStore.entries`` table).

The rules every streamed analysis reads entries by live here once, on the spec's enums: which entries
are alive (spec "Manifests": a DELETED entry only records a removal), what kind of file each is, the
size a file counts for (a deletion vector counts its blob, not the Puffin file it shares: spec
"Deletion Vectors", as the reference implementation's ``total-files-size`` sums it) and the partition
label. Masks and numbers come back as NumPy arrays (nulls filled as the spec reads them), columns as
Arrow.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icebook.spec.manifest import EntryStatus, FileContent, FileKind, ManifestContent, ManifestFile

if TYPE_CHECKING:
    from icebook.analysis.store.manifests import ManifestStore
    from icebook.spec.snapshots import Snapshot

UNPARTITIONED = "unpartitioned"


@cache
def _content_kinds() -> pa.Array:
    # Built on first use, not at import: pa.array imports pandas, which a warm Arrow listing never needs.
    return pa.array([FileKind.of_content(c).value for c in FileContent], pa.string())


def partition_label(names: Sequence[str], values: Sequence[Any]) -> str:
    """A partition as the reference implementation prints it: ``name=value`` joined by ``/``
    (``region=us/ts_day=2024-01-05``), ``unpartitioned`` for a spec with no fields. ``values`` are
    already text or the values whose ``str`` is the text."""
    return "/".join(f"{n}={v}" for n, v in zip(names, values, strict=False)) or UNPARTITIONED


def counted_size(file_size_in_bytes: int, content_size_in_bytes: int | None) -> int:
    """The bytes a file counts for: a deletion vector's blob (``content_size_in_bytes``), else the file."""
    return file_size_in_bytes if content_size_in_bytes is None else content_size_in_bytes


def _ints(column: pa.ChunkedArray | pa.Array, null: int) -> np.ndarray:
    return np.asarray(pc.fill_null(column, null).to_numpy(zero_copy_only=False), dtype=np.int64)


@dataclass(frozen=True, slots=True)
class Entries:
    """One manifest's entries, column-wise (any columns of the entry table; each rule needs its own)."""

    table: pa.Table

    @property
    def num_rows(self) -> int:
        return self.table.num_rows

    def column(self, name: str) -> pa.ChunkedArray:
        return self.table.column(name)

    # ------------------------------------------------------------------ status

    def status_is(self, status: EntryStatus) -> np.ndarray:
        """Entries with ``status`` (a null status is none of them)."""
        return _ints(self.table.column("status"), -1) == int(status)

    def alive_mask(self) -> np.ndarray:
        """ADDED or EXISTING entries (``EntryStatus.is_alive``): every entry but the DELETED ones."""
        return ~self.status_is(EntryStatus.DELETED)

    def alive(self, content: FileContent | None = None) -> Entries:
        """Only the entries alive, and of ``content`` files when given, in one filter; the same table when
        all are kept (filtering copies every nested column)."""
        keep = self.alive_mask()
        if content is not None:
            keep &= self.content_is(content)
        return self if keep.all() else Entries(self.table.filter(pa.array(keep)))

    # ------------------------------------------------------------------ content

    def content(self) -> np.ndarray:
        """``data_file.content`` codes; null (a v1 file) reads as data."""
        return _ints(self.table.column("content"), int(FileContent.DATA))

    def content_is(self, content: FileContent) -> np.ndarray:
        return self.content() == int(content)

    def kinds(self) -> pa.Array:
        """Each entry's ``FileKind`` value as the reference implementation counts a file it deletes (a
        deletion vector as a position delete file; an unknown code as data)."""
        content, kinds = self.content(), _content_kinds()
        known = (content >= 0) & (content < len(kinds))
        return kinds.take(pa.array(np.where(known, content, 0)))

    # ------------------------------------------------------------------ numbers

    def records(self) -> np.ndarray:
        return _ints(self.table.column("record_count"), 0)

    def sizes(self) -> pa.ChunkedArray:
        """The bytes each file counts for (``counted_size``), as an Arrow column."""
        return pc.coalesce(self.table.column("content_size_in_bytes"), self.table.column("file_size_in_bytes"))

    def size_values(self) -> np.ndarray:
        """``sizes`` as int64, a null size read as 0."""
        return _ints(self.sizes(), 0)


def live_data_entries(
    store: ManifestStore, snapshot: Snapshot, columns: Collection[str]
) -> Iterator[tuple[ManifestFile, Entries]]:
    """Each data manifest of ``snapshot`` with its live data files' entries (``columns`` of the entry table,
    ``status`` and ``content`` among them)."""
    for manifest in store.manifest_list(snapshot):
        if manifest.effective_content == ManifestContent.DATA:
            yield manifest, Entries(store.entries(manifest, columns)).alive(FileContent.DATA)


def added_entries(
    store: ManifestStore, snapshot: Snapshot, columns: Collection[str]
) -> Iterator[tuple[ManifestFile, pa.Table]]:
    """Each manifest ``snapshot`` wrote, with the entries it ADDED (``columns`` of the entry table). A
    manifest carried over from an earlier commit is passed over: the store checks that an ADDED entry
    names the snapshot that wrote its manifest, so the files a commit added are all in its own."""
    for manifest in store.manifest_list(snapshot):
        if manifest.added_snapshot_id == snapshot.snapshot_id:
            entries = Entries(store.entries(manifest, (*columns, "status")))
            yield manifest, entries.table.filter(pa.array(entries.status_is(EntryStatus.ADDED)))


__all__ = ["UNPARTITIONED", "Entries", "added_entries", "counted_size", "live_data_entries", "partition_label"]
