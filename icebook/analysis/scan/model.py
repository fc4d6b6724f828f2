"""What a scan plan says about one file: the file, the planner's decision, and the delete files that
apply to it (spec: "Scan Planning", "Row-level Deletes", "Sequence Numbers").

Which delete files apply is decided by the delete index (``icebook.analysis.scan.delete_index``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from itertools import repeat
from typing import Any, TypeVar

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


_T = TypeVar("_T")


def bulk(cls: type[_T], count: int, columns: Mapping[str, Sequence[Any]], constants: Mapping[str, Any]) -> list[_T]:
    """``count`` instances of the frozen, slotted dataclass ``cls``, every field set from its column (or to
    its constant), one field at a time over all instances. A plan read in full makes a ``ScanFile`` and a
    ``ScanTask`` per data file, and the generated ``__init__``, one call per field per instance, was most of
    that cost. The instances are the ones ``cls(**values)`` makes: every field is given (the classes here
    have no ``__post_init__``), and each column holds ``count`` values."""
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    if sorted(names) != sorted([*columns, *constants]):
        raise TypeError(f"{cls.__name__}: fields {sorted(names)}, given {sorted([*columns, *constants])}")
    for name, values in columns.items():
        if len(values) != count:
            raise ValueError(f"{cls.__name__}.{name}: {len(values)} values for {count} instances")
    made = list(map(object.__new__, repeat(cls, count)))
    for name, values in columns.items():
        deque(map(getattr(cls, name).__set__, made, values), maxlen=0)
    for name, value in constants.items():
        deque(map(getattr(cls, name).__set__, made, repeat(value, count)), maxlen=0)
    return made


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
        from icebook.analysis.scan.delete_index import task_matches  # the index builds on this module

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


__all__ = [
    "Decision",
    "DeleteMatch",
    "Evidence",
    "Level",
    "ScanFile",
    "ScanTask",
    "bulk",
    "partition_text",
]
