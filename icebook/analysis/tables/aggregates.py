"""Aggregates of a snapshot's files computed manifest by manifest: ``inspect.partitions()``, the file-size
histogram's counts and per-manifest statistics.

Each manifest's live entries are decoded with only the columns the aggregate needs, not kept by the store,
and reduced column-wise (Arrow ``group_by``) to a partial; partials are merged as they come. Memory holds
the partials (one row per partition, per bin or per manifest) and the few manifests in flight, never the
snapshot's listing, so a table of tens of millions of files is aggregated in the memory of its partitions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.arrow_types import arrow_type
from icebook.analysis.store.consistency import CHECKED_COLUMNS, ManifestCounts, manifest_counts
from icebook.analysis.store.entries import Entries
from icebook.analysis.store.manifests import ManifestStore, read_ahead, table_partition_type, unify_partition
from icebook.errors import MetadataError
from icebook.spec.manifest import FileContent, ManifestFile
from icebook.spec.metadata import TableMetadata
from icebook.spec.snapshots import Snapshot
from icebook.spec.types import StructType

R = TypeVar("R")
_PARTITION_COLUMNS = (
    "status",
    "snapshot_id",
    "partition",
    "content",
    "record_count",
    "file_size_in_bytes",
    "spec_id",
    "content_size_in_bytes",
)
_SPEC_BITS = 20  # ``last_spec`` packs (row ordinal, spec id): the spec of the partition's last row in listing order
_SUMS = (
    "record_count",
    "file_count",
    "total_data_file_size_in_bytes",
    "position_delete_record_count",
    "position_delete_file_count",
    "equality_delete_record_count",
    "equality_delete_file_count",
)
_COUNT_TYPES = {name: pa.int32() if name.endswith("file_count") else pa.int64() for name in _SUMS}
_COMPACT_ROWS = 1 << 18  # partial rows gathered before they are merged into one row per partition


def live_manifests(store: ManifestStore, snapshot: Snapshot | None) -> tuple[ManifestFile, ...]:
    """The manifests of ``snapshot`` (none for no snapshot)."""
    return store.manifest_list(snapshot) if snapshot is not None else ()


def stream_manifests(
    store: ManifestStore, snapshot: Snapshot | None, reduce: Callable[[ManifestFile], R]
) -> Iterator[R]:
    """``reduce`` over the snapshot's manifests, in order, a few in flight; the summary totals are checked
    once the last one was read (each ``reduce`` reads its manifest through ``store.entries``)."""
    yield from read_ahead(reduce, live_manifests(store, snapshot))
    if snapshot is not None:
        store.verify_snapshot(snapshot)


# ---------------------------------------------------------------------------------------- partitions


def _partition_keys(width: int) -> list[str]:
    return [f"_p{i}" for i in range(width)] or ["_unpartitioned"]


def _partition_partial(store: ManifestStore, manifest: ManifestFile, base: int, committed: pa.Table) -> pa.Table:
    """One manifest's live entries reduced to one row per partition (the partial of ``partitions_streamed``);
    ``base``: the ordinal of its first entry in the snapshot's listing; ``committed``: the table's snapshots
    (``snapshot_id``) and their commit times (``ts``)."""
    view = Entries(store.entries(manifest, _PARTITION_COLUMNS, keep=False)).alive()
    entries, n = view.table, view.num_rows
    own, unified = store.partition_types(manifest.partition_spec_id)
    partition = unify_partition(entries.column("partition"), own, unified)
    keys = _partition_keys(len(unified.fields))
    columns: dict[str, pa.Array | np.ndarray] = (
        {k: partition.field(i) for i, k in enumerate(keys)} if unified.fields else {keys[0]: np.zeros(n, dtype=np.int8)}
    )
    records = view.records()
    sizes = view.size_values()
    data, position_deletes = view.content_is(FileContent.DATA), view.content_is(FileContent.POSITION_DELETES)
    equality = ~data & ~position_deletes
    zero = np.zeros(n, dtype=np.int64)
    columns |= {
        "record_count": np.where(data, records, zero),
        "file_count": data.astype(np.int64),
        "total_data_file_size_in_bytes": np.where(data, sizes, zero),
        "position_delete_record_count": np.where(position_deletes, records, zero),
        "position_delete_file_count": position_deletes.astype(np.int64),
        "equality_delete_record_count": np.where(equality, records, zero),
        "equality_delete_file_count": equality.astype(np.int64),
    }
    # Last updated: the latest commit among the partition's files (the first file listed wins a tie), as
    # the whole-listing rule reads it; a file whose snapshot has expired does not count.
    known = pc.index_in(entries.column("snapshot_id"), value_set=committed.column("snapshot_id"))
    times = committed.column("ts").take(known).combine_chunks()
    columns["ts"] = times
    columns["snap"] = pc.if_else(times.is_null(), pa.scalar(None, pa.int64()), entries.column("snapshot_id"))
    ordinal = base + np.arange(n, dtype=np.int64)
    spec = entries.column("spec_id").fill_null(manifest.partition_spec_id).to_numpy(zero_copy_only=False)
    if n and (spec.min() < 0 or spec.max() >= 1 << _SPEC_BITS):
        raise MetadataError(manifest.manifest_path, "spec_id", f"partition spec id {int(spec.max())} out of range")
    columns["first_seen"] = ordinal
    columns["last_spec"] = (ordinal << _SPEC_BITS) | spec.astype(np.int64)
    return _merge(pa.table(columns), keys)


def _merge(partials: pa.Table, keys: list[str]) -> pa.Table:
    """Partials (or rows) of the same partitions merged into one row each, in order of first appearance."""
    if not partials.num_rows:
        return partials
    # A stable sort, latest commit first, makes "first" the snapshot of the latest commit, the earliest listed.
    order = pc.sort_indices(partials, [("ts", "descending")])  # nulls last
    merged = (
        partials.take(order)
        .group_by(keys, use_threads=False)
        .aggregate(
            [
                *((name, "sum") for name in _SUMS),
                ("ts", "max"),
                ("snap", "first"),
                ("first_seen", "min"),
                ("last_spec", "max"),
            ]
        )
    )
    merged = merged.rename_columns(
        [name.rsplit("_", 1)[0] if name not in keys else name for name in merged.column_names]
    )
    return merged.take(pc.sort_indices(merged, [("first_seen", "ascending")])).select(partials.column_names)


def partitions_streamed(store: ManifestStore, snapshot: Snapshot | None) -> pa.Table:
    """Spark's ``partitions`` table of ``snapshot`` (its columns and types; no partition or spec_id column for
    an unpartitioned table), manifest by manifest."""
    metadata = store.metadata
    unified = table_partition_type(metadata)
    keys = _partition_keys(len(unified.fields))
    manifests = live_manifests(store, snapshot)
    bases = np.concatenate([[0], np.cumsum([_entries_bound(m) for m in manifests], dtype=np.int64)])

    committed = pa.table(
        {
            "snapshot_id": pa.array([s.snapshot_id for s in metadata.snapshots], pa.int64()),
            "ts": pa.array([s.timestamp_ms for s in metadata.snapshots], pa.int64()),
        }
    )

    def reduce(item: tuple[int, ManifestFile]) -> pa.Table:
        return _partition_partial(store, item[1], int(bases[item[0]]), committed)

    gathered: list[pa.Table] = []
    compacted: pa.Table | None = None
    pending = 0
    for partial in read_ahead(reduce, list(enumerate(manifests))):
        gathered.append(partial)
        pending += partial.num_rows
        if pending > max(_COMPACT_ROWS, 2 * (compacted.num_rows if compacted is not None else 0)):
            compacted = _merge(pa.concat_tables([t for t in (compacted, *gathered) if t is not None]), keys)
            gathered, pending = [], 0
    if snapshot is not None:
        store.verify_snapshot(snapshot)
    parts = [t for t in (compacted, *gathered) if t is not None and t.num_rows]
    rows = _merge(pa.concat_tables(parts), keys) if parts else None
    return _partitions_table(rows, unified, keys)


def _entries_bound(manifest: ManifestFile) -> int:
    """At least the number of entries ``manifest`` holds (its ordinals' room): the list's counts, or a bound
    from its length when a v1 list leaves them out (an entry takes at least one byte)."""
    counts = (manifest.added_files_count, manifest.existing_files_count, manifest.deleted_files_count)
    if all(c is not None for c in counts):
        return sum(c or 0 for c in counts)
    return max(0, manifest.manifest_length)


def partitions_schema(metadata: TableMetadata) -> pa.Schema:
    """The columns and types of the ``partitions`` table (what another engine's answer is cast to)."""
    unified = table_partition_type(metadata)
    return _partitions_table(None, unified, _partition_keys(len(unified.fields))).schema


def _partitions_table(rows: pa.Table | None, unified: StructType, keys: list[str]) -> pa.Table:
    columns: dict[str, pa.Array | pa.ChunkedArray] = {}
    if unified.fields:
        fields = [pa.field(f.name, arrow_type(f.type)) for f in unified.fields]
        children = [
            rows.column(k).combine_chunks() if rows is not None else pa.array([], f.type)
            for k, f in zip(keys, fields, strict=True)
        ]
        columns["partition"] = pa.StructArray.from_arrays(children, fields=fields)
        last_spec = rows.column("last_spec").to_numpy() if rows is not None else np.zeros(0, np.int64)
        columns["spec_id"] = pa.array(last_spec & ((1 << _SPEC_BITS) - 1), pa.int32())
    for name in _SUMS:
        columns[name] = (
            rows.column(name).cast(_COUNT_TYPES[name]) if rows is not None else pa.array([], _COUNT_TYPES[name])
        )
    ts = rows.column("ts") if rows is not None else pa.array([], pa.int64())
    columns["last_updated_at"] = ts.cast(pa.timestamp("ms", tz="UTC"))
    columns["last_updated_snapshot_id"] = rows.column("snap") if rows is not None else pa.array([], pa.int64())
    return pa.table(columns)


# ---------------------------------------------------------------------------------------- file sizes

_SIZE_COLUMNS = ("status", "content", "file_size_in_bytes", "content_size_in_bytes")
CONTENT_KINDS = len(FileContent)
"""Rows of ``SizeCounts.counts``: data files, position delete files (and deletion vectors), equality deletes."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SizeCounts:
    """Live files of a snapshot counted by size into bins, per content (a deletion vector by its blob's
    size, ``Entries.sizes``)."""

    edges: np.ndarray
    counts: np.ndarray
    """``(CONTENT_KINDS, len(edges) - 1)``: files per content (row) and bin (column). A size below the first
    edge counts in the first bin, one at or past the last edge in the last."""
    files: int
    smallest: int | None
    largest: int | None


def bin_index(sizes: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The bin of each size (``SizeCounts.counts``' rule): ``edges[i] <= size < edges[i + 1]``, clipped."""
    return np.clip(np.searchsorted(edges, sizes, side="right") - 1, 0, len(edges) - 2)


def file_size_counts(store: ManifestStore, snapshot: Snapshot | None, edges: np.ndarray) -> SizeCounts:
    """The live files of ``snapshot`` counted into the size bins between ``edges``, manifest by manifest."""
    bins = len(edges) - 1

    def reduce(manifest: ManifestFile) -> tuple[np.ndarray, int | None, int | None]:
        live = Entries(store.entries(manifest, _SIZE_COLUMNS, keep=False)).alive()
        sizes, content = live.size_values(), live.content()
        counts = np.zeros((CONTENT_KINDS, bins), dtype=np.int64)
        if len(sizes):
            np.add.at(counts, (np.clip(content, 0, CONTENT_KINDS - 1), bin_index(sizes, edges)), 1)
            return counts, int(sizes.min()), int(sizes.max())
        return counts, None, None

    total = np.zeros((CONTENT_KINDS, bins), dtype=np.int64)
    lows: list[int] = []
    highs: list[int] = []
    for counts, low, high in stream_manifests(store, snapshot, reduce):
        total += counts
        if low is not None and high is not None:
            lows.append(low)
            highs.append(high)
    return SizeCounts(
        edges=edges,
        counts=total,
        files=int(total.sum()),
        smallest=min(lows, default=None),
        largest=max(highs, default=None),
    )


# ---------------------------------------------------------------------------------------- manifests

_STATISTICS_COLUMNS = (*CHECKED_COLUMNS, "partition")


def manifest_statistics(store: ManifestStore, snapshot: Snapshot | None) -> pa.Table:
    """Per manifest of ``snapshot``, in list order: its entries by status and their rows, its live files,
    records and bytes (``ManifestCounts``, the cross-checks' rule), and the partitions its live files are in;
    each manifest read with only those columns and dropped once counted."""

    def reduce(manifest: ManifestFile) -> tuple[ManifestCounts, int]:
        entries = store.entries(manifest, _STATISTICS_COLUMNS, keep=False)
        live = Entries(entries).alive().table
        partition = live.column("partition").combine_chunks()
        keys = [partition.field(i) for i in range(partition.type.num_fields)]
        partitions = (
            pa.table({f"_p{i}": k for i, k in enumerate(keys)})
            .group_by([f"_p{i}" for i in range(len(keys))])
            .aggregate([])
            .num_rows
            if keys
            else min(live.num_rows, 1)
        )
        return manifest_counts(entries), partitions

    manifests = live_manifests(store, snapshot)
    rows = list(stream_manifests(store, snapshot, reduce))
    counts = {f.name: pa.array([getattr(c, f.name) for c, _ in rows], pa.int64()) for f in fields(ManifestCounts)}
    return pa.table(
        {
            "manifest_path": pa.array([m.manifest_path for m in manifests], pa.string()),
            "content": pa.array([int(m.effective_content) for m in manifests], pa.int32()),
            "partition_spec_id": pa.array([m.partition_spec_id for m in manifests], pa.int32()),
            "manifest_length": pa.array([m.manifest_length for m in manifests], pa.int64()),
            **counts,
            "live_partitions": pa.array([p for _, p in rows], pa.int64()),
        }
    )
