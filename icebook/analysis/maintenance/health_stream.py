"""The measures of a health report at one snapshot, streamed manifest by manifest: file sizes and
delete debt per partition, the manifests and how many a one-partition filter opens, and the counts
of the bin-pack compaction.

The snapshot's delete manifests are read first (they are few) and their live files kept; then the
data manifests are read a few at a time, each joined against those delete files by the delete index
(the scope rules, less the equality deletes column statistics rule out: what ``plan_scan(...,
equality_stats=True).reference_tasks`` attach) and reduced to sums per partition before the next is
read. Memory follows partitions, manifests and delete files, not data files; compaction keeps the
sizes of its candidates (the bin-pack runs over them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.expr.nodes import AlwaysTrue
from icebook.analysis.maintenance.binpack import CompactionOptions, candidate_reasons
from icebook.analysis.maintenance.compaction import (
    CompactionCounts,
    CompactionGroups,
    PartitionCandidates,
    compaction_counts,
    file_scoped,
)
from icebook.analysis.maintenance.health_sections import (
    SIZE_BUCKETS,
    FilesHealth,
    ManifestsHealth,
    PartitionHealth,
    PartitionReach,
)
from icebook.analysis.scan.columns import FileBuilder, ManifestScan, decide_entries, physical, plan_columns
from icebook.analysis.scan.delete_index import delete_rows, match_deletes_columns
from icebook.analysis.scan.plan_items import ScanFile
from icebook.analysis.store.entries import partition_label
from icebook.analysis.store.manifests import parallel_map, read_ahead
from icebook.analysis.store.table_like import TableLike
from icebook.spec.manifest import FileContent, ManifestContent, ManifestFile
from icebook.spec.snapshots import Snapshot

_ALL = AlwaysTrue()
# Cells of one (partitions x manifests) comparison block of the partition reach.
_REACH_BLOCK = 4_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class SnapshotMeasures:
    files: FilesHealth
    manifests: ManifestsHealth
    compaction: CompactionCounts


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class _GroupSums:
    """One data manifest's live data files summed per group (one int64 value per group in each)."""

    data_files: np.ndarray
    data_bytes: np.ndarray
    records: np.ndarray
    small_files: np.ndarray
    large_files: np.ndarray
    files_with_deletes: np.ndarray

    @classmethod
    def of(cls, groups: int, inverse: np.ndarray, **per_file: np.ndarray) -> _GroupSums:
        """Each of ``per_file`` (one value per file) summed into the file's group (``inverse``)."""
        sums = {}
        for name, values in per_file.items():
            sums[name] = np.zeros(groups, dtype=np.int64)
            np.add.at(sums[name], inverse, np.asarray(values, dtype=np.int64))
        return cls(**sums)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class _Part:
    """One data manifest reduced: per distinct partition of its live files (``groups``) the sums the
    report needs, and its partition ranges over every entry."""

    manifest: ManifestFile
    live: int
    ranges: tuple[tuple[Any, Any, bool], ...]
    """(lowest, highest, any null) per partition field, over every entry (live or deleted)."""
    raw: list[tuple[Any, ...]]
    """Per group: the partition tuple as the manifest holds it."""
    values: list[tuple[Any, ...]]
    """Per group: the partition tuple in the transforms' physical form."""
    sums: _GroupSums
    histogram: np.ndarray
    equality_pairs: np.ndarray
    """(group, delete index) of each equality delete attached to a file of a group, once."""
    applied: np.ndarray
    """Delete indexes attached to some file of the manifest."""
    types: list[pa.DataType]
    """The partition fields' types."""
    candidates: list[PartitionCandidates]
    """Per group (one group for a spec other than the default; unlabelled), in planning order."""
    files: int


@dataclass(slots=True)
class _Sums:
    """A partition's running sums (an accumulator of the stream, merged into as manifests arrive)."""

    data_files: int = 0
    data_bytes: int = 0
    records: int = 0
    small_files: int = 0
    large_files: int = 0
    files_with_deletes: int = 0
    equality: set[int] = field(default_factory=set)

    def add(self, sums: _GroupSums, group: int) -> None:
        """Group ``group`` of one manifest's sums added in, field by field."""
        for f in fields(_GroupSums):
            setattr(self, f.name, getattr(self, f.name) + int(getattr(sums, f.name)[group]))


def measure_snapshot(
    table: TableLike,
    snapshot: Snapshot | None,
    options: CompactionOptions,
    manifest_target: int,
    *,
    visit: Callable[[ManifestFile, pa.Table], None] | None = None,
    bounds: bool = False,
) -> SnapshotMeasures:
    """Files, manifests and compaction counts of ``snapshot`` (see the module's doc). ``visit`` sees
    each manifest's entries as they are read (from worker threads), for a measure that needs them too;
    with ``bounds`` those entries carry the data files' ``lower_bounds`` and ``upper_bounds``."""
    extra = ("lower_bounds", "upper_bounds") if bounds else ()

    def columns(m: ManifestFile, stats: bool) -> tuple[str, ...]:
        planned = plan_columns(m, _ALL, stats=stats)
        return planned + tuple(c for c in extra if c not in planned)

    metadata, store = table.metadata, table.store
    manifests: tuple[ManifestFile, ...] = store.manifest_list(snapshot) if snapshot is not None else ()
    schema = metadata.current_schema()
    builder = FileBuilder(metadata)
    grouping = CompactionGroups.of(metadata)

    # Delete manifests first: their live files are the fixed side of every join.
    delete_manifests = [m for m in manifests if m.content == ManifestContent.DELETES]
    data_manifests = [m for m in manifests if m.content != ManifestContent.DELETES]
    delete_tables = parallel_map(
        lambda m: store.entries(m, columns(m, True), keep=False),
        delete_manifests,
        progress=False,
        label="manifests",
    )
    live_entries = 0
    delete_scans: list[ManifestScan] = []
    deletes: list[ScanFile] = []
    for m, entries in zip(delete_manifests, delete_tables, strict=True):
        if visit is not None:
            visit(m, entries)
        scan = decide_entries(metadata, m, entries, schema, _ALL, _ALL)
        live_entries += scan.entries.num_rows
        delete_scans.append(scan)
        deletes += builder.files(scan, np.flatnonzero(scan.kept & (scan.content != int(FileContent.DATA))))
    del delete_tables
    delete_side = delete_rows(delete_scans)  # the fixed side of every join: what it derives is kept
    scoped = np.array([d.record_count if file_scoped(d) else 0 for d in deletes], dtype=np.int64)
    is_equality = np.array([d.content == FileContent.EQUALITY_DELETES for d in deletes], dtype=bool)
    with_stats = bool(is_equality.any())  # data files' statistics matter only with equality deletes
    lows = np.array([low for _, low, _ in SIZE_BUCKETS])
    target = options.target_file_size_bytes

    def reduce(m: ManifestFile) -> _Part:
        entries = store.entries(m, columns(m, with_stats), keep=False)
        if visit is not None:
            visit(m, entries)
        ranges = _ranges(entries.column("partition"))
        struct_type = entries.column("partition").type
        types = [struct_type.field(i).type for i in range(struct_type.num_fields)]
        scan = decide_entries(metadata, m, entries, schema, _ALL, _ALL)
        del entries
        join = match_deletes_columns([scan], metadata, equality_stats=schema, deletes=delete_side)
        data = join.data
        n = len(data)
        attached = join.applies if join.disjoint is None else join.applies & ~join.disjoint
        att_data, att_delete = join.data_index[attached], join.delete_index[attached]
        sizes = _ints(data.column("file_size_in_bytes")) if n else np.zeros(0, dtype=np.int64)
        records = _ints(data.column("record_count")) if n else np.zeros(0, dtype=np.int64)
        delete_count = np.bincount(att_data, minlength=n).astype(np.int64)
        scoped_records = np.zeros(n, dtype=np.int64)
        np.add.at(scoped_records, att_data, scoped[att_delete])
        parts = data.column("partition") if n else pa.array([], pa.struct([]))
        inverse, first = _row_groups(parts)
        groups = len(first)
        small, large = options.size_masks(sizes)
        sums = _GroupSums.of(
            groups,
            inverse,
            data_files=np.ones(n, dtype=np.int64),
            data_bytes=sizes,
            records=records,
            small_files=small,
            large_files=large,
            files_with_deletes=delete_count > 0,
        )
        ratio = sizes / target
        bucket = np.searchsorted(lows, ratio, side="right") - 1
        histogram = np.bincount(bucket[bucket >= 0], minlength=len(SIZE_BUCKETS)).astype(np.int64)
        equality = is_equality[att_delete] if len(deletes) else np.zeros(0, dtype=bool)
        pairs = np.unique(np.stack([inverse[att_data[equality]], att_delete[equality]]), axis=1)
        reasons = candidate_reasons(options, sizes, records, delete_count, scoped_records)
        candidate = np.ones(n, dtype=bool) if options.rewrite_all else reasons.any()

        def chunk(chosen: np.ndarray) -> PartitionCandidates:
            return PartitionCandidates(
                label="",
                sizes=sizes[chosen],
                too_many_deletes=reasons.too_many_deletes[chosen],
                high_delete_ratio=reasons.high_delete_ratio[chosen],
            )

        if m.partition_spec_id == grouping.default_spec_id:
            keys = inverse[candidate]
            order = np.argsort(keys, kind="stable")
            cuts = np.searchsorted(keys[order], np.arange(1, groups))
            chosen = np.flatnonzero(candidate)[order]
            candidates = [chunk(c) for c in np.split(chosen, cuts)]
        else:
            candidates = [chunk(candidate)]
        taken = parts.take(pa.array(first, pa.int64()))
        names = [pf.name for pf in metadata.spec_by_id(m.partition_spec_id).fields]
        return _Part(
            manifest=m,
            live=scan.entries.num_rows,
            ranges=ranges,
            raw=_tuples(taken, len(names)),
            values=list(zip(*(physical(c) for c in _children(taken)), strict=True)) if types else [()] * groups,
            sums=sums,
            histogram=histogram,
            types=types,
            equality_pairs=pairs,
            applied=np.unique(att_delete),
            candidates=candidates,
            files=n,
        )

    files: dict[tuple[int, str], _Sums] = {}
    reach: dict[tuple[int, tuple[Any, ...]], list[Any]] = {}  # -> [label, manifests holding it]
    eligible: dict[int, list[tuple[tuple[Any, Any, bool], ...]]] = {}
    field_types: dict[int, list[pa.DataType]] = {}
    compaction: dict[tuple[Any, ...], tuple[str, list[PartitionCandidates]]] = {}
    histogram = np.zeros(len(SIZE_BUCKETS), dtype=np.int64)
    applied: set[int] = set()
    planned = 0
    for part in read_ahead(reduce, data_manifests):
        m, spec_id = part.manifest, part.manifest.partition_spec_id
        live_entries += part.live
        planned += part.files
        histogram += part.histogram
        applied.update(part.applied.tolist())
        names = [pf.name for pf in metadata.spec_by_id(spec_id).fields]
        if part.live:
            eligible.setdefault(spec_id, []).append(part.ranges)
        labels = []
        for g, (raw, values) in enumerate(zip(part.raw, part.values, strict=True)):
            label = builder.partition_text(spec_id, tuple(zip(names, values, strict=False)))
            labels.append(label)
            acc = files.setdefault((spec_id, label), _Sums())
            acc.add(part.sums, g)
            held = reach.setdefault((spec_id, raw), [partition_label(names, raw), 0])
            held[1] += 1
            if spec_id == grouping.default_spec_id:
                compaction.setdefault(grouping.key(spec_id, tuple(values)), (label, []))[1].append(part.candidates[g])
        for g, x in part.equality_pairs.T.tolist():
            files[(spec_id, labels[g])].equality.add(x)
        if spec_id != grouping.default_spec_id and part.files:
            key = grouping.key(spec_id, ())
            compaction.setdefault(key, (grouping.label(spec_id, ""), []))[1].append(part.candidates[0])
        field_types.setdefault(spec_id, part.types)
    if snapshot is not None:
        store.verify_snapshot(snapshot)

    return SnapshotMeasures(
        files=_files_health(files, deletes, applied, histogram, options),
        manifests=ManifestsHealth(
            data_manifests=len(data_manifests),
            delete_manifests=len(delete_manifests),
            total_bytes=sum(m.manifest_length for m in manifests),
            smallest_bytes=min((m.manifest_length for m in manifests), default=0),
            largest_bytes=max((m.manifest_length for m in manifests), default=0),
            live_entries=live_entries,
            target_size_bytes=manifest_target,
            partition_reach=_reach(reach, eligible, field_types),
        ),
        compaction=compaction_counts(
            None if snapshot is None else snapshot.snapshot_id,
            options,
            [PartitionCandidates.joined(label, chunks) for label, chunks in compaction.values()],
            planned,
        ),
    )


def _files_health(
    files: dict[tuple[int, str], _Sums],
    deletes: Sequence[ScanFile],
    applied: set[int],
    histogram: np.ndarray,
    options: CompactionOptions,
) -> FilesHealth:
    """The per-partition rows: the data sums, and each partition's own live delete files (once per
    path and offset) with whether any data file has them attached."""
    applied_paths = {deletes[i].file_path for i in applied}
    own: dict[tuple[int, str], dict[str, ScanFile]] = {}
    for d in deletes:
        own.setdefault((d.spec_id, d.partition_text), {})[f"{d.file_path}#{d.content_offset}"] = d
    rows = []
    for spec_id, label in sorted(set(files) | set(own), key=lambda k: (k[1], k[0])):
        acc = files.get((spec_id, label), _Sums())
        mine = list(own.get((spec_id, label), {}).values())
        rows.append(
            PartitionHealth(
                partition=label,
                spec_id=spec_id,
                data_files=acc.data_files,
                data_bytes=acc.data_bytes,
                records=acc.records,
                small_files=acc.small_files,
                large_files=acc.large_files,
                position_delete_files=sum(
                    d.content == FileContent.POSITION_DELETES and not d.is_deletion_vector for d in mine
                ),
                deletion_vectors=sum(d.is_deletion_vector for d in mine),
                equality_delete_files=sum(d.content == FileContent.EQUALITY_DELETES for d in mine),
                delete_records=sum(d.record_count for d in mine if d.file_path in applied_paths),
                files_with_deletes=acc.files_with_deletes,
                equality_deletes_applying=len({deletes[i].file_path for i in acc.equality}),
                dangling_deletes=sum(
                    d.content == FileContent.POSITION_DELETES and d.file_path not in applied_paths for d in mine
                ),
            )
        )
    return FilesHealth.measured(
        options,
        tuple(rows),
        tuple((name, int(count)) for (name, _, _), count in zip(SIZE_BUCKETS, histogram, strict=True)),
    )


# ---------------------------------------------------------------------------------- partition reach


def _reach(
    held: dict[tuple[int, tuple[Any, ...]], list[Any]],
    eligible: dict[int, list[tuple[tuple[Any, Any, bool], ...]]],
    field_types: dict[int, list[pa.DataType]],
) -> tuple[PartitionReach, ...]:
    """(partition, manifests a filter on it opens, manifests holding it) for every partition with live
    data files: a data manifest with live entries is opened when, field by field, its range over every
    entry includes the partition's value (or the value is null and the manifest holds a null)."""
    out: list[tuple[int, PartitionReach]] = []
    by_spec: dict[int, list[tuple[tuple[Any, ...], str, int]]] = {}
    for (spec_id, raw), (label, holding) in held.items():
        by_spec.setdefault(spec_id, []).append((raw, label, holding))
    for spec_id, partitions in by_spec.items():
        ranges = eligible.get(spec_id, [])
        opened = _opened([p[0] for p in partitions], ranges, field_types.get(spec_id, []))
        out += [
            (spec_id, PartitionReach(label, int(o), holding))
            for (_, label, holding), o in zip(partitions, opened, strict=True)
        ]
    return tuple(r for _, r in sorted(out, key=lambda x: (x[1].partition, x[0])))


def _opened(
    keys: list[tuple[Any, ...]], ranges: list[tuple[tuple[Any, Any, bool], ...]], types: list[pa.DataType]
) -> np.ndarray:
    """Per partition ``keys``: how many of the manifests with these ``ranges`` a filter on it opens."""
    p, m = len(keys), len(ranges)
    width = len(keys[0]) if keys else 0
    if not m or not width:
        return np.full(p, m, dtype=np.int64)
    fields = []
    for i in range(width):
        t = types[i] if i < len(types) else None
        values = pa.array([k[i] for k in keys] + [r[i][0] for r in ranges] + [r[i][1] for r in ranges], t)
        rank = np.asarray(pc.rank(values, sort_keys="ascending", tiebreaker="dense").to_numpy(), dtype=np.int64)
        valid = np.asarray(values.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        has_null = np.array([r[i][2] for r in ranges], dtype=bool)
        fields.append((rank[:p], valid[:p], rank[p : p + m], valid[p : p + m], rank[p + m :], has_null))
    if width == 1:  # one field: count the ranges starting at or below a value, less those ending below it
        value, known, low, bounded, high, has_null = fields[0]
        lows, highs = np.sort(low[bounded]), np.sort(high[bounded])
        count = np.searchsorted(lows, value, side="right") - np.searchsorted(highs, value, side="left")
        return np.where(known, count, int(has_null.sum())).astype(np.int64)
    # Partitions grouped by their first field's value meet only the manifests whose first range holds that
    # value (a table's manifests each cover a few days of many): the rest of the fields are compared on
    # those pairs alone, not on every partition by every manifest.
    out = np.zeros(p, dtype=np.int64)
    value0, known0, low0, bounded0, high0, has_null0 = fields[0]
    first = np.where(known0, value0, -1)  # ranks start at 1: -1 is the null value
    order = np.argsort(first, kind="stable")
    starts = np.flatnonzero(np.r_[True, first[order][1:] != first[order][:-1]])
    for group in np.split(order, starts[1:]):
        u = first[group[0]]
        chosen = np.flatnonzero(has_null0 if u < 0 else bounded0 & (low0 <= u) & (u <= high0))
        if not len(chosen):
            continue
        step = max(1, _REACH_BLOCK // len(chosen))
        for start in range(0, len(group), step):
            rows = group[start : start + step]
            hit = np.ones((len(rows), len(chosen)), dtype=bool)
            for value, known, low, bounded, high, has_null in fields[1:]:
                v, ok = value[rows, None], known[rows, None]
                lo, hi, bd, nl = low[chosen], high[chosen], bounded[chosen], has_null[chosen]
                inside = bd[None, :] & (lo[None, :] <= v) & (v <= hi[None, :])
                hit &= np.where(ok, inside, nl[None, :])
            out[rows] = hit.sum(axis=1)
    return out


# ---------------------------------------------------------------------------------- columns


def _ints(column: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(column, 0).to_numpy(zero_copy_only=False), dtype=np.int64)


def _children(struct: pa.Array | pa.ChunkedArray) -> list[pa.Array]:
    """The fields of a struct column, null where the struct itself is null."""
    array = struct.combine_chunks() if isinstance(struct, pa.ChunkedArray) else struct
    return list(array.flatten()) if array.type.num_fields else []


def _tuples(struct: pa.Array, width: int) -> list[tuple[Any, ...]]:
    """Each row's partition tuple, field by field in spec order (null where the struct is null)."""
    children = _children(struct)
    if not children:
        return [(None,) * width] * len(struct)
    return list(zip(*(c.to_pylist() for c in children), strict=True))


def _row_groups(struct: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(group of each row, first row of each group): rows with equal partition tuples (nulls equal to
    nulls) share a group; groups in order of first appearance."""
    n = len(struct)
    code = np.zeros(n, dtype=np.int64)
    for child in _children(struct):
        encoded = pc.dictionary_encode(child, null_encoding="encode")
        indices = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        _, code = np.unique(code * (len(encoded.dictionary) + 1) + indices, return_inverse=True)
        code = code.astype(np.int64).reshape(-1)
    if not n:
        return code, np.zeros(0, dtype=np.int64)
    _, first, inverse = np.unique(code, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")  # groups by first appearance
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[inverse.reshape(-1)], first[order]


def _ranges(partition: pa.ChunkedArray) -> tuple[tuple[Any, Any, bool], ...]:
    out = []
    for child in _children(partition):
        low_high = pc.min_max(child)
        out.append((low_high["min"].as_py(), low_high["max"].as_py(), child.null_count > 0))
    return tuple(out)


__all__ = ["SnapshotMeasures", "measure_snapshot"]
