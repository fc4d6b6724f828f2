"""The delete index: which delete files apply to which data files (spec: "Scan Planning",
"Row-level Deletes", "Sequence Numbers"), in columns for the planner and in words for explanations.

Two rules, each written twice and held equal by ``tests/analysis/test_scan_columns.py`` on every data
file of every snapshot of every scenario table:

- the spec's scope rules: ``match_deletes_columns`` (one columnar join over a plan's kept files) and
  ``plan_items.delete_matches`` (one data file at a time, in words, beside the ``ScanTask`` that shows
  them: the index builds on those objects, and they need nothing of it). Data and delete files are keyed by (spec id,
  partition tuple), each tuple turned into an integer code; pairs are formed by equal keys (position
  and equality deletes), by ``referenced_data_file`` (deletion vectors) and with every data file
  (equality deletes of an unpartitioned spec, which are global); then the sequence-number rules are
  numpy comparisons over the pairs;
- the reference implementation's statistics rule (its ``DeleteFileIndex``): an equality delete file the
  scope rules apply is not attached to a data file when, for one of its equality fields, the column
  statistics prove no row of one equals a row of the other (the data all null and the deletes without
  null, or the reverse, or value ranges that do not overlap). Rows are the same either way; the count
  of delete files per data file is not, and the maintenance planners decide by that count. Columns:
  ``DeleteJoin.disjoint``, from the statistics the plan read (``plan_scan(equality_stats=True)``);
  words: ``equality_disjoint`` over ``expr.pruning.Stats``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.expr.pruning import Stats
from icebook.analysis.expr.pruning_arrow import StatsColumns
from icebook.analysis.scan.columns import STAT_MAPS, ManifestScan, bound_columns, row_column_stats, utf8_column
from icebook.analysis.store.metrics import MapColumn
from icebook.analysis.string_lookup import StringLookup, expand_runs
from icebook.spec.manifest import FileContent, FileFormat
from icebook.spec.metadata import TableMetadata
from icebook.spec.schema import DELETE_FILE_PATH_ID, Schema
from icebook.spec.types import NestedField, is_primitive

# Kinds of delete file, and the order in which a data file's matches are listed.
DV, POSITION, EQUALITY, GLOBAL_EQUALITY = 0, 1, 2, 3


class FileRows:
    """Kept files of a plan as positions (manifest scan, row) in its manifest scans, with the columns
    delete matching reads gathered once."""

    def __init__(self, scans: Sequence[ManifestScan], scan_index: np.ndarray, rows: np.ndarray) -> None:
        self.scans = scans
        self.scan_index = scan_index
        self.rows = rows
        self._memo: dict[Any, Any] = {}

    def memo(self, key: Any, make: Callable[[], Any]) -> Any:
        """``make()`` once per ``key`` for these rows (a delete side joined again and again keeps what
        it derived; two threads may both make it, and one result is kept)."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def __len__(self) -> int:
        return len(self.rows)

    def _parts(self) -> list[tuple[int, np.ndarray]]:
        """(scan index, rows of that scan) in order: consecutive runs of one scan."""
        if len(self.rows) == 0:
            return []
        cuts = np.flatnonzero(np.diff(self.scan_index)) + 1
        starts = np.concatenate([[0], cuts])
        ends = np.concatenate([cuts, [len(self.rows)]])
        return [(int(self.scan_index[s]), self.rows[s:e]) for s, e in zip(starts, ends, strict=True)]

    def chunks(self, name: str) -> list[tuple[int, pa.Array]]:
        """(scan index, column ``name`` at these rows of that scan), in order; no copy where a scan's
        rows are all of its entries."""
        out = []
        for i, rows in self._parts():
            column = _array(self.scans[i].entries.column(name))
            whole = len(rows) == len(column) and bool((rows == np.arange(len(rows))).all())
            out.append((i, column if whole else column.take(pa.array(rows))))
        return out

    def column(self, name: str) -> pa.Array:
        """Column ``name`` of the entries, for these rows, in order."""
        chunks = [chunk for _, chunk in self.chunks(name)]
        if not chunks:
            return self._empty(name)
        return chunks[0] if len(chunks) == 1 else pa.concat_arrays(chunks)

    def chunked(self, name: str) -> pa.ChunkedArray:
        """``column(name)`` as the scans' own chunks, never concatenated: one array of millions of paths
        would pass Arrow's 2 GiB of string offsets."""
        return pa.chunked_array([chunk for _, chunk in self.chunks(name)] or [self._empty(name)])

    def _empty(self, name: str) -> pa.Array:
        return pa.array([], self.scans[0].entries.schema.field(name).type) if self.scans else pa.array([])

    def gather(self, name: str, positions: np.ndarray) -> pa.Array:
        """Column ``name`` at ``positions`` of these rows (only those are copied)."""
        sub = FileRows(self.scans, self.scan_index[positions], self.rows[positions])
        order = np.argsort(sub.scan_index, kind="stable")
        ordered = FileRows(self.scans, sub.scan_index[order], sub.rows[order])
        values = ordered.column(name)
        return values.take(pa.array(np.argsort(order, kind="stable")))

    def stats(self, position: int, schema: Schema, ids: set[int]) -> dict[int, Stats]:
        """The column stats of the entry at ``position`` for the field ids ``ids``, in the scalar
        evaluator's form (for reasons in words)."""
        scan = self.scans[int(self.scan_index[position])]
        return row_column_stats(scan.entries, int(self.rows[position]), schema, ids, scan.manifest.manifest_path)

    @cached_property
    def paths(self) -> pa.ChunkedArray:
        return self.chunked("file_path") if len(self) else pa.chunked_array([], pa.string())

    @cached_property
    def sequence_numbers(self) -> np.ndarray:
        if not len(self):
            return np.zeros(0, dtype=np.int64)
        parts = [np.asarray(pc.fill_null(c, 0).to_numpy(), dtype=np.int64) for _, c in self.chunks("sequence_number")]
        return np.concatenate(parts)

    @cached_property
    def spec_ids(self) -> np.ndarray:
        ids = np.array([s.manifest.partition_spec_id for s in self.scans], dtype=np.int64)
        return ids[self.scan_index] if len(self) else np.zeros(0, dtype=np.int64)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class DeleteJoin:
    """Every (data file, delete file) pair the scope rules consider, and whether the delete applies.

    Pairs are sorted by data file, then kind (deletion vectors, position deletes, equality deletes of
    the partition, global equality deletes), then delete file order in the plan."""

    data: FileRows
    deletes: FileRows
    data_index: np.ndarray
    delete_index: np.ndarray
    kind: np.ndarray
    applies: np.ndarray
    """The scope rules' verdict on each pair."""
    disjoint: np.ndarray | None = None
    """Per pair: an equality delete the scope rules apply that column statistics rule out (the
    reference implementation's delete index); None when the plan did not read the statistics."""

    @property
    def applied(self) -> tuple[np.ndarray, np.ndarray]:
        """(data index, delete index) of the pairs whose delete applies."""
        return self.data_index[self.applies], self.delete_index[self.applies]


def _array(column: pa.ChunkedArray) -> pa.Array:
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def _lookup(values: pa.Array, dictionary: pa.Array) -> np.ndarray:
    """Position of each value in ``dictionary`` (nulls equal to nulls), -1 where it is not there."""
    try:
        if values.type != dictionary.type:
            values = values.cast(dictionary.type)
        found = pc.index_in(values, value_set=dictionary, skip_nulls=False)
        return np.asarray(pc.fill_null(found, -1).to_numpy(zero_copy_only=False), dtype=np.int64)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        known = {repr(v): i for i, v in enumerate(dictionary.to_pylist())}
        return np.array([known.get(repr(v), -1) for v in values.to_pylist()], dtype=np.int64)


PartitionFields = list[tuple[pa.Array, int, np.ndarray]]
"""Per partition field, what delete files' tuples hold: (its distinct values, their count (at least 1), the
codes of the tuples' prefixes up to and with it)."""


def _partition_index(delete_parts: pa.Array) -> tuple[np.ndarray, PartitionFields]:
    """Integer codes of delete files' partition tuples (structs of one spec; equal codes for equal tuples,
    nulls equal), and what ``_data_codes`` looks data files' tuples up by. Only delete partitions are hashed."""
    delete_code = np.zeros(len(delete_parts), dtype=np.int64)
    fields: PartitionFields = []
    for i in range(delete_parts.type.num_fields):
        child = delete_parts.field(i)
        try:
            dictionary = pc.unique(child)
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
            dictionary = pa.array(list({repr(v): v for v in child.to_pylist()}.values()), child.type)
        size = max(len(dictionary), 1)
        combined = delete_code * size + _lookup(child, dictionary)
        known = np.unique(combined)
        delete_code = np.searchsorted(known, combined)
        fields.append((dictionary, size, known))
    return delete_code, fields


def _data_codes(fields: PartitionFields, part: pa.Array) -> np.ndarray:
    """The code of each data file's partition tuple among the delete files' (``_partition_index``), -1 for
    a tuple no delete file holds; looked up one field at a time."""
    code = np.zeros(len(part), dtype=np.int64)
    ok = np.ones(len(part), dtype=bool)
    for i, (dictionary, size, known) in enumerate(fields):
        index = _lookup(part.field(i), dictionary) if i < part.type.num_fields else np.full(len(part), -1)
        combined = code * size + np.maximum(index, 0)
        position = np.minimum(np.searchsorted(known, combined), len(known) - 1)
        hit = (index >= 0) & (known[position] == combined)
        ok &= hit
        code = np.where(hit, position, 0)
    return np.where(ok, code, -1)


@dataclass(frozen=True, slots=True)
class _DeleteSide:
    """What a join derives from its delete files alone: once per delete side (``FileRows.memo``; a delete
    side belongs to one table), so that a pass joining each data manifest against the same delete files
    costs the manifest, not the delete files."""

    keys: np.ndarray
    """Each delete file's partition key: its spec's base plus its tuple's code."""
    specs: dict[int, tuple[int, PartitionFields]]
    """Per spec id holding delete files: (its keys' base, its partition index)."""
    positional: tuple[np.ndarray, np.ndarray]
    """The position delete files, and their order by key (``_equal_key_pairs``)."""
    scoped: tuple[np.ndarray, np.ndarray]
    """The equality delete files of partitioned specs, and their order by key."""
    global_equality: np.ndarray
    """The equality delete files of unpartitioned specs."""
    references: pa.Array
    """Each delete file's ``referenced_data_file``."""
    vectors: np.ndarray
    """The deletion vectors."""
    vector_targets: StringLookup
    """The data files the deletion vectors reference, in the order of ``vectors``."""


def _delete_side(deletes: FileRows, metadata: TableMetadata) -> _DeleteSide:
    content = np.asarray(deletes.column("content").to_numpy(zero_copy_only=False), dtype=np.int32)
    puffin = _numpy(pc.equal(pc.utf8_upper(deletes.column("file_format")), FileFormat.PUFFIN.value))
    unpartitioned = {sid for sid, spec in metadata.partition_specs.items() if spec.is_unpartitioned}
    kind = np.full(len(deletes), EQUALITY, dtype=np.int8)
    kind[content == int(FileContent.POSITION_DELETES)] = POSITION
    kind[(content == int(FileContent.POSITION_DELETES)) & puffin] = DV
    kind[(kind == EQUALITY) & np.isin(deletes.spec_ids, list(unpartitioned))] = GLOBAL_EQUALITY

    keys = np.full(len(deletes), -2, dtype=np.int64)
    specs: dict[int, tuple[int, PartitionFields]] = {}
    parts = deletes.chunks("partition")
    offsets = np.cumsum([0, *(len(c) for _, c in parts)])
    base = 0
    for spec_id in np.unique(deletes.spec_ids):
        mine = [k for k, (i, _) in enumerate(parts) if deletes.scans[i].manifest.partition_spec_id == spec_id]
        first = parts[mine[0]][1].type
        structs = pa.concat_arrays([c if c.type == first else c.cast(first) for k in mine for c in [parts[k][1]]])
        codes, fields = _partition_index(structs)
        at = 0
        for k in mine:
            size = len(parts[k][1])
            keys[offsets[k] : offsets[k] + size] = base + codes[at : at + size]
            at += size
        specs[int(spec_id)] = (base, fields)
        base += int(codes.max()) + 1 if len(codes) else 0

    def by_key(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return rows, np.argsort(keys[rows], kind="stable")

    vectors = np.flatnonzero(kind == DV)
    references = deletes.column("referenced_data_file")
    return _DeleteSide(
        keys=keys,
        specs=specs,
        positional=by_key(np.flatnonzero(kind == POSITION)),
        scoped=by_key(np.flatnonzero(kind == EQUALITY)),
        global_equality=np.flatnonzero(kind == GLOBAL_EQUALITY),
        references=references,
        vectors=vectors,
        vector_targets=StringLookup(references.take(pa.array(vectors))),
    )


def _equal_key_pairs(
    data_keys: np.ndarray, delete_keys: np.ndarray, order: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Every (data row, delete row) with equal keys; delete rows in their order for each data row. ``order``:
    the delete rows sorted by key (stable)."""
    ordered = delete_keys[order]
    lo = np.searchsorted(ordered, data_keys, side="left")
    data_index, at = expand_runs(lo, np.searchsorted(ordered, data_keys, side="right") - lo)
    return data_index.astype(np.int64), order[at].astype(np.int64)


def _kept(scans: Sequence[ManifestScan], data: bool) -> FileRows:
    scan_parts, row_parts = [], []
    for i, scan in enumerate(scans):
        content = scan.content
        mask = scan.kept & ((content == int(FileContent.DATA)) if data else (content != int(FileContent.DATA)))
        rows = np.flatnonzero(mask)
        scan_parts.append(np.full(len(rows), i, dtype=np.int64))
        row_parts.append(rows.astype(np.int64))
    if not scan_parts:
        return FileRows(scans, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    return FileRows(scans, np.concatenate(scan_parts), np.concatenate(row_parts))


def _numpy(arr: pa.Array) -> np.ndarray:
    return np.asarray(pc.fill_null(arr, False).to_numpy(zero_copy_only=False), dtype=bool)


def delete_rows(scans: Sequence[ManifestScan]) -> FileRows:
    """The kept delete files of ``scans``: a delete side to join data manifests against one at a time."""
    return _kept(scans, False)


def match_deletes_columns(
    scans: Sequence[ManifestScan],
    metadata: TableMetadata,
    *,
    equality_stats: Schema | None = None,
    deletes: FileRows | None = None,
) -> DeleteJoin:
    """The delete join of a plan's kept files (see the module's doc); with ``equality_stats`` (the
    schema the equality field ids name; the entries must hold the column statistics) also which
    equality deletes the statistics rule out. ``deletes``: the delete side, when the caller joins
    ``scans`` (data manifests) against the same delete files again and again (``delete_rows``)."""
    data = _kept(scans, True)
    deletes = _kept(scans, False) if deletes is None else deletes
    if not len(deletes) or not len(data):
        return _join(data, deletes, [], equality_stats)
    side: _DeleteSide = deletes.memo("delete side", lambda: _delete_side(deletes, metadata))
    delete_keys = side.keys

    # Partition keys: (spec, partition tuple) -> one integer, for the specs that have delete files.
    data_keys = np.full(len(data), -1, dtype=np.int64)
    data_parts = data.chunks("partition")
    data_offsets = np.cumsum([0, *(len(c) for _, c in data_parts)])
    for k, (i, part) in enumerate(data_parts):
        found = side.specs.get(data.scans[i].manifest.partition_spec_id)
        if found is not None:
            base, fields = found
            code = _data_codes(fields, part)
            data_keys[data_offsets[k] : data_offsets[k + 1]] = np.where(code >= 0, base + code, -1)

    f_seq, d_seq = data.sequence_numbers, deletes.sequence_numbers
    pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []  # data, delete, kind, applies

    # Deletion vectors: by referenced data file; the partition must be the same and data seq <= DV seq.
    dv_applies = np.zeros(len(data), dtype=bool)
    if len(side.vectors):
        # Each vector's first data file of the path it references (pairs come in data file order).
        data_rows, vector_rows = side.vector_targets.matches(data.paths)
        vector_rows, first = np.unique(vector_rows, return_index=True)
        dv_data, dv_del = data_rows[first], side.vectors[vector_rows]
        ok = (data_keys[dv_data] == delete_keys[dv_del]) & (f_seq[dv_data] <= d_seq[dv_del])
        dv_applies[dv_data[ok]] = True
        pairs.append((dv_data, dv_del, np.full(len(dv_del), DV, dtype=np.int8), ok))

    # Position delete files: same partition, data seq <= delete seq, within the file they reference and
    # their file_path bounds, unless a deletion vector applies.
    positional, order = side.positional
    if len(positional):
        di, pi = _equal_key_pairs(data_keys, delete_keys[positional], order)
        xi = positional[pi]
        ok = f_seq[di] <= d_seq[xi]
        if ok.any():
            paths = data.gather("file_path", di)
            refs = side.references.take(pa.array(xi))
            other = _numpy(pc.and_(pc.is_valid(refs), pc.not_equal(refs, paths)))
            low, high = deletes.memo("file_path bounds", lambda: _file_path_bounds(deletes))
            lo, hi = low.take(pa.array(xi)), high.take(pa.array(xi))
            outside = _numpy(pc.less(paths, lo)) | _numpy(pc.greater(paths, hi))
            ok &= ~other & ~outside & ~dv_applies[di]
        pairs.append((di, xi, np.full(len(xi), POSITION, dtype=np.int8), ok))

    # Equality delete files: same partition (or global), data seq < delete seq.
    scoped, order = side.scoped
    if len(scoped):
        di, ei = _equal_key_pairs(data_keys, delete_keys[scoped], order)
        xi = scoped[ei]
        pairs.append((di, xi, np.full(len(xi), EQUALITY, dtype=np.int8), f_seq[di] < d_seq[xi]))
    global_ = side.global_equality
    if len(global_):
        di = np.repeat(np.arange(len(data), dtype=np.int64), len(global_))
        xi = np.tile(global_, len(data))
        pairs.append((di, xi, np.full(len(xi), GLOBAL_EQUALITY, dtype=np.int8), f_seq[di] < d_seq[xi]))

    return _join(data, deletes, pairs, equality_stats)


def _file_path_bounds(deletes: FileRows) -> tuple[pa.Array, pa.Array]:
    """The ``file_path`` bounds of position delete files, as strings (null where not UTF-8)."""
    lower, upper = (
        utf8_column(MapColumn(deletes.column(name)).lookup(DELETE_FILE_PATH_ID))
        for name in ("lower_bounds", "upper_bounds")
    )
    return lower, upper


def _join(
    data: FileRows,
    deletes: FileRows,
    pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]],
    equality_stats: Schema | None,
) -> DeleteJoin:
    """The join of (data index, delete index, kind, applies) pair arrays, sorted as ``DeleteJoin`` says."""
    empty = np.zeros(0, dtype=np.int64)
    data_index, delete_index, kinds = (np.concatenate([empty, *(p[i] for p in pairs)]) for i in range(3))
    applies = np.concatenate([empty.astype(bool), *(p[3] for p in pairs)])
    order = np.lexsort((delete_index, kinds, data_index))
    data_index, delete_index, kinds, applies = data_index[order], delete_index[order], kinds[order], applies[order]
    disjoint = None
    if equality_stats is not None:
        disjoint = _disjoint_columns(data, deletes, data_index, delete_index, kinds, applies, equality_stats)
    return DeleteJoin(
        data=data,
        deletes=deletes,
        data_index=data_index,
        delete_index=delete_index,
        kind=kinds,
        applies=applies,
        disjoint=disjoint,
    )


def _disjoint_columns(
    data: FileRows,
    deletes: FileRows,
    data_index: np.ndarray,
    delete_index: np.ndarray,
    kinds: np.ndarray,
    applies: np.ndarray,
    schema: Schema,
) -> np.ndarray:
    """The statistics rule (``equality_disjoint``) over every applied equality pair at once."""
    out = np.zeros(len(data_index), dtype=bool)
    pairs = np.flatnonzero(applies & ((kinds == EQUALITY) | (kinds == GLOBAL_EQUALITY)))
    if not len(pairs):
        return out
    di, xi = data_index[pairs], delete_index[pairs]
    ids_of = deletes.memo(
        "equality ids", lambda: [tuple(ids or ()) for ids in deletes.column("equality_ids").to_pylist()]
    )
    fields = {f.field_id: f for i in {i for ids in ids_of for i in ids} if (f := schema.find_field(i)) is not None}
    fields = {i: f for i, f in fields.items() if is_primitive(f.type)}  # no statistics for nested types
    if not fields:
        return out

    def stats(rows: FileRows) -> dict[int, StatsColumns]:
        return bound_columns(pa.table({name: rows.column(name) for name in STAT_MAPS}), schema, set(fields), "plan")

    data_stats = stats(data)
    delete_stats = deletes.memo(("statistics", schema.schema_id, tuple(sorted(fields))), lambda: stats(deletes))
    ruled_out = np.zeros(len(pairs), dtype=bool)
    for fid, f in fields.items():
        if fid not in data_stats or fid not in delete_stats:
            continue
        member = np.array([fid in ids for ids in ids_of], dtype=bool)[xi]
        d, x = data_stats[fid], delete_stats[fid]
        d_no_null, x_no_null = d.no_null[di] | f.required, x.no_null[xi] | f.required
        optional = not f.required
        d_all_null, x_all_null = d.all_null[di] & optional, x.all_null[xi] & optional
        both_null = ~d_no_null & ~x_no_null  # the data holds nulls and null was deleted: may match
        take_d, take_x = pa.array(di), pa.array(xi)
        d_lo, d_hi = d.lower.take(take_d), d.upper.take(take_d)
        x_lo, x_hi = x.lower.take(take_x), x.upper.take(take_x)
        apart = _numpy(pc.or_(pc.greater(d_lo, x_hi), pc.greater(x_lo, d_hi)))  # null when a bound is unknown
        field_rules_out = (d_all_null & x_no_null) | (x_all_null & d_no_null) | apart
        ruled_out |= member & ~both_null & field_rules_out
    out[pairs] = ruled_out
    return out


# ------------------------------------------------------------------------------------------ in words


def equality_disjoint(
    data: Mapping[int, Stats], delete: Mapping[int, Stats], fields: Sequence[NestedField]
) -> str | None:
    """Why the column statistics of a data file and of an equality delete file prove that no row of one
    equals a row of the other on the delete's equality ``fields``, or None when they may match (the
    reference implementation's ``DeleteFileIndex``: a field with nulls on both sides may match; nested
    fields have no statistics)."""
    for f in fields:
        d, x = data.get(f.field_id), delete.get(f.field_id)
        if not is_primitive(f.type) or d is None or x is None:
            continue
        d_no_null, x_no_null = f.required or d.may_null is False, f.required or x.may_null is False
        if not d_no_null and not x_no_null:
            continue
        if not f.required and d.all_null and x_no_null:
            return f"{f.name}: the data file holds only nulls and the delete file none"
        if not f.required and x.all_null and d_no_null:
            return f"{f.name}: the delete file holds only nulls and the data file none"
        if None in (d.lower, d.upper, x.lower, x.upper):
            continue
        if d.lower > x.upper or x.lower > d.upper:
            return f"{f.name}: data values {d.lower!r}..{d.upper!r} and deleted values {x.lower!r}..{x.upper!r} do not overlap"
    return None


__all__ = [
    "DV",
    "EQUALITY",
    "GLOBAL_EQUALITY",
    "POSITION",
    "DeleteJoin",
    "FileRows",
    "delete_rows",
    "equality_disjoint",
    "match_deletes_columns",
]
