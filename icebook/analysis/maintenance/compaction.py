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

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from icebook.analysis.maintenance.binpack import (
    HIGH_DELETE_RATIO,
    TOO_MANY_DELETES,
    CandidateFile,
    CompactionOptions,
    Packed,
    PackPreview,
    bin_pack,
    compaction_options,
    pack_partitions,
)
from icebook.analysis.scan.model import ScanFile, ScanTask
from icebook.analysis.scan.planner import ScanPlan, plan_scan
from icebook.analysis.store.table_like import TableLike
from icebook.errors import OptionError
from icebook.spec.manifest import FileContent
from icebook.spec.snapshots import Snapshot


@dataclass(frozen=True, slots=True, kw_only=True)
class FileGroup(Packed):
    """A bin of candidate data files of one partition, and whether it is rewritten."""

    expected_output_files: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionPreview(PackPreview[FileGroup]):
    """What ``rewrite_data_files`` (bin-pack) would rewrite in snapshot ``snapshot_id``."""

    files_planned: int
    partitions: int

    @property
    def rewritten_bytes(self) -> int:
        return sum(g.input_size for g in self.groups)

    @property
    def expected_output_files(self) -> int:
        return sum(g.expected_output_files for g in self.groups)

    def to_pandas(self) -> pd.DataFrame:
        """One row per candidate file: its group, whether the group is rewritten, and why."""
        extra = {"delete_files": lambda f: f.delete_files, "file_reasons": lambda f: ", ".join(f.reasons)}
        return self.files_frame(extra, ints=["delete_files"])

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
    reasons = list(o.size_reasons(f.file_size_in_bytes))
    if len(deletes) >= o.delete_file_threshold:
        reasons.append(TOO_MANY_DELETES)
    if deletes and f.record_count and min(scoped, f.record_count) / f.record_count >= o.delete_ratio_threshold:
        reasons.append(HIGH_DELETE_RATIO)
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
    default_spec = table.metadata.default_spec_id
    width = len(table.metadata.default_spec().fields)
    by_partition: dict[tuple[Any, ...], list[CandidateFile]] = {}
    labels: dict[tuple[Any, ...], str] = {}
    for task in tasks:
        f = task.file
        if f.spec_id == default_spec:
            key = tuple(v for _, v in f.partition)
            labels.setdefault(key, f.partition_text)
        else:
            key = (None,) * width
            labels.setdefault(key, "files of older partition specs" if width else "unpartitioned")
        by_partition.setdefault(key, []).append(_candidate(task, o))
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
    "CompactionOptions",
    "CompactionPreview",
    "FileGroup",
    "OptionError",
    "bin_pack",
    "compaction_options",
    "compaction_preview",
]
