"""Scan planning: which manifests and files a read of one snapshot needs, which delete files apply
to each data file, and why (spec: "Scan Planning", "Row-level Deletes", "Sequence Numbers").

``plan_scan`` prunes manifests by their partition summaries (the filter projected through each
spec's transforms), data and delete files by partition values and column bounds, and matches
delete files to data files by the spec's scope rules, all over Arrow/numpy columns (one pass per
manifest: ``icebook.analysis.scan.columns``; one join for the deletes: the delete index,
``icebook.analysis.scan.delete_index``). The plan keeps those columns; files, decisions, tasks and
every reason in words (``ScanPlan.explain()``) are built from them only when asked for, by the
scalar rules this module and the delete index define.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.expr.binding import bind
from icebook.analysis.expr.nodes import Expr, FilterError, push_not, referenced_ids
from icebook.analysis.expr.projection import SpecProjection, project
from icebook.analysis.expr.pruning import Stats, evaluate, value_stats
from icebook.analysis.resolve import snapshot_schema
from icebook.analysis.scan.columns import (
    BY_PARTITION,
    KEPT,
    ManifestScan,
    decode_or_none,
    prune_manifests,
    row_column_stats,
    scan_manifest,
)
from icebook.analysis.scan.delete_index import DeleteJoin, match_deletes_columns
from icebook.analysis.scan.plan_items import (
    Decision,
    Evidence,
    Level,
    ScanFile,
    partition_text,
)
from icebook.analysis.scan.tasks import (
    CHUNK,
    ScanTasks,
    attached,
    build_tasks,
    builder,
    file_columns,
    files_at,
    task_table,
)
from icebook.analysis.store.manifests import parallel_map, spec_partition_type
from icebook.analysis.store.table_like import TableLike
from icebook.io.worker_pool import POOL
from icebook.spec.manifest import FileContent, ManifestContent, ManifestFile
from icebook.spec.metadata import TableMetadata
from icebook.spec.schema import Schema
from icebook.spec.snapshots import Snapshot, snapshot_sequence_number
from icebook.spec.types import DOUBLE, FLOAT


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ScanPlan:
    """What reading ``snapshot_id`` with ``filter`` needs: tasks, and every pruning decision.

    Planning leaves columns (each kept manifest's live entries with a verdict per entry, and the delete
    join); ``decisions``, ``tasks``, ``explain()`` and ``to_pandas()`` build objects and words from
    them on first use."""

    snapshot_id: int
    sequence_number: int
    schema: Schema
    filter: Expr
    columns: tuple[str, ...]
    location: str
    projections: tuple[SpecProjection, ...] = ()
    """The filter projected onto each partition spec of the scanned manifests, as the planner used it."""
    manifests: tuple[ManifestFile, ...] = ()
    """Every manifest of the snapshot's manifest list, in its order."""
    manifest_kept: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool), repr=False)
    manifest_no_live: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool), repr=False)
    scans: tuple[ManifestScan, ...] = field(default=(), repr=False)
    """The kept manifests' live entries and the planner's verdict on each."""
    join: DeleteJoin | None = field(default=None, repr=False)
    metadata: TableMetadata | None = field(default=None, repr=False)
    _views: dict[str, Any] = field(default_factory=dict, init=False, repr=False)

    # ------------------------------------------------------------------ counts (no objects built)

    @property
    def task_count(self) -> int:
        """Data files to read."""
        return len(self.join.data) if self.join is not None else 0

    @property
    def delete_file_count(self) -> int:
        """Delete files that apply to at least one data file to read, counted by path (a Puffin file
        holding deletion vectors of several data files is one file)."""
        if self.join is None or not len(self.join.applied[1]):
            return 0
        applied = np.unique(self.join.applied[1])
        return len(pc.unique(self.join.deletes.paths.take(pa.array(applied))))

    @property
    def skipped_count(self) -> int:
        """Manifests and files skipped."""
        return int((~self.manifest_kept).sum()) + sum(int((s.evidence != KEPT).sum()) for s in self.scans)

    def _level_counts(self, level: Level) -> tuple[int, int]:
        if level == Level.MANIFEST:
            kept = int(self.manifest_kept.sum())
            return kept, len(self.manifests) - kept
        kept = skipped = 0
        for scan in self.scans:
            mine = (scan.content == int(FileContent.DATA)) == (level == Level.DATA_FILE)
            kept += int((mine & scan.kept).sum())
            skipped += int((mine & ~scan.kept).sum())
        return kept, skipped

    # ------------------------------------------------------------------ objects, when asked

    @property
    def decisions(self) -> tuple[Decision, ...]:
        """Every manifest (in manifest-list order), then the live data files and then the live delete
        files of the kept manifests (in manifest and entry order): the order ``explain()`` states them."""
        cached = self._views.get("decisions")
        if cached is None:
            cached = self._views["decisions"] = (
                *self._manifest_decisions(),
                *self._file_decisions(Level.DATA_FILE),
                *self._file_decisions(Level.DELETE_FILE),
            )
        return tuple(cached)

    @property
    def skipped(self) -> tuple[Decision, ...]:
        return tuple(d for d in self.decisions if not d.kept)

    def _manifest_decisions(self) -> Iterator[Decision]:
        projected = {p.spec_id: p.expr for p in self.projections}
        for m, keep, no_live in zip(self.manifests, self.manifest_kept, self.manifest_no_live, strict=True):
            kind = m.effective_content.label
            reason = f"{kind}, spec {m.partition_spec_id}"
            evidence = None
            if no_live:
                reason, evidence = f"{reason}: no ADDED or EXISTING entries (file counts)", Evidence.FILE_COUNTS
            elif not keep:
                assert self.metadata is not None
                why = evaluate(projected[m.partition_spec_id], partition_summary_stats(self.metadata, m)).reason
                reason, evidence = f"{reason}: {why}", Evidence.PARTITION_SUMMARY
            yield Decision(
                level=Level.MANIFEST,
                path=m.manifest_path,
                kept=bool(keep),
                reason=reason,
                evidence=evidence,
                spec_id=m.partition_spec_id,
            )

    def _file_decisions(self, level: Level) -> Iterator[Decision]:
        assert self.metadata is not None
        projected = {p.spec_id: p.expr for p in self.projections}
        row_filter = push_not(self.filter)
        ids = referenced_ids(self.filter)
        for scan in self.scans:
            rows = np.flatnonzero((scan.content == int(FileContent.DATA)) == (level == Level.DATA_FILE))
            for start in range(0, len(rows), 1024):  # files are built a batch at a time, as they are read
                chunk = rows[start : start + 1024]
                for row, f in zip(chunk, builder(self).files(scan, chunk), strict=True):
                    code = scan.evidence[row]
                    evidence = None
                    if code == KEPT:
                        reason = _keep_text(f)
                    elif code == BY_PARTITION:
                        stats = partition_value_stats(self.metadata, f)
                        reason, evidence = evaluate(projected[f.spec_id], stats).reason, Evidence.PARTITION_VALUE
                    else:
                        path = scan.manifest.manifest_path
                        stats = row_column_stats(scan.entries, int(row), self.schema, ids, path)
                        reason, evidence = evaluate(row_filter, stats).reason, Evidence.COLUMN_STATS
                    yield Decision(
                        level=Level.DATA_FILE if f.content == FileContent.DATA else Level.DELETE_FILE,
                        path=f.file_path,
                        kept=code == KEPT,
                        reason=reason,
                        evidence=evidence,
                        spec_id=f.spec_id,
                        manifest_path=scan.manifest.manifest_path,
                        file=f,
                    )

    @property
    def tasks(self) -> ScanTasks:
        """A task per data file to read, with the delete files that apply to it: a sequence whose tasks are
        built as they are read (``scan.tasks``), none kept; ``to_arrow()`` has them all as columns."""
        return ScanTasks(self, np.arange(self.task_count))

    def tasks_for(self, paths: Collection[str] | None) -> ScanTasks:
        """The tasks of the data files in ``paths`` (all when None), building only those."""
        if paths is None or self.join is None or not len(self.join.data):
            return self.tasks
        wanted = pa.array(list(paths), pa.string())
        found = pc.is_in(self.join.data.paths, value_set=wanted).to_numpy(zero_copy_only=False)
        return ScanTasks(self, np.flatnonzero(np.asarray(found)))

    @property
    def reference_tasks(self) -> ScanTasks:
        """The tasks with the delete files the reference implementation attaches: less the equality
        deletes that column statistics rule out (the delete index's statistics rule; the plan must be
        made with ``equality_stats=True``). Each ruled-out delete keeps its reason in words."""
        if self.join is not None and len(self.join.data):
            attached(self, like_reference=True)  # raises when the plan did not read the statistics
        return ScanTasks(self, np.arange(self.task_count), like_reference=True)

    def to_arrow(self, *, like_reference: bool = False) -> pa.Table:
        """Every task at once as columns, one row per task in ``tasks``' order (``scan.tasks.task_table``:
        the data file's fields and the paths of the delete files attached to it), with no object per file;
        ``like_reference``: attached as ``reference_tasks`` attaches them."""
        return task_table(self, like_reference=like_reference)

    @property
    def delete_files(self) -> tuple[ScanFile, ...]:
        """Delete files that apply to at least one task, once per path."""
        if self.join is None:
            return ()
        applied = np.unique(self.join.applied[1])
        seen: dict[str, ScanFile] = {}
        for f in files_at(self, self.join.deletes, applied):
            seen.setdefault(f.file_path, f)
        return tuple(seen.values())

    def kept_delete_files(self) -> tuple[ScanFile, ...]:
        """The live delete files the plan keeps after pruning, applied or not, in manifest and entry order
        (no data file is built)."""
        if self.join is None:
            return ()
        return tuple(files_at(self, self.join.deletes, np.arange(len(self.join.deletes))))

    def applied_deletes(self) -> dict[str, frozenset[str]]:
        """Data file path -> paths of the delete files that apply to it, for every task (no objects)."""
        if self.join is None or not len(self.join.data):
            return {}
        data_paths = self.join.data.paths.to_pylist()
        out: dict[str, frozenset[str]] = dict.fromkeys(data_paths, frozenset())
        data_index, delete_index = self.join.applied
        if len(data_index):
            delete_paths = self.join.deletes.paths.to_pylist()
            grouped: dict[str, set[str]] = {}
            for d, x in zip(data_index.tolist(), delete_index.tolist(), strict=True):
                grouped.setdefault(data_paths[d], set()).add(delete_paths[x])
            out.update({path: frozenset(found) for path, found in grouped.items()})
        return out

    # ------------------------------------------------------------------ words

    def _short(self, path: str) -> str:
        base = self.location.rstrip("/") + "/"
        return path[len(base) :] if path.startswith(base) else path

    def explain_lines(self) -> Iterator[str]:
        """The lines of ``explain()``, made one at a time (a view that shows the first few builds no more)."""
        yield f"Scan of snapshot {self.snapshot_id} (sequence number {self.sequence_number}, schema {self.schema.schema_id})"
        yield f"Filter: {self.filter}"
        yield f"Columns: {', '.join(self.columns)}"
        for projection in self.projections:
            yield f"Partition filter for spec {projection.spec_id}: {projection.expr}"
            for step in projection.fields:
                target = step.text or "no partition predicate"
                yield f"  {step.predicate} -> {target} ({step.reason})"
        for level in (Level.MANIFEST, Level.DATA_FILE, Level.DELETE_FILE):
            kept, skipped = self._level_counts(level)
            yield ""
            yield f"{level.capitalize()}s: {kept} kept, {skipped} skipped"
            items = self._manifest_decisions() if level == Level.MANIFEST else self._file_decisions(level)
            for d in items:
                yield f"  {'KEEP' if d.kept else 'SKIP'} {self._short(d.path)}" + (f": {d.reason}" if d.reason else "")
        yield ""
        yield f"Tasks: {self.task_count} data files to read, {self.delete_file_count} delete files to apply"
        yield from self._task_lines()

    def _task_lines(self) -> Iterator[str]:
        """The tasks' lines, ``CHUNK`` tasks at a time: from the columns, and from task objects only for a
        chunk where some data file has delete files to consider (their matches are said in words)."""
        if self.join is None or not self.task_count:
            return
        considered = np.bincount(self.join.data_index, minlength=self.task_count) > 0
        for start in range(0, self.task_count, CHUNK):
            positions = np.arange(start, min(start + CHUNK, self.task_count))
            if considered[positions].any():
                for task in build_tasks(self, positions):
                    f = task.file
                    yield self._task_line(f.file_path, f.record_count, f.sequence_number, f.spec_id, partition_text(f))
                    matches = task.matches
                    for m in matches:
                        yield f"      {m.delete.kind} {self._short(m.delete.file_path)}: {m.reason}"
                    if not matches:
                        yield "      no delete files in its partition"
                continue
            columns = file_columns(self, positions)
            for values in zip(*columns.values(), strict=True):
                yield self._task_line(*values)
                yield "      no delete files in its partition"

    def _task_line(self, path: str, records: int, sequence_number: int, spec_id: int, partition: str) -> str:
        return (
            f"  {self._short(path)} ({records} rows, data seq {sequence_number}, spec {spec_id}, partition {partition})"
        )

    def explain_line_count(self) -> int:
        """How many lines ``explain()`` has, counted without making them."""
        count = 3 + sum(1 + len(p.fields) for p in self.projections)
        for level in (Level.MANIFEST, Level.DATA_FILE, Level.DELETE_FILE):
            count += 2 + sum(self._level_counts(level))
        count += 2 + self.task_count
        if self.join is not None and self.task_count:
            considered = np.bincount(self.join.data_index, minlength=self.task_count)
            count += int(np.maximum(considered, 1).sum())
        return count

    def explain(self, max_lines: int | None = None) -> str:
        """The plan in words: every manifest and file kept or skipped and why, and which delete
        files apply to each data file by which sequence-number rule (the first ``max_lines`` lines)."""
        return "\n".join(islice(self.explain_lines(), max_lines))

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
                    "partition": partition_text(f) if f else None,
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
                        "partition": partition_text(m.delete),
                        "sequence_number": m.delete.sequence_number,
                        "record_count": m.delete.record_count,
                        "manifest_path": m.delete.manifest_path,
                        "data_file": task.file.file_path,
                    }
                )
        return pd.DataFrame(rows)

    def __repr__(self) -> str:
        return (
            f"<ScanPlan snapshot {self.snapshot_id}: {self.task_count} tasks, {self.delete_file_count} delete files, "
            f"{self.skipped_count} skipped>"
        )


def _keep_text(f: ScanFile) -> str:
    return f"{f.kind}, {f.record_count} rows, data seq {f.sequence_number}, partition {partition_text(f)}"


# ------------------------------------------------------------------------------------------ planning


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
    equality_stats: bool = False,
) -> ScanPlan:
    """Plan a read of ``snapshot``: prune, then match deletes to data files (spec: "Scan Planning").

    ``schema`` defaults to the snapshot's own schema (a read by snapshot id; ``resolve.read_schema``
    gives the schema for any ``at``); filters and columns are bound to it. With
    ``equality_stats`` the plan reads the column statistics of delete entries, and of data entries
    when an equality delete file is live, so that ``reference_tasks`` can rule out equality deletes
    by them as the reference implementation does.
    """
    POOL.prestart()  # a decoder's imports overlap reading the manifest list and pruning
    metadata, store = table.metadata, table.store
    schema, bound, row_filter = bind_read(metadata, snapshot, filter, schema)
    cols = resolve_columns(schema, columns)
    manifests = store.manifest_list(snapshot)
    projected, kept, no_live = prune_snapshot(metadata, manifests, row_filter)
    partition_filters = {spec_id: p.expr for spec_id, p in projected.items()}

    def scan_all(chosen: list[ManifestFile], stats: bool) -> dict[str, ManifestScan]:
        def one(m: ManifestFile) -> ManifestScan:
            partition_filter = partition_filters[m.partition_spec_id]
            return scan_manifest(store, metadata, m, schema, row_filter, partition_filter, stats=stats)

        done = parallel_map(one, chosen, progress=progress, label="manifests")
        return {s.manifest.manifest_path: s for s in done}

    to_scan = [m for m, k in zip(manifests, kept, strict=True) if k]
    if equality_stats:  # delete manifests first: data entries' statistics matter only with equality deletes
        delete_manifests = [m for m in to_scan if m.content == ManifestContent.DELETES]
        scanned = scan_all(delete_manifests, True)
        equality = any(
            bool((s.kept & (s.content == int(FileContent.EQUALITY_DELETES))).any()) for s in scanned.values()
        )
        scanned |= scan_all([m for m in to_scan if m.content != ManifestContent.DELETES], equality)
    else:
        scanned = scan_all(to_scan, False)
    scans = [scanned[m.manifest_path] for m in to_scan]
    store.verify_snapshot(snapshot)  # the summary's totals, once every manifest of the snapshot was read
    return ScanPlan(
        snapshot_id=snapshot.snapshot_id,
        sequence_number=snapshot_sequence_number(snapshot),
        schema=schema,
        filter=bound,
        columns=cols,
        location=metadata.location,
        projections=tuple(p for _, p in sorted(projected.items())),
        manifests=tuple(manifests),
        manifest_kept=kept,
        manifest_no_live=no_live,
        scans=tuple(scans),
        join=match_deletes_columns(
            scans, metadata, equality_stats=metadata.current_schema() if equality_stats else None
        ),
        metadata=metadata,
    )


def bind_read(
    metadata: TableMetadata, snapshot: Snapshot, filter: Expr | str | None, schema: Schema | None
) -> tuple[Schema, Expr, Expr]:
    """(the read schema, the filter bound to it, that filter with its negations pushed down to the leaves
    as pruning reads it): what a read of ``snapshot`` starts from (``plan_scan``,
    ``scan.summary.summarize_scan``). ``schema`` defaults to the snapshot's own."""
    schema = schema or snapshot_schema(metadata, snapshot)
    bound = bind(filter, schema)
    return schema, bound, push_not(bound)


def prune_snapshot(
    metadata: TableMetadata, manifests: Sequence[ManifestFile], row_filter: Expr
) -> tuple[dict[int, SpecProjection], np.ndarray, np.ndarray]:
    """(the row filter projected onto each spec of ``manifests``, kept and skipped-by-file-counts per
    manifest): the manifest level of a plan (``plan_scan``, ``scan.summary.summarize_scan``)."""
    projected: dict[int, SpecProjection] = {}
    for m in manifests:
        if m.partition_spec_id not in projected:
            projected[m.partition_spec_id] = project(row_filter, metadata.spec_by_id(m.partition_spec_id))
    kept, no_live = prune_manifests(metadata, manifests, {spec_id: p.expr for spec_id, p in projected.items()})
    return projected, kept, no_live


# ------------------------------------------------------------------------------------------ the rules, one at a time


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
        lower = decode_or_none(summary.lower_bound, pfield.type, m.manifest_path)
        upper = decode_or_none(summary.upper_bound, pfield.type, m.manifest_path)
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


__all__ = [
    "ScanPlan",
    "partition_summary_stats",
    "partition_value_stats",
    "plan_scan",
    "resolve_columns",
]
