"""The items of a scan plan: each file, the planner's decision on it, its task and the delete files that
apply to it (spec: "Scan Planning", "Row-level Deletes", "Sequence Numbers").

Which delete files apply is decided by the delete index (``icebook.analysis.scan.delete_index``) in
columns; the same scope rules one data file at a time, in words (``delete_matches``, what
``ScanTask.matches`` shows), live here, beside the objects they read.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from icebook.spec.manifest import FileContent, FileFormat, FileKind


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanFile:
    """A live data or delete file of the scanned snapshot, with what planning needs of its entry."""

    content: FileContent
    file_path: str
    file_format: FileFormat
    spec_id: int
    partition: tuple[tuple[str, Any], ...]
    """(partition field name, value in the transform's physical form), in spec order."""
    record_count: int
    file_size_in_bytes: int
    sequence_number: int
    """The data sequence number (inherited where the manifest left it null)."""
    file_sequence_number: int | None
    snapshot_id: int | None
    manifest_path: str
    equality_ids: tuple[int, ...] | None = None
    referenced_data_file: str | None = None
    content_offset: int | None = None
    content_size_in_bytes: int | None = None
    first_row_id: int | None = None
    """The ``_row_id`` of the file's first row (inherited where the manifest left it null; v3 data files)."""
    file_path_bounds: tuple[str | None, str | None] = (None, None)
    partition_text: str = ""
    """The partition as the reference implementation prints it (``region=us/ts_day=2024-01-05``)."""

    @property
    def kind(self) -> FileKind:
        return FileKind.of_content(self.content, deletion_vector=self.is_deletion_vector)

    @property
    def is_deletion_vector(self) -> bool:
        return self.content == FileContent.POSITION_DELETES and self.file_format == FileFormat.PUFFIN

    @property
    def partition_key(self) -> tuple[int, tuple[Any, ...]]:
        return self.spec_id, tuple(v for _, v in self.partition)


def partition_text(f: ScanFile) -> str:
    return f.partition_text or ("{" + ", ".join(f"{k}={v!r}" for k, v in f.partition) + "}")


class Level(StrEnum):
    """What a row of a scan plan is about."""

    MANIFEST = "manifest"
    DATA_FILE = "data file"
    DELETE_FILE = "delete file"
    DELETE_MATCH = "delete match"


class Evidence(StrEnum):
    """What a planner decision was made from, in the order the planner looks (spec: "Scan Planning")."""

    FILE_COUNTS = "file counts"
    """A manifest list's added and existing file counts (no live entries: nothing to read)."""
    PARTITION_SUMMARY = "partition summary"
    """A manifest's partition summaries against the projected partition filter."""
    PARTITION_VALUE = "partition value"
    """A file's partition tuple against the projected partition filter."""
    COLUMN_STATS = "column stats"
    """A file's column bounds and null/NaN counts against the row filter."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """One manifest or file kept or skipped, and why."""

    level: Level
    path: str
    kept: bool
    reason: str
    evidence: Evidence | None = None
    """What skipped it (None when kept: nothing ruled it out)."""
    spec_id: int | None = None
    manifest_path: str | None = None
    file: ScanFile | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteMatch:
    """Whether one delete file applies to one data file, and the rule that decided it."""

    delete: ScanFile
    applies: bool
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanTask:
    """A data file to read and the delete files to apply to it."""

    file: ScanFile
    deletes: tuple[ScanFile, ...]
    candidates: tuple[ScanFile, ...] = ()
    """Every delete file of the same partition (or global, or referencing this file) that the planner
    considered for this file, applied or not."""
    unpartitioned_specs: frozenset[int] = field(default=frozenset(), repr=False, compare=False)
    ruled_out: tuple[str, ...] = ()
    """Paths of equality deletes the scope rules apply but column statistics rule out, as the reference
    implementation's delete index does (``ScanPlan.reference_tasks``)."""
    ruled_out_reason: Callable[[ScanFile], str] | None = field(default=None, repr=False, compare=False)
    """Why statistics rule out one of ``ruled_out``, in words (asked only when shown)."""

    @property
    def matches(self) -> tuple[DeleteMatch, ...]:
        """Each considered delete file with the rule that decided it, in words (computed when asked)."""
        return task_matches(self)

    @property
    def position_deletes(self) -> tuple[ScanFile, ...]:
        return tuple(d for d in self.deletes if d.content == FileContent.POSITION_DELETES and not d.is_deletion_vector)

    @property
    def equality_deletes(self) -> tuple[ScanFile, ...]:
        return tuple(d for d in self.deletes if d.content == FileContent.EQUALITY_DELETES)

    @property
    def deletion_vectors(self) -> tuple[ScanFile, ...]:
        return tuple(d for d in self.deletes if d.is_deletion_vector)


# ------------------------------------------------------------------------------------------ in words


def delete_matches(
    f: ScanFile, deletes: Sequence[ScanFile], unpartitioned_specs: Collection[int]
) -> tuple[DeleteMatch, ...]:
    """The spec's scope rules ("Scan Planning") for one data file against delete files, in words:
    deletion vectors by referenced_data_file and data seq <= DV seq; position deletes by same partition
    and data seq <= delete seq (unless a DV applies, and within their referenced file and file_path
    bounds); equality deletes by same partition (or an unpartitioned delete spec: global) and data seq
    < delete seq. Delete files none of these rules reaches are not considered (no match)."""
    matches: list[DeleteMatch] = []
    dv_applies = False
    for dv in deletes:
        if not dv.is_deletion_vector or (dv.referenced_data_file or "") != f.file_path:
            continue
        if dv.partition_key != f.partition_key:
            matches.append(DeleteMatch(delete=dv, applies=False, reason="partition differs: does not apply"))
        elif f.sequence_number <= dv.sequence_number:
            dv_applies = True
            matches.append(DeleteMatch(delete=dv, applies=True, reason=f"{_seq(dv, f, '>=')}: applies"))
        else:
            matches.append(DeleteMatch(delete=dv, applies=False, reason=f"{_seq(dv, f, '<')}: does not apply"))
    for d in deletes:
        if d.content != FileContent.POSITION_DELETES or d.is_deletion_vector or d.partition_key != f.partition_key:
            continue
        lo, hi = d.file_path_bounds
        if f.sequence_number > d.sequence_number:
            matches.append(DeleteMatch(delete=d, applies=False, reason=f"{_seq(d, f, '<')}: does not apply"))
        elif d.referenced_data_file is not None and d.referenced_data_file != f.file_path:
            reason = f"{_seq(d, f, '>=')}, but it references another data file only: does not apply"
            matches.append(DeleteMatch(delete=d, applies=False, reason=reason))
        elif (lo is not None and f.file_path < lo) or (hi is not None and f.file_path > hi):
            reason = f"{_seq(d, f, '>=')}, but its file_path bounds exclude this file: does not apply"
            matches.append(DeleteMatch(delete=d, applies=False, reason=reason))
        elif dv_applies:
            reason = "a deletion vector applies to this file, so position delete files are ignored"
            matches.append(DeleteMatch(delete=d, applies=False, reason=reason))
        else:
            matches.append(DeleteMatch(delete=d, applies=True, reason=f"{_seq(d, f, '>=')}: applies"))
    equality = [d for d in deletes if d.content == FileContent.EQUALITY_DELETES]
    scoped = [d for d in equality if d.spec_id not in unpartitioned_specs and d.partition_key == f.partition_key]
    global_ = [d for d in equality if d.spec_id in unpartitioned_specs]
    for d, scope in [*((d, "") for d in scoped), *((d, "global (unpartitioned) delete, ") for d in global_)]:
        if f.sequence_number < d.sequence_number:
            matches.append(DeleteMatch(delete=d, applies=True, reason=f"{scope}{_seq(d, f, '>')}: applies"))
        else:
            matches.append(DeleteMatch(delete=d, applies=False, reason=f"{scope}{_seq(d, f, '<=')}: does not apply"))
    return tuple(matches)


def _seq(d: ScanFile, f: ScanFile, op: str) -> str:
    return f"delete seq {d.sequence_number} {op} data seq {f.sequence_number}"


def task_matches(task: ScanTask) -> tuple[DeleteMatch, ...]:
    """A task's considered delete files with the rule that decided each, in words: the scope rules,
    then, for the equality deletes statistics rule out, why."""
    out = []
    for m in delete_matches(task.file, task.candidates, task.unpartitioned_specs):
        if m.applies and m.delete.file_path in task.ruled_out and task.ruled_out_reason is not None:
            why = task.ruled_out_reason(m.delete)
            reason = m.reason.removesuffix(": applies") + f", but column statistics rule it out ({why}): not attached"
            m = DeleteMatch(delete=m.delete, applies=False, reason=reason)
        out.append(m)
    return tuple(out)


__all__ = [
    "Decision",
    "DeleteMatch",
    "Evidence",
    "Level",
    "ScanFile",
    "ScanTask",
    "delete_matches",
    "partition_text",
    "task_matches",
]
