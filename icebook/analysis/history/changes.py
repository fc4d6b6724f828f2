"""Row-level changelog between two snapshots, shaped like Spark's ``create_changelog_view``.

For each snapshot on the path from ``a`` (exclusive) to ``b`` (inclusive), the live rows of the
data files whose presence or applicable deletes changed are compared with the parent's, by row
identity (data file path, row position): rows that disappear are ``DELETE``, rows that appear are
``INSERT``. A copy-on-write rewrite deletes and re-inserts the rows it carries over unchanged;
such identical DELETE/INSERT pairs of one snapshot cancel out (Spark's carry-over removal).

Spec ("Row-level Deletes", "Scan Planning"): which rows are live follows the delete scope rules,
so position deletes, equality deletes and deletion vectors all show up as ``DELETE`` rows.

Reading rows is an engine's job, so the reader is passed in (analysis must not import engines)::

    changes(t, a, b, read=icebook.engines.arrow.read_live_rows)
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa

from icebook.analysis.ancestry import ancestry
from icebook.analysis.scan.planner import plan_scan
from icebook.analysis.store.table_like import TableLike
from icebook.errors import NotFound
from icebook.spec.schema import Schema
from icebook.spec.snapshots import Snapshot

LiveRowReader = Callable[..., pa.Table]
"""``read(table, snapshot, files, *, schema) -> pa.Table`` with the schema's columns plus ``_file`` and ``_pos``."""


def snapshot_path(table: TableLike, a: Snapshot | int | None, b: Snapshot | int) -> list[Snapshot]:
    """Snapshots after ``a`` up to and including ``b``, oldest first; ``a`` must be an ancestor of ``b``
    (None: from the start of ``b``'s history)."""
    metadata = table.metadata
    end = b if isinstance(b, Snapshot) else metadata.snapshot_by_id(b)
    start_id = a.snapshot_id if isinstance(a, Snapshot) else a
    chain = ancestry(metadata, end.snapshot_id)
    ids = [s.snapshot_id for s in chain]
    if start_id is None:
        return list(chain[::-1])
    if start_id not in ids:
        raise NotFound(f"snapshot {start_id} is not an ancestor of snapshot {end.snapshot_id}")
    return list(chain[: ids.index(start_id)][::-1])


def _file_states(table: TableLike, snapshot: Snapshot | None, schema: Schema) -> dict[str, frozenset[str]]:
    if snapshot is None:
        return {}
    return plan_scan(table, snapshot, schema=schema).applied_deletes()


def changes(
    table: TableLike,
    a: Snapshot | int | None,
    b: Snapshot | int,
    *,
    read: LiveRowReader,
    identifier_columns: Sequence[str] | None = None,
    schema: Schema | None = None,
) -> pd.DataFrame:
    """Rows inserted and deleted by each snapshot after ``a`` up to ``b``: the data columns (current
    schema), ``_change_type`` (INSERT, DELETE; UPDATE_BEFORE/UPDATE_AFTER when ``identifier_columns``
    pair a delete with an insert), ``_change_ordinal`` (0 for the first snapshot after ``a``) and
    ``_commit_snapshot_id``."""
    metadata = table.metadata
    schema = schema or metadata.current_schema()
    names = [f.name for f in schema.columns]
    path = snapshot_path(table, a, b)
    records: list[dict[str, Any]] = []
    previous_states: dict[int, dict[str, frozenset[str]]] = {}
    for ordinal, snap in enumerate(path):
        parent = metadata.snapshot_by_id(snap.parent_snapshot_id) if snap.parent_snapshot_id is not None else None
        before = previous_states.get(parent.snapshot_id) if parent else {}
        if before is None:
            before = _file_states(table, parent, schema)
        after = _file_states(table, snap, schema)
        previous_states = {snap.snapshot_id: after}
        affected = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
        if not affected:
            continue
        old = _rows(read, table, parent, affected & before.keys(), schema)
        new = _rows(read, table, snap, affected & after.keys(), schema)
        old_ids = {(r["_file"], r["_pos"]) for r in old}
        new_ids = {(r["_file"], r["_pos"]) for r in new}
        deleted = [_data(r, names) for r in old if (r["_file"], r["_pos"]) not in new_ids]
        inserted = [_data(r, names) for r in new if (r["_file"], r["_pos"]) not in old_ids]
        deleted, inserted = _cancel_carryovers(deleted, inserted, names)
        kinds = _classify(deleted, inserted, names, identifier_columns)
        for row, kind in kinds:
            records.append(
                {**row, "_change_type": kind, "_change_ordinal": ordinal, "_commit_snapshot_id": snap.snapshot_id}
            )
    return _frame(records, schema)


def _rows(
    read: LiveRowReader, table: TableLike, snapshot: Snapshot | None, files: Collection[str], schema: Schema
) -> list[dict[str, Any]]:
    if snapshot is None or not files:
        return []
    result: list[dict[str, Any]] = read(table, snapshot, set(files), schema=schema).to_pylist()
    return result


def _data(row: dict[str, Any], names: list[str]) -> dict[str, Any]:
    return {n: row[n] for n in names}


def _key(row: dict[str, Any], names: Sequence[str]) -> tuple[Any, ...]:
    return tuple(repr(row[n]) for n in names)


def _cancel_carryovers(
    deleted: list[dict[str, Any]], inserted: list[dict[str, Any]], names: list[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Drop DELETE/INSERT pairs of identical rows: rows a rewrite carried over unchanged."""
    remaining = Counter(_key(r, names) for r in inserted)
    cancelled: Counter[tuple[Any, ...]] = Counter()
    kept_deleted = []
    for r in deleted:
        k = _key(r, names)
        if remaining[k] > 0:
            remaining[k] -= 1
            cancelled[k] += 1
        else:
            kept_deleted.append(r)
    kept_inserted = []
    for r in inserted:
        k = _key(r, names)
        if cancelled[k] > 0:
            cancelled[k] -= 1
        else:
            kept_inserted.append(r)
    return kept_deleted, kept_inserted


def _classify(
    deleted: list[dict[str, Any]],
    inserted: list[dict[str, Any]],
    names: list[str],
    identifier_columns: Sequence[str] | None,
) -> list[tuple[dict[str, Any], str]]:
    if not identifier_columns:
        return [(r, "DELETE") for r in deleted] + [(r, "INSERT") for r in inserted]
    ids = [c for c in identifier_columns if c in names]
    if len(ids) != len(identifier_columns):
        unknown = [c for c in identifier_columns if c not in names]
        raise NotFound(f"identifier column {unknown[0]!r} is not in the schema", available=names)
    by_id: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for r in inserted:
        by_id[_key(r, ids)].append(r)
    out: list[tuple[dict[str, Any], str]] = []
    paired: set[int] = set()
    for r in deleted:
        candidates = by_id.get(_key(r, ids))
        if candidates:
            after = candidates.pop(0)
            paired.add(id(after))
            out += [(r, "UPDATE_BEFORE"), (after, "UPDATE_AFTER")]
        else:
            out.append((r, "DELETE"))
    out += [(r, "INSERT") for r in inserted if id(r) not in paired]
    return out


def _frame(records: list[dict[str, Any]], schema: Schema) -> pd.DataFrame:
    from icebook.analysis.arrow_types import arrow_type

    fields = [pa.field(f.name, arrow_type(f.type)) for f in schema.columns]
    fields += [
        pa.field("_change_type", pa.string()),
        pa.field("_change_ordinal", pa.int32()),
        pa.field("_commit_snapshot_id", pa.int64()),
    ]
    arrow_schema = pa.schema(fields)
    table = pa.Table.from_pylist(records, schema=arrow_schema) if records else arrow_schema.empty_table()
    return table.to_pandas()


__all__ = ["changes", "snapshot_path"]
