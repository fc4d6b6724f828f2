"""The file groups ``rewrite_data_files`` (bin-pack) would rewrite, computed from the manifests.

The reference implementation's bin-pack planner, step by step:

1. Plan the current snapshot's files (optionally filtered by ``where``), each with the delete files
   that apply to it (spec: "Scan Planning"), less equality deletes its column statistics rule out
   (see ``delete_index``).
2. Group files by partition; a file written with another spec than the table's default spec goes
   to one group with no partition values (its rows may belong to several partitions of the new spec).
3. In each partition keep the files that are outside [min-file-size-bytes, max-file-size-bytes]
   (defaults 0.75 and 1.8 times target-file-size-bytes, which defaults to the table property
   ``write.target-file-size-bytes``), or have at least ``delete-file-threshold`` delete files, or
   whose file-scoped deletes remove at least ``delete-ratio-threshold`` (0.3) of their rows.
4. Pack the kept files, in planning order, into groups of at most ``max-file-group-size-bytes``
   (100 GB; first fit with a look-back of one bin).
5. Rewrite a group when it has at least ``min-input-files`` (5) files (and more than one), or more
   than one file and more bytes than the target size, or more bytes than the max file size, or any
   file with too many deletes or too high a delete ratio. ``rewrite-all`` skips steps 3 and 5.

A file's size is its ``file_size_in_bytes``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from icebook.analysis._frames import frame
from icebook.analysis.scan.delete_index import attach_like_reference
from icebook.analysis.scan.planner import ScanFile, ScanTask, plan_scan
from icebook.analysis.store.table_like import TableLike
from icebook.errors import UnsupportedFeature
from icebook.spec.manifest import FileContent
from icebook.spec.snapshots import Snapshot

TARGET_FILE_SIZE_PROPERTY = "write.target-file-size-bytes"
DEFAULT_TARGET_FILE_SIZE = 512 * 1024 * 1024
MIN_FILE_SIZE_RATIO = 0.75
MAX_FILE_SIZE_RATIO = 1.80
DEFAULT_MIN_INPUT_FILES = 5
DEFAULT_MAX_GROUP_SIZE = 100 * 1024 * 1024 * 1024
DEFAULT_DELETE_FILE_THRESHOLD = 2**31 - 1  # Integer.MAX_VALUE: never, unless asked
DEFAULT_DELETE_RATIO_THRESHOLD = 0.3
OPTION_NAMES = (
    "target-file-size-bytes",
    "min-file-size-bytes",
    "max-file-size-bytes",
    "min-input-files",
    "rewrite-all",
    "max-file-group-size-bytes",
    "delete-file-threshold",
    "delete-ratio-threshold",
)
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


class OptionError(ValueError):
    """An option the procedure would reject, with its own reason."""


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


def compaction_options(
    properties: Mapping[str, str],
    options: Mapping[str, Any] | None = None,
    *,
    target_property: str = TARGET_FILE_SIZE_PROPERTY,
    default_target: int = DEFAULT_TARGET_FILE_SIZE,
    names: tuple[str, ...] = OPTION_NAMES,
) -> CompactionOptions:
    """The planner's settings from the procedure's ``options`` map and the table properties
    (``target_property``, else ``default_target``, gives the target file size)."""
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

    raw_target = properties.get(target_property)
    try:
        table_target = int(raw_target) if raw_target is not None else default_target
    except ValueError:
        raise OptionError(f"table property {target_property}={raw_target!r} is not an integer") from None
    target = as_int("target-file-size-bytes", table_target)
    minimum = as_int("min-file-size-bytes", int(target * MIN_FILE_SIZE_RATIO))
    maximum = as_int("max-file-size-bytes", int(target * MAX_FILE_SIZE_RATIO))
    if target <= 0:
        raise OptionError(f"'target-file-size-bytes' is set to {target} but must be > 0")
    if minimum < 0:
        raise OptionError(f"'min-file-size-bytes' is set to {minimum} but must be >= 0")
    if not target > minimum:
        raise OptionError(f"'target-file-size-bytes' ({target}) must be > 'min-file-size-bytes' ({minimum})")
    if not target < maximum:
        raise OptionError(f"'target-file-size-bytes' ({target}) must be < 'max-file-size-bytes' ({maximum})")
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
        target_file_size_bytes=target,
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
    """A data file of the plan with what the planner weighs."""

    file_path: str
    spec_id: int
    partition: str
    file_size_in_bytes: int
    record_count: int
    delete_files: int
    file_scoped_deleted_records: int
    reasons: tuple[str, ...]
    """Why the file is a candidate: "too small", "too large", "too many deletes", "high delete ratio"."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FileGroup:
    """A bin of candidate files of one partition, and whether it is rewritten."""

    partition: str
    files: tuple[CandidateFile, ...]
    rewritten: bool
    reasons: tuple[str, ...]
    """Why it is rewritten, or (when not) why not."""
    expected_output_files: int

    @property
    def input_size(self) -> int:
        return sum(f.file_size_in_bytes for f in self.files)

    @property
    def paths(self) -> frozenset[str]:
        return frozenset(f.file_path for f in self.files)


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionPreview:
    """What ``rewrite_data_files`` (bin-pack) would rewrite in snapshot ``snapshot_id``."""

    snapshot_id: int | None
    options: CompactionOptions
    groups: tuple[FileGroup, ...]
    """Groups that would be rewritten."""
    skipped_groups: tuple[FileGroup, ...]
    files_planned: int
    partitions: int

    @property
    def rewritten_files(self) -> tuple[CandidateFile, ...]:
        return tuple(f for g in self.groups for f in g.files)

    @property
    def rewritten_bytes(self) -> int:
        return sum(g.input_size for g in self.groups)

    @property
    def expected_output_files(self) -> int:
        return sum(g.expected_output_files for g in self.groups)

    def to_pandas(self) -> pd.DataFrame:
        """One row per candidate file: its group, whether the group is rewritten, and why."""
        rows = []
        for index, g in enumerate((*self.groups, *self.skipped_groups), start=1):
            for f in g.files:
                rows.append(
                    {
                        "group": index,
                        "rewritten": g.rewritten,
                        "partition": g.partition,
                        "file_path": f.file_path,
                        "file_size_in_bytes": f.file_size_in_bytes,
                        "record_count": f.record_count,
                        "delete_files": f.delete_files,
                        "file_reasons": ", ".join(f.reasons),
                        "group_reasons": ", ".join(g.reasons),
                    }
                )
        columns = [
            "group",
            "rewritten",
            "partition",
            "file_path",
            "file_size_in_bytes",
            "record_count",
            "delete_files",
            "file_reasons",
            "group_reasons",
        ]
        return frame(rows, columns, ints=["group", "file_size_in_bytes", "record_count", "delete_files"])

    def summary(self) -> str:
        return (
            f"rewrite_data_files would rewrite {len(self.rewritten_files)} of {self.files_planned} data files "
            f"({self.rewritten_bytes} bytes) in {len(self.groups)} groups into about {self.expected_output_files} "
            f"files; {len(self.skipped_groups)} candidate groups stay as they are"
        )

    def __repr__(self) -> str:
        return f"<CompactionPreview: {self.summary()}>"


def _candidate(task: ScanTask, o: CompactionOptions) -> CandidateFile:
    f = task.file
    deletes = task.deletes
    scoped = sum(d.record_count for d in deletes if _file_scoped(d))
    reasons = []
    if f.file_size_in_bytes < o.min_file_size_bytes:
        reasons.append("too small")
    if f.file_size_in_bytes > o.max_file_size_bytes:
        reasons.append("too large")
    if len(deletes) >= o.delete_file_threshold:
        reasons.append("too many deletes")
    if deletes and f.record_count and min(scoped, f.record_count) / f.record_count >= o.delete_ratio_threshold:
        reasons.append("high delete ratio")
    return CandidateFile(
        file_path=f.file_path,
        spec_id=f.spec_id,
        partition=f.partition_text,
        file_size_in_bytes=f.file_size_in_bytes,
        record_count=f.record_count,
        delete_files=len(deletes),
        file_scoped_deleted_records=scoped,
        reasons=tuple(reasons),
    )


def _file_scoped(d: ScanFile) -> bool:
    """A deletion vector, or a position delete file for one data file (referenced_data_file, or equal
    file_path bounds)."""
    if d.content != FileContent.POSITION_DELETES:
        return False
    if d.referenced_data_file is not None:
        return True
    lo, hi = d.file_path_bounds
    return lo is not None and lo == hi


def bin_pack(items: Sequence[CandidateFile], capacity: int) -> list[list[CandidateFile]]:
    """First fit with a look-back of one bin (the reference implementation's ListPacker(capacity, 1, false))."""
    bins: list[tuple[list[CandidateFile], list[int]]] = []
    out: list[list[CandidateFile]] = []
    for item in items:
        weight = item.file_size_in_bytes
        target = next((b for b in bins if b[1][0] + weight <= capacity), None)
        if target is not None:
            target[0].append(item)
            target[1][0] += weight
            continue
        bins.append(([item], [weight]))
        if len(bins) > 1:
            out.append(bins.pop(0)[0])
    out.extend(b[0] for b in bins)
    return out


def _group_reasons(group: list[CandidateFile], o: CompactionOptions) -> list[str]:
    size = sum(f.file_size_in_bytes for f in group)
    reasons = []
    if len(group) > 1 and len(group) >= o.min_input_files:
        reasons.append(f"{len(group)} files >= min-input-files {o.min_input_files}")
    if len(group) > 1 and size > o.target_file_size_bytes:
        reasons.append(f"{size} bytes > target {o.target_file_size_bytes}")
    if size > o.max_file_size_bytes:
        reasons.append(f"{size} bytes > max file size {o.max_file_size_bytes}")
    if any("too many deletes" in f.reasons for f in group):
        reasons.append(f"a file has >= {o.delete_file_threshold} delete files")
    if any("high delete ratio" in f.reasons for f in group):
        reasons.append(f"a file has >= {o.delete_ratio_threshold:.0%} of its rows deleted")
    return reasons


def compaction_preview(
    table: TableLike,
    snapshot: Snapshot | None,
    options: Mapping[str, Any] | None = None,
    *,
    where: str | None = None,
) -> CompactionPreview:
    """The groups ``rewrite_data_files(strategy => 'binpack', options => ..., where => ...)`` would rewrite."""
    o = compaction_options(table.metadata.properties, options)
    if snapshot is None:
        return CompactionPreview(
            snapshot_id=None, options=o, groups=(), skipped_groups=(), files_planned=0, partitions=0
        )
    plan = plan_scan(table, snapshot, where)
    tasks = attach_like_reference(plan.tasks, table.metadata, table.store, snapshot)
    default_spec = table.metadata.default_spec_id
    width = len(table.metadata.default_spec().fields)
    by_partition: dict[tuple[Any, ...], list[ScanTask]] = {}
    labels: dict[tuple[Any, ...], str] = {}
    for task in tasks:
        f = task.file
        if f.spec_id == default_spec:
            key = tuple(v for _, v in f.partition)
            labels.setdefault(key, f.partition_text)
        else:
            key = (None,) * width
            labels.setdefault(key, "files of older partition specs" if width else "unpartitioned")
        by_partition.setdefault(key, []).append(task)
    groups: list[FileGroup] = []
    skipped: list[FileGroup] = []
    for key in sorted(by_partition, key=lambda k: labels[k]):
        candidates = [_candidate(t, o) for t in by_partition[key]]
        if not o.rewrite_all:
            candidates = [c for c in candidates if c.reasons]
        for packed in bin_pack(candidates, o.max_file_group_size_bytes):
            size = sum(f.file_size_in_bytes for f in packed)
            reasons = ["rewrite-all"] if o.rewrite_all else _group_reasons(packed, o)
            group = FileGroup(
                partition=labels[key],
                files=tuple(packed),
                rewritten=bool(reasons),
                reasons=tuple(reasons) if reasons else (_why_not(packed, o),),
                expected_output_files=o.expected_output_files(size),
            )
            (groups if group.rewritten else skipped).append(group)
    return CompactionPreview(
        snapshot_id=snapshot.snapshot_id,
        options=o,
        groups=tuple(groups),
        skipped_groups=tuple(skipped),
        files_planned=len(plan.tasks),
        partitions=len(by_partition),
    )


def _why_not(group: list[CandidateFile], o: CompactionOptions) -> str:
    size = sum(f.file_size_in_bytes for f in group)
    return (
        f"only {len(group)} file{'s' if len(group) != 1 else ''} (< min-input-files {o.min_input_files}) "
        f"and {size} bytes (<= target {o.target_file_size_bytes})"
    )


def ideal_file_count(total_bytes: int, target: int) -> int:
    """Files of the target size the bytes would fill (at least one when there are any)."""
    return max(1, math.ceil(total_bytes / target)) if total_bytes else 0


__all__ = [
    "CandidateFile",
    "CompactionOptions",
    "CompactionPreview",
    "FileGroup",
    "OptionError",
    "bin_pack",
    "compaction_options",
    "compaction_preview",
    "ideal_file_count",
]
