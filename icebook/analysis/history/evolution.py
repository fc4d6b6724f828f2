"""Timelines of schemas, partition specs and sort orders, aligned with snapshots and the metadata log.

Spec ("Schema Evolution", "Partition Evolution", "Sorting"): a table keeps every schema, spec
and sort order it ever had, by id, and names the current one (``current-schema-id``,
``default-spec-id``, ``default-sort-order-id``). Each snapshot records the ``schema-id`` that was
current when it was written; each manifest records the ``partition_spec_id`` its files were
written with. So the snapshot list and the manifest lists alone say when a schema was first used
and which specs hold files at each snapshot. When a schema, spec or sort order *became current*
is only in the earlier metadata files of the metadata log, which may have been deleted: it is
known only where the file before the one that first shows it current can be read (or that file
is the table's first), and otherwise reported as unknown (never guessed).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

import numpy as np
import pandas as pd

from icebook.analysis._frames import attribute_frame, frame, utc_timestamp
from icebook.analysis.expr.projection import Projection, explain_in_spec, normalize_op
from icebook.analysis.history.field_changes import (
    EpochKind,
    FieldChange,
    property_changes,
    schema_changes,
    sort_order_changes,
    spec_changes,
)
from icebook.analysis.history.metadata_history import MetadataHistory, MetadataVersion
from icebook.analysis.store.manifests import ManifestStore
from icebook.analysis.store.table_like import TableLike
from icebook.errors import NotFound
from icebook.io.list_columns import holds_data, read_list_columns
from icebook.spec.metadata import TableMetadata, commit_order
from icebook.spec.schema import Schema
from icebook.spec.snapshots import Snapshot


@dataclass(frozen=True, slots=True, kw_only=True)
class Epoch:
    """One schema, partition spec or sort order, and how it came to be."""

    kind: EpochKind
    id: int
    definition: str
    previous_id: int | None
    """The one before it (by id: the reference implementation assigns increasing ids)."""
    changes: tuple[FieldChange, ...]
    """What changed from ``previous_id``, by field id."""
    first_snapshot_id: int | None
    """Schemas: first snapshot (commit order) whose schema-id is this one. Specs: first snapshot
    with manifests written with this spec. None if no snapshot used it (or, for sort orders, always)."""
    first_snapshot_ms: int | None
    became_current_ms: int | None
    """When it first became current/default, from the metadata log; None when unknown (the file before
    the first readable one that shows it current is gone, so it may have been current earlier)."""
    metadata_file: str | None
    """The metadata file in which it first became current (None: the current file, or unknown)."""
    is_current: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class PredicateExplanation:
    """``column op value`` projected into each partition spec (hidden partitioning)."""

    column: str
    op: str
    value: Any
    projections: tuple[Projection, ...]

    def to_pandas(self) -> pd.DataFrame:
        return attribute_frame(
            self.projections,
            ["spec_id", "partition_field", "transform", "partition_predicate", "reason"],
            ints=("spec_id",),
            derived={"partition_predicate": attrgetter("predicate")},
        )

    def __repr__(self) -> str:
        return f"<PredicateExplanation {self.column} {self.op} {self.value!r} in {len(self.projections)} specs>"


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Evolution:
    """Schema, partition spec and sort order timelines of one table (``t.evolution()``)."""

    schemas: tuple[Epoch, ...]
    specs: tuple[Epoch, ...]
    sort_orders: tuple[Epoch, ...]
    snapshot_rows: pd.DataFrame = field(repr=False)
    """``snapshots`` without its ``spec_ids`` column: what the snapshot list and metadata log say."""
    property_history: pd.DataFrame
    """Table property changes between consecutive readable metadata files."""
    notes: tuple[str, ...]
    metadata: TableMetadata = field(repr=False)
    usage: SpecUsage | None = field(default=None, repr=False)
    """Which specs hold files at each snapshot (None: no manifest store)."""

    @property
    def snapshots(self) -> pd.DataFrame:
        """Per snapshot (commit order): schema_id, and from the committing metadata file (when it
        still exists) default_spec_id and default_sort_order_id; spec_ids holding live files.

        ``spec_ids`` reads every snapshot's manifest list on first use (see ``SpecUsage``)."""
        out = self.snapshot_rows.copy()
        if self.usage is None:
            out["spec_ids"] = None
        else:
            out["spec_ids"] = self.usage.spec_ids_per_snapshot()
        return out

    @property
    def files_per_spec(self) -> pd.DataFrame:
        """Per snapshot and spec: live data and delete files and records, from manifest lists only."""
        if self.usage is None:
            return frame([], list(_FILES_PER_SPEC_COLUMNS), ints=_FILES_PER_SPEC_COLUMNS[2:])
        return self.usage.files_per_spec()

    def explain_predicate(self, column: str, op: str, value: Any = None) -> PredicateExplanation:
        """How ``column op value`` becomes a partition predicate under each spec, e.g.
        ``ts >= '2024-01-03'``: spec 0 (region only) none; spec 1 ``ts_day >= 2024-01-03``."""
        return explain_predicate(self.metadata, column, op, value)

    def to_pandas(self) -> pd.DataFrame:
        """Every schema, spec and sort order as one timeline."""
        return attribute_frame(
            (*self.schemas, *self.specs, *self.sort_orders),
            _TIMELINE_COLUMNS,
            ints=("id", "previous_id", "first_snapshot_id"),
            derived={
                "kind": lambda e: e.kind.value,
                "became_current_at": lambda e: utc_timestamp(e.became_current_ms),
                "first_snapshot_at": lambda e: utc_timestamp(e.first_snapshot_ms),
                "changes": lambda e: [str(c) for c in e.changes],
            },
        )

    def __repr__(self) -> str:
        return (
            f"<Evolution {len(self.schemas)} schemas, {len(self.specs)} partition specs, "
            f"{len(self.sort_orders)} sort orders>"
        )


_TIMELINE_COLUMNS = (
    "kind",
    "id",
    "previous_id",
    "became_current_at",
    "metadata_file",
    "first_snapshot_id",
    "first_snapshot_at",
    "is_current",
    "changes",
    "definition",
)


# ---------------------------------------------------------------- building


def _became_current(versions: list[MetadataVersion], pick: Any) -> dict[int, MetadataVersion | None]:
    """id -> the metadata version in which ``pick(state)`` first became that id, for every id some
    readable file shows current. None (unknown) unless that file is the table's first, or the file
    before it can be read: with that file gone, the id may have become current earlier."""
    out: dict[int, MetadataVersion | None] = {}
    for index, v in enumerate(versions):
        if v.state is None:
            continue
        ident = pick(v.state)
        if ident is None or ident in out:
            continue
        known = versions[index - 1].state is not None if index else v.state.previous_files == 0
        out[ident] = v if known else None
    return out


def _naming_schema(metadata: TableMetadata, ids: list[int]) -> Schema:
    """A schema that names the source columns: the newest schema holding all of ``ids``."""
    for schema in sorted(metadata.schemas.values(), key=lambda s: -s.schema_id):
        if all(schema.find_field(i) is not None for i in ids):
            return schema
    return metadata.current_schema()


def _ordered(metadata: TableMetadata) -> list[Snapshot]:
    return sorted(metadata.snapshots, key=commit_order)


def _property_history(versions: list[MetadataVersion]) -> pd.DataFrame:
    rows = []
    previous: dict[str, str] | None = None
    for v in versions:
        if v.state is None:
            previous = None  # a gap: the next readable file's properties cannot be attributed to one commit
            continue
        current = dict(v.state.properties)
        for change in property_changes(previous if previous is not None else {}, current):
            rows.append(
                {
                    "timestamp": utc_timestamp(v.timestamp_ms),
                    "metadata_file": v.file,
                    "kind": change.kind.value if previous is not None else "initial",
                    "name": change.name,
                    "before": change.before,
                    "after": change.after,
                }
            )
        previous = current
    return frame(rows, ["timestamp", "metadata_file", "kind", "name", "before", "after"])


_FILES_PER_SPEC_COLUMNS = (
    "snapshot_id",
    "committed_at",
    "spec_id",
    "data_manifests",
    "delete_manifests",
    "data_files",
    "delete_files",
    "data_records",
)


class SpecUsage:
    """The partition specs holding live files at each snapshot, from its manifest list's counts.

    A table with tens of thousands of snapshots has as many manifest lists; they are read once, all
    together and column-wise (``icebook.io.list_columns``), when first needed. A manifest's live files
    are its ADDED plus EXISTING files; a count its list does not record (v1) leaves them unknown, and a
    manifest with an unknown count is taken to hold files.
    """

    def __init__(self, store: ManifestStore, snapshots: list[Snapshot]) -> None:
        self._store = store
        self._snapshots = snapshots
        self._rows: pd.DataFrame | None = None

    def rows(self) -> pd.DataFrame:
        """One row per manifest of every snapshot's list: ``position`` (the snapshot's place in commit
        order), spec_id, is_data, and live files and data rows (NA when unknown)."""
        if self._rows is None:
            with_list = [(i, s.manifest_list) for i, s in enumerate(self._snapshots) if s.manifest_list is not None]
            table = read_list_columns(self._store.fileio, [path for _, path in with_list])
            positions = np.array([i for i, _ in with_list], dtype=np.int64)
            column = {name: table.column(name).to_pandas(types_mapper=pd.ArrowDtype) for name in table.column_names}
            live_files = column["added_files_count"] + column["existing_files_count"]
            live_rows = column["added_rows_count"] + column["existing_rows_count"]
            self._rows = pd.DataFrame(
                {
                    "position": positions[table.column("list_index").to_numpy()],
                    "spec_id": column["partition_spec_id"].astype("int64"),
                    "is_data": holds_data(table),
                    "live_files": live_files.astype("Int64"),
                    "live_rows": live_rows.astype("Int64"),
                }
            )
        return self._rows

    def _holding(self) -> pd.DataFrame:
        rows = self.rows()
        return rows[rows["live_files"].isna() | (rows["live_files"] != 0)]

    def spec_ids_per_snapshot(self) -> list[list[int]]:
        """Per snapshot (commit order): the spec ids of its manifests that hold (or may hold) live files."""
        held = self._holding()[["position", "spec_id"]].drop_duplicates().sort_values(["position", "spec_id"])
        out: list[list[int]] = [[] for _ in self._snapshots]
        for position, spec_id in zip(held["position"].to_numpy(), held["spec_id"].to_numpy(), strict=True):
            out[int(position)].append(int(spec_id))
        return out

    def first_with_files(self) -> dict[int, Snapshot]:
        """For each spec id, the first snapshot (commit order) whose list holds live files of it."""
        first = self._holding().groupby("spec_id")["position"].min()
        return {
            int(spec_id): self._snapshots[int(position)]
            for spec_id, position in zip(first.index.to_numpy(), first.to_numpy(), strict=True)
        }

    def files_per_spec(self) -> pd.DataFrame:
        rows = self.rows()
        if rows.empty:
            return frame([], list(_FILES_PER_SPEC_COLUMNS), ints=_FILES_PER_SPEC_COLUMNS[2:])
        keyed = rows.assign(
            data_manifests=rows["is_data"].astype("int64"),
            delete_manifests=(~rows["is_data"]).astype("int64"),
            data_files=rows["live_files"].where(rows["is_data"], 0),
            delete_files=rows["live_files"].where(~rows["is_data"], 0),
            data_records=rows["live_rows"].where(rows["is_data"], 0),
        )
        sums = ["data_manifests", "delete_manifests", "data_files", "delete_files", "data_records"]
        keys = [keyed["position"], keyed["spec_id"]]
        out = keyed[sums].groupby(keys, sort=True).sum()
        # A sum over a manifest of unknown count is unknown (pandas would skip the NA).
        counted = ["data_files", "delete_files", "data_records"]
        unknown = keyed[counted].isna().groupby(keys, sort=True).any()
        for name in counted:
            out[name] = out[name].astype("Int64").mask(unknown[name])
        out = out.reset_index()
        positions = out["position"].to_numpy()
        snapshot_ids = np.array([s.snapshot_id for s in self._snapshots], dtype=np.int64)
        committed_ms = np.array([s.timestamp_ms for s in self._snapshots], dtype=np.int64)
        result = pd.DataFrame(
            {
                "snapshot_id": pd.array(snapshot_ids[positions], dtype=pd.Int64Dtype()),
                "committed_at": pd.to_datetime(committed_ms[positions], unit="ms", utc=True),
                **{name: out[name].astype(pd.Int64Dtype()).array for name in ("spec_id", *sums)},
            }
        )
        return result[list(_FILES_PER_SPEC_COLUMNS)]


def evolution(table: TableLike, *, read_history: bool = True) -> Evolution:
    """Build the timelines. Reads, with ``read_history``, what each earlier metadata file of the log says
    is current, and every snapshot's manifest list once, column-wise (which specs hold files at each
    snapshot); never a manifest."""
    metadata = table.metadata
    notes: list[str] = []
    history = MetadataHistory(metadata, table.fileio, full=False) if read_history else None
    versions = list(history.all()) if history is not None else []
    missing = [v for v in versions if v.state is None]
    if history is None:
        notes.append("metadata log not read: when each schema, spec and sort order became current is unknown")
    elif missing:
        notes.append(
            f"{len(missing)} of {len(versions)} metadata files of the log could not be read (the first: "
            f"{missing[0].error or missing[0].file}): for them, what was current is unknown"
        )

    snaps = _ordered(metadata)
    usage = SpecUsage(table.store, snaps)

    first_schema_snapshot: dict[int, Snapshot] = {}
    for s in snaps:
        if s.schema_id is not None:
            first_schema_snapshot.setdefault(s.schema_id, s)
    schemas, specs, orders = metadata.schemas, metadata.partition_specs, metadata.sort_orders

    def spec_diff(old: int, new: int) -> tuple[FieldChange, ...]:
        ids = [i for pf in (*specs[new].fields, *specs[old].fields) for i in pf.source_ids]
        return spec_changes(specs[old], specs[new], _naming_schema(metadata, ids))

    def order_diff(old: int, new: int) -> tuple[FieldChange, ...]:
        ids = [i for f in (*orders[new].fields, *orders[old].fields) for i in f.source_ids]
        return sort_order_changes(orders[old], orders[new], _naming_schema(metadata, ids))

    schema_epochs = _epochs(
        EpochKind.SCHEMA,
        sorted(schemas),
        current=metadata.current_schema_id,
        became=_became_current(versions, lambda state: state.current_schema_id),
        first=first_schema_snapshot,
        definition=lambda i: str(schemas[i].fields),
        diff=lambda old, new: schema_changes(schemas[old], schemas[new]),
    )
    spec_epochs = _epochs(
        EpochKind.PARTITION_SPEC,
        sorted(specs),
        current=metadata.default_spec_id,
        became=_became_current(versions, lambda state: state.default_spec_id),
        first=usage.first_with_files(),
        definition=lambda i: _spec_definition(metadata, i),
        diff=spec_diff,
    )
    order_epochs = _epochs(
        EpochKind.SORT_ORDER,
        sorted(orders),
        current=metadata.default_sort_order_id,
        became=_became_current(versions, lambda state: state.default_sort_order_id),
        first={},  # no snapshot records its sort order
        definition=lambda i: str(orders[i]),
        diff=order_diff,
    )

    # ---- per snapshot
    rows = []
    for s in snaps:
        committed = history.committing(s) if history is not None else None
        at = committed.state if committed is not None else None
        rows.append(
            {
                "snapshot_id": s.snapshot_id,
                "committed_at": utc_timestamp(s.timestamp_ms),
                "operation": s.operation,
                "schema_id": s.schema_id,
                "default_spec_id": at.default_spec_id if at is not None else None,
                "default_sort_order_id": at.default_sort_order_id if at is not None else None,
            }
        )
    snapshot_frame = frame(
        rows,
        [
            "snapshot_id",
            "committed_at",
            "operation",
            "schema_id",
            "default_spec_id",
            "default_sort_order_id",
        ],
        ints=("snapshot_id", "schema_id", "default_spec_id", "default_sort_order_id"),
    )

    return Evolution(
        schemas=schema_epochs,
        specs=spec_epochs,
        sort_orders=order_epochs,
        snapshot_rows=snapshot_frame,
        usage=usage,
        property_history=_property_history(versions),
        notes=tuple(notes),
        metadata=metadata,
    )


def _epochs(
    kind: EpochKind,
    ids: list[int],
    *,
    current: int | None,
    became: Mapping[int, MetadataVersion | None],
    first: Mapping[int, Snapshot],
    definition: Callable[[int], str],
    diff: Callable[[int, int], tuple[FieldChange, ...]],
) -> tuple[Epoch, ...]:
    """One timeline: each id (in id order) with what changed from the one before it, the first snapshot
    that used it and when it became current."""
    out: list[Epoch] = []
    for previous, ident in zip([None, *ids], ids, strict=False):
        snap, v = first.get(ident), became.get(ident)
        out.append(
            Epoch(
                kind=kind,
                id=ident,
                definition=definition(ident),
                previous_id=previous,
                changes=diff(previous, ident) if previous is not None else (),
                first_snapshot_id=snap.snapshot_id if snap else None,
                first_snapshot_ms=snap.timestamp_ms if snap else None,
                became_current_ms=v.timestamp_ms if v else None,
                metadata_file=v.file if v else None,
                is_current=ident == current,
            )
        )
    return tuple(out)


def _spec_definition(metadata: TableMetadata, spec_id: int) -> str:
    spec = metadata.partition_specs[spec_id]
    schema = _naming_schema(metadata, [i for pf in spec.fields for i in pf.source_ids])
    if not spec.fields:
        return "unpartitioned"
    return ", ".join(
        f"{pf.name}={pf.transform}({','.join(schema.find_column_name(i) or f'#{i}' for i in pf.source_ids)})"
        for pf in spec.fields
    )


def explain_predicate(metadata: TableMetadata, column: str, op: str, value: Any = None) -> PredicateExplanation:
    """Project ``column op value`` into every partition spec of the table (see ``icebook.analysis.expr.projection``).

    The column is looked up in the current schema, then in older ones (newest first), so a
    predicate on a dropped column still explains the specs that partitioned by it.
    """
    op = normalize_op(op)
    schemas = [metadata.current_schema(), *sorted(metadata.schemas.values(), key=lambda s: -s.schema_id)]
    schema = next((s for s in schemas if s.find_field_by_name(column, case_sensitive=False) is not None), None)
    if schema is None:
        raise NotFound(f"column {column!r}", available=metadata.current_schema().id_to_name().values())
    projections: list[Projection] = []
    for spec_id in sorted(metadata.partition_specs):
        projections.extend(explain_in_spec(metadata.partition_specs[spec_id], schema, column, op, value))
    return PredicateExplanation(column=column, op=op, value=value, projections=tuple(projections))
