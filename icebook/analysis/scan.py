"""Scan planning: which manifests and files a read of one snapshot needs, which delete files apply
to each data file, and why (spec: "Scan Planning", "Row-level Deletes", "Sequence Numbers").

``plan_scan`` prunes manifests by their partition summaries (the filter projected through each
spec's transforms), data and delete files by partition values and column bounds, and matches
delete files to data files by the spec's scope rules. ``ScanPlan.explain()`` says all of it in words.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.expressions import AlwaysTrue, Expr, FilterError, bind, push_not, referenced_ids
from icebook.analysis.manifests import ManifestStore, source_schema_for, spec_partition_type
from icebook.analysis.projection import SpecProjection, project
from icebook.analysis.pruning import Stats, evaluate, value_stats
from icebook.analysis.table_like import TableLike
from icebook.spec.manifest import FileContent, ManifestContent, ManifestFile
from icebook.spec.metadata import TableMetadata
from icebook.spec.schema import DELETE_FILE_PATH_ID, Schema
from icebook.spec.snapshots import Snapshot, snapshot_sequence_number
from icebook.spec.transforms import IdentityTransform, human_value
from icebook.spec.types import DOUBLE, FLOAT, IcebergType
from icebook.spec.values import decode_value


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanFile:
    """A live data or delete file of the scanned snapshot, with what planning needs of its entry."""

    content: FileContent
    file_path: str
    file_format: str
    spec_id: int
    partition: tuple[tuple[str, Any], ...]
    """(partition field name, value in the transform's physical form), in spec order."""
    record_count: int
    file_size_in_bytes: int
    sequence_number: int
    """The data sequence number (inherited where the manifest left it null)."""
    file_sequence_number: int | None
    snapshot_id: int | None
    manifest_path: str
    equality_ids: tuple[int, ...] | None = None
    referenced_data_file: str | None = None
    content_offset: int | None = None
    content_size_in_bytes: int | None = None
    file_path_bounds: tuple[str | None, str | None] = (None, None)
    partition_text: str = ""
    """The partition as the reference implementation prints it (``region=us/ts_day=2024-01-05``)."""

    @property
    def kind(self) -> str:
        if self.content == FileContent.DATA:
            return "data file"
        if self.content == FileContent.EQUALITY_DELETES:
            return "equality delete file"
        if self.file_format.upper() == "PUFFIN":
            return "deletion vector"
        return "position delete file"

    @property
    def is_deletion_vector(self) -> bool:
        return self.content == FileContent.POSITION_DELETES and self.file_format.upper() == "PUFFIN"

    @property
    def partition_key(self) -> tuple[int, tuple[Any, ...]]:
        return self.spec_id, tuple(v for _, v in self.partition)


class Level(StrEnum):
    """What a row of a scan plan is about."""

    MANIFEST = "manifest"
    DATA_FILE = "data file"
    DELETE_FILE = "delete file"
    DELETE_MATCH = "delete match"


class Evidence(StrEnum):
    """What a planner decision was made from, in the order the planner looks (spec: "Scan Planning")."""

    FILE_COUNTS = "file counts"
    """A manifest list's added and existing file counts (no live entries: nothing to read)."""
    PARTITION_SUMMARY = "partition summary"
    """A manifest's partition summaries against the projected partition filter."""
    PARTITION_VALUE = "partition value"
    """A file's partition tuple against the projected partition filter."""
    COLUMN_STATS = "column stats"
    """A file's column bounds and null/NaN counts against the row filter."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """One manifest or file kept or skipped, and why."""

    level: Level
    path: str
    kept: bool
    reason: str
    evidence: Evidence | None = None
    """What skipped it (None when kept: nothing ruled it out)."""
    spec_id: int | None = None
    manifest_path: str | None = None
    file: ScanFile | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteMatch:
    """Whether one delete file applies to one data file, and the rule that decided it."""

    delete: ScanFile
    applies: bool
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanTask:
    """A data file to read and the delete files to apply to it."""

    file: ScanFile
    deletes: tuple[ScanFile, ...]
    matches: tuple[DeleteMatch, ...] = ()
    """Every delete file of the same partition (or global) considered for this file, applied or not."""

    @property
    def position_deletes(self) -> tuple[ScanFile, ...]:
        return tuple(d for d in self.deletes if d.content == FileContent.POSITION_DELETES and not d.is_deletion_vector)

    @property
    def equality_deletes(self) -> tuple[ScanFile, ...]:
        return tuple(d for d in self.deletes if d.content == FileContent.EQUALITY_DELETES)

    @property
    def deletion_vectors(self) -> tuple[ScanFile, ...]:
        return tuple(d for d in self.deletes if d.is_deletion_vector)


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanPlan:
    """What reading ``snapshot_id`` with ``filter`` needs: tasks, and every pruning decision."""

    snapshot_id: int
    sequence_number: int
    schema: Schema
    filter: Expr
    columns: tuple[str, ...]
    location: str
    tasks: tuple[ScanTask, ...]
    decisions: tuple[Decision, ...]
    projections: tuple[SpecProjection, ...] = ()
    """The filter projected onto each partition spec of the scanned manifests, as the planner used it."""
    skipped: tuple[Decision, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "skipped", tuple(d for d in self.decisions if not d.kept))

    @property
    def delete_files(self) -> tuple[ScanFile, ...]:
        seen: dict[str, ScanFile] = {}
        for task in self.tasks:
            for d in task.deletes:
                seen.setdefault(d.file_path, d)
        return tuple(seen.values())

    def _short(self, path: str) -> str:
        base = self.location.rstrip("/") + "/"
        return path[len(base) :] if path.startswith(base) else path

    def explain(self) -> str:
        """The plan in words: every manifest and file kept or skipped and why, and which delete
        files apply to each data file by which sequence-number rule."""
        lines = [
            f"Scan of snapshot {self.snapshot_id} (sequence number {self.sequence_number}, "
            f"schema {self.schema.schema_id})",
            f"Filter: {self.filter}",
            f"Columns: {', '.join(self.columns)}",
        ]
        for projection in self.projections:
            lines.append(f"Partition filter for spec {projection.spec_id}: {projection.expr}")
            for step in projection.fields:
                target = step.text or "no partition predicate"
                lines.append(f"  {step.predicate} -> {target} ({step.reason})")
        for level in (Level.MANIFEST, Level.DATA_FILE, Level.DELETE_FILE):
            items = [d for d in self.decisions if d.level == level]
            kept = sum(d.kept for d in items)
            lines.append("")
            lines.append(f"{level.capitalize()}s: {kept} kept, {len(items) - kept} skipped")
            for d in items:
                verb = "KEEP" if d.kept else "SKIP"
                lines.append(f"  {verb} {self._short(d.path)}" + (f": {d.reason}" if d.reason else ""))
        lines.append("")
        n_del = len(self.delete_files)
        lines.append(f"Tasks: {len(self.tasks)} data files to read, {n_del} delete files to apply")
        for task in self.tasks:
            f = task.file
            lines.append(
                f"  {self._short(f.file_path)} ({f.record_count} rows, data seq {f.sequence_number}, "
                f"spec {f.spec_id}, partition {_partition_text(f)})"
            )
            for m in task.matches:
                lines.append(f"      {m.delete.kind} {self._short(m.delete.file_path)}: {m.reason}")
            if not task.matches:
                lines.append("      no delete files in its partition")
        return "\n".join(lines)

    def to_pandas(self) -> pd.DataFrame:
        """One row per decision (manifests, files) and per delete match (level ``delete match``)."""
        rows: list[dict[str, Any]] = []
        for d in self.decisions:
            f = d.file
            rows.append(
                {
                    "level": d.level.value,
                    "path": d.path,
                    "kept": d.kept,
                    "reason": d.reason,
                    "spec_id": d.spec_id,
                    "partition": _partition_text(f) if f else None,
                    "sequence_number": f.sequence_number if f else None,
                    "record_count": f.record_count if f else None,
                    "manifest_path": d.manifest_path,
                    "data_file": None,
                }
            )
        for task in self.tasks:
            for m in task.matches:
                rows.append(
                    {
                        "level": Level.DELETE_MATCH.value,
                        "path": m.delete.file_path,
                        "kept": m.applies,
                        "reason": m.reason,
                        "spec_id": m.delete.spec_id,
                        "partition": _partition_text(m.delete),
                        "sequence_number": m.delete.sequence_number,
                        "record_count": m.delete.record_count,
                        "manifest_path": m.delete.manifest_path,
                        "data_file": task.file.file_path,
                    }
                )
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        return (
            f"<ScanPlan snapshot {self.snapshot_id}: {len(self.tasks)} tasks, {len(self.delete_files)} delete files, "
            f"{len(self.skipped)} skipped>"
        )


def _partition_text(f: ScanFile) -> str:
    return f.partition_text or ("{" + ", ".join(f"{k}={v!r}" for k, v in f.partition) + "}")


# ------------------------------------------------------------------------------------------ planning


def snapshot_schema(metadata: TableMetadata, snapshot: Snapshot) -> Schema:
    """The schema a read of ``snapshot`` by id uses: the snapshot's own schema (Spark time travel)."""
    if snapshot.schema_id is not None and snapshot.schema_id in metadata.schemas:
        return metadata.schemas[snapshot.schema_id]
    return metadata.current_schema()


def resolve_columns(schema: Schema, columns: Sequence[str] | None) -> tuple[str, ...]:
    """Top-level column names to read, checked against ``schema`` (all columns when None)."""
    names = [f.name for f in schema.columns]
    if columns is None:
        return tuple(names)
    if isinstance(columns, str):
        columns = [columns]
    out = []
    lowered = {n.lower(): n for n in names}
    for c in columns:
        if c in names:
            out.append(c)
        elif c.lower() in lowered:
            out.append(lowered[c.lower()])
        else:
            raise FilterError(f"unknown column {c!r} in schema {schema.schema_id}; columns: {', '.join(names)}")
    return tuple(out)


def plan_scan(
    table: TableLike,
    snapshot: Snapshot,
    filter: Expr | str | None = None,
    columns: Sequence[str] | None = None,
    *,
    schema: Schema | None = None,
    progress: bool = False,
) -> ScanPlan:
    """Plan a read of ``snapshot``: prune, then match deletes to data files (spec: "Scan Planning").

    ``schema`` defaults to the snapshot's schema; filters and columns are bound to it.
    """
    metadata, store = table.metadata, table.store
    schema = schema or snapshot_schema(metadata, snapshot)
    bound = bind(filter, schema)
    nnf = push_not(bound)
    cols = resolve_columns(schema, columns)
    manifests = store.manifest_list(snapshot)
    decisions: list[Decision] = []
    projected: dict[int, SpecProjection] = {}
    kept: list[ManifestFile] = []
    for m in manifests:
        if m.partition_spec_id not in projected:
            projected[m.partition_spec_id] = project(nnf, metadata.spec_by_id(m.partition_spec_id))
        keep, why_not, evidence = _manifest_verdict(metadata, m, projected[m.partition_spec_id].expr)
        kind = (m.content or ManifestContent.DATA).label
        reason = f"{kind}, spec {m.partition_spec_id}" + ("" if keep else f": {why_not}")
        decisions.append(
            Decision(
                level=Level.MANIFEST,
                path=m.manifest_path,
                kept=keep,
                reason=reason,
                evidence=None if keep else evidence,
                spec_id=m.partition_spec_id,
            )
        )
        if keep:
            kept.append(m)
    store.many_entries(kept, progress=progress)
    store.verify_snapshot(snapshot)
    data: list[ScanFile] = []
    deletes: list[ScanFile] = []
    for m in kept:
        for f, stats in _live_files(store, metadata, m, schema, referenced_ids(bound)):
            part = partition_value_stats(metadata, f)
            verdict, evidence = evaluate(projected[m.partition_spec_id].expr, part), Evidence.PARTITION_VALUE
            # Position deletes carry bounds of file_path and pos, not of the table's columns.
            if verdict.might_match and f.content != FileContent.POSITION_DELETES:
                verdict, evidence = evaluate(nnf, stats), Evidence.COLUMN_STATS
            level = Level.DATA_FILE if f.content == FileContent.DATA else Level.DELETE_FILE
            why = verdict.reason if not verdict.might_match else _keep_text(f)
            decisions.append(
                Decision(
                    level=level,
                    path=f.file_path,
                    kept=verdict.might_match,
                    reason=why,
                    evidence=None if verdict.might_match else evidence,
                    spec_id=f.spec_id,
                    manifest_path=m.manifest_path,
                    file=f,
                )
            )
            if verdict.might_match:
                (data if f.content == FileContent.DATA else deletes).append(f)
    tasks = match_deletes(data, deletes, metadata)
    return ScanPlan(
        snapshot_id=snapshot.snapshot_id,
        sequence_number=snapshot_sequence_number(snapshot),
        schema=schema,
        filter=bound,
        columns=cols,
        location=metadata.location,
        tasks=tasks,
        decisions=tuple(decisions),
        projections=tuple(p for _, p in sorted(projected.items())),
    )


def _keep_text(f: ScanFile) -> str:
    return f"{f.kind}, {f.record_count} rows, data seq {f.sequence_number}, partition {_partition_text(f)}"


def partition_value_stats(metadata: TableMetadata, f: ScanFile) -> dict[int, Stats]:
    """A file's partition tuple as exact stats by partition field id (what projected filters read)."""
    fields = metadata.spec_by_id(f.spec_id).fields
    return {pf.field_id: value_stats(v) for pf, (_, v) in zip(fields, f.partition, strict=False)}


def partition_summary_stats(metadata: TableMetadata, m: ManifestFile) -> dict[int, Stats]:
    """A manifest's partition summaries as stats by partition field id (empty when it has none)."""
    if m.partitions is None:
        return {}
    ptype = spec_partition_type(metadata, m.partition_spec_id)
    stats: dict[int, Stats] = {}
    for pfield, summary in zip(ptype.fields, m.partitions, strict=False):
        lower = _decode(summary.lower_bound, pfield.type, m.manifest_path)
        upper = _decode(summary.upper_bound, pfield.type, m.manifest_path)
        # "lower_bound ... null if all values are null or NaN": all null only if no NaN can hide there
        # (an undecodable bound is not a missing one).
        all_null = summary.contains_null and summary.lower_bound is None
        if all_null and pfield.type in (FLOAT, DOUBLE):
            all_null = summary.contains_nan is False
        stats[pfield.field_id] = Stats(
            lower=lower,
            upper=upper,
            may_null=summary.contains_null,
            all_null=all_null,
            may_nan=summary.contains_nan,
            label="partition summary",
        )
    return stats


def _manifest_verdict(metadata: TableMetadata, m: ManifestFile, projected: Expr) -> tuple[bool, str, Evidence]:
    counts = (m.added_files_count, m.existing_files_count)
    if all(c is not None for c in counts) and sum(c or 0 for c in counts) == 0:
        return False, "no ADDED or EXISTING entries (file counts)", Evidence.FILE_COUNTS
    if isinstance(projected, AlwaysTrue) or m.partitions is None:
        return True, "", Evidence.PARTITION_SUMMARY
    verdict = evaluate(projected, partition_summary_stats(metadata, m))
    return verdict.might_match, verdict.reason, Evidence.PARTITION_SUMMARY


def _decode(raw: bytes | None, t: IcebergType, file: str) -> Any:
    if raw is None:
        return None
    try:
        return decode_value(raw, t, file=file)
    except Exception:  # an unreadable bound only loses pruning, never rows
        return None


def _physical(column: pa.Array) -> list[Any]:
    """Values of a partition or bound column in the spec's physical form (days, micros, ...)."""
    t = column.type
    if pa.types.is_date32(t):
        return column.cast(pa.int32()).to_pylist()
    if pa.types.is_timestamp(t) or pa.types.is_time64(t):
        return column.view(pa.int64()).to_pylist() if len(column) else []
    if t == pa.binary(16):
        import uuid

        return [None if v is None else uuid.UUID(bytes=v) for v in column.to_pylist()]
    return column.to_pylist()


def _lookup(entries: pa.Table, column: str, field_id: int) -> list[Any]:
    arr = entries.column(column).combine_chunks()
    if len(arr) == 0:
        return []
    return pc.map_lookup(arr, pa.scalar(field_id, arr.type.key_type), "first").to_pylist()


def _live_files(
    store: ManifestStore, metadata: TableMetadata, m: ManifestFile, schema: Schema, ids: set[int]
) -> list[tuple[ScanFile, dict[int, Stats]]]:
    """The live (ADDED or EXISTING) entries of one manifest, with column stats for ``ids``."""
    entries = store.entries(m)
    entries = entries.filter(pc.not_equal(entries.column("status"), 2))
    n = entries.num_rows
    if n == 0:
        return []
    spec = metadata.spec_by_id(m.partition_spec_id)
    part_col = entries.column("partition").combine_chunks()
    names = [pf.name for pf in spec.fields]
    source = source_schema_for(metadata, spec)
    human = [
        (pf.name, pf.transform, source.find_type(pf.source_ids[0]) if pf.source_ids else None) for pf in spec.fields
    ]
    part_values = [_physical(part_col.field(i)) for i in range(min(len(names), part_col.type.num_fields))]
    cols = {c: entries.column(c).to_pylist() for c in _SCALARS}
    stats_cols: dict[int, tuple[list[Any], ...]] = {}
    for fid in ids:
        stats_cols[fid] = tuple(
            _lookup(entries, c, fid)
            for c in ("lower_bounds", "upper_bounds", "null_value_counts", "value_counts", "nan_value_counts")
        )
    is_delete_manifest = m.content == ManifestContent.DELETES
    fp_lower = _lookup(entries, "lower_bounds", DELETE_FILE_PATH_ID) if is_delete_manifest else [None] * n
    fp_upper = _lookup(entries, "upper_bounds", DELETE_FILE_PATH_ID) if is_delete_manifest else [None] * n
    out = []
    for i in range(n):
        eq = cols["equality_ids"][i]
        f = ScanFile(
            content=FileContent(cols["content"][i]),
            file_path=cols["file_path"][i],
            file_format=cols["file_format"][i],
            spec_id=m.partition_spec_id,
            partition=tuple((name, part_values[j][i]) for j, name in enumerate(names) if j < len(part_values)),
            record_count=cols["record_count"][i],
            file_size_in_bytes=cols["file_size_in_bytes"][i],
            sequence_number=cols["sequence_number"][i] or 0,
            file_sequence_number=cols["file_sequence_number"][i],
            snapshot_id=cols["snapshot_id"][i],
            manifest_path=m.manifest_path,
            equality_ids=tuple(eq) if eq is not None else None,
            referenced_data_file=cols["referenced_data_file"][i],
            content_offset=cols["content_offset"][i],
            content_size_in_bytes=cols["content_size_in_bytes"][i],
            file_path_bounds=(_text(fp_lower[i]), _text(fp_upper[i])),
            partition_text="/".join(
                f"{name}={_human(t, part_values[j][i], st)}"
                for j, (name, t, st) in enumerate(human)
                if j < len(part_values)
            )
            or "unpartitioned",
        )
        stats: dict[int, Stats] = {}
        for fid, (lo, hi, nulls, values, nans) in stats_cols.items():
            t = schema.find_type(fid)
            if t is None:
                continue
            lower, upper = _decode(lo[i], t, m.manifest_path), _decode(hi[i], t, m.manifest_path)
            null_count, value_count = nulls[i], values[i]
            stats[fid] = Stats(
                lower=lower if lower == lower else None,  # a NaN bound says nothing
                upper=upper if upper == upper else None,
                may_null=None if null_count is None else null_count > 0,
                all_null=null_count is not None and value_count is not None and null_count == value_count,
                may_nan=None if nans[i] is None else nans[i] > 0,
                label="column stats",
            )
        out.append((f, stats))
    return out


def _human(transform: Any, value: Any, source: IcebergType | None) -> str:
    try:
        if isinstance(transform, IdentityTransform):
            return str(human_value(value, source))
        return str(transform.to_human(value, source))
    except Exception:  # a display string must never fail a scan
        return str(value)


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
)


def _text(raw: bytes | None) -> str | None:
    if raw is None:
        return None
    try:
        return bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        return None


# ------------------------------------------------------------------------------------ delete matching


def match_deletes(
    data: Sequence[ScanFile], deletes: Sequence[ScanFile], metadata: TableMetadata
) -> tuple[ScanTask, ...]:
    """Apply the spec's scope rules ("Scan Planning") to every (data file, delete file) pair of the
    same partition: DVs by referenced_data_file and data seq <= DV seq; position deletes by same
    partition and data seq <= delete seq, unless a DV applies; equality deletes by same partition
    (or an unpartitioned delete spec: global) and data seq < delete seq."""
    dvs: dict[str, list[ScanFile]] = defaultdict(list)
    positional: dict[tuple[int, tuple[Any, ...]], list[ScanFile]] = defaultdict(list)
    equality: dict[tuple[int, tuple[Any, ...]], list[ScanFile]] = defaultdict(list)
    global_eq: list[ScanFile] = []
    for d in deletes:
        if d.is_deletion_vector:
            dvs[d.referenced_data_file or ""].append(d)
        elif d.content == FileContent.POSITION_DELETES:
            positional[d.partition_key].append(d)
        elif metadata.spec_by_id(d.spec_id).is_unpartitioned:
            global_eq.append(d)
        else:
            equality[d.partition_key].append(d)
    tasks = []
    for f in data:
        matches: list[DeleteMatch] = []
        dv_applies = False
        for dv in dvs.get(f.file_path, []):
            if dv.partition_key != f.partition_key:
                matches.append(DeleteMatch(delete=dv, applies=False, reason="partition differs: does not apply"))
            elif f.sequence_number <= dv.sequence_number:
                dv_applies = True
                matches.append(DeleteMatch(delete=dv, applies=True, reason=f"{_seq(dv, f, '>=')}: applies"))
            else:
                matches.append(DeleteMatch(delete=dv, applies=False, reason=f"{_seq(dv, f, '<')}: does not apply"))
        for d in positional.get(f.partition_key, []):
            seq_ok = f.sequence_number <= d.sequence_number
            lo, hi = d.file_path_bounds
            if not seq_ok:
                matches.append(DeleteMatch(delete=d, applies=False, reason=f"{_seq(d, f, '<')}: does not apply"))
            elif d.referenced_data_file is not None and d.referenced_data_file != f.file_path:
                reason = f"{_seq(d, f, '>=')}, but it references another data file only: does not apply"
                matches.append(DeleteMatch(delete=d, applies=False, reason=reason))
            elif (lo is not None and f.file_path < lo) or (hi is not None and f.file_path > hi):
                reason = f"{_seq(d, f, '>=')}, but its file_path bounds exclude this file: does not apply"
                matches.append(DeleteMatch(delete=d, applies=False, reason=reason))
            elif dv_applies:
                reason = "a deletion vector applies to this file, so position delete files are ignored"
                matches.append(DeleteMatch(delete=d, applies=False, reason=reason))
            else:
                matches.append(DeleteMatch(delete=d, applies=True, reason=f"{_seq(d, f, '>=')}: applies"))
        for d in [*equality.get(f.partition_key, []), *global_eq]:
            scope = "global (unpartitioned) delete, " if d in global_eq else ""
            if f.sequence_number < d.sequence_number:
                matches.append(DeleteMatch(delete=d, applies=True, reason=f"{scope}{_seq(d, f, '>')}: applies"))
            else:
                matches.append(
                    DeleteMatch(delete=d, applies=False, reason=f"{scope}{_seq(d, f, '<=')}: does not apply")
                )
        applied = tuple(m.delete for m in matches if m.applies)
        tasks.append(ScanTask(file=f, deletes=applied, matches=tuple(matches)))
    return tuple(tasks)


def _seq(d: ScanFile, f: ScanFile, op: str) -> str:
    return f"delete seq {d.sequence_number} {op} data seq {f.sequence_number}"


__all__ = [
    "Decision",
    "DeleteMatch",
    "Evidence",
    "Level",
    "ScanFile",
    "ScanPlan",
    "ScanTask",
    "match_deletes",
    "partition_summary_stats",
    "partition_value_stats",
    "plan_scan",
    "resolve_columns",
    "snapshot_schema",
]
