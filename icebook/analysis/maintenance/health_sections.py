"""The measurements of a health report, one section each: file sizes and delete debt per partition,
manifests (and how many a one-partition filter must open), history weight, refs.

Each section is plain frozen data; ``health`` turns them into findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import pandas as pd

from icebook.analysis._frames import attribute_frame, frame
from icebook.analysis.maintenance.binpack import MAX_FILE_SIZE_RATIO, MIN_FILE_SIZE_RATIO, CompactionOptions
from icebook.analysis.maintenance.expire import ExpirePreview
from icebook.spec import properties
from icebook.spec.metadata import TableMetadata

_LOW, _HIGH = round(MIN_FILE_SIZE_RATIO * 100), round(MAX_FILE_SIZE_RATIO * 100)  # percent of the target size
SIZE_BUCKETS = (
    ("< 1% of target", 0.0, 0.01),
    ("1-10%", 0.01, 0.10),
    (f"10-{_LOW}% (small)", 0.10, MIN_FILE_SIZE_RATIO),
    (f"{_LOW}-{_HIGH}% (in range)", MIN_FILE_SIZE_RATIO, MAX_FILE_SIZE_RATIO),
    (f"> {_HIGH}% (large)", MAX_FILE_SIZE_RATIO, float("inf")),
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

    @classmethod
    def measured(
        cls,
        options: CompactionOptions,
        partitions: tuple[PartitionHealth, ...],
        size_histogram: tuple[tuple[str, int], ...],
    ) -> FilesHealth:
        """The measures with the size thresholds they were taken against (the compaction options)."""
        return cls(
            target_file_size_bytes=options.target_file_size_bytes,
            min_file_size_bytes=options.min_file_size_bytes,
            max_file_size_bytes=options.max_file_size_bytes,
            partitions=partitions,
            size_histogram=size_histogram,
        )

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
        return attribute_frame(
            self.partitions,
            columns,
            ints=[c for c in columns if c not in ("partition", "delete_ratio")],
            derived={
                "avg_file_bytes": lambda p: p.data_bytes // p.data_files if p.data_files else 0,
                "delete_ratio": lambda p: round(p.delete_ratio, 4),
            },
        )


# ---------------------------------------------------------------------------------- manifests


class PartitionReach(NamedTuple):
    """How many manifests a filter on exactly one partition opens: a manifest is opened when its partition
    ranges (every entry, live or deleted) include the partition's values, as manifest pruning by partition
    summaries decides."""

    partition: str
    manifests_opened: int
    manifests_holding: int
    """Manifests holding the partition's live files."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestsHealth:
    data_manifests: int
    delete_manifests: int
    total_bytes: int
    smallest_bytes: int
    largest_bytes: int
    live_entries: int
    target_size_bytes: int
    partition_reach: tuple[PartitionReach, ...]

    @property
    def manifests(self) -> int:
        return self.data_manifests + self.delete_manifests

    @property
    def mean_entries(self) -> float:
        return self.live_entries / self.manifests if self.manifests else 0.0

    @property
    def worst_reach(self) -> PartitionReach | None:
        """The partition whose filter opens the most manifests beyond those holding it."""
        return max(
            self.partition_reach,
            key=lambda r: (r.manifests_opened - r.manifests_holding, r.manifests_opened),
            default=None,
        )

    @property
    def mean_opened(self) -> float:
        reach = self.partition_reach
        return sum(r.manifests_opened for r in reach) / len(reach) if reach else 0.0

    def to_pandas(self) -> pd.DataFrame:
        return frame(
            (r._asdict() for r in self.partition_reach),
            list(PartitionReach._fields),
            ints=["manifests_opened", "manifests_holding"],
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
    "history_health",
]
