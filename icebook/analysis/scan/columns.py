"""The planner's columnar pass: one manifest's live entries decided at once (spec: "Scan Planning").

``scan_manifest`` evaluates the projected partition filter against the partition values and the row
filter against column bounds and null/NaN counts of every live entry of one manifest, as Arrow/numpy
columns (``icebook.analysis.expr.pruning_arrow``). ``prune_manifests`` does the same for the partition
summaries of a manifest list. Nothing here builds a Python object per file: ``scan_files`` does
that only for the rows someone asks about, and the reasons in words come from the scalar evaluator
(``icebook.analysis.expr.pruning``) when an explanation is asked for.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.arrow_types import arrow_type
from icebook.analysis.expr.nodes import AlwaysTrue, Expr, referenced_ids
from icebook.analysis.expr.pruning import Stats
from icebook.analysis.expr.pruning_arrow import (
    StatsColumns,
    bound_stats,
    evaluate_columns,
    exact_stats,
    summary_stats,
)
from icebook.analysis.scan.lazy_items import FileRow, LazyColumns, constant, rows_of
from icebook.analysis.scan.plan_items import ScanFile
from icebook.analysis.store.manifests import ManifestStore, source_schema_for, spec_partition_type
from icebook.analysis.store.metrics import MapColumn, decode_bound_column
from icebook.io.arrow_columns import single_array
from icebook.spec.manifest import EntryStatus, FileContent, FileFormat, ManifestContent, ManifestFile
from icebook.spec.metadata import TableMetadata
from icebook.spec.schema import DELETE_FILE_PATH_ID, Schema
from icebook.spec.transforms import IdentityTransform, human_value
from icebook.spec.types import DOUBLE, FLOAT, IcebergType
from icebook.spec.values import decode_value

KEPT, BY_PARTITION, BY_STATS = 0, 1, 2
"""Evidence codes of a file decision: kept, skipped by its partition value, skipped by its column stats."""

STAT_MAPS = ("lower_bounds", "upper_bounds", "null_value_counts", "value_counts", "nan_value_counts")


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ManifestScan:
    """One manifest the planner read: its live (ADDED or EXISTING) entries and the verdict on each."""

    manifest: ManifestFile
    entries: pa.Table
    evidence: np.ndarray
    """Per live entry: ``KEPT``, ``BY_PARTITION`` or ``BY_STATS`` (int8)."""

    @property
    def kept(self) -> np.ndarray:
        return np.asarray(self.evidence == KEPT)

    @property
    def content(self) -> np.ndarray:
        return np.asarray(self.entries.column("content").to_numpy(), dtype=np.int32)


# ------------------------------------------------------------------------------------------- manifests


def prune_manifests(
    metadata: TableMetadata, manifests: Sequence[ManifestFile], projected: dict[int, Expr]
) -> tuple[np.ndarray, np.ndarray]:
    """(kept, skipped by file counts) per manifest: no ADDED or EXISTING entries means nothing to read;
    else its partition summaries against its spec's projected filter, one pass per spec."""
    no_live = np.array(
        [
            m.added_files_count is not None
            and m.existing_files_count is not None
            and (m.added_files_count or 0) + (m.existing_files_count or 0) == 0
            for m in manifests
        ],
        dtype=bool,
    )
    kept = ~no_live
    # One pass per spec (and number of summaries, which a well-formed list keeps equal within a spec).
    by_spec: dict[tuple[int, int], list[int]] = {}
    for i, m in enumerate(manifests):
        if kept[i] and m.partitions is not None and not isinstance(projected[m.partition_spec_id], AlwaysTrue):
            by_spec.setdefault((m.partition_spec_id, len(m.partitions)), []).append(i)
    for (spec_id, _), rows in by_spec.items():
        chosen = [manifests[i] for i in rows]
        stats = summary_columns(metadata, spec_id, chosen)
        kept[rows] = evaluate_columns(projected[spec_id], stats, len(rows))
    return kept, no_live


def summary_columns(
    metadata: TableMetadata, spec_id: int, manifests: Sequence[ManifestFile]
) -> dict[int, StatsColumns]:
    """The partition summaries of manifests of one spec, as column stats by partition field id
    (``scan.partition_summary_stats`` for all of them at once)."""
    ptype = spec_partition_type(metadata, spec_id)
    out: dict[int, StatsColumns] = {}
    count = min(len(m.partitions or ()) for m in manifests) if manifests else 0
    for index, pfield in enumerate(ptype.fields[:count]):
        present = [(m.partitions or ())[index] for m in manifests]
        lower_raw = pa.array([s.lower_bound for s in present], pa.binary())
        upper_raw = pa.array([s.upper_bound for s in present], pa.binary())
        path = manifests[0].manifest_path
        out[pfield.field_id] = summary_stats(
            decode_column(lower_raw, pfield.type, path),
            decode_column(upper_raw, pfield.type, path),
            pa.array([s.contains_null for s in present], pa.bool_()),
            pa.array([s.contains_nan for s in present], pa.bool_()),
            np.array([s.lower_bound is None for s in present], dtype=bool),
            floating=pfield.type in (FLOAT, DOUBLE),
        )
    return out


# ------------------------------------------------------------------------------------------- files


def scan_manifest(
    store: ManifestStore,
    metadata: TableMetadata,
    manifest: ManifestFile,
    schema: Schema,
    row_filter: Expr,
    partition_filter: Expr,
    *,
    stats: bool = False,
    keep: bool = True,
) -> ManifestScan:
    """Decide every live entry of ``manifest``: partition values against ``partition_filter`` first,
    then (except for position delete files, whose bounds are of file_path and pos) column stats
    against ``row_filter`` (negation normal form, bound to ``schema``). ``stats``: keep every entry's
    column stats even without a row filter (the delete index's statistics rule reads them); ``keep``: the
    store keeps the decoded manifest (``ManifestStore.entries``)."""
    entries = store.entries(manifest, plan_columns(manifest, row_filter, stats=stats), keep=keep)
    return decide_entries(metadata, manifest, entries, schema, row_filter, partition_filter)


def decide_entries(
    metadata: TableMetadata,
    manifest: ManifestFile,
    entries: pa.Table,
    schema: Schema,
    row_filter: Expr,
    partition_filter: Expr,
) -> ManifestScan:
    """``scan_manifest`` over entries already read (every entry of ``manifest``, with at least the columns
    ``plan_columns`` names): its live entries and the verdict on each."""
    status = np.asarray(entries.column("status").to_numpy())
    live = status != int(EntryStatus.DELETED)
    if not live.all():  # filtering copies every nested column: only when there is something to drop
        entries = entries.filter(pa.array(live))
    entries = _shared_nulls(entries)
    n = entries.num_rows
    evidence = np.zeros(n, dtype=np.int8)
    if n == 0:
        return ManifestScan(manifest=manifest, entries=entries, evidence=evidence)
    by_partition = np.zeros(n, dtype=bool)
    if not isinstance(partition_filter, AlwaysTrue):
        by_partition = ~evaluate_columns(partition_filter, partition_columns(metadata, manifest, entries), n)
        evidence[by_partition] = BY_PARTITION
    if not isinstance(row_filter, AlwaysTrue):
        content = np.asarray(entries.column("content").to_numpy())
        undecided = ~by_partition & (content != int(FileContent.POSITION_DELETES))
        if undecided.any():
            bounds = bound_columns(entries, schema, referenced_ids(row_filter), manifest.manifest_path)
            by_stats = undecided & ~evaluate_columns(row_filter, bounds, n)
            evidence[by_stats] = BY_STATS
    return ManifestScan(manifest=manifest, entries=entries, evidence=evidence)


def _shared_nulls(entries: pa.Table) -> pa.Table:
    """``entries`` with each all-null column (a field of other format versions or file kinds: first_row_id,
    content_offset, equality_ids of data files, ...) replaced by one array of nulls shared by every manifest
    of that many entries: a plan keeps its manifests' columns, and those cost as much as their values."""
    n = entries.num_rows
    for i in range(entries.num_columns if n else 0):
        column = entries.column(i)
        if column.null_count == n and not pa.types.is_struct(column.type):
            entries = entries.set_column(i, entries.field(i), _nulls(n, column.type))
    return entries


@lru_cache(maxsize=64)
def _nulls(n: int, type_: pa.DataType) -> pa.Array:
    return pa.nulls(n, type_)


def plan_columns(manifest: ManifestFile, row_filter: Expr, *, stats: bool = False) -> tuple[str, ...]:
    """The entry columns a plan reads of ``manifest``: what a ``ScanFile`` holds, the ``file_path`` bounds
    of position delete files (delete matching), and the column stats only when there is a row filter
    or ``stats`` asks for them."""
    columns: tuple[str, ...] = ("status", "spec_id", "partition", *_SCALARS)
    if stats or not isinstance(row_filter, AlwaysTrue):
        return columns + STAT_MAPS
    if manifest.content == ManifestContent.DELETES:
        columns += ("lower_bounds", "upper_bounds")
    return columns


def partition_columns(metadata: TableMetadata, manifest: ManifestFile, entries: pa.Table) -> dict[int, StatsColumns]:
    """Each entry's partition value per partition field id, as exact stats."""
    spec = metadata.spec_by_id(manifest.partition_spec_id)
    part = entries.column("partition").combine_chunks()
    count = min(len(spec.fields), part.type.num_fields)
    return {spec.fields[i].field_id: exact_stats(part.field(i)) for i in range(count)}


def bound_columns(entries: pa.Table, schema: Schema, ids: set[int], file: str) -> dict[int, StatsColumns]:
    """Each entry's column bounds and null/value/NaN counts for the field ids ``ids``."""
    maps = {name: MapColumn(entries.column(name)) for name in STAT_MAPS}
    out: dict[int, StatsColumns] = {}
    for fid in sorted(ids):
        t = schema.find_type(fid)
        if t is None:
            continue
        lower, upper, nulls, values, nans = (maps[name].lookup(fid) for name in STAT_MAPS)
        out[fid] = bound_stats(decode_column(lower, t, file), decode_column(upper, t, file), nulls, values, nans)
    return out


def decode_column(raw: pa.Array, t: IcebergType, file: str) -> pa.Array:
    """Appendix D bytes as values of ``t``; a bound that cannot be decoded is null (it only loses
    pruning, never rows), as the scalar evaluator treats it."""
    try:
        return decode_bound_column(raw, t, file=file)
    except Exception:  # one bad value: decode value by value, each failure a null
        values = [decode_or_none(v, t, file) for v in raw.to_pylist()]
        try:
            target = arrow_type(t)
        except Exception:
            return pa.nulls(len(raw))
        try:
            return pa.array([v.bytes if isinstance(v, uuid.UUID) else v for v in values], type=target)
        except Exception:
            return pa.nulls(len(raw), target)


def decode_or_none(raw: bytes | None, t: IcebergType, file: str) -> Any:
    if raw is None:
        return None
    try:
        return decode_value(raw, t, file=file)
    except Exception:  # an unreadable bound only loses pruning, never rows
        return None


# ------------------------------------------------------------------------------------------- per file


def row_column_stats(entries: pa.Table, row: int, schema: Schema, ids: set[int], file: str) -> dict[int, Stats]:
    """One entry's column stats for ``ids`` as the scalar evaluator reads them (for reasons in words)."""
    record = entries.slice(row, 1).select(list(STAT_MAPS)).to_pylist()[0]
    maps = {name: dict(record[name] or []) for name in STAT_MAPS}
    stats: dict[int, Stats] = {}
    for fid in ids:
        t = schema.find_type(fid)
        if t is None:
            continue
        lower = decode_or_none(maps["lower_bounds"].get(fid), t, file)
        upper = decode_or_none(maps["upper_bounds"].get(fid), t, file)
        null_count, value_count = maps["null_value_counts"].get(fid), maps["value_counts"].get(fid)
        nans = maps["nan_value_counts"].get(fid)
        stats[fid] = Stats(
            lower=lower if lower == lower else None,  # a NaN bound says nothing
            upper=upper if upper == upper else None,
            may_null=None if null_count is None else null_count > 0,
            all_null=null_count is not None and value_count is not None and null_count == value_count,
            may_nan=None if nans is None else nans > 0,
            label="column stats",
        )
    return stats


_SCALARS = (
    "content",
    "file_path",
    "file_format",
    "record_count",
    "file_size_in_bytes",
    "sequence_number",
    "file_sequence_number",
    "snapshot_id",
    "equality_ids",
    "referenced_data_file",
    "content_offset",
    "content_size_in_bytes",
    "first_row_id",
)


class FileBuilder:
    """Builds ``ScanFile`` objects for chosen rows of scanned manifests, each partition's text once."""

    def __init__(self, metadata: TableMetadata) -> None:
        self.metadata = metadata
        self._texts: dict[tuple[int, tuple[Any, ...]], str] = {}
        self._human: dict[int, list[tuple[str, Any, IcebergType | None]]] = {}
        self._last: tuple[ManifestScan, dict[str, pa.Array]] | None = None

    def files(self, scan: ManifestScan, rows: Sequence[int] | np.ndarray) -> list[ScanFile]:
        """The files at ``rows`` of ``scan``, in that order: each reads its fields from the columns of these
        rows, made one field at a time when first read (``lazy_items.FileRow``)."""
        columns = self.columns(scan, rows)
        return list(rows_of(FileRow, columns)) if columns is not None else []

    def columns(self, scan: ManifestScan, rows: Sequence[int] | np.ndarray) -> LazyColumns | None:
        """The ``ScanFile`` fields of ``rows`` of ``scan`` as lazily made columns (None for no rows)."""
        rows = np.asarray(rows, dtype=np.int64)
        n = len(rows)
        if n == 0:
            return None
        first = int(rows[0])
        # A run of consecutive rows (what iterating a plan asks for) is a slice: no copy.
        run = n == 1 or (int(rows[-1]) - first == n - 1 and bool((np.diff(rows) == 1).all()))
        last = self._last
        if last is None or last[0] is not scan:  # one manifest's arrays at a time: a stream keeps no more
            last = self._last = (scan, {})
        source = RowSource(self, scan, last[1], first, n, None if run else pa.array(rows))
        makers = _DELETE_MAKERS if scan.manifest.content == ManifestContent.DELETES else _DATA_MAKERS
        return LazyColumns(n, makers, source)

    def _partitions(self, spec_id: int, part: pa.StructArray) -> tuple[list[Any], list[str]]:
        """(each row's partition as ``ScanFile.partition`` holds it, each one's text): a tuple and a text per
        distinct partition, shared by its rows."""
        n = len(part)
        spec = self.metadata.spec_by_id(spec_id)
        names = [pf.name for pf in spec.fields][: part.type.num_fields]
        values = [physical(part.field(i)) for i in range(len(names))]
        keys = list(zip(*values, strict=True)) if values else [()] * n
        # -0.0 == 0.0: where a partition value is floating, each file keeps its own tuple.
        floating = any(pa.types.is_floating(part.type.field(j).type) for j in range(len(names)))
        shared: dict[tuple[Any, ...], tuple[tuple[str, Any], ...]] = {}
        for key in keys if floating else set(keys):
            shared.setdefault(key, tuple(zip(names, key, strict=True)))
        partitions = [tuple(zip(names, key, strict=True)) for key in keys] if floating else [shared[k] for k in keys]
        texts = {key: self.partition_text(spec_id, shared[key]) for key in shared}
        return partitions, [texts[k] for k in keys]

    def partition_text(self, spec_id: int, partition: tuple[tuple[str, Any], ...]) -> str:
        key = (spec_id, tuple(v for _, v in partition))
        text = self._texts.get(key)
        if text is None:
            human = self._human.get(spec_id)
            if human is None:
                spec = self.metadata.spec_by_id(spec_id)
                source = source_schema_for(self.metadata, spec)
                human = [
                    (pf.name, pf.transform, source.find_type(pf.source_ids[0]) if pf.source_ids else None)
                    for pf in spec.fields
                ]
                self._human[spec_id] = human
            text = "/".join(
                f"{name}={_human(t, value, st)}" for (name, t, st), (_, value) in zip(human, partition, strict=False)
            )
            self._texts[key] = text = text or "unpartitioned"
        return text


def _mapped(values: list[Any], mapping: dict[Any, Any]) -> list[Any]:
    """Each value through ``mapping`` (a value not in it kept), one lookup when they are all one value."""
    if len(mapping) == 1 and values and values[0] == values[-1] and len(set(values)) == 1:
        only = values[0]
        return [mapping.get(only, only)] * len(values)
    return [mapping.get(v, v) for v in values]


@dataclass(frozen=True, slots=True, eq=False)
class RowSource:
    """The rows of one manifest scan a run of ``ScanFile``s reads its fields from."""

    builder: FileBuilder
    scan: ManifestScan
    arrays: dict[str, pa.Array]
    """The scan's entry columns, each as one array (shared by the runs of one manifest)."""
    first: int
    n: int
    take: pa.Array | None
    """The rows, when they are not the run of ``n`` from ``first``."""

    def column(self, name: str) -> pa.Array:
        whole = self.arrays.get(name)
        if whole is None:
            whole = self.arrays[name] = single_array(self.scan.entries.column(name))
        return whole.slice(self.first, self.n) if self.take is None else whole.take(self.take)

    def partitions(self) -> tuple[list[Any], list[str]]:
        return self.builder._partitions(self.scan.manifest.partition_spec_id, self.column("partition"))


def _source(c: LazyColumns) -> RowSource:
    source: RowSource = c.context
    return source


def _scalar(name: str) -> Callable[[LazyColumns], list[Any]]:
    return lambda c: _python_values(_source(c).column(name))


def _enums(column: pa.Array, make: Callable[[Any], Any]) -> list[Any]:
    """Each value made into its enum once per distinct value."""
    values = _python_values(column)
    return _mapped(values, {v: make(v) for v in set(values)})


def _formats(c: LazyColumns) -> list[Any]:
    path = _source(c).scan.manifest.manifest_path
    return _enums(_source(c).column("file_format"), partial(FileFormat.parse, file=path))


def _inherited_zero(values: list[Any]) -> list[Any]:
    """Sequence numbers with null (a v1 manifest's, inherited) as 0."""
    return _mapped(values, {None: 0}) if None in values else values


def _tuples(column: pa.Array) -> list[Any]:
    """List values as tuples (None kept)."""
    values = _python_values(column)
    return [None if e is None else tuple(e) for e in values] if column.null_count < len(column) else values


def _file_path_bounds(c: LazyColumns) -> list[tuple[str | None, str | None]]:
    """Each delete file's ``file_path`` lower and upper bound, as text (None when absent or not UTF-8)."""
    source = _source(c)
    lower = MapColumn(source.column("lower_bounds")).lookup(DELETE_FILE_PATH_ID).to_pylist()
    upper = MapColumn(source.column("upper_bounds")).lookup(DELETE_FILE_PATH_ID).to_pylist()
    return [(utf8(lo), utf8(hi)) for lo, hi in zip(lower, upper, strict=True)]


def _constant(read: Callable[[RowSource], Any]) -> Callable[[LazyColumns], list[Any]]:
    return lambda c: [read(_source(c))] * c.n


_DATA_MAKERS: dict[str, Callable[[LazyColumns], Sequence[Any]]] = {
    **{name: _scalar(name) for name in _SCALARS},
    "content": lambda c: _enums(_source(c).column("content"), FileContent),
    "file_format": _formats,
    "sequence_number": lambda c: _inherited_zero(_python_values(_source(c).column("sequence_number"))),
    "equality_ids": lambda c: _tuples(_source(c).column("equality_ids")),
    "_partitions": lambda c: _source(c).partitions(),
    "partition": lambda c: c._partitions[0],  # type: ignore[attr-defined]
    "partition_text": lambda c: c._partitions[1],  # type: ignore[attr-defined]
    "spec_id": _constant(lambda s: s.scan.manifest.partition_spec_id),
    "manifest_path": _constant(lambda s: s.scan.manifest.manifest_path),
    "file_path_bounds": constant((None, None)),
}
"""How each ``ScanFile`` field is made from its rows (the file path bounds of delete files only)."""
_DELETE_MAKERS = _DATA_MAKERS | {"file_path_bounds": _file_path_bounds}


def _python_values(column: pa.Array | pa.ChunkedArray) -> list[Any]:
    """``column.to_pylist()``, without a Python object made per value where every value is null (the columns
    of other format versions and file kinds) or the same (content, format, sequence numbers of a manifest)."""
    n = len(column)
    if column.null_count == n:
        return [None] * n
    if n > 1 and column.null_count == 0 and pa.types.is_integer(column.type):
        values = column.to_numpy()
        if values[0] == values[-1] and (values == values[0]).all():
            return [int(values[0])] * n
        return values.tolist()
    return column.to_pylist()


def physical(column: pa.Array) -> list[Any]:
    """Values of a partition column in the spec's physical form (days, micros, ...)."""
    t = column.type
    if pa.types.is_date32(t):
        return list(column.cast(pa.int32()).to_pylist())
    if pa.types.is_timestamp(t) or pa.types.is_time64(t):
        return list(column.view(pa.int64()).to_pylist()) if len(column) else []
    if t == pa.binary(16):
        return [None if v is None else uuid.UUID(bytes=v) for v in column.to_pylist()]
    return list(column.to_pylist())


def _human(transform: Any, value: Any, source: IcebergType | None) -> str:
    try:
        if isinstance(transform, IdentityTransform):
            return str(human_value(value, source))
        return str(transform.to_human(value, source))
    except Exception:  # a display string must never fail a scan
        return str(value)


def utf8(raw: bytes | None) -> str | None:
    if raw is None:
        return None
    try:
        return bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return None


def utf8_column(raw: pa.Array) -> pa.Array:
    """Binary values as strings, null where they are not UTF-8 (as ``utf8`` does one value)."""
    try:
        return pc.cast(raw, pa.string())
    except pa.ArrowInvalid:
        return pa.array([utf8(v) for v in raw.to_pylist()], pa.string())


__all__ = [
    "BY_PARTITION",
    "BY_STATS",
    "KEPT",
    "STAT_MAPS",
    "FileBuilder",
    "ManifestScan",
    "bound_columns",
    "decide_entries",
    "decode_column",
    "decode_or_none",
    "partition_columns",
    "physical",
    "plan_columns",
    "prune_manifests",
    "row_column_stats",
    "scan_manifest",
    "summary_columns",
    "utf8",
    "utf8_column",
]
