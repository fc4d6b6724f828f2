"""The DV map: each live data file with the deletion vector that applies to it (spec: "Deletion Vectors").

Which vector applies is the scan planner's rule (``analysis/scan/delete_index.py``: by
``referenced_data_file`` and data sequence numbers); each vector is then read from its Puffin file at
``content_offset``/``content_size_in_bytes`` and checked three ways: the Puffin footer has a
``deletion-vector-v1`` blob at that offset and length for the same data file, the footer's ``cardinality``
property and the manifest's ``record_count`` both equal the bitmap's count. A vector failing a check is one
``MetadataError`` naming the Puffin file and the field. A live vector that applies to no live data file is
dangling (a reader ignores it; maintenance removes it).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from icebook.analysis._frames import frame
from icebook.analysis.scan.plan_items import ScanFile
from icebook.analysis.scan.planner import plan_scan
from icebook.analysis.store.manifests import read_ahead
from icebook.analysis.store.table_like import TableLike
from icebook.analysis.v3.findings import Severity, V3Finding
from icebook.analysis.v3.ranges import position_ranges, ranges_text
from icebook.errors import MetadataError
from icebook.io.puffin import PuffinFile, read_deletion_vector_blob, read_puffin_footer
from icebook.spec.manifest import FileContent
from icebook.spec.snapshots import Snapshot

RANGES_SHOWN = 50
"""Ranges written out in text before the rest are counted ("... (N more ranges)")."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeletionVector:
    """One deletion vector: where its blob lies, what it deletes, and who wrote it."""

    puffin_path: str
    content_offset: int
    content_size_in_bytes: int
    cardinality: int
    """Deleted rows: the manifest's ``record_count``, equal to the footer's ``cardinality`` and the bitmap."""
    referenced_data_file: str
    sequence_number: int
    snapshot_id: int | None
    """The snapshot that added the vector."""
    manifest_path: str
    ranges: tuple[tuple[int, int], ...]
    """Deleted positions as closed ranges."""

    def ranges_text(self, limit: int | None = RANGES_SHOWN) -> str:
        return ranges_text(self.ranges, limit=limit)


@dataclass(frozen=True, slots=True, kw_only=True)
class DataFileVector:
    """A live data file and the deletes that apply to it."""

    file_path: str
    partition: str
    record_count: int
    sequence_number: int
    vector: DeletionVector | None
    position_delete_files: tuple[str, ...] = ()
    """v2 position delete files that still apply (a table upgraded to v3 keeps them until rewritten)."""

    @property
    def live_rows(self) -> int:
        """Rows a reader returns after the vector (position delete files not counted)."""
        return self.record_count - (self.vector.cardinality if self.vector else 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class DeletionVectorMap:
    """``t.v3(at).deletion_vectors``: every live data file of one snapshot and its deletion vector."""

    location: str
    snapshot_id: int | None
    files: tuple[DataFileVector, ...]
    dangling: tuple[DeletionVector, ...]
    """Live vectors no live data file takes (its data file is gone, or newer than the vector)."""
    findings: tuple[V3Finding, ...] = ()

    @property
    def vectors(self) -> tuple[DeletionVector, ...]:
        return tuple(f.vector for f in self.files if f.vector is not None)

    def to_pandas(self) -> pd.DataFrame:
        rows = [
            {
                "file_path": f.file_path,
                "partition": f.partition,
                "record_count": f.record_count,
                "puffin_path": f.vector.puffin_path if f.vector else None,
                "content_offset": f.vector.content_offset if f.vector else None,
                "content_size_in_bytes": f.vector.content_size_in_bytes if f.vector else None,
                "cardinality": f.vector.cardinality if f.vector else None,
                "deleted_positions": f.vector.ranges_text(None) if f.vector else None,
                "live_rows": f.live_rows,
                "position_delete_files": len(f.position_delete_files),
            }
            for f in self.files
        ]
        return frame(rows, _COLUMNS, ints=("content_offset", "content_size_in_bytes", "cardinality"))

    def __repr__(self) -> str:
        return (
            f"<DeletionVectorMap snapshot {self.snapshot_id}: {len(self.files)} data files, "
            f"{len(self.vectors)} with a deletion vector, {len(self.dangling)} dangling>"
        )


_COLUMNS = (
    "file_path",
    "partition",
    "record_count",
    "puffin_path",
    "content_offset",
    "content_size_in_bytes",
    "cardinality",
    "deleted_positions",
    "live_rows",
    "position_delete_files",
)


class _Footers:
    """Puffin footers read once per file (one Puffin file often holds many vectors)."""

    def __init__(self, table: TableLike) -> None:
        self._table = table
        self._read: dict[str, PuffinFile] = {}

    def get(self, path: str) -> PuffinFile:
        if path not in self._read:
            self._read[path] = read_puffin_footer(self._table.fileio, path)
        return self._read[path]


def read_vector(table: TableLike, dv: ScanFile, footers: _Footers | None = None) -> DeletionVector:
    """The vector of one deletion-vector delete file, its blob checked against the footer and the manifest."""
    path = dv.file_path
    offset, size = dv.content_offset, dv.content_size_in_bytes
    if offset is None or size is None:
        raise MetadataError(
            dv.manifest_path,
            "content_offset",
            f"deletion vector in {path} has no content_offset/content_size_in_bytes",
            kind="manifest",
        )
    footer = (footers or _Footers(table)).get(path)
    blob = next((b for b in footer.blobs if b.offset == offset), None)
    if blob is None:
        raise MetadataError(
            path,
            "content_offset",
            f"no blob starts at offset {offset} (manifest {dv.manifest_path}); blobs start at "
            f"{', '.join(str(b.offset) for b in footer.blobs) or 'no offset'}",
            kind="puffin file",
        )
    if blob.length != size:
        raise MetadataError(
            path,
            "content_size_in_bytes",
            f"the manifest {dv.manifest_path} records {size} bytes at offset {offset}, the footer's blob {blob.length}",
            kind="puffin file",
        )
    referenced = blob.properties.get("referenced-data-file")
    if dv.referenced_data_file is not None and referenced != dv.referenced_data_file:
        raise MetadataError(
            path,
            "properties.referenced-data-file",
            f"the blob at offset {offset} names {referenced}, the manifest {dv.manifest_path} "
            f"names {dv.referenced_data_file}",
            kind="puffin file",
        )
    positions = read_deletion_vector_blob(table.fileio, path, blob)  # checks the footer's cardinality
    if len(positions) != dv.record_count:
        raise MetadataError(
            path,
            "record_count",
            f"the manifest {dv.manifest_path} records {dv.record_count} deleted rows for the vector at offset "
            f"{offset}, its bitmap holds {len(positions)}",
            kind="puffin file",
        )
    return DeletionVector(
        puffin_path=path,
        content_offset=offset,
        content_size_in_bytes=size,
        cardinality=len(positions),
        referenced_data_file=dv.referenced_data_file or referenced or "",
        sequence_number=dv.sequence_number,
        snapshot_id=dv.snapshot_id,
        manifest_path=dv.manifest_path,
        ranges=position_ranges(positions),
    )


def deletion_vector_map(table: TableLike, snapshot: Snapshot | None) -> DeletionVectorMap:
    """The DV map of ``snapshot`` (None: a table with no snapshot, an empty map)."""
    if snapshot is None:
        return DeletionVectorMap(location=table.location, snapshot_id=None, files=(), dangling=())
    plan = plan_scan(table, snapshot)
    footers = _Footers(table)
    tasks = list(plan.tasks)
    chosen: list[ScanFile | None] = []
    taken: set[tuple[str, int | None]] = set()
    findings: list[V3Finding] = []
    for task in tasks:
        vectors = [d for d in task.deletes if d.is_deletion_vector]
        if len(vectors) > 1:  # spec: at most one deletion vector per data file in a snapshot
            findings.append(
                V3Finding(
                    level=Severity.ERROR,
                    subject=task.file.file_path,
                    field="referenced_data_file",
                    message=f"{len(vectors)} deletion vectors apply ("
                    + ", ".join(f"{d.file_path} at {d.content_offset}" for d in vectors)
                    + "); a snapshot may hold one per data file",
                )
            )
        taken.update((d.file_path, d.content_offset) for d in vectors)
        chosen.append(vectors[-1] if vectors else None)
    unclaimed = [
        d for d in plan.kept_delete_files() if d.is_deletion_vector and (d.file_path, d.content_offset) not in taken
    ]
    # Each vector is a small ranged read: a few in flight, in order.
    wanted = [d for d in chosen if d is not None] + unclaimed
    read = iter(list(read_ahead(lambda d: read_vector(table, d, footers), wanted)))
    files = [
        DataFileVector(
            file_path=task.file.file_path,
            partition=task.file.partition_text,
            record_count=task.file.record_count,
            sequence_number=task.file.sequence_number,
            vector=next(read) if dv is not None else None,
            position_delete_files=tuple(
                d.file_path
                for d in task.deletes
                if d.content == FileContent.POSITION_DELETES and not d.is_deletion_vector
            ),
        )
        for task, dv in zip(tasks, chosen, strict=True)
    ]
    dangling = tuple(read)
    findings.extend(
        V3Finding(
            level=Severity.NOTE,
            subject=f"{d.puffin_path} at {d.content_offset}",
            field="referenced_data_file",
            message=f"dangling: no live data file takes this vector ({d.referenced_data_file}); readers ignore it",
        )
        for d in dangling
    )
    return DeletionVectorMap(
        location=table.location,
        snapshot_id=snapshot.snapshot_id,
        files=tuple(files),
        dangling=dangling,
        findings=tuple(findings),
    )


__all__ = ["DataFileVector", "DeletionVector", "DeletionVectorMap", "deletion_vector_map", "read_vector"]
