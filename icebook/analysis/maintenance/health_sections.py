"""The measurements of a health report, one section each: file sizes and delete debt per partition,
manifests (and how many a one-partition filter must open), history weight, refs.

Each section is plain frozen data; ``health`` turns them into findings.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from icebook.analysis._frames import frame
from icebook.analysis.maintenance.binpack import TOO_LARGE, TOO_SMALL, CompactionOptions, dangling_deletes
from icebook.analysis.maintenance.expire import ExpirePreview
from icebook.analysis.scan.model import ScanFile, ScanTask
from icebook.analysis.store.manifests import ManifestStore
from icebook.spec import properties
from icebook.spec.manifest import FileContent, ManifestContent, ManifestFile
from icebook.spec.metadata import TableMetadata
from icebook.spec.snapshots import Snapshot

SIZE_BUCKETS = (
    ("< 1% of target", 0.0, 0.01),
    ("1-10%", 0.01, 0.10),
    ("10-75% (small)", 0.10, 0.75),
    ("75-180% (in range)", 0.75, 1.80),
    ("> 180% (large)", 1.80, float("inf")),
)


# ---------------------------------------------------------------------------------- files per partition


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionHealth:
    """One partition (of one spec) at the report's snapshot."""

    partition: str
    spec_id: int
    data_files: int
    data_bytes: int
    records: int
    small_files: int
    """Data files under min-file-size-bytes (0.75 x target by default)."""
    large_files: int
    position_delete_files: int
    deletion_vectors: int
    equality_delete_files: int
    delete_records: int
    """Rows listed by the delete files that apply here (an upper bound of rows deleted)."""
    files_with_deletes: int
    """Data files that at least one delete file applies to: every read merges them."""
    equality_deletes_applying: int
    """Equality delete files that still apply to at least one data file of the partition."""
    dangling_deletes: int
    """Position delete files (and vectors) of the partition that apply to no live data file."""

    @property
    def delete_ratio(self) -> float:
        return self.delete_records / self.records if self.records else 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class FilesHealth:
    target_file_size_bytes: int
    min_file_size_bytes: int
    max_file_size_bytes: int
    partitions: tuple[PartitionHealth, ...]
    size_histogram: tuple[tuple[str, int], ...]
    """(bucket relative to the target size, data files in it)."""

    @property
    def data_files(self) -> int:
        return sum(p.data_files for p in self.partitions)

    @property
    def small_files(self) -> int:
        return sum(p.small_files for p in self.partitions)

    @property
    def files_with_deletes(self) -> int:
        return sum(p.files_with_deletes for p in self.partitions)

    @property
    def delete_files(self) -> int:
        return sum(p.position_delete_files + p.deletion_vectors + p.equality_delete_files for p in self.partitions)

    @property
    def dangling_deletes(self) -> int:
        return sum(p.dangling_deletes for p in self.partitions)

    def to_pandas(self) -> pd.DataFrame:
        rows = []
        for p in self.partitions:
            rows.append(
                {
                    "partition": p.partition,
                    "spec_id": p.spec_id,
                    "data_files": p.data_files,
                    "small_files": p.small_files,
                    "large_files": p.large_files,
                    "data_bytes": p.data_bytes,
                    "avg_file_bytes": p.data_bytes // p.data_files if p.data_files else 0,
                    "records": p.records,
                    "position_delete_files": p.position_delete_files,
                    "deletion_vectors": p.deletion_vectors,
                    "equality_delete_files": p.equality_delete_files,
                    "delete_records": p.delete_records,
                    "delete_ratio": round(p.delete_ratio, 4),
                    "files_with_deletes": p.files_with_deletes,
                    "equality_deletes_applying": p.equality_deletes_applying,
                    "dangling_deletes": p.dangling_deletes,
                }
            )
        columns = [
            "partition",
            "spec_id",
            "data_files",
            "small_files",
            "large_files",
            "data_bytes",
            "avg_file_bytes",
            "records",
            "position_delete_files",
            "deletion_vectors",
            "equality_delete_files",
            "delete_records",
            "delete_ratio",
            "files_with_deletes",
            "equality_deletes_applying",
            "dangling_deletes",
        ]
        ints = [c for c in columns if c not in ("partition", "delete_ratio")]
        return frame(rows, columns, ints=ints)


def files_health(tasks: Sequence[ScanTask], deletes: Sequence[ScanFile], options: CompactionOptions) -> FilesHealth:
    """Per-partition file sizes and delete debt from a scan plan's tasks (deletes attached as the
    reference implementation attaches them) and every live delete file of the snapshot."""
    groups: dict[tuple[int, str], dict[str, Any]] = defaultdict(
        lambda: {"data": [], "deletes": {}, "applied": set(), "eq_applying": set(), "with_deletes": 0}
    )
    histogram = dict.fromkeys((b[0] for b in SIZE_BUCKETS), 0)
    target = options.target_file_size_bytes
    for task in tasks:
        f = task.file
        g = groups[(f.spec_id, f.partition_text)]
        g["data"].append(f)
        ratio = f.file_size_in_bytes / target if target else 0.0
        for name, low, high in SIZE_BUCKETS:
            if low <= ratio < high:
                histogram[name] += 1
                break
        if task.deletes:
            g["with_deletes"] += 1
        for d in task.deletes:
            g["applied"].add(d.file_path)
            if d.content == FileContent.EQUALITY_DELETES:
                g["eq_applying"].add(d.file_path)
    applied_anywhere = {d.file_path for t in tasks for d in t.deletes}
    dangling = dangling_deletes(tasks, deletes)
    for d in deletes:
        groups[(d.spec_id, d.partition_text)]["deletes"][d.file_path + f"#{d.content_offset}"] = d
    partitions = []
    for (spec_id, label), g in sorted(groups.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        data = g["data"]
        own_deletes = list(g["deletes"].values())
        applying = [d for d in own_deletes if d.file_path in applied_anywhere]
        partitions.append(
            PartitionHealth(
                partition=label,
                spec_id=spec_id,
                data_files=len(data),
                data_bytes=sum(f.file_size_in_bytes for f in data),
                records=sum(f.record_count for f in data),
                small_files=sum(TOO_SMALL in options.size_reasons(f.file_size_in_bytes) for f in data),
                large_files=sum(TOO_LARGE in options.size_reasons(f.file_size_in_bytes) for f in data),
                position_delete_files=sum(
                    d.content == FileContent.POSITION_DELETES and not d.is_deletion_vector for d in own_deletes
                ),
                deletion_vectors=sum(d.is_deletion_vector for d in own_deletes),
                equality_delete_files=sum(d.content == FileContent.EQUALITY_DELETES for d in own_deletes),
                delete_records=sum(d.record_count for d in applying),
                files_with_deletes=g["with_deletes"],
                equality_deletes_applying=len(g["eq_applying"]),
                dangling_deletes=sum(d.file_path in dangling for d in own_deletes),
            )
        )
    return FilesHealth(
        target_file_size_bytes=target,
        min_file_size_bytes=options.min_file_size_bytes,
        max_file_size_bytes=options.max_file_size_bytes,
        partitions=tuple(partitions),
        size_histogram=tuple(histogram.items()),
    )


# ---------------------------------------------------------------------------------- manifests


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestsHealth:
    data_manifests: int
    delete_manifests: int
    total_bytes: int
    smallest_bytes: int
    largest_bytes: int
    live_entries: int
    target_size_bytes: int
    partition_reach: tuple[tuple[str, int, int], ...]
    """(partition, manifests a filter on exactly this partition opens, manifests holding its files):
    a manifest is opened when its partition ranges (every entry, live or deleted) include the
    partition's values, as manifest pruning by partition summaries decides."""

    @property
    def manifests(self) -> int:
        return self.data_manifests + self.delete_manifests

    @property
    def mean_entries(self) -> float:
        return self.live_entries / self.manifests if self.manifests else 0.0

    @property
    def worst_reach(self) -> tuple[str, int, int] | None:
        return max(self.partition_reach, key=lambda r: (r[1] - r[2], r[1]), default=None)

    @property
    def mean_opened(self) -> float:
        return sum(r[1] for r in self.partition_reach) / len(self.partition_reach) if self.partition_reach else 0.0

    def to_pandas(self) -> pd.DataFrame:
        return frame(
            ({"partition": p, "manifests_opened": o, "manifests_holding": h} for p, o, h in self.partition_reach),
            ["partition", "manifests_opened", "manifests_holding"],
            ints=["manifests_opened", "manifests_holding"],
        )


def manifests_health(
    metadata: TableMetadata, store: ManifestStore, snapshot: Snapshot | None, target_size: int
) -> ManifestsHealth:
    manifests: tuple[ManifestFile, ...] = store.manifest_list(snapshot) if snapshot is not None else ()
    tables = store.many_entries(manifests)
    ranges: list[tuple[int, list[tuple[Any, Any, bool]]]] = []
    live_parts: list[set[tuple[Any, ...]]] = []
    labels: dict[tuple[int, tuple[Any, ...]], str] = {}
    live_total = 0
    for m, table in zip(manifests, tables, strict=True):
        parts = table.column("partition").to_pylist()
        status = table.column("status").to_pylist()
        names = [pf.name for pf in metadata.spec_by_id(m.partition_spec_id).fields]
        tuples: list[tuple[Any, ...]] = [tuple((p or {}).get(n) for n in names) for p in parts]
        per_field: list[tuple[Any, Any, bool]] = []
        for i in range(len(names)):
            values: list[Any] = [t[i] for t in tuples if t[i] is not None]
            low = min(values) if values else None
            high = max(values) if values else None
            per_field.append((low, high, any(t[i] is None for t in tuples)))
        ranges.append((m.partition_spec_id, per_field))
        live = {t for t, s in zip(tuples, status, strict=True) if s != 2}
        live_total += sum(s != 2 for s in status)
        live_parts.append(live if (m.content or ManifestContent.DATA) == ManifestContent.DATA else set())
        for t in live:
            labels.setdefault((m.partition_spec_id, t), "/".join(f"{n}={v}" for n, v in zip(names, t, strict=True)))
    reach = []
    for (spec_id, key), label in sorted(labels.items(), key=lambda kv: kv[1]):
        opened = holding = 0
        for (m_spec, per_field), live, m in zip(ranges, live_parts, manifests, strict=True):
            if m_spec != spec_id or (m.content or ManifestContent.DATA) != ManifestContent.DATA or not live:
                continue
            if all(
                (v is None and has_null) or (v is not None and lo is not None and lo <= v <= hi)
                for v, (lo, hi, has_null) in zip(key, per_field, strict=True)
            ):
                opened += 1
            holding += key in live
        if holding:
            reach.append((label or "unpartitioned", opened, holding))
    sizes = [m.manifest_length for m in manifests]
    return ManifestsHealth(
        data_manifests=sum((m.content or ManifestContent.DATA) == ManifestContent.DATA for m in manifests),
        delete_manifests=sum(m.content == ManifestContent.DELETES for m in manifests),
        total_bytes=sum(sizes),
        smallest_bytes=min(sizes, default=0),
        largest_bytes=max(sizes, default=0),
        live_entries=live_total,
        target_size_bytes=target_size,
        partition_reach=tuple(reach),
    )


# ---------------------------------------------------------------------------------- history and refs


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryHealth:
    snapshots: int
    oldest_ms: int | None
    newest_ms: int | None
    max_snapshot_age_ms: int
    min_snapshots_to_keep: int
    past_retention: int
    """Snapshots committed before now - max-snapshot-age."""
    expirable: ExpirePreview | None
    """What ``expire_snapshots`` with the table's own settings would do now."""
    metadata_log_entries: int
    previous_versions_max: int
    delete_after_commit: bool
    metadata_file_bytes: int | None


def history_health(
    metadata: TableMetadata, expirable: ExpirePreview | None, metadata_file_bytes: int | None, now_ms: int
) -> HistoryHealth:
    props = metadata.properties
    age = properties.MAX_SNAPSHOT_AGE_MS.read(props)
    stamps = [s.timestamp_ms for s in metadata.snapshots]
    return HistoryHealth(
        snapshots=len(stamps),
        oldest_ms=min(stamps, default=None),
        newest_ms=max(stamps, default=None),
        max_snapshot_age_ms=age,
        min_snapshots_to_keep=properties.MIN_SNAPSHOTS_TO_KEEP.read(props),
        past_retention=sum(ts < now_ms - age for ts in stamps),
        expirable=expirable,
        metadata_log_entries=len(metadata.metadata_log),
        previous_versions_max=properties.PREVIOUS_VERSIONS_MAX.read(props),
        delete_after_commit=properties.DELETE_AFTER_COMMIT.read(props),
        metadata_file_bytes=metadata_file_bytes,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RefHealth:
    name: str
    type: str
    snapshot_id: int
    age_ms: int | None
    max_ref_age_ms: int | None
    """The ref's own max-ref-age-ms, else the table's history.expire.max-ref-age-ms; None: kept forever."""
    expires: bool
    """``expire_snapshots`` would remove the ref now."""
    on_main: bool
    """Its snapshot is main's head or one of main's ancestors."""


__all__ = [
    "FilesHealth",
    "HistoryHealth",
    "ManifestsHealth",
    "PartitionHealth",
    "RefHealth",
    "files_health",
    "history_health",
    "manifests_health",
]
