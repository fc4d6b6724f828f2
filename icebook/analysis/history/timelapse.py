"""A time-lapse: the table's state at every snapshot, in commit order, computed incrementally.

Spec ("Manifest Lists", "Manifests"): a data or delete file is live through exactly one entry of one
manifest of a snapshot, so a snapshot's totals are the sum, over its manifests, of what each manifest
holds live. Manifests are immutable and a commit reuses those it does not change, so (the diff's rule,
``icebook.analysis.history.diff``) the state at snapshot b follows from the state at a by adding what
the manifests only b lists hold live and subtracting what the manifests only a lists hold live; shared
manifests cancel. Each manifest is read once, column-wise, and reduced to per-partition sums once.

A frame's base is its parent's frame. Where the parent is not in the time-lapse (expired, or before
``since``) the frame starts afresh from all of its snapshot's manifests and says so (``afresh``).

What a commit changed comes from the manifests it wrote (spec, "Manifests": a file the commit added is
an ADDED entry with its snapshot id, a file it removed a DELETED one), whatever its parent's fate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.ancestry import ancestry
from icebook.analysis.arrow_types import arrow_type
from icebook.analysis.history.diff import CHANGE_COLUMNS
from icebook.analysis.history.v3_changes import V3_COLUMNS, V3Changes, v3_changes
from icebook.analysis.resolve import At, AtTime, parse_at, resolve_snapshot
from icebook.analysis.store.entries import Entries
from icebook.analysis.store.manifests import ManifestStore, parallel_map, table_partition_type, unify_partition
from icebook.analysis.store.table_like import TableLike
from icebook.analysis.tables.inspect import to_pandas
from icebook.analysis.tables.metadata_tables import TS
from icebook.io.list_columns import holds_data, read_list_columns
from icebook.spec.manifest import EntryStatus, FileContent, ManifestContent, ManifestFile
from icebook.spec.metadata import TableMetadata, commit_order
from icebook.spec.snapshots import Snapshot

# Per-partition sums, in this order (one int64 vector per partition key).
STATE_COLUMNS = (
    "file_count",
    "record_count",
    "total_data_file_size_in_bytes",
    "position_delete_file_count",
    "position_delete_record_count",
    "equality_delete_file_count",
    "equality_delete_record_count",
    "delete_file_size_in_bytes",
)
"""The per-partition state: data files, their records and bytes; position and equality delete files and
their records; delete bytes (a deletion vector counted by its blob, as ``total-files-size`` counts it)."""
_WIDTH = len(STATE_COLUMNS)
_ENTRY_COLUMNS = (
    "status",
    "snapshot_id",
    "content",
    "partition",
    "record_count",
    "file_size_in_bytes",
    "content_size_in_bytes",
)

_DELETE_BOUNDS = ("lower_bounds", "upper_bounds")

FRAME_COLUMNS = (
    "frame",
    "snapshot_id",
    "parent_id",
    "committed_at",
    "operation",
    "schema_id",
    "spec_id",
    "data_files",
    "delete_files",
    "records",
    "bytes",
    "position_delete_files",
    "position_deletes",
    "equality_delete_files",
    "equality_deletes",
    "delete_bytes",
    "partitions",
    *CHANGE_COLUMNS,
    "first_row_id",
    "added_rows",
    "dv_replacements",
    "manifests",
    "manifests_added",
    "manifests_removed",
    "base_snapshot_id",
    "afresh",
    "afresh_reason",
)

Key = tuple[Any, ...]
State = dict[Key, np.ndarray]


@dataclass(frozen=True, slots=True)
class _ManifestSums:
    """What one manifest holds live, per partition key, and what its writing commit added and removed."""

    live: State
    changes: np.ndarray  # CHANGE_COLUMNS, counting only entries of the manifest's own snapshot
    own: pa.Table | None = None
    """v3: the entries the manifest's own snapshot ADDED and DELETED (``V3_COLUMNS`` and ``status``), for
    the deletion vectors it replaced and the row ids it assigned; None before v3."""


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Timelapse:
    """One frame per snapshot in commit order (``t.timelapse()``), and the per-partition state of each.

    ``frames`` holds ``FRAME_COLUMNS`` (``to_pandas()``); ``partitions`` the long-form per-partition
    state: one row per frame and partition with live files, columns ``frame``, ``snapshot_id``,
    ``partition`` (the table-wide partition type) and ``STATE_COLUMNS``.
    """

    frames: pa.Table
    partitions: pa.Table
    ref: str | None
    partitioned: bool
    """Whether any partition spec has a field (else ``partitions`` has one row per frame, key ``{}``)."""
    schemas: dict[int, str] = field(default_factory=dict)
    """Schema id -> the schema as text, for every schema a frame names."""
    specs: dict[int, str] = field(default_factory=dict)
    """Spec id -> the partition spec as text, for every spec a frame names."""
    manifests_read: int = 0
    from_lists: bool = False
    """Frames from the manifest lists' counts only (``manifests=False``): no per-partition state, and null
    where only manifests know (bytes, partitions, delete kinds, what each commit changed)."""
    source: TableLike | None = field(default=None, repr=False, compare=False)
    """The table replayed, when known (``Table.timelapse`` sets it): views open a frame's snapshot in it."""
    v3: tuple[V3Changes, ...] = ()
    """Format version 3, one per frame: the deletion vectors its commit replaced, added and dropped, and
    the row ids it assigned (``icebook.analysis.history.v3_changes``); empty before v3 and from lists only."""

    def to_pandas(self) -> pd.DataFrame:
        return to_pandas(self.frames)

    def partitions_frame(self) -> pd.DataFrame:
        """The per-partition state at every frame, long form."""
        return to_pandas(self.partitions)

    def partitions_at(self, frame: int) -> pd.DataFrame:
        """The per-partition state at one frame (its index in ``frames``)."""
        mask = pc.equal(self.partitions.column("frame"), frame)
        return to_pandas(self.partitions.filter(mask))

    def __len__(self) -> int:
        return self.frames.num_rows

    def __repr__(self) -> str:
        n = self.frames.num_rows
        afresh = int(pc.sum(self.frames.column("afresh")).as_py() or 0) if n else 0
        scope = f"ref {self.ref}" if self.ref else "every snapshot"
        source = ", from manifest lists only" if self.from_lists else ""
        return f"<Timelapse of {scope}: {n} frames, {afresh} starting afresh{source}>"


# ---------------------------------------------------------------- one manifest


_STATE = {name: i for i, name in enumerate(STATE_COLUMNS)}
_CHANGE = {name: i for i, name in enumerate(CHANGE_COLUMNS)}
# Where a live file's count, records and bytes go in the state, by content (an unknown code as equality deletes).
_STATE_OF = {
    FileContent.DATA: ("file_count", "record_count", "total_data_file_size_in_bytes"),
    FileContent.POSITION_DELETES: (
        "position_delete_file_count",
        "position_delete_record_count",
        "delete_file_size_in_bytes",
    ),
    FileContent.EQUALITY_DELETES: (
        "equality_delete_file_count",
        "equality_delete_record_count",
        "delete_file_size_in_bytes",
    ),
}


def _change_columns(status: EntryStatus, data: bool) -> tuple[str, str]:
    """The ``CHANGE_COLUMNS`` an ADDED or DELETED entry counts its file and its records in."""
    side = "added" if status == EntryStatus.ADDED else "removed"
    return (f"{side}_data_files", f"{side}_records") if data else (f"{side}_delete_files", f"{side}_delete_records")


def _manifest_sums(store: ManifestStore, manifest: ManifestFile, v3: bool) -> _ManifestSums:
    columns: tuple[str, ...] = (*_ENTRY_COLUMNS, *V3_COLUMNS) if v3 else _ENTRY_COLUMNS
    if v3 and manifest.content == ManifestContent.DELETES:
        columns += _DELETE_BOUNDS  # a v2 position delete file for one data file may say so by them alone
    view = Entries(store.entries(manifest, columns, keep=False))  # reduced here: the store keeps no files
    changes = np.zeros(len(CHANGE_COLUMNS), np.int64)
    own_entries: pa.Table | None = None
    if view.num_rows:
        own = np.asarray(
            pc.equal(view.column("snapshot_id"), manifest.added_snapshot_id).fill_null(False).to_numpy(), bool
        )
        if v3:
            written = own & ~view.status_is(EntryStatus.EXISTING)
            kept = ["status", *V3_COLUMNS, *(c for c in _DELETE_BOUNDS if c in view.table.column_names)]
            own_entries = view.table.filter(pa.array(written)).select(kept)
        for status in (EntryStatus.ADDED, EntryStatus.DELETED):
            for data in (True, False):
                mask = own & view.status_is(status) & (view.content_is(FileContent.DATA) == data)
                if mask.any():
                    files, records = _change_columns(status, data)
                    changes[_CHANGE[files]] += int(mask.sum())
                    changes[_CHANGE[records]] += int(view.records()[mask].sum())

    live = view.alive()
    sums: State = {}
    if live.num_rows:
        own_type, unified = store.partition_types(manifest.partition_spec_id)
        partition = unify_partition(live.column("partition"), own_type, unified)
        keys = [f"_p{i}" for i in range(partition.type.num_fields)]
        table = pa.table(
            {
                **{k: partition.field(i) for i, k in enumerate(keys)},
                "content": live.column("content"),
                "records": live.column("record_count"),
                "bytes": live.sizes(),
            }
        )
        summed = table.group_by([*keys, "content"], use_threads=False).aggregate(
            [("records", "sum"), ("bytes", "sum"), ([], "count_all")]
        )
        for row in summed.to_pylist():
            key = tuple(row[k] for k in keys)
            vector = sums.get(key)
            if vector is None:
                vector = sums[key] = np.zeros(_WIDTH, np.int64)
            files, rows, size = _STATE_OF.get(row["content"], _STATE_OF[FileContent.EQUALITY_DELETES])
            vector[_STATE[files]] += row["count_all"]
            vector[_STATE[rows]] += row["records_sum"] or 0
            vector[_STATE[size]] += row["bytes_sum"] or 0
    return _ManifestSums(sums, changes, own_entries)


class _SumsCache:
    """Each manifest reduced once, by path (manifests are immutable)."""

    def __init__(self, store: ManifestStore, progress: bool, v3: bool) -> None:
        self.store = store
        self.progress = progress
        self.v3 = v3
        self.sums: dict[str, _ManifestSums] = {}

    def ensure(self, manifests: Iterable[ManifestFile]) -> None:
        """Reduce the manifests not yet reduced. Given in commit order, a manifest is read as its first list
        lists it: the list of the commit that wrote it, whose ``first_row_id`` its ADDED files inherit (a
        later v3 list may assign one to a manifest written before an upgrade, where its files had none)."""
        first: dict[str, ManifestFile] = {}
        for m in manifests:
            if m.manifest_path not in self.sums:
                first.setdefault(m.manifest_path, m)
        missing = list(first.values())
        if not missing:
            return
        results = parallel_map(
            lambda m: _manifest_sums(self.store, m, self.v3), missing, progress=self.progress, label="manifests"
        )
        for manifest, result in zip(missing, results, strict=True):
            self.sums[manifest.manifest_path] = result


def _apply(state: State, sums: Iterable[_ManifestSums], sign: int) -> None:
    for s in sums:
        for key, vector in s.live.items():
            current = state.get(key)
            state[key] = vector * sign if current is None else current + vector * sign


# ---------------------------------------------------------------- which snapshots, in which order


def _frames_of(
    metadata: TableMetadata, ref: str | None, since: At, until: At
) -> tuple[list[Snapshot], tuple[int, int]]:
    if ref is not None:
        head = resolve_snapshot(metadata, ref)
        chosen = list(reversed(ancestry(metadata, head.snapshot_id))) if head is not None else []
    else:
        chosen = sorted(metadata.snapshots, key=commit_order)
    low, high = _bound(metadata, since), _bound(metadata, until)
    bounds = (low if low is not None else -(2**63), high if high is not None else 2**63 - 1)
    return [s for s in chosen if bounds[0] <= s.timestamp_ms <= bounds[1]], bounds


def _bound(metadata: TableMetadata, at: At) -> int | None:
    """A commit-time bound: a time as given, a snapshot id or ref as that snapshot's commit time."""
    point = parse_at(at, metadata.refs)
    if point is None:
        return None
    if isinstance(point, AtTime):
        return point.timestamp_ms
    snapshot = resolve_snapshot(metadata, point)
    return snapshot.timestamp_ms if snapshot is not None else None


# ---------------------------------------------------------------- entry point


def timelapse(
    table: TableLike,
    ref: str | None = None,
    since: At = None,
    until: At = None,
    *,
    manifests: bool = True,
    progress: bool = True,
) -> Timelapse:
    """One frame per snapshot in commit order: every snapshot of the log, or the ancestry of ``ref``
    (oldest first); ``since`` and ``until`` (a snapshot id, ref or time) bound the commit times.

    With ``manifests=False`` no manifest is read: the frames come from the manifest lists' file and row
    counts alone (``_from_lists``), for histories too long, or manifests too far, to read."""
    metadata, store = table.metadata, table.store
    snapshots, bounds = _frames_of(metadata, ref, since, until)
    if not manifests:
        return _from_lists(metadata, store, snapshots, ref, progress=progress)
    return _from_manifests(metadata, store, snapshots, bounds, ref, progress=progress)


def _from_manifests(
    metadata: TableMetadata,
    store: ManifestStore,
    snapshots: list[Snapshot],
    bounds: tuple[int, int],
    ref: str | None,
    *,
    progress: bool,
) -> Timelapse:
    """The frames, each from its parent's and the manifests the two lists do not share (module docstring)."""
    v3 = metadata.format_version >= 3
    cache = _SumsCache(store, progress, v3)
    commits_v3: list[V3Changes] = []
    reads_before = store.reads
    lists = [store.manifest_list(s) for s in snapshots]
    # Everything at once: the union of all lists is exactly what the incremental rule reads.
    cache.ensure(m for manifests in lists for m in manifests)

    known = {s.snapshot_id for s in metadata.snapshots}
    states: list[State] = []
    paths_of: dict[int, frozenset[str]] = {}
    state_of: dict[int, int] = {}
    rows: dict[str, list[Any]] = {name: [] for name in FRAME_COLUMNS}
    spec_in_force: dict[int, int | None] = {}

    for index, (snapshot, manifests) in enumerate(zip(snapshots, lists, strict=True)):
        paths = frozenset(m.manifest_path for m in manifests)
        parent = snapshot.parent_snapshot_id
        reason: str | None = None
        if parent is not None and parent in state_of:
            base_paths = paths_of[parent]
            state = dict(states[state_of[parent]])
            _apply(state, (cache.sums[p] for p in base_paths - paths), -1)
            _apply(state, (cache.sums[m.manifest_path] for m in manifests if m.manifest_path not in base_paths), 1)
            base: int | None = parent
            added_manifests = len(paths - base_paths)
            removed_manifests = len(base_paths - paths)
        else:
            if parent is not None:
                reason = (
                    f"parent {parent} expired"
                    if parent not in known
                    else f"parent {parent} is not in this time-lapse"
                    + (" (committed before since)" if _committed(metadata, parent) < bounds[0] else "")
                )
            state = {}
            _apply(state, (cache.sums[p] for p in paths), 1)
            base = None
            added_manifests, removed_manifests = len(paths), 0
        state = {k: v for k, v in state.items() if v.any()}
        states.append(state)
        paths_of[snapshot.snapshot_id] = paths
        state_of[snapshot.snapshot_id] = index
        store.verify_snapshot(snapshot)  # the frame's file counts against the summary's totals

        summed = np.sum(list(state.values()), axis=0) if state else np.zeros(_WIDTH, np.int64)
        totals = {name: int(summed[i]) for name, i in _STATE.items()}
        changes = np.zeros(len(CHANGE_COLUMNS), np.int64)
        written = [m for m in manifests if m.added_snapshot_id == snapshot.snapshot_id]
        for m in written:
            changes += cache.sums[m.manifest_path].changes
        # The spec new data was written with: that of the data manifests holding files this commit added
        # (a merge-append also rewrites older manifests, which keep their own spec).
        own_specs = [
            m.partition_spec_id for m in written if cache.sums[m.manifest_path].changes[_CHANGE["added_data_files"]] > 0
        ]
        spec_id = own_specs[-1] if own_specs else spec_in_force.get(parent) if parent is not None else None
        if spec_id is None:
            spec_id = max(
                (m.partition_spec_id for m in manifests if m.effective_content == ManifestContent.DATA),
                default=None,
            )
        spec_in_force[snapshot.snapshot_id] = spec_id
        if v3:
            commits_v3.append(_commit_v3(snapshot, [cache.sums[m.manifest_path] for m in written]))

        values: dict[str, Any] = {
            "frame": index,
            "snapshot_id": snapshot.snapshot_id,
            "parent_id": parent,
            "committed_at": snapshot.timestamp_ms,
            "operation": snapshot.operation,
            "schema_id": snapshot.schema_id,
            "spec_id": spec_id,
            "data_files": totals["file_count"],
            "delete_files": totals["position_delete_file_count"] + totals["equality_delete_file_count"],
            "records": totals["record_count"],
            "bytes": totals["total_data_file_size_in_bytes"],
            "position_delete_files": totals["position_delete_file_count"],
            "position_deletes": totals["position_delete_record_count"],
            "equality_delete_files": totals["equality_delete_file_count"],
            "equality_deletes": totals["equality_delete_record_count"],
            "delete_bytes": totals["delete_file_size_in_bytes"],
            "partitions": sum(1 for v in state.values() if v[_STATE["file_count"]] > 0),
            **{name: int(changes[i]) for i, name in enumerate(CHANGE_COLUMNS)},
            "first_row_id": snapshot.first_row_id,
            "added_rows": snapshot.added_rows,
            "dv_replacements": len(commits_v3[-1].replacements) if v3 else None,
            "manifests": len(manifests),
            "manifests_added": added_manifests,
            "manifests_removed": removed_manifests,
            "base_snapshot_id": base,
            "afresh": reason is not None,
            "afresh_reason": reason,
        }
        for name in FRAME_COLUMNS:
            rows[name].append(values[name])

    unified = table_partition_type(metadata)
    return Timelapse(
        frames=_frames_table(rows),
        partitions=_partitions_table(snapshots, states, arrow_type(unified)),
        ref=ref,
        partitioned=bool(unified.fields),
        schemas=_texts(metadata.schemas, rows["schema_id"]),
        specs=_texts(metadata.partition_specs, rows["spec_id"]),
        manifests_read=store.reads - reads_before,
        v3=tuple(commits_v3),
    )


def _commit_v3(snapshot: Snapshot, written: list[_ManifestSums]) -> V3Changes:
    """What one commit did to deletion vectors and row ids, from the entries of the manifests it wrote."""
    own = [s.own for s in written if s.own is not None and s.own.num_rows]
    if not own:
        return v3_changes(_NO_ENTRIES, _NO_ENTRIES, [snapshot])
    entries = pa.concat_tables(own, promote_options="permissive")
    view = Entries(entries)
    added = entries.filter(pa.array(view.status_is(EntryStatus.ADDED)))
    removed = entries.filter(pa.array(view.status_is(EntryStatus.DELETED)))
    return v3_changes(added, removed, [snapshot])


_NO_ENTRIES = pa.table({})  # no columns: every rule of v3_changes reads an empty side as nothing


def _from_lists(
    metadata: TableMetadata, store: ManifestStore, snapshots: list[Snapshot], ref: str | None, *, progress: bool
) -> Timelapse:
    """Frames from the manifest lists only (spec "Manifest Lists": ``added_files_count`` and
    ``existing_files_count`` are a manifest's live files, ``added_rows_count`` and ``existing_rows_count``
    their rows), every list read once, column-wise. What only manifests know (bytes, partitions, the split
    of delete files by kind, what a commit changed) is null, and so is a total a list leaves unknown (v1)."""
    counts = read_list_columns(store.fileio, [s.manifest_list or "" for s in snapshots], progress=progress)
    live = pa.table(
        {
            "list_index": counts.column("list_index"),
            "data": holds_data(counts),
            "files": pc.add(counts.column("added_files_count"), counts.column("existing_files_count")),
            "rows": pc.add(counts.column("added_rows_count"), counts.column("existing_rows_count")),
            "spec": counts.column("partition_spec_id"),
        }
    )
    whole = pc.ScalarAggregateOptions(skip_nulls=False)  # one unknown count makes the total unknown
    summed = live.group_by(["list_index", "data"], use_threads=False).aggregate(
        [("files", "sum", whole), ("rows", "sum", whole), ("spec", "max"), ([], "count_all")]
    )
    # Column-wise: one slot per frame, filled from the (frame, data or deletes) groups.
    n = len(snapshots)
    rows: dict[str, list[Any]] = {name: [None] * n for name in FRAME_COLUMNS}
    rows["manifests"] = [0] * n
    for name in ("data_files", "records", "delete_files"):
        rows[name] = [0] * n
    is_data = summed.column("data").to_pylist()
    for index, data, files, records, spec, listed in zip(
        summed.column("list_index").to_pylist(),
        is_data,
        summed.column("files_sum").to_pylist(),
        summed.column("rows_sum").to_pylist(),
        summed.column("spec_max").to_pylist(),
        summed.column("count_all").to_pylist(),
        strict=True,
    ):
        rows["manifests"][index] += listed
        if data:
            rows["data_files"][index], rows["records"][index], rows["spec_id"][index] = files, records, spec
        else:
            rows["delete_files"][index] = files
    in_lapse = {s.snapshot_id for s in snapshots}
    rows["frame"] = list(range(n))
    rows["snapshot_id"] = [s.snapshot_id for s in snapshots]
    rows["parent_id"] = [s.parent_snapshot_id for s in snapshots]
    rows["committed_at"] = [s.timestamp_ms for s in snapshots]
    rows["operation"] = [s.operation for s in snapshots]
    rows["schema_id"] = [s.schema_id for s in snapshots]
    rows["first_row_id"] = [s.first_row_id for s in snapshots]
    rows["added_rows"] = [s.added_rows for s in snapshots]
    rows["base_snapshot_id"] = [p if p in in_lapse else None for p in rows["parent_id"]]
    rows["afresh"] = [False] * n
    unified = table_partition_type(metadata)
    return Timelapse(
        frames=_frames_table(rows),
        partitions=_partitions_table([], [], arrow_type(unified)),
        ref=ref,
        partitioned=bool(unified.fields),
        from_lists=True,
        schemas=_texts(metadata.schemas, rows["schema_id"]),
        specs=_texts(metadata.partition_specs, rows["spec_id"]),
    )


def _texts(known: Mapping[int, Any], ids: list[int | None]) -> dict[int, str]:
    """The schemas (or specs) the frames name, as text."""
    return {i: str(known[i]) for i in set(ids) if i is not None and i in known}


def _committed(metadata: TableMetadata, snapshot_id: int) -> int:
    found = metadata.find_snapshot(snapshot_id)
    return found.timestamp_ms if found is not None else 0


_INT32 = frozenset({"frame", "schema_id", "spec_id", "partitions", "manifests", "manifests_added", "manifests_removed"})


def _frames_table(rows: dict[str, list[Any]]) -> pa.Table:
    columns: dict[str, pa.Array] = {}
    for name in FRAME_COLUMNS:
        if name == "committed_at":
            columns[name] = pa.array(rows[name], pa.int64()).cast(TS)
        elif name in ("operation", "afresh_reason"):
            columns[name] = pa.array(rows[name], pa.string())
        elif name == "afresh":
            columns[name] = pa.array(rows[name], pa.bool_())
        else:
            columns[name] = pa.array(rows[name], pa.int32() if name in _INT32 else pa.int64())
    return pa.table(columns)


def _partitions_table(snapshots: list[Snapshot], states: list[State], partition_type: pa.DataType) -> pa.Table:
    frame_ids: list[int] = []
    snapshot_ids: list[int] = []
    keys: list[Key] = []
    vectors: list[np.ndarray] = []
    for index, (snapshot, state) in enumerate(zip(snapshots, states, strict=True)):
        for key in sorted(state, key=_sort_key):
            frame_ids.append(index)
            snapshot_ids.append(snapshot.snapshot_id)
            keys.append(key)
            vectors.append(state[key])
    matrix = np.vstack(vectors) if vectors else np.zeros((0, _WIDTH), np.int64)
    names = [partition_type.field(i).name for i in range(partition_type.num_fields)]
    partition = pa.array([dict(zip(names, key, strict=True)) for key in keys], partition_type)
    columns: dict[str, pa.Array] = {
        "frame": pa.array(frame_ids, pa.int32()),
        "snapshot_id": pa.array(snapshot_ids, pa.int64()),
        "partition": partition,
    }
    for i, name in enumerate(STATE_COLUMNS):
        columns[name] = pa.array(matrix[:, i], pa.int64())
    return pa.table(columns)


def _sort_key(key: Key) -> tuple[Any, ...]:
    """Nulls first, then by value as text within a field (values of one field share a type)."""
    return tuple((v is not None, str(v) if v is not None else "") for v in key)


__all__ = ["FRAME_COLUMNS", "STATE_COLUMNS", "Timelapse", "timelapse"]
