"""What the bin-pack rewrite procedures share: their options and the file-size range, the reasons a
file is a candidate, first-fit packing, the reasons a group is rewritten, and dangling deletes.

``rewrite_data_files`` (``compaction``) and ``rewrite_position_delete_files`` (``rewrite_previews``)
run the same planner in the reference implementation (``SizeBasedFileRewritePlanner``): files outside
[min-file-size-bytes, max-file-size-bytes] (0.75 and 1.8 times the target size by default) are
candidates, packed per partition into groups of at most ``max-file-group-size-bytes``, and a group
is rewritten with at least ``min-input-files`` files, more bytes than the target, or more than the
max file size; ``rewrite_data_files`` adds the delete thresholds. The health report measures files
against the same range.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, Self, TypeVar

import numpy as np
import pandas as pd

from icebook.analysis._frames import frame
from icebook.analysis.scan.plan_items import ScanFile
from icebook.errors import OptionError, UnsupportedFeature
from icebook.spec import properties
from icebook.spec.manifest import FileContent

MIN_FILE_SIZE_RATIO = 0.75
MAX_FILE_SIZE_RATIO = 1.80
DEFAULT_MIN_INPUT_FILES = 5
DEFAULT_MAX_GROUP_SIZE = 100 * 1024 * 1024 * 1024
DEFAULT_DELETE_FILE_THRESHOLD = 2**31 - 1  # Integer.MAX_VALUE: never, unless asked
DEFAULT_DELETE_RATIO_THRESHOLD = 0.3
# The options both procedures take; rewrite_data_files adds the delete thresholds.
SIZE_OPTION_NAMES = (
    "target-file-size-bytes",
    "min-file-size-bytes",
    "max-file-size-bytes",
    "min-input-files",
    "rewrite-all",
    "max-file-group-size-bytes",
)
OPTION_NAMES = (*SIZE_OPTION_NAMES, "delete-file-threshold", "delete-ratio-threshold")
# Options of the procedure that change how groups run or commit, not which files they hold.
EXECUTION_OPTIONS = (
    "partial-progress.enabled",
    "partial-progress.max-commits",
    "partial-progress.max-failed-commits",
    "max-concurrent-file-group-rewrites",
    "use-starting-sequence-number",
    "rewrite-job-order",
    "remove-dangling-deletes",
    "output-spec-id",
)


class CandidateReason(StrEnum):
    """Why a file is a candidate of a bin-pack rewrite."""

    TOO_SMALL = "too small"
    TOO_LARGE = "too large"
    TOO_MANY_DELETES = "too many deletes"
    HIGH_DELETE_RATIO = "high delete ratio"


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionOptions:
    target_file_size_bytes: int
    min_file_size_bytes: int
    max_file_size_bytes: int
    min_input_files: int
    rewrite_all: bool
    max_file_group_size_bytes: int
    delete_file_threshold: int
    delete_ratio_threshold: float
    given: Mapping[str, str] = field(default_factory=dict)
    """The options as passed (the rest are defaults)."""

    @property
    def write_max_file_size(self) -> int:
        """The size at which the writer rolls to a new file: halfway from target to max."""
        return int(self.target_file_size_bytes + (self.max_file_size_bytes - self.target_file_size_bytes) * 0.5)

    def expected_output_files(self, input_size: int) -> int:
        target = self.target_file_size_bytes
        if input_size < target:
            return 1
        with_remainder = -(-input_size // target)
        without_remainder = input_size // target
        if input_size % target > self.min_file_size_bytes:
            return with_remainder
        if input_size / without_remainder < min(1.1 * target, float(self.write_max_file_size)):
            return without_remainder
        return with_remainder

    def size_masks(self, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Which of ``sizes`` are outside the range: (too small, too large)."""
        sizes = np.asarray(sizes, dtype=np.int64)
        small = sizes < self.min_file_size_bytes
        return small, ~small & (sizes > self.max_file_size_bytes)

    def size_reasons(self, size: int) -> tuple[CandidateReason, ...]:
        """Why a file of ``size`` bytes is outside the range: too small, too large, or nothing."""
        small, large = self.size_masks(np.array([size], dtype=np.int64))
        return (CandidateReason.TOO_SMALL,) if small[0] else (CandidateReason.TOO_LARGE,) if large[0] else ()


def compaction_options(
    table_properties: Mapping[str, str],
    options: Mapping[str, Any] | None = None,
    *,
    target: properties.IntProperty = properties.TARGET_FILE_SIZE_BYTES,
    names: tuple[str, ...] = OPTION_NAMES,
) -> CompactionOptions:
    """The planner's settings from the procedure's ``options`` map and the table property ``target``
    (the target file size unless an option gives it). An invalid property is a ``PropertyError``, an
    option the procedure would reject an ``OptionError``."""
    given = {str(k): str(v) for k, v in (options or {}).items()}
    unknown = [k for k in given if k not in names and k not in EXECUTION_OPTIONS]
    if "max-files-to-rewrite" in given:
        raise UnsupportedFeature(
            "max-files-to-rewrite cuts the plan in the order Spark iterates partitions (a hash order), "
            "which a preview cannot reproduce; preview without it"
        )
    if unknown:
        raise OptionError(f"cannot use options {sorted(unknown)}; valid: {', '.join(names)}")

    def as_int(name: str, default: int) -> int:
        try:
            return int(given[name]) if name in given else default
        except ValueError:
            raise OptionError(f"option {name}={given[name]!r} is not an integer") from None

    size = as_int("target-file-size-bytes", target.read(table_properties))
    minimum = as_int("min-file-size-bytes", int(size * MIN_FILE_SIZE_RATIO))
    maximum = as_int("max-file-size-bytes", int(size * MAX_FILE_SIZE_RATIO))
    if size <= 0:
        raise OptionError(f"'target-file-size-bytes' is set to {size} but must be > 0")
    if minimum < 0:
        raise OptionError(f"'min-file-size-bytes' is set to {minimum} but must be >= 0")
    if not size > minimum:
        raise OptionError(f"'target-file-size-bytes' ({size}) must be > 'min-file-size-bytes' ({minimum})")
    if not size < maximum:
        raise OptionError(f"'target-file-size-bytes' ({size}) must be < 'max-file-size-bytes' ({maximum})")
    min_input = as_int("min-input-files", DEFAULT_MIN_INPUT_FILES)
    if min_input <= 0:
        raise OptionError(f"'min-input-files' is set to {min_input} but must be > 0")
    group = as_int("max-file-group-size-bytes", DEFAULT_MAX_GROUP_SIZE)
    if group <= 0:
        raise OptionError(f"'max-file-group-size-bytes' is set to {group} but must be > 0")
    threshold = as_int("delete-file-threshold", DEFAULT_DELETE_FILE_THRESHOLD)
    if threshold < 0:
        raise OptionError(f"'delete-file-threshold' is set to {threshold} but must be >= 0")
    try:
        ratio = float(given.get("delete-ratio-threshold", DEFAULT_DELETE_RATIO_THRESHOLD))
    except ValueError:
        raise OptionError(
            f"option delete-ratio-threshold={given['delete-ratio-threshold']!r} is not a number"
        ) from None
    if not 0 < ratio <= 1:
        raise OptionError(f"'delete-ratio-threshold' is set to {ratio} but must be > 0 and <= 1")
    return CompactionOptions(
        target_file_size_bytes=size,
        min_file_size_bytes=minimum,
        max_file_size_bytes=maximum,
        min_input_files=min_input,
        rewrite_all=given.get("rewrite-all", "false").strip().lower() == "true",
        max_file_group_size_bytes=group,
        delete_file_threshold=threshold,
        delete_ratio_threshold=ratio,
        given=given,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CandidateFile:
    """A file of the plan with what the planner weighs."""

    file_path: str
    spec_id: int
    partition: str
    file_size_in_bytes: int
    record_count: int
    delete_files: int
    file_scoped_deleted_records: int
    reasons: tuple[CandidateReason, ...]
    """Why the file is a candidate."""


def pack_runs(weights: np.ndarray, capacity: int) -> list[tuple[int, int]]:
    """First fit with a look-back of one bin (the reference implementation's ListPacker(capacity, 1, false))
    over ``weights`` in order, as (start, end) runs: with one bin open at a time, each bin is a run of
    consecutive items that fit together, and an item heavier than ``capacity`` is a bin of its own."""
    sums = np.concatenate([[0], np.cumsum(np.asarray(weights, dtype=np.int64))])
    runs: list[tuple[int, int]] = []
    start, n = 0, len(weights)
    while start < n:
        end = int(np.searchsorted(sums, sums[start] + capacity, side="right")) - 1
        end = min(max(end, start + 1), n)
        runs.append((start, end))
        start = end
    return runs


def bin_pack(items: Sequence[CandidateFile], capacity: int) -> list[list[CandidateFile]]:
    """``items`` packed by ``pack_runs`` on their sizes."""
    weights = np.array([item.file_size_in_bytes for item in items], dtype=np.int64)
    return [list(items[s:e]) for s, e in pack_runs(weights, capacity)]


def group_reasons(group: Sequence[CandidateFile], o: CompactionOptions) -> tuple[str, ...]:
    """Why a packed group is rewritten (empty: it is not)."""
    return run_reasons(
        len(group),
        sum(f.file_size_in_bytes for f in group),
        any(CandidateReason.TOO_MANY_DELETES in f.reasons for f in group),
        any(CandidateReason.HIGH_DELETE_RATIO in f.reasons for f in group),
        o,
    )


def run_reasons(
    files: int, size: int, too_many_deletes: bool, high_delete_ratio: bool, o: CompactionOptions
) -> tuple[str, ...]:
    """Why a packed group of ``files`` files and ``size`` bytes is rewritten (empty: it is not); the two
    flags: a file of the group has too many deletes, or too high a delete ratio."""
    if o.rewrite_all:
        return ("rewrite-all",)
    reasons = []
    if files > 1 and files >= o.min_input_files:
        reasons.append(f"{files} files >= min-input-files {o.min_input_files}")
    if files > 1 and size > o.target_file_size_bytes:
        reasons.append(f"{size} bytes > target {o.target_file_size_bytes}")
    if size > o.max_file_size_bytes:
        reasons.append(f"{size} bytes > max file size {o.max_file_size_bytes}")
    if too_many_deletes:
        reasons.append(f"a file has >= {o.delete_file_threshold} delete files")
    if high_delete_ratio:
        reasons.append(f"a file has >= {o.delete_ratio_threshold:.0%} of its rows deleted")
    return tuple(reasons)


@dataclass(frozen=True, slots=True, kw_only=True)
class CandidateMasks:
    """Per data file, one mask per ``CandidateReason``."""

    too_small: np.ndarray
    too_large: np.ndarray
    too_many_deletes: np.ndarray
    high_delete_ratio: np.ndarray

    def by_reason(self) -> tuple[tuple[CandidateReason, np.ndarray], ...]:
        """(reason, mask) in the order the reasons are named."""
        return tuple((reason, getattr(self, reason.name.lower())) for reason in CandidateReason)

    def any(self) -> np.ndarray:
        """Files with some reason."""
        return self.too_small | self.too_large | self.too_many_deletes | self.high_delete_ratio

    def reasons(self, i: int) -> tuple[CandidateReason, ...]:
        """File ``i``'s reasons, in the order they are named."""
        return tuple(reason for reason, mask in self.by_reason() if mask[i])


def candidate_reasons(
    o: CompactionOptions, sizes: np.ndarray, records: np.ndarray, delete_files: np.ndarray, scoped: np.ndarray
) -> CandidateMasks:
    """Why each data file is a candidate of ``rewrite_data_files``: outside the size range, at least
    ``delete-file-threshold`` delete files, or file-scoped deletes (``scoped`` records) removing at least
    ``delete-ratio-threshold`` of its rows."""
    sizes = np.asarray(sizes, dtype=np.int64)
    records = np.asarray(records, dtype=np.int64)
    delete_files = np.asarray(delete_files, dtype=np.int64)
    small, large = o.size_masks(sizes)
    many = delete_files >= o.delete_file_threshold
    ratio = np.zeros(len(sizes), dtype=bool)
    with_rows = (delete_files > 0) & (records > 0)
    if with_rows.any():
        deleted = np.minimum(np.asarray(scoped, dtype=np.int64)[with_rows], records[with_rows])
        ratio[with_rows] = deleted / records[with_rows] >= o.delete_ratio_threshold
    return CandidateMasks(too_small=small, too_large=large, too_many_deletes=many, high_delete_ratio=ratio)


def why_not(group: Sequence[CandidateFile], o: CompactionOptions) -> str:
    return why_not_counts(len(group), sum(f.file_size_in_bytes for f in group), o)


def why_not_counts(files: int, size: int, o: CompactionOptions) -> str:
    """Why a packed group of ``files`` files and ``size`` bytes is not rewritten."""
    return (
        f"only {files} file{'s' if files != 1 else ''} (< min-input-files {o.min_input_files}) "
        f"and {size} bytes (<= target {o.target_file_size_bytes})"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Packed:
    """One packed group of candidate files of a partition, and whether it is rewritten."""

    partition: str
    files: tuple[CandidateFile, ...]
    rewritten: bool
    reasons: tuple[str, ...]
    """Why it is rewritten, or (when not) why not."""

    @property
    def input_size(self) -> int:
        return sum(f.file_size_in_bytes for f in self.files)

    @property
    def paths(self) -> frozenset[str]:
        return frozenset(f.file_path for f in self.files)

    @classmethod
    def extend(cls, packed: Packed, **extra: Any) -> Self:
        """``packed`` as a group of this class, with the fields it adds."""
        return cls(
            partition=packed.partition, files=packed.files, rewritten=packed.rewritten, reasons=packed.reasons, **extra
        )


G = TypeVar("G", bound=Packed)


@dataclass(frozen=True, slots=True, kw_only=True)
class PackPreview(Generic[G]):
    """What a bin-pack rewrite would do in snapshot ``snapshot_id``: the groups it rewrites and the
    candidate groups it leaves as they are."""

    snapshot_id: int | None
    options: CompactionOptions
    groups: tuple[G, ...]
    """Groups that would be rewritten."""
    skipped_groups: tuple[G, ...]

    @property
    def rewritten_files(self) -> tuple[CandidateFile, ...]:
        return tuple(f for g in self.groups for f in g.files)

    def files_frame(
        self, extra: Mapping[str, Callable[[CandidateFile], Any]], ints: Iterable[str] = ()
    ) -> pd.DataFrame:
        """One row per candidate file: its group (rewritten ones first), whether the group is rewritten,
        the file, the ``extra`` columns and the group's reasons."""
        base = ["group", "rewritten", "partition", "file_path", "file_size_in_bytes", "record_count"]
        rows = [
            {
                "group": index,
                "rewritten": g.rewritten,
                "partition": g.partition,
                "file_path": f.file_path,
                "file_size_in_bytes": f.file_size_in_bytes,
                "record_count": f.record_count,
                **{name: value(f) for name, value in extra.items()},
                "group_reasons": ", ".join(g.reasons),
            }
            for index, g in enumerate((*self.groups, *self.skipped_groups), start=1)
            for f in g.files
        ]
        columns = [*base, *extra, "group_reasons"]
        return frame(rows, columns, ints=["group", "file_size_in_bytes", "record_count", *ints])


def pack_partitions(
    by_partition: Mapping[Any, Sequence[CandidateFile]], labels: Mapping[Any, str], o: CompactionOptions
) -> Iterator[Packed]:
    """Each partition's candidates (all of them with ``rewrite-all``) packed, in the order of their
    labels, each group with its reasons."""
    for key in sorted(by_partition, key=lambda k: labels[k]):
        candidates = [c for c in by_partition[key] if o.rewrite_all or c.reasons]
        for packed in bin_pack(candidates, o.max_file_group_size_bytes):
            reasons = group_reasons(packed, o)
            yield Packed(
                partition=labels[key],
                files=tuple(packed),
                rewritten=bool(reasons),
                reasons=reasons or (why_not(packed, o),),
            )


def dangling_deletes(applied: Collection[str], deletes: Iterable[ScanFile]) -> frozenset[str]:
    """Paths of the position delete files (and deletion vectors) among ``deletes`` that apply to no
    task's data file (``applied``: the paths of those that apply to one): rewriting position deletes drops
    them."""
    return frozenset(
        d.file_path for d in deletes if d.content == FileContent.POSITION_DELETES and d.file_path not in applied
    )


__all__ = [
    "CandidateFile",
    "CandidateMasks",
    "CandidateReason",
    "CompactionOptions",
    "Packed",
    "bin_pack",
    "candidate_reasons",
    "compaction_options",
    "dangling_deletes",
    "group_reasons",
    "pack_partitions",
    "pack_runs",
    "run_reasons",
    "why_not",
    "why_not_counts",
]
