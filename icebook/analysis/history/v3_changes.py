"""What a change did to format version 3's structures: deletion vectors replaced, and row ids assigned.

Spec ("Deletion Vectors"): "At most one deletion vector is allowed per data file in a snapshot", and a
writer deleting more rows of a file merges the vector it has (and older position delete files for the file)
into a new one that replaces them. So between two snapshots, a delete file removed and a deletion vector
added for the same ``referenced_data_file`` is a replacement; a vector added for a file that had none is
new; a vector removed with nothing in its place was dropped (its data file rewritten or removed). A
vector's cardinality is its entry's ``record_count``.

Spec ("Row Lineage"): a snapshot's ``first-row-id`` is the table's ``next-row-id`` when it was committed,
and ``added-rows`` the ids it assigned, so it assigned ``[first-row-id, first-row-id + added-rows)``; a data
file's rows carry ``first_row_id + _pos`` (``first_row_id`` inherited, "First Row ID Inheritance"), the ids
``[first_row_id, first_row_id + record_count)``. Files written before an upgrade to v3 have none.

Both sides come in as entry tables (any of the entry or ``data_file`` columns, with at least
``V3_COLUMNS``): a diff's added and removed files, or the entries a commit wrote as ADDED and DELETED.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis._frames import frame
from icebook.analysis.scan.columns import utf8_column
from icebook.analysis.store.metrics import MapColumn
from icebook.analysis.v3.row_lineage import RowIdRange, SnapshotRowIds, snapshot_row_ids
from icebook.errors import MetadataError
from icebook.spec.manifest import FileContent, FileFormat
from icebook.spec.schema import DELETE_FILE_PATH_ID
from icebook.spec.snapshots import Snapshot

V3_COLUMNS = (
    "content",
    "file_path",
    "file_format",
    "record_count",
    "referenced_data_file",
    "content_offset",
    "first_row_id",
)
"""The entry columns this module reads (and, of delete files, ``lower_bounds`` and ``upper_bounds`` when
present: a v2 position delete file for one data file may say so by its ``file_path`` bounds alone)."""


class DvChangeKind(StrEnum):
    NEW = "new"
    """A deletion vector for a data file that had no delete file of its own before."""
    REPLACED = "replaced"
    """A deletion vector in place of the one (or the file-scoped position delete file) the data file had."""
    DROPPED = "dropped"
    """A deletion vector removed with none in its place: its data file was rewritten or removed."""


@dataclass(frozen=True, slots=True)
class DeleteFileRef:
    """One delete file for one data file: a deletion vector (a blob at ``offset`` of a Puffin file) or a
    position delete file scoped to that data file (``offset`` None)."""

    path: str
    offset: int | None
    deleted_rows: int
    """The vector's cardinality (its entry's ``record_count``); for a position delete file, its rows."""

    @property
    def is_vector(self) -> bool:
        return self.offset is not None


@dataclass(frozen=True, slots=True)
class DvChange:
    """What happened to one data file's deletion vector."""

    kind: DvChangeKind
    data_file: str
    before: DeleteFileRef | None
    after: DeleteFileRef | None

    @property
    def before_rows(self) -> int | None:
        return None if self.before is None else self.before.deleted_rows

    @property
    def after_rows(self) -> int | None:
        return None if self.after is None else self.after.deleted_rows

    def text(self, data_file: str | None = None) -> str:
        """One sentence, e.g. ``DV for file X replaced: 5 → 9 deleted rows`` (``data_file``: how to name it)."""
        name = data_file or self.data_file
        if self.kind == DvChangeKind.NEW:
            return f"DV for file {name} added: {self.after_rows} deleted rows"
        if self.kind == DvChangeKind.DROPPED:
            return f"DV for file {name} dropped: it deleted {self.before_rows} rows"
        if self.before is not None and not self.before.is_vector:
            return f"position deletes for file {name} merged into a DV: {self.before_rows} → {self.after_rows} deleted rows"
        if self.before_rows == self.after_rows:
            return f"DV for file {name} rewritten: the same {self.after_rows} deleted rows"
        return f"DV for file {name} replaced: {self.before_rows} → {self.after_rows} deleted rows"


@dataclass(frozen=True, slots=True, kw_only=True)
class V3Changes:
    """A change's deletion vectors and row ids (empty for tables before v3)."""

    dv_changes: tuple[DvChange, ...] = ()
    row_ids: tuple[RowIdRange, ...] = ()
    """The added data files' row-id ranges, one per file, by first id."""
    commits: tuple[SnapshotRowIds, ...] = ()
    """The commits of the change that assigned row ids, oldest first."""

    @property
    def replacements(self) -> tuple[DvChange, ...]:
        return tuple(c for c in self.dv_changes if c.kind == DvChangeKind.REPLACED)

    @property
    def empty(self) -> bool:
        return not (self.dv_changes or self.row_ids or self.commits)

    def merged_row_ids(self) -> tuple[RowIdRange, ...]:
        """The added files' ranges joined where they touch (a commit's files usually do)."""
        return merge_ranges((r.first, r.count) for r in self.row_ids)

    def dv_frame(self) -> pd.DataFrame:
        """One row per data file whose deletion vector changed: kind, data file, the delete file before and
        after (path, offset, deleted rows)."""
        rows = [
            {
                "change": c.kind.value,
                "data_file": c.data_file,
                "before_path": c.before.path if c.before else None,
                "before_offset": c.before.offset if c.before else None,
                "before_deleted_rows": c.before_rows,
                "after_path": c.after.path if c.after else None,
                "after_offset": c.after.offset if c.after else None,
                "after_deleted_rows": c.after_rows,
            }
            for c in self.dv_changes
        ]
        columns = [
            "change",
            "data_file",
            "before_path",
            "before_offset",
            "before_deleted_rows",
            "after_path",
            "after_offset",
            "after_deleted_rows",
        ]
        return frame(rows, columns, ints=[c for c in columns if c.endswith(("offset", "rows"))])

    def row_id_frame(self) -> pd.DataFrame:
        """One row per added data file with row ids: file, first and last row id, records."""
        rows = [
            {"file_path": r.file_path, "first_row_id": r.first, "last_row_id": r.last, "records": r.count}
            for r in self.row_ids
        ]
        return frame(
            rows,
            ["file_path", "first_row_id", "last_row_id", "records"],
            ints=("first_row_id", "last_row_id", "records"),
        )

    def lines(self, name: Callable[[str], str] = str) -> list[str]:
        """The changes as sentences (``name(path)``: how to show a path)."""
        return self.dv_lines(name) + self.row_id_lines()

    def dv_lines(self, name: Callable[[str], str] = str) -> list[str]:
        """One sentence per vector replaced or dropped, and one for the new ones."""
        out = [c.text(name(c.data_file)) for c in self.dv_changes if c.kind != DvChangeKind.NEW]
        new = [c for c in self.dv_changes if c.kind == DvChangeKind.NEW]
        if new:
            out.append(f"{len(new)} new DV(s), {sum(c.after_rows or 0 for c in new)} deleted rows")
        return out

    def row_id_lines(self) -> list[str]:
        """The row ids each commit assigned, and those the added data files hold."""
        out: list[str] = []
        for commit in self.commits:
            assigned = commit.assigned
            if assigned is not None and assigned.count:  # a commit adding no rows assigns none
                out.append(
                    f"snapshot {commit.snapshot_id} ({commit.operation or '?'}) assigned row ids {assigned.text()} "
                    f"(first-row-id {commit.first_row_id}, added-rows {commit.added_rows})"
                )
        ranges = self.merged_row_ids()
        if ranges:
            shown = ", ".join(r.text() for r in ranges[:8]) + (" …" if len(ranges) > 8 else "")
            out.append(f"added data files hold row ids {shown} ({len(self.row_ids)} files)")
        return out


def merge_ranges(ranges: Iterable[tuple[int, int]]) -> tuple[RowIdRange, ...]:
    """``(first, count)`` ranges sorted and joined where one ends where the next starts (or overlaps it)."""
    out: list[list[int]] = []
    for first, count in sorted(ranges):
        if out and first <= out[-1][0] + out[-1][1]:
            out[-1][1] = max(out[-1][1], first + count - out[-1][0])
        else:
            out.append([first, count])
    return tuple(RowIdRange(first, count) for first, count in out)


# ---------------------------------------------------------------- from entry tables


def vector_mask(files: pa.Table) -> np.ndarray:
    """Deletion vectors: position deletes in a Puffin file (the scan planner's rule)."""
    if not files.num_rows:
        return np.zeros(0, bool)
    content = pc.equal(files.column("content"), int(FileContent.POSITION_DELETES))
    puffin = pc.equal(pc.utf8_upper(files.column("file_format")), FileFormat.PUFFIN.value)
    return np.asarray(pc.and_(content, puffin).fill_null(False).to_numpy(zero_copy_only=False), bool)


def one_data_file(files: pa.Table) -> pa.Array:
    """The one data file each delete file is for, else null: ``referenced_data_file``, or the ``file_path``
    bounds of a position delete file when they are equal (the reference implementation's "file-scoped")."""
    named = files.column("referenced_data_file").combine_chunks()
    if "lower_bounds" not in files.column_names or not files.num_rows:
        return named
    low, high = (
        utf8_column(MapColumn(files.column(name)).lookup(DELETE_FILE_PATH_ID))
        for name in ("lower_bounds", "upper_bounds")
    )
    position = pc.equal(files.column("content"), int(FileContent.POSITION_DELETES)).fill_null(False)
    bound = pc.if_else(pc.and_(position, pc.equal(low, high).fill_null(False)), low, pa.scalar(None, pa.string()))
    return pc.coalesce(named, bound)


def file_deletes(files: pa.Table, *, vectors_only: bool = True) -> list[tuple[str, DeleteFileRef]]:
    """(data file, delete file) for every deletion vector among ``files`` (and, unless ``vectors_only``, every
    position delete file for one data file, ``one_data_file``), in order. A vector without
    ``referenced_data_file`` is damaged (spec: required for vectors): one ``MetadataError`` naming its Puffin
    file and the field."""
    if not files.num_rows:
        return []
    vectors = vector_mask(files)
    targets = one_data_file(files)
    chosen = vectors.copy()
    if not vectors_only:
        position = pc.equal(files.column("content"), int(FileContent.POSITION_DELETES)).fill_null(False)
        scoped = pc.and_(position, pc.is_valid(targets))
        chosen |= np.asarray(scoped.to_numpy(zero_copy_only=False), bool)
    if not chosen.any():
        return []
    mask = pa.array(chosen)
    picked = files.filter(mask).select(["file_path", "referenced_data_file", "content_offset", "record_count"])
    out: list[tuple[str, DeleteFileRef]] = []
    for path, named, target, offset, rows, vector in zip(
        picked.column("file_path").to_pylist(),
        picked.column("referenced_data_file").to_pylist(),
        targets.filter(mask).to_pylist(),
        picked.column("content_offset").to_pylist(),
        picked.column("record_count").to_pylist(),
        vectors[chosen].tolist(),
        strict=True,
    ):
        if vector and named is None:
            raise MetadataError(
                path,
                "referenced_data_file",
                f"the deletion vector at content_offset {offset} names no data file (required for a deletion vector)",
                kind="deletion vector in",
            )
        ref = DeleteFileRef(path=path, offset=offset if vector else None, deleted_rows=int(rows or 0))
        out.append((named if vector else target, ref))
    return out


def delete_refs(files: pa.Table, *, vectors_only: bool) -> dict[str, DeleteFileRef]:
    """Data file -> its deletion vector (and, unless ``vectors_only``, its file-scoped position delete file)
    among ``files`` (``file_deletes``)."""
    out: dict[str, DeleteFileRef] = {}
    for data_file, ref in file_deletes(files, vectors_only=vectors_only):
        # A vector wins over a position delete file for the same data file (readers ignore the latter).
        if data_file not in out or ref.is_vector:
            out[data_file] = ref
    return out


def dv_changes(added: pa.Table, removed: pa.Table) -> tuple[DvChange, ...]:
    """The deletion vectors that ``added`` and ``removed`` (files of one change) replaced, added and dropped,
    by data file."""
    after = delete_refs(added, vectors_only=True)
    before = delete_refs(removed, vectors_only=False)
    out: list[DvChange] = []
    for data_file in sorted(after.keys() | before.keys()):
        old, new = before.get(data_file), after.get(data_file)
        if new is None:
            if old is not None and old.is_vector:
                out.append(DvChange(DvChangeKind.DROPPED, data_file, old, None))
            continue
        kind = DvChangeKind.NEW if old is None else DvChangeKind.REPLACED
        out.append(DvChange(kind, data_file, old, new))
    return tuple(out)


def added_row_ids(added: pa.Table) -> tuple[RowIdRange, ...]:
    """Each added data file's row ids (files without ``first_row_id`` have none), by first id."""
    if not added.num_rows:
        return ()
    data = pc.equal(pc.fill_null(added.column("content"), int(FileContent.DATA)), int(FileContent.DATA))
    with_ids = added.filter(pc.and_(data, pc.is_valid(added.column("first_row_id"))))
    ranges = [
        RowIdRange(int(first), int(count), path)
        for path, first, count in zip(
            with_ids.column("file_path").to_pylist(),
            with_ids.column("first_row_id").to_pylist(),
            with_ids.column("record_count").to_pylist(),
            strict=True,
        )
    ]
    return tuple(sorted(ranges, key=lambda r: (r.first, r.file_path or "")))


def commit_row_ids(commits: Sequence[Snapshot]) -> tuple[SnapshotRowIds, ...]:
    """The commits that assigned row ids (those with a ``first-row-id``)."""
    return snapshot_row_ids(s for s in commits if s.first_row_id is not None)


def v3_changes(added: pa.Table, removed: pa.Table, commits: Sequence[Snapshot]) -> V3Changes:
    """The deletion vectors and row ids of a change that added ``added`` and removed ``removed`` through
    ``commits`` (oldest first)."""
    return V3Changes(
        dv_changes=dv_changes(added, removed), row_ids=added_row_ids(added), commits=commit_row_ids(commits)
    )


__all__ = [
    "V3_COLUMNS",
    "DeleteFileRef",
    "DvChange",
    "DvChangeKind",
    "RowIdRange",
    "V3Changes",
    "added_row_ids",
    "commit_row_ids",
    "delete_refs",
    "dv_changes",
    "file_deletes",
    "merge_ranges",
    "one_data_file",
    "v3_changes",
    "vector_mask",
]
