"""What ``rewrite_manifests`` and ``rewrite_position_delete_files`` would do, from the metadata alone.

``rewrite_manifests`` (the reference implementation's Spark action): for data manifests and then
delete manifests of the current snapshot written with the table's default spec, the matching
manifests are rewritten into ceil(total bytes / ``commit.manifest.target-size-bytes``) manifests
(8 MB by default), entries clustered by partition; a single manifest that would stay single is left
alone. Manifests of other specs are not touched.

``rewrite_position_delete_files`` (bin-pack): the current snapshot's position delete files, grouped
by partition (the table-wide partition type), keep those outside the size range around
``write.delete.target-file-size-bytes`` (64 MB by default; 0.75 and 1.8 times it), pack them like
``rewrite_data_files`` and rewrite a group with at least ``min-input-files`` (5) files, more bytes
than the target, or more than the max. Rewriting drops deletes whose data file is gone (dangling).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from icebook.analysis._frames import frame
from icebook.analysis.maintenance.binpack import (
    SIZE_OPTION_NAMES,
    CandidateFile,
    Packed,
    PackPreview,
    compaction_options,
    dangling_deletes,
    pack_partitions,
)
from icebook.analysis.scan.planner import plan_scan
from icebook.analysis.store.entries import counted_size, partition_label
from icebook.analysis.store.manifests import table_partition_type
from icebook.analysis.store.table_like import TableLike
from icebook.spec import properties
from icebook.spec.manifest import FileContent, ManifestContent, ManifestFile
from icebook.spec.snapshots import Snapshot


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestRewrite:
    """One content type's manifests and what the rewrite makes of them."""

    content: ManifestContent
    manifests: tuple[ManifestFile, ...]
    """The manifests of the default spec (the ones the rewrite considers)."""
    target_size_bytes: int
    other_spec_manifests: int

    @property
    def total_bytes(self) -> int:
        return sum(m.manifest_length for m in self.manifests)

    @property
    def target_count(self) -> int:
        return math.ceil(self.total_bytes / self.target_size_bytes) if self.manifests else 0

    @property
    def rewritten(self) -> bool:
        return bool(self.manifests) and not (self.target_count == 1 and len(self.manifests) == 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestRewritePreview:
    snapshot_id: int | None
    spec_id: int
    parts: tuple[ManifestRewrite, ...]

    @property
    def rewritten_manifests(self) -> int:
        return sum(len(p.manifests) for p in self.parts if p.rewritten)

    @property
    def added_manifests_at_most(self) -> int:
        return sum(p.target_count for p in self.parts if p.rewritten)

    def to_pandas(self) -> pd.DataFrame:
        rows = [
            {
                "content": p.content.label,
                "manifest_path": m.manifest_path,
                "length": m.manifest_length,
                "rewritten": p.rewritten,
                "target_manifests": p.target_count,
            }
            for p in self.parts
            for m in p.manifests
        ]
        return frame(rows, ["content", "manifest_path", "length", "rewritten", "target_manifests"], ints=["length"])

    def summary(self) -> str:
        if not self.rewritten_manifests:
            return "rewrite_manifests would change nothing"
        parts = ", ".join(
            f"{len(p.manifests)} {p.content.label} manifests ({p.total_bytes} bytes) into {p.target_count}"
            for p in self.parts
            if p.rewritten
        )
        return f"rewrite_manifests would rewrite {parts}"

    def __repr__(self) -> str:
        return f"<ManifestRewritePreview: {self.summary()}>"


def manifest_rewrite_preview(
    table: TableLike, snapshot: Snapshot | None, *, spec_id: int | None = None
) -> ManifestRewritePreview:
    metadata, store = table.metadata, table.store
    spec = metadata.default_spec_id if spec_id is None else spec_id
    target = properties.MANIFEST_TARGET_SIZE_BYTES.read(metadata.properties)
    manifests = store.manifest_list(snapshot) if snapshot is not None else ()
    parts = []
    for content in ManifestContent:
        of_content = [m for m in manifests if m.effective_content == content]
        matching = tuple(m for m in of_content if m.partition_spec_id == spec)
        parts.append(
            ManifestRewrite(
                content=content,
                manifests=matching,
                target_size_bytes=target,
                other_spec_manifests=len(of_content) - len(matching),
            )
        )
    return ManifestRewritePreview(
        snapshot_id=None if snapshot is None else snapshot.snapshot_id, spec_id=spec, parts=tuple(parts)
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteGroup(Packed):
    """A bin of candidate position delete files of one partition, and whether it is rewritten."""

    dangling: int
    """Files of the group that apply to no live data file (the rewrite drops them)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteRewritePreview(PackPreview[DeleteGroup]):
    """What ``rewrite_position_delete_files`` (bin-pack) would rewrite in snapshot ``snapshot_id``."""

    position_delete_files: int
    dangling: tuple[str, ...]
    """Every live position delete file that applies to no live data file."""

    def to_pandas(self) -> pd.DataFrame:
        dangling = set(self.dangling)
        return self.files_frame({"dangling": lambda f: f.file_path in dangling})

    def summary(self) -> str:
        return (
            f"rewrite_position_delete_files would rewrite {len(self.rewritten_files)} of "
            f"{self.position_delete_files} position delete files in {len(self.groups)} groups; "
            f"{len(self.dangling)} apply to no live data file"
        )

    def __repr__(self) -> str:
        return f"<DeleteRewritePreview: {self.summary()}>"


def delete_rewrite_preview(
    table: TableLike, snapshot: Snapshot | None, options: Mapping[str, Any] | None = None
) -> DeleteRewritePreview:
    o = compaction_options(
        table.metadata.properties,
        options,
        target=properties.DELETE_TARGET_FILE_SIZE_BYTES,
        names=SIZE_OPTION_NAMES,
    )
    if snapshot is None:
        return DeleteRewritePreview(
            snapshot_id=None, options=o, groups=(), skipped_groups=(), position_delete_files=0, dangling=()
        )
    plan = plan_scan(table, snapshot)
    deletes = [d for d in plan.kept_delete_files() if d.content == FileContent.POSITION_DELETES]
    dangling = dangling_deletes({d.file_path for d in plan.delete_files}, deletes)
    names = [f.name for f in table_partition_type(table.metadata).fields]
    by_partition: dict[tuple[Any, ...], list[CandidateFile]] = {}
    labels: dict[tuple[Any, ...], str] = {}
    for f in deletes:
        values = dict(f.partition)
        key = tuple(values.get(n) for n in names)
        labels.setdefault(key, partition_label(names, [values.get(n) for n in names]))
        size = counted_size(f.file_size_in_bytes, f.content_size_in_bytes if f.is_deletion_vector else None)
        by_partition.setdefault(key, []).append(
            CandidateFile(
                file_path=f.file_path,
                spec_id=f.spec_id,
                partition=f.partition_text,
                file_size_in_bytes=size,
                record_count=f.record_count,
                delete_files=0,
                file_scoped_deleted_records=0,
                reasons=o.size_reasons(size),
            )
        )
    groups: list[DeleteGroup] = []
    skipped: list[DeleteGroup] = []
    for packed in pack_partitions(by_partition, labels, o):
        group = DeleteGroup.extend(packed, dangling=sum(f.file_path in dangling for f in packed.files))
        (groups if group.rewritten else skipped).append(group)
    return DeleteRewritePreview(
        snapshot_id=snapshot.snapshot_id,
        options=o,
        groups=tuple(groups),
        skipped_groups=tuple(skipped),
        position_delete_files=len(deletes),
        dangling=tuple(sorted(dangling)),
    )


__all__ = [
    "DeleteGroup",
    "DeleteRewritePreview",
    "ManifestRewrite",
    "ManifestRewritePreview",
    "delete_rewrite_preview",
    "manifest_rewrite_preview",
]
