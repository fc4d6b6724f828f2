"""The file groups ``rewrite_data_files`` (bin-pack) would rewrite, computed from the manifests.

The reference implementation's bin-pack planner, step by step:

1. Plan the current snapshot's files (optionally filtered by ``where``), each with the delete files
   that apply to it (spec: "Scan Planning"), less equality deletes its column statistics rule out
   (``ScanPlan.reference_tasks``: the delete index's statistics rule).
2. Group files by partition; a file written with another spec than the table's default spec goes
   to one group with no partition values (its rows may belong to several partitions of the new spec).
3. In each partition keep the files (``binpack``) that are outside [min-file-size-bytes, max-file-size-bytes]
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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from icebook.analysis.maintenance.binpack import (
    CandidateFile,
    CompactionOptions,
    Packed,
    PackPreview,
    bin_pack,
    candidate_reasons,
    compaction_options,
    pack_partitions,
    pack_runs,
    run_reasons,
    why_not_counts,
)
from icebook.analysis.scan.model import ScanFile, ScanTask
from icebook.analysis.scan.planner import ScanPlan, plan_scan
from icebook.analysis.store.entries import UNPARTITIONED
from icebook.analysis.store.table_like import TableLike
from icebook.errors import OptionError
from icebook.spec.manifest import FileContent
from icebook.spec.metadata import TableMetadata
from icebook.spec.snapshots import Snapshot


@dataclass(frozen=True, slots=True, kw_only=True)
class FileGroup(Packed):
    """A bin of candidate data files of one partition, and whether it is rewritten."""

    expected_output_files: int

    @property
    def file_count(self) -> int:
        return len(self.files)


class _Totals:
    """What the rewritten groups of a compaction add up to (``groups``: each with ``file_count``,
    ``input_size`` and ``expected_output_files``)."""

    __slots__ = ()
    groups: tuple[Any, ...]
    skipped_groups: tuple[Any, ...]
    files_planned: int

    @property
    def rewritten_file_count(self) -> int:
        return sum(g.file_count for g in self.groups)

    @property
    def rewritten_bytes(self) -> int:
        return sum(g.input_size for g in self.groups)

    @property
    def expected_output_files(self) -> int:
        return sum(g.expected_output_files for g in self.groups)

    def summary(self) -> str:
        return (
            f"rewrite_data_files would rewrite {self.rewritten_file_count} of {self.files_planned} data files "
            f"({self.rewritten_bytes} bytes) in {len(self.groups)} groups into about {self.expected_output_files} "
            f"files; {len(self.skipped_groups)} candidate groups stay as they are"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionPreview(_Totals, PackPreview[FileGroup]):
    """What ``rewrite_data_files`` (bin-pack) would rewrite in snapshot ``snapshot_id``."""

    files_planned: int
    partitions: int

    def to_pandas(self) -> pd.DataFrame:
        """One row per candidate file: its group, whether the group is rewritten, and why."""
        extra = {"delete_files": lambda f: f.delete_files, "file_reasons": lambda f: ", ".join(f.reasons)}
        return self.files_frame(extra, ints=["delete_files"])

    def __repr__(self) -> str:
        return f"<CompactionPreview: {self.summary()}>"


def _candidates(tasks: Sequence[ScanTask], o: CompactionOptions) -> list[CandidateFile]:
    """Each task's file with what the planner weighs, and why it is a candidate (``candidate_reasons``)."""
    scoped = [sum(d.record_count for d in t.deletes if file_scoped(d)) for t in tasks]
    masks = candidate_reasons(
        o,
        np.array([t.file.file_size_in_bytes for t in tasks], dtype=np.int64),
        np.array([t.file.record_count for t in tasks], dtype=np.int64),
        np.array([len(t.deletes) for t in tasks], dtype=np.int64),
        np.array(scoped, dtype=np.int64),
    )
    return [
        CandidateFile(
            file_path=t.file.file_path,
            spec_id=t.file.spec_id,
            partition=t.file.partition_text,
            file_size_in_bytes=t.file.file_size_in_bytes,
            record_count=t.file.record_count,
            delete_files=len(t.deletes),
            file_scoped_deleted_records=deleted,
            reasons=masks.reasons(i),
        )
        for i, (t, deleted) in enumerate(zip(tasks, scoped, strict=True))
    ]


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupCounts:
    """A packed group of candidate data files, counted: what the health report shows of it."""

    partition: str
    file_count: int
    input_size: int
    rewritten: bool
    reasons: tuple[str, ...]
    expected_output_files: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionCounts(_Totals):
    """What ``rewrite_data_files`` (bin-pack, default options) would rewrite, in counts: the same groups
    as ``CompactionPreview`` without the file lists (the health report's measure)."""

    snapshot_id: int | None
    options: CompactionOptions
    groups: tuple[GroupCounts, ...]
    skipped_groups: tuple[GroupCounts, ...]
    files_planned: int
    partitions: int

    def __repr__(self) -> str:
        return f"<CompactionCounts: {self.summary()}>"


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionCandidates:
    """One partition's candidate files in planning order, as the counts need them."""

    label: str
    sizes: np.ndarray
    too_many_deletes: np.ndarray
    high_delete_ratio: np.ndarray

    @classmethod
    def joined(cls, label: str, parts: Sequence[PartitionCandidates]) -> PartitionCandidates:
        """``parts`` (of one partition, in planning order) as one."""
        return cls(
            label=label,
            sizes=np.concatenate([np.zeros(0, dtype=np.int64), *(p.sizes for p in parts)]),
            too_many_deletes=np.concatenate([np.zeros(0, dtype=bool), *(p.too_many_deletes for p in parts)]),
            high_delete_ratio=np.concatenate([np.zeros(0, dtype=bool), *(p.high_delete_ratio for p in parts)]),
        )


@dataclass(frozen=True, slots=True)
class CompactionGroups:
    """Which partition group of ``rewrite_data_files`` a file falls in: files of the default spec by their
    partition values, files of any other spec together in one group (the procedure rewrites them into the
    default spec)."""

    default_spec_id: int
    width: int
    """Fields of the default spec."""

    @classmethod
    def of(cls, metadata: TableMetadata) -> CompactionGroups:
        return cls(metadata.default_spec_id, len(metadata.default_spec().fields))

    def key(self, spec_id: int, values: tuple[Any, ...]) -> tuple[Any, ...]:
        """The group of a file of ``spec_id`` with partition ``values`` (physical form, spec order)."""
        return values if spec_id == self.default_spec_id else (None,) * self.width

    def label(self, spec_id: int, partition_text: str) -> str:
        """The group's label: the partition's, or for other specs' files one name for them all."""
        if spec_id == self.default_spec_id:
            return partition_text
        return "files of older partition specs" if self.width else UNPARTITIONED


def compaction_counts(
    snapshot_id: int | None, o: CompactionOptions, partitions: Sequence[PartitionCandidates], files_planned: int
) -> CompactionCounts:
    """``CompactionPreview``'s groups, counted, from each partition's candidates (every partition of the
    plan, candidates or not: ``partitions`` counts them): packed and judged by the same rules."""
    groups: list[GroupCounts] = []
    skipped: list[GroupCounts] = []
    for p in sorted(partitions, key=lambda p: p.label):
        for start, end in pack_runs(p.sizes, o.max_file_group_size_bytes):
            size = int(p.sizes[start:end].sum())
            count = end - start
            reasons = run_reasons(
                count, size, bool(p.too_many_deletes[start:end].any()), bool(p.high_delete_ratio[start:end].any()), o
            )
            group = GroupCounts(
                partition=p.label,
                file_count=count,
                input_size=size,
                rewritten=bool(reasons),
                reasons=reasons or (why_not_counts(count, size, o),),
                expected_output_files=o.expected_output_files(size),
            )
            (groups if group.rewritten else skipped).append(group)
    return CompactionCounts(
        snapshot_id=snapshot_id,
        options=o,
        groups=tuple(groups),
        skipped_groups=tuple(skipped),
        files_planned=files_planned,
        partitions=len(partitions),
    )


def file_scoped(d: ScanFile) -> bool:
    """A deletion vector, or a position delete file for one data file (referenced_data_file, or equal
    file_path bounds)."""
    if d.content != FileContent.POSITION_DELETES:
        return False
    if d.referenced_data_file is not None:
        return True
    lo, hi = d.file_path_bounds
    return lo is not None and lo == hi


def compaction_preview(
    table: TableLike,
    snapshot: Snapshot | None,
    options: Mapping[str, Any] | None = None,
    *,
    where: str | None = None,
    plan: ScanPlan | None = None,
) -> CompactionPreview:
    """The groups ``rewrite_data_files(strategy => 'binpack', options => ..., where => ...)`` would rewrite.
    ``plan``: the snapshot's unfiltered plan with equality statistics, when the caller has it."""
    o = compaction_options(table.metadata.properties, options)
    if snapshot is None:
        return CompactionPreview(
            snapshot_id=None, options=o, groups=(), skipped_groups=(), files_planned=0, partitions=0
        )
    if plan is None or where is not None:
        plan = plan_scan(table, snapshot, where, equality_stats=True)
    tasks = plan.reference_tasks
    grouping = CompactionGroups.of(table.metadata)
    by_partition: dict[tuple[Any, ...], list[CandidateFile]] = {}
    labels: dict[tuple[Any, ...], str] = {}
    for task, candidate in zip(tasks, _candidates(tasks, o), strict=True):
        f = task.file
        key = grouping.key(f.spec_id, tuple(v for _, v in f.partition))
        labels.setdefault(key, grouping.label(f.spec_id, f.partition_text))
        by_partition.setdefault(key, []).append(candidate)
    groups: list[FileGroup] = []
    skipped: list[FileGroup] = []
    for packed in pack_partitions(by_partition, labels, o):
        group = FileGroup.extend(packed, expected_output_files=o.expected_output_files(packed.input_size))
        (groups if group.rewritten else skipped).append(group)
    return CompactionPreview(
        snapshot_id=snapshot.snapshot_id,
        options=o,
        groups=tuple(groups),
        skipped_groups=tuple(skipped),
        files_planned=len(tasks),
        partitions=len(by_partition),
    )


__all__ = [
    "CandidateFile",
    "CompactionCounts",
    "CompactionGroups",
    "CompactionOptions",
    "CompactionPreview",
    "FileGroup",
    "GroupCounts",
    "OptionError",
    "PartitionCandidates",
    "bin_pack",
    "compaction_counts",
    "compaction_options",
    "compaction_preview",
    "file_scoped",
]
