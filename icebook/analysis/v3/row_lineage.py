"""Row-lineage ranges (spec: "Row Lineage", "First Row ID Inheritance", "Snapshot Row IDs").

A v3 commit takes the table's ``next-row-id`` as its snapshot's ``first-row-id`` and claims
``added-rows`` ids from it: the snapshot's range is ``[first-row-id, first-row-id + added-rows)``, and
``next-row-id`` moves past it. Each data file's rows get ``[first_row_id, first_row_id + record_count)``
(``first_row_id`` inherited from its manifest where the entry leaves it null, as the store decodes it).
The rules checked here, each finding naming the file or snapshot and the field:

- snapshots' ranges never overlap (every commit, on any branch, claims fresh ids); a gap between them is
  a note (expired snapshots and retried commits leave ids no retained snapshot claims);
- ``next-row-id`` is at least the end of every snapshot's range;
- a live data file of a snapshot with a ``first-row-id`` has a ``first_row_id`` (inheritance assigns
  one even to existing files of an upgraded table); before the upgrade, row ids read as null (a note);
- live data files' ranges never overlap, and a file's range lies within one snapshot's range.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from operator import attrgetter

import numpy as np
import pandas as pd

from icebook.analysis._frames import attribute_frame
from icebook.analysis.store.entries import live_data_entries
from icebook.analysis.store.manifests import read_ahead
from icebook.analysis.store.table_like import TableLike
from icebook.analysis.v3.file_fields import file_field_ids
from icebook.analysis.v3.findings import Severity, V3Finding
from icebook.spec.schema import ROW_ID_ID
from icebook.spec.snapshots import Snapshot, snapshot_sequence_number

_COLUMNS = (
    "status",
    "snapshot_id",
    "content",
    "file_path",
    "file_format",
    "file_size_in_bytes",
    "record_count",
    "first_row_id",
    "first_row_id_inherited",
)


@dataclass(frozen=True, slots=True)
class RowIdRange:
    """Row ids ``[first, first + count)``: one data file's, or several adjacent files' merged."""

    first: int
    count: int
    file_path: str | None = None
    """The data file, when the range is one file's."""

    @property
    def last(self) -> int:
        """The last id in the range (``first - 1`` when it is empty)."""
        return self.first + self.count - 1

    def text(self) -> str:
        return f"{self.first}–{self.last}" if self.count else f"none at {self.first}"


@dataclass(frozen=True, slots=True, kw_only=True)
class SnapshotRowIds:
    """One snapshot's claim on row ids (``first-row-id``, ``added-rows``; None before v3)."""

    snapshot_id: int
    sequence_number: int
    operation: str | None
    first_row_id: int | None
    added_rows: int | None

    @property
    def assigned(self) -> RowIdRange | None:
        """The claim as a range (None before the table was v3)."""
        if self.first_row_id is None:
            return None
        return RowIdRange(self.first_row_id, self.added_rows or 0)

    @property
    def end(self) -> int | None:
        """One past the last id the snapshot claims (None before the table was v3)."""
        claim = self.assigned
        return None if claim is None else claim.last + 1


@dataclass(frozen=True, slots=True, kw_only=True)
class FileRowIds:
    """One live data file's row ids."""

    file_path: str
    record_count: int
    first_row_id: int | None
    inherited: bool
    """The manifest entry left ``first_row_id`` null and it comes from the manifest's (inheritance)."""
    added_snapshot_id: int | None
    assigned_by: int | None
    """The snapshot whose range holds the file's first id (None when no retained snapshot's does)."""
    row_ids_written: bool = False
    """The file holds a ``_row_id`` column (an UPDATE, MERGE or compaction kept rows' ids): a row reads its
    own id there, and ``first_row_id + _pos`` only where that is null."""

    @property
    def end(self) -> int | None:
        return None if self.first_row_id is None else self.first_row_id + self.record_count


@dataclass(frozen=True, slots=True, kw_only=True)
class RowLineage:
    """``t.v3(at).row_lineage``: every snapshot's range, the live data files' ranges at one snapshot, and
    what breaks the spec's rules."""

    location: str
    snapshot_id: int | None
    next_row_id: int | None
    snapshots: tuple[SnapshotRowIds, ...]
    """Every retained snapshot, in commit order."""
    files: tuple[FileRowIds, ...]
    """Live data files at ``snapshot_id``, by first row id (nulls last)."""
    findings: tuple[V3Finding, ...]

    def snapshots_frame(self) -> pd.DataFrame:
        return attribute_frame(
            self.snapshots,
            ["snapshot_id", "sequence_number", "operation", "first_row_id", "added_rows", "end_row_id"],
            ints=("first_row_id", "added_rows", "end_row_id"),
            derived={"end_row_id": attrgetter("end")},
        )

    def to_pandas(self) -> pd.DataFrame:
        """The files' ranges: ``[first_row_id, end_row_id)``."""
        return attribute_frame(
            self.files,
            [
                "file_path",
                "record_count",
                "first_row_id",
                "end_row_id",
                "inherited",
                "row_ids_written",
                "added_snapshot_id",
                "assigned_by_snapshot",
            ],
            ints=("first_row_id", "end_row_id", "added_snapshot_id", "assigned_by_snapshot"),
            derived={"end_row_id": attrgetter("end"), "assigned_by_snapshot": attrgetter("assigned_by")},
        )

    def __repr__(self) -> str:
        errors = sum(f.level == Severity.ERROR for f in self.findings)
        return (
            f"<RowLineage snapshot {self.snapshot_id}: next-row-id {self.next_row_id}, {len(self.snapshots)} snapshots, "
            f"{len(self.files)} data files, {errors} errors>"
        )


def _finding(level: Severity, subject: str, field: str, message: str) -> V3Finding:
    return V3Finding(level=level, subject=subject, field=field, message=message)


def snapshot_row_ids(snapshots: Iterable[Snapshot]) -> tuple[SnapshotRowIds, ...]:
    """Each snapshot's claim on row ids, in the order given."""
    return tuple(
        SnapshotRowIds(
            snapshot_id=s.snapshot_id,
            sequence_number=snapshot_sequence_number(s),
            operation=s.operation,
            first_row_id=s.first_row_id,
            added_rows=s.added_rows,
        )
        for s in snapshots
    )


@dataclass(frozen=True, slots=True)
class _Live:
    path: str
    file_format: str
    size: int
    record_count: int
    first_row_id: int | None
    inherited: bool
    added_by: int | None


def _live_files(table: TableLike, snapshot: Snapshot) -> list[_Live]:
    out: list[_Live] = []
    for _, data in live_data_entries(table.store, snapshot, _COLUMNS):
        columns = [data.column(c).to_pylist() for c in _COLUMNS[3:]]
        out.extend(
            _Live(path, str(fmt), size, count, first, bool(inherited), added_by)
            for (path, fmt, size, count, first, inherited), added_by in zip(
                zip(*columns, strict=True), data.column("snapshot_id").to_pylist(), strict=True
            )
        )
    return out


def _writes_row_ids(table: TableLike, f: _Live) -> bool:
    """Whether the file holds a ``_row_id`` column of its own (read from its schema; footers are cached)."""
    return ROW_ID_ID in file_field_ids(table.fileio, f.path, f.file_format, f.size)


def _containing(ranges: list[SnapshotRowIds], starts: np.ndarray, value: int) -> SnapshotRowIds | None:
    i = int(np.searchsorted(starts, value, side="right")) - 1
    if i < 0:
        return None
    s = ranges[i]
    return s if s.end is not None and value < s.end else None


def _snapshot_findings(ranges: list[SnapshotRowIds], next_row_id: int | None) -> list[V3Finding]:
    findings: list[V3Finding] = []
    previous: SnapshotRowIds | None = None
    for s in ranges:
        assert s.first_row_id is not None and s.end is not None
        if previous is not None and previous.end is not None:
            if s.first_row_id < previous.end and s.end > s.first_row_id:
                findings.append(
                    _finding(
                        Severity.ERROR,
                        f"snapshot {s.snapshot_id}",
                        "first-row-id",
                        f"its row ids [{s.first_row_id}, {s.end}) overlap those of snapshot "
                        f"{previous.snapshot_id} [{previous.first_row_id}, {previous.end})",
                    )
                )
            elif s.first_row_id > previous.end:
                findings.append(
                    _finding(
                        Severity.NOTE,
                        f"snapshot {s.snapshot_id}",
                        "first-row-id",
                        f"row ids [{previous.end}, {s.first_row_id}) belong to no retained snapshot "
                        "(an expired snapshot or a retried commit claimed them)",
                    )
                )
        if s.added_rows or previous is None:
            previous = s
    ends = [s.end for s in ranges if s.end is not None]
    if next_row_id is not None and ends and next_row_id < max(ends):
        findings.append(
            _finding(
                Severity.ERROR,
                "table metadata",
                "next-row-id",
                f"{next_row_id} is below the end of the ids snapshots claim ({max(ends)}): "
                "the next commit would reuse row ids",
            )
        )
    return findings


def row_lineage(table: TableLike, snapshot: Snapshot | None) -> RowLineage:
    """Row-id ranges of every snapshot and of the live data files at ``snapshot``, with the rules checked."""
    metadata = table.metadata
    snapshots = snapshot_row_ids(table.snapshots)
    claimed = sorted((s for s in snapshots if s.first_row_id is not None), key=lambda s: (s.first_row_id, s.end))
    findings = _snapshot_findings(claimed, metadata.next_row_id)
    starts = np.array([s.first_row_id for s in claimed], dtype=np.int64)
    files: list[FileRowIds] = []
    if snapshot is not None:
        live = _live_files(table, snapshot)
        # Only a file with row ids can hold them; each check is a (cached) footer read, a few in flight.
        assigned = [f for f in live if f.first_row_id is not None]
        written = dict(
            zip((f.path for f in assigned), read_ahead(lambda f: _writes_row_ids(table, f), assigned), strict=True)
        )
        for f in live:
            owner = _containing(claimed, starts, f.first_row_id) if f.first_row_id is not None else None
            files.append(
                FileRowIds(
                    file_path=f.path,
                    record_count=f.record_count,
                    first_row_id=f.first_row_id,
                    inherited=f.inherited,
                    added_snapshot_id=f.added_by,
                    assigned_by=owner.snapshot_id if owner else None,
                    row_ids_written=written.get(f.path, False),
                )
            )
        files.sort(key=lambda f: (f.first_row_id is None, f.first_row_id or 0, f.file_path))
        if metadata.format_version >= 3:
            findings.extend(_file_findings(files, snapshot, claimed, starts))
    return RowLineage(
        location=table.location,
        snapshot_id=None if snapshot is None else snapshot.snapshot_id,
        next_row_id=metadata.next_row_id,
        snapshots=snapshots,
        files=tuple(files),
        findings=tuple(findings),
    )


def _file_findings(
    files: list[FileRowIds], snapshot: Snapshot, claimed: list[SnapshotRowIds], starts: np.ndarray
) -> list[V3Finding]:
    findings: list[V3Finding] = []
    unassigned = [f for f in files if f.first_row_id is None]
    if unassigned and snapshot.first_row_id is not None:
        findings.extend(
            _finding(
                Severity.ERROR,
                f.file_path,
                "first_row_id",
                f"null at snapshot {snapshot.snapshot_id}, which has a first-row-id: inheritance must "
                "assign every live data file one",
            )
            for f in unassigned
        )
    elif unassigned:
        findings.append(
            _finding(
                Severity.NOTE,
                f"snapshot {snapshot.snapshot_id}",
                "first-row-id",
                f"none (written before the table was v3): the _row_id of {len(unassigned)} data files reads as null",
            )
        )
    previous: FileRowIds | None = None
    for f in files:
        if f.first_row_id is None or f.end is None:
            continue
        if previous is not None and previous.end is not None and f.first_row_id < previous.end and f.record_count:
            findings.append(
                _finding(
                    Severity.ERROR,
                    f.file_path,
                    "first_row_id",
                    f"its row ids [{f.first_row_id}, {f.end}) overlap those of {previous.file_path} "
                    f"[{previous.first_row_id}, {previous.end})",
                )
            )
        owner = _containing(claimed, starts, f.first_row_id)
        if owner is not None and owner.end is not None and f.end > owner.end:
            findings.append(
                _finding(
                    Severity.ERROR,
                    f.file_path,
                    "first_row_id",
                    f"its row ids [{f.first_row_id}, {f.end}) run past the range of snapshot "
                    f"{owner.snapshot_id} [{owner.first_row_id}, {owner.end}) that holds its first id",
                )
            )
        if previous is None or previous.end is None or f.end > previous.end:
            previous = f
    return findings


__all__ = ["FileRowIds", "RowIdRange", "RowLineage", "SnapshotRowIds", "row_lineage", "snapshot_row_ids"]
