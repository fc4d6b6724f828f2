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
import pyarrow as pa

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
from icebook.analysis.scan.plan_items import ScanFile
from icebook.analysis.scan.planner import ScanPlan, plan_scan
from icebook.analysis.scan.tasks import TaskColumns, delete_files_at, task_columns
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


def _candidates(plan: ScanPlan, o: CompactionOptions) -> tuple[TaskColumns, list[tuple[int, CandidateFile]]]:
    """The plan's tasks as the reference implementation attaches deletes, as columns, and (the row's
    partition, the file with what the planner weighs and why it is a candidate: ``candidate_reasons``) for
    each row that is one (every row with ``rewrite-all``): no object for a file that is not."""
    cols = task_columns(plan, like_reference=True)
    table = cols.table
    n = table.num_rows
    delete_files = np.bincount(cols.pair_data, minlength=n).astype(np.int64)
    deletes = delete_files_at(plan, cols.pair_delete) if len(cols.pair_delete) else {}
    scoped_of = {x: d.record_count if file_scoped(d) else 0 for x, d in deletes.items()}
    scoped = np.zeros(n, dtype=np.int64)
    np.add.at(scoped, cols.pair_data, np.array([scoped_of[x] for x in cols.pair_delete.tolist()], dtype=np.int64))
    sizes = _ints(table["file_size_in_bytes"])
    records = _ints(table["record_count"])
    masks = candidate_reasons(o, sizes, records, delete_files, scoped)
    chosen = np.ones(n, dtype=bool) if o.rewrite_all else masks.any()
    rows = np.flatnonzero(chosen)
    picked = table.select(["file_path", "spec_id", "partition"]).take(pa.array(rows)).to_pydict()
    out = [
        (
            int(cols.partition[i]),
            CandidateFile(
                file_path=path,
                spec_id=spec_id,
                partition=text,
                file_size_in_bytes=int(sizes[i]),
                record_count=int(records[i]),
                delete_files=int(delete_files[i]),
                file_scoped_deleted_records=int(scoped[i]),
                reasons=masks.reasons(i),
            ),
        )
        for i, path, spec_id, text in zip(
            rows.tolist(), picked["file_path"], picked["spec_id"], picked["partition"], strict=True
        )
    ]
    return cols, out


def _ints(column: pa.ChunkedArray) -> np.ndarray:
    return np.asarray(column.fill_null(0).to_numpy(), dtype=np.int64)


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
    cols, candidates = _candidates(plan, o)
    grouping = CompactionGroups.of(table.metadata)
    # Each partition of the plan, candidates or not, is one group key.
    group_of: list[tuple[Any, ...]] = []
    labels: dict[tuple[Any, ...], str] = {}
    for (spec_id, values), text in zip(cols.partitions, cols.partition_texts, strict=True):
        key = grouping.key(spec_id, values)
        labels.setdefault(key, grouping.label(spec_id, text))
        group_of.append(key)
    by_partition: dict[tuple[Any, ...], list[CandidateFile]] = {
        group_of[p]: [] for p in np.unique(cols.partition).tolist()
    }
    for partition, candidate in candidates:
        by_partition[group_of[partition]].append(candidate)
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
        files_planned=cols.table.num_rows,
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
