"""What changed between two snapshots: manifests, files, partitions, totals, schema, spec, sort order.

Spec ("Manifest Lists", "Manifests"): manifests are immutable, and a commit reuses every manifest
it does not change, so two snapshots usually share most of their manifest lists. A manifest in
both lists contributes exactly the same live files to both snapshots, hence only the manifests
that the two snapshots do *not* share need to be read:

    added   = live(unshared manifests of b) - live(unshared manifests of a)
    removed = live(unshared manifests of a) - live(unshared manifests of b)

The set difference (rather than taking entries with status ADDED) is needed because a file in an
unshared manifest may still be live on the other side: a rewritten (merged) manifest carries
files over as EXISTING entries. This relies on a file being live at most once per snapshot
(spec: a data or delete file is tracked by exactly one live entry). Files are identified by
``file_path`` and, for deletion vectors (v3), ``content_offset``: one Puffin file holds many DVs.

When b is a child of a, even less is read: spec ("Manifests"): "when a file is replaced or deleted
from the dataset, its manifest entry fields store the snapshot ID in which the file was deleted
and status 2 (deleted)", so the manifests b wrote hold every file b added (ADDED, snapshot b) and
every file it removed (DELETED, snapshot b); a's rewritten manifests need not be read. The counts
are checked against b's summary, and any doubt falls back to the set difference.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis._frames import frame
from icebook.analysis.history.field_changes import (
    ChangeKind,
    EpochKind,
    FieldChange,
    changes_frame_rows,
    property_changes,
    schema_changes,
    sort_order_changes,
    spec_changes,
)
from icebook.analysis.history.lineage import HistoryPath, history_path
from icebook.analysis.history.metadata_history import MetadataHistory
from icebook.analysis.history.v3_changes import V3Changes, v3_changes
from icebook.analysis.resolve import At, resolve_snapshot
from icebook.analysis.store.entries import Entries
from icebook.analysis.store.manifests import ManifestStore
from icebook.analysis.store.metrics import RowFiles, readable_metrics
from icebook.analysis.store.table_like import TableLike
from icebook.analysis.tables.inspect import (
    DATA_FILE_COLUMNS,
    empty_files_table,
    manifest_entries_table,
    spark_shaped,
    to_pandas,
)
from icebook.spec.manifest import EntryStatus, FileContent, ManifestFile
from icebook.spec.metadata import TableMetadata
from icebook.spec.partitioning import PartitionSpec
from icebook.spec.schema import Schema
from icebook.spec.snapshots import Snapshot
from icebook.spec.sort_order import SortOrder


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class SnapshotDiff:
    """The difference from snapshot ``a`` to snapshot ``b`` (``t.diff(a, b)``).

    ``added_files``/``removed_files`` are shaped like ``t.inspect.files()``. Schema, spec and sort
    order changes are by id (see ``icebook.analysis.history.field_changes``).
    """

    a: Snapshot | None
    b: Snapshot | None
    shared_manifests: tuple[ManifestFile, ...]
    """Manifests in both manifest lists (same path): not read, they cancel out."""
    added_manifests: tuple[ManifestFile, ...]
    """Manifests only in b's list."""
    removed_manifests: tuple[ManifestFile, ...]
    """Manifests only in a's list."""
    added_files: pd.DataFrame
    """Data and delete files live at b and not at a."""
    removed_files: pd.DataFrame
    """Data and delete files live at a and not at b."""
    partition_changes: pd.DataFrame
    """Per partition (and spec): files, records and bytes added and removed."""
    summary_deltas: pd.DataFrame
    """The snapshot summaries' ``total-*`` values at a and b and their difference."""
    path: HistoryPath
    """The commits between a and b (through their common ancestor when they diverged)."""
    schema_ids: tuple[int | None, int | None]
    schema_changes: tuple[FieldChange, ...]
    spec_ids: tuple[frozenset[int], frozenset[int]]
    """Partition spec ids of the manifests with live files at a and at b."""
    spec_changes: tuple[FieldChange, ...]
    sort_order_changes: tuple[FieldChange, ...]
    property_changes: tuple[FieldChange, ...]
    notes: tuple[str, ...]
    """What could not be known, and why (e.g. an earlier metadata file was deleted)."""
    manifests_read: int
    """Manifests decoded for this diff (cached ones not counted)."""
    v3: V3Changes = field(default_factory=V3Changes)
    """Format version 3: deletion vectors replaced, added and dropped, and the row ids the added data files
    and the commits from a to b hold (``icebook.analysis.history.v3_changes``); empty before v3."""

    # ------------------------------------------------------------ views

    def to_pandas(self) -> pd.DataFrame:
        """Added and removed files in one frame, with a leading ``change`` column (added/removed)."""
        added = self.added_files.copy()
        added.insert(0, "change", "added")
        removed = self.removed_files.copy()
        removed.insert(0, "change", "removed")
        if not len(removed):
            return added.reset_index(drop=True)
        if not len(added):
            return removed.reset_index(drop=True)
        return pd.concat([added, removed], ignore_index=True)

    def changes(self) -> pd.DataFrame:
        """Schema, partition spec, sort order and property changes in one frame."""
        rows = (
            changes_frame_rows(self.schema_changes, EpochKind.SCHEMA)
            + changes_frame_rows(self.spec_changes, EpochKind.PARTITION_SPEC)
            + changes_frame_rows(self.sort_order_changes, EpochKind.SORT_ORDER)
            + changes_frame_rows(self.property_changes, "property")
        )
        return frame(rows, ["what", "kind", "field_id", "name", "before", "after"], ints=("field_id",))

    def counts(self) -> dict[str, int]:
        """Files, records and bytes added and removed, split by data and delete files.

        Bytes count a deletion vector by its blob (``content_size_in_bytes``), not the whole Puffin
        file it shares with others, as the reference implementation's ``total-files-size`` does.
        """
        out: dict[str, int] = {}
        for side, files in (("added", self.added_files), ("removed", self.removed_files)):
            is_data = files["content"] == FileContent.DATA
            data, deletes = files[is_data], files[~is_data]
            out[f"{side}_data_files"] = len(data)
            out[f"{side}_delete_files"] = len(deletes)
            out[f"{side}_records"] = int(data["record_count"].sum())
            out[f"{side}_delete_records"] = int(deletes["record_count"].sum())
            out[f"{side}_bytes"] = _counted_bytes(files)
        return out

    def __repr__(self) -> str:
        c = self.counts()
        return (
            f"<SnapshotDiff {_sid(self.a)} -> {_sid(self.b)}: data files +{c['added_data_files']} "
            f"-{c['removed_data_files']}, delete files +{c['added_delete_files']} -{c['removed_delete_files']}>"
        )


def _sid(snapshot: Snapshot | None) -> str:
    return "(empty)" if snapshot is None else str(snapshot.snapshot_id)


def _counted_bytes(files: pd.DataFrame) -> int:
    """The bytes ``files`` count for (``Entries.sizes``: a deletion vector by its blob)."""
    columns = ("file_size_in_bytes", "content_size_in_bytes")
    sizes = Entries(pa.table({c: pa.array(files[c], pa.int64()) for c in columns})).size_values()
    return int(sizes.sum())


# ---------------------------------------------------------------- files


def _live_files(store: ManifestStore, manifests: tuple[ManifestFile, ...], *, progress: bool) -> pa.Table:
    """Live entries (data_file columns only) of some manifests, partitions in the table-wide type."""
    if not manifests:
        return empty_files_table(store).select(list(DATA_FILE_COLUMNS))
    store.many_entries(manifests, progress=progress)
    parts = [
        _from_manifest(manifest_entries_table(store, m, live_only=True).select(list(DATA_FILE_COLUMNS)), m)
        for m in manifests
    ]
    return pa.concat_tables(parts, promote_options="permissive")


_FROM = "_manifest"
"""A column naming each file's manifest (dictionary-encoded, one value per manifest), so that a bound which does
not decode is an error naming its manifest; dropped before the files are shown."""


def _from_manifest(table: pa.Table, manifest: ManifestFile) -> pa.Table:
    codes = pa.array(np.zeros(table.num_rows, np.int32))
    return table.append_column(_FROM, pa.DictionaryArray.from_arrays(codes, pa.array([manifest.manifest_path])))


def _origin(files: pa.Table) -> RowFiles:
    """Which manifest each row comes from: concatenation and filters keep one manifest's rows together."""
    runs: list[tuple[str, int]] = []
    for chunk in files.column(_FROM).chunks:
        codes = np.asarray(chunk.indices.to_numpy(zero_copy_only=False))
        if not len(codes):  # an empty chunk starts no run
            continue
        paths = chunk.dictionary.to_pylist()
        starts = np.concatenate(([0], np.flatnonzero(np.diff(codes)) + 1))
        for start, end in zip(starts, (*starts[1:], len(codes)), strict=True):
            runs.append((paths[codes[start]], int(end - start)))
    return RowFiles.of(runs)


def _summary_count(snapshot: Snapshot, *keys: str) -> int | None:
    """Sum of summary counts; None when the summary cannot vouch for them (absent or not a number)."""
    summary = snapshot.summary or {}
    if "operation" not in summary:
        return None
    total = 0
    for key in keys:
        value = _int(summary.get(key, "0"))
        if value is None:
            return None
        total += value
    return total


def _child_changes(
    store: ManifestStore,
    a: Snapshot | None,
    b: Snapshot | None,
    only_b: tuple[ManifestFile, ...],
    *,
    progress: bool,
) -> tuple[pa.Table, pa.Table] | None:
    """(added, removed) from the manifests b wrote, when b is a's child; None when that cannot be trusted."""
    if a is None or b is None or b.parent_snapshot_id != a.snapshot_id:
        return None
    if any(m.added_snapshot_id != b.snapshot_id for m in only_b):
        return None
    if only_b:
        store.many_entries(only_b, progress=progress)
        entries = pa.concat_tables(
            [_from_manifest(manifest_entries_table(store, m, live_only=False), m) for m in only_b],
            promote_options="permissive",
        )
        view = Entries(entries)
        by_b = np.asarray(pc.equal(entries.column("snapshot_id"), b.snapshot_id).to_numpy(zero_copy_only=False), bool)
        shown = [*DATA_FILE_COLUMNS, _FROM]
        added = entries.filter(pa.array(by_b & view.status_is(EntryStatus.ADDED))).select(shown)
        removed = entries.filter(pa.array(by_b & view.status_is(EntryStatus.DELETED))).select(shown)
    else:
        added = removed = _live_files(store, (), progress=False)
    expected_added = _summary_count(b, "added-data-files", "added-delete-files")
    expected_removed = _summary_count(b, "deleted-data-files", "removed-delete-files")
    if expected_added != added.num_rows or expected_removed != removed.num_rows:
        return None
    return added, removed


def _file_keys(files: pa.Table) -> pa.Array:
    """file_path plus content_offset: a deletion vector is one blob of a shared Puffin file."""
    offset = pc.fill_null(pc.cast(files.column("content_offset"), pa.string()), "")
    joined = pc.binary_join_element_wise(files.column("file_path"), offset, "\x00")
    return joined.combine_chunks() if isinstance(joined, pa.ChunkedArray) else joined


def _minus(left: pa.Table, right: pa.Table) -> pa.Table:
    """Rows of ``left`` whose file is not in ``right``."""
    if not left.num_rows or not right.num_rows:
        return left
    present = pc.is_in(_file_keys(left), value_set=_file_keys(right))
    return left.filter(pc.invert(present))


def _with_metrics(files: pa.Table, metadata: TableMetadata) -> pd.DataFrame:
    """The ``inspect.files()`` shape: data_file columns plus readable_metrics (current schema)."""
    origin: RowFiles | str = "<manifest>"
    if _FROM in files.column_names:
        origin = _origin(files)
        files = files.drop_columns([_FROM])
    files = files.append_column("readable_metrics", readable_metrics(files, metadata.current_schema(), file=origin))
    return to_pandas(spark_shaped(metadata, files))


CHANGE_COLUMNS = (
    "added_data_files",
    "removed_data_files",
    "added_delete_files",
    "removed_delete_files",
    "added_records",
    "removed_records",
    "added_delete_records",
    "removed_delete_records",
)
"""Files and records a change added and removed: data files, delete files, then the same for records
(a snapshot diff's partitions and a time-lapse frame's commit columns)."""


def _partition_changes(added: pa.Table, removed: pa.Table) -> pd.DataFrame:
    columns = ["partition", "spec_id", *CHANGE_COLUMNS, "added_bytes", "removed_bytes"]
    # Aggregated column-wise (one group_by per side) so that a diff of many files stays fast.
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    for side, files in (("added", added), ("removed", removed)):
        if not files.num_rows:
            continue
        part = files.column("partition").combine_chunks()
        names = [part.type.field(i).name for i in range(part.type.num_fields)]
        keys = [f"_p{i}" for i in range(len(names))]
        table = pa.table(
            {
                **{k: part.field(i) for i, k in enumerate(keys)},
                "spec_id": files.column("spec_id"),
                "is_data": Entries(files).content_is(FileContent.DATA),
                "records": files.column("record_count"),
                "bytes": Entries(files).sizes(),
            }
        )
        summed = table.group_by([*keys, "spec_id", "is_data"], use_threads=False).aggregate(
            [("records", "sum"), ("bytes", "sum"), ([], "count_all")]
        )
        for row in summed.to_pylist():
            values = tuple(row[k] for k in keys)
            key = (row["spec_id"], values)
            g = groups.get(key)
            if g is None:
                partition = dict(zip(names, values, strict=True))
                g = groups[key] = dict.fromkeys(columns, 0) | {"partition": partition, "spec_id": row["spec_id"]}
            kind = "data" if row["is_data"] else "delete"
            g[f"{side}_{kind}_files"] += row["count_all"]
            g[f"{side}_records" if row["is_data"] else f"{side}_delete_records"] += row["records_sum"] or 0
            g[f"{side}_bytes"] += row["bytes_sum"] or 0
    out = frame(list(groups.values()), columns, ints=columns[1:])
    out["net_records"] = out["added_records"] - out["removed_records"]
    return out


# ---------------------------------------------------------------- summaries and metadata


def _summary_deltas(a: Snapshot | None, b: Snapshot | None) -> pd.DataFrame:
    """``total-*`` summary fields at both ends (spec "Snapshot Summary" metrics) and b - a."""
    sa = dict(a.summary or {}) if a else {}
    sb = dict(b.summary or {}) if b else {}
    rows = []
    for key in sorted(k for k in set(sa) | set(sb) if k.startswith("total-")):
        va, vb = _int(sa.get(key)), _int(sb.get(key))
        if a is None and va is None:
            va = 0  # an empty table has zero of everything
        delta = vb - va if va is not None and vb is not None else None
        rows.append({"metric": key, "a": va, "b": vb, "delta": delta})
    return frame(rows, ["metric", "a", "b", "delta"], ints=("a", "b", "delta"))


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _specs_in_use(manifests: tuple[ManifestFile, ...]) -> frozenset[int]:
    """Spec ids of manifests that may hold live files (manifest list only: no manifest is read).

    Spec ("Manifest Lists"): a null count means "assumed non-zero".
    """
    return frozenset(m.partition_spec_id for m in manifests if m.added_files_count != 0 or m.existing_files_count != 0)


@dataclass(frozen=True, slots=True)
class _StateAtCommit:
    schema: Schema | None
    spec: PartitionSpec | None
    sort_order: SortOrder | None
    properties: dict[str, str] | None


def _state(
    metadata: TableMetadata, snapshot: Snapshot | None, history: MetadataHistory | None, label: str, notes: list[str]
) -> _StateAtCommit:
    """Schema, default spec, default sort order and properties as of the commit of ``snapshot``.

    The snapshot's ``schema-id`` gives its schema. Defaults and properties live only in table
    metadata, so they come from the metadata file that committed the snapshot, when it still exists.
    """
    if snapshot is None:
        return _StateAtCommit(None, None, None, None)
    committed = history.committing(snapshot) if history is not None else None
    at = committed.metadata if committed is not None else None
    schema: Schema | None = None
    if snapshot.schema_id is not None and snapshot.schema_id in metadata.schemas:
        schema = metadata.schemas[snapshot.schema_id]
    elif at is not None:
        schema = at.current_schema()
        notes.append(f"{label}: snapshot has no schema-id; using the schema current when it was committed")
    else:
        notes.append(f"{label}: snapshot has no schema-id and its metadata file is unavailable; schema unknown")
    if at is None:
        which = (
            f"may be one that could not be read ({committed.error or committed.file})"
            if committed is not None
            else "is not available (deleted or never logged)"
        )
        notes.append(
            f"{label}: the metadata file that committed snapshot {snapshot.snapshot_id} {which}, so its default "
            "partition spec, sort order and table properties are unknown; only the current properties are known"
        )
        return _StateAtCommit(schema, None, None, None)
    return _StateAtCommit(schema, at.default_spec(), at.default_sort_order(), dict(at.properties))


def _spec_changes(
    metadata: TableMetadata,
    in_use: tuple[frozenset[int], frozenset[int]],
    states: tuple[_StateAtCommit, _StateAtCommit],
    schema: Schema | None,
) -> tuple[FieldChange, ...]:
    """Specs that started or stopped having live files, then the field changes between the
    default specs at a and b (or, when those are unknown, the newest specs in use)."""
    out: list[FieldChange] = []
    for sid in sorted(in_use[1] - in_use[0]):
        out.append(
            FieldChange(
                kind=ChangeKind.SPEC_NOW_USED, field_id=None, name=f"spec {sid}", after=_spec_text(metadata, sid)
            )
        )
    for sid in sorted(in_use[0] - in_use[1]):
        out.append(
            FieldChange(
                kind=ChangeKind.SPEC_NO_LONGER_USED, field_id=None, name=f"spec {sid}", before=_spec_text(metadata, sid)
            )
        )
    old, new = states[0].spec, states[1].spec
    if old is None or new is None:
        old = metadata.partition_specs.get(max(in_use[0])) if in_use[0] else None
        new = metadata.partition_specs.get(max(in_use[1])) if in_use[1] else None
    out.extend(spec_changes(old, new, schema))
    return tuple(out)


def _spec_text(metadata: TableMetadata, spec_id: int) -> str:
    spec = metadata.partition_specs.get(spec_id)
    return str(spec) if spec is not None else f"spec {spec_id} (not in metadata)"


# ---------------------------------------------------------------- entry point


def diff(
    table: TableLike,
    a: At,
    b: At = None,
    *,
    read_history: bool = True,
    progress: bool = True,
) -> SnapshotDiff:
    """Compare two snapshots, refs or points in time (``b`` defaults to the current snapshot).

    Reads the two manifest lists and only the manifests that are not in both. With
    ``read_history`` the metadata files that committed a and b are read too (small JSON files
    from the metadata log) to learn their default spec, sort order and table properties.
    """
    metadata, store = table.metadata, table.store
    snap_a = resolve_snapshot(metadata, a)
    snap_b = resolve_snapshot(metadata, b)
    list_a = store.manifest_list(snap_a) if snap_a is not None else ()
    list_b = store.manifest_list(snap_b) if snap_b is not None else ()
    paths_a = {m.manifest_path for m in list_a}
    paths_b = {m.manifest_path for m in list_b}
    shared = tuple(m for m in list_b if m.manifest_path in paths_a)
    only_b = tuple(m for m in list_b if m.manifest_path not in paths_a)
    only_a = tuple(m for m in list_a if m.manifest_path not in paths_b)

    reads_before = store.reads
    child = _child_changes(store, snap_a, snap_b, only_b, progress=progress)
    if child is not None:
        added, removed = child
    else:
        live_a = _live_files(store, only_a, progress=progress)
        live_b = _live_files(store, only_b, progress=progress)
        added = _minus(live_b, live_a)
        removed = _minus(live_a, live_b)
    manifests_read = store.reads - reads_before
    path = history_path(metadata, snap_a.snapshot_id if snap_a else None, snap_b.snapshot_id if snap_b else None)

    notes: list[str] = []
    history = MetadataHistory(metadata, getattr(store, "fileio", None)) if read_history else None
    if history is None:
        notes.append("metadata history not read: default spec, sort order and properties at a and b are unknown")
    state_a = _state(metadata, snap_a, history, "a", notes)
    state_b = _state(metadata, snap_b, history, "b", notes)
    in_use = (_specs_in_use(list_a), _specs_in_use(list_b))
    naming_schema = state_b.schema or state_a.schema or metadata.current_schema()

    return SnapshotDiff(
        a=snap_a,
        b=snap_b,
        shared_manifests=shared,
        added_manifests=only_b,
        removed_manifests=only_a,
        added_files=_with_metrics(added, metadata),
        removed_files=_with_metrics(removed, metadata),
        partition_changes=_partition_changes(added, removed),
        summary_deltas=_summary_deltas(snap_a, snap_b),
        path=path,
        schema_ids=(snap_a.schema_id if snap_a else None, snap_b.schema_id if snap_b else None),
        schema_changes=schema_changes(state_a.schema, state_b.schema),
        spec_ids=in_use,
        spec_changes=_spec_changes(metadata, in_use, (state_a, state_b), naming_schema),
        sort_order_changes=sort_order_changes(state_a.sort_order, state_b.sort_order, naming_schema),
        property_changes=property_changes(state_a.properties, state_b.properties),
        notes=tuple(dict.fromkeys(notes)),
        manifests_read=manifests_read,
        v3=v3_changes(added, removed, path.b_side) if metadata.format_version >= 3 else V3Changes(),
    )
