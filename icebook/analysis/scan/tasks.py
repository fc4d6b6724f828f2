"""A plan's tasks, from its columns: as objects a chunk at a time (``ScanTasks``), or all at once as Arrow
(``task_table``; spec: "Scan Planning").

A plan keeps each kept manifest's live entries and the delete join (``planner.ScanPlan``). A ``ScanTask``
per data file is made only when one is read: iterating ``plan.tasks`` builds them ``CHUNK`` at a time and
keeps none, so memory follows what the caller keeps. Whoever wants every task at once reads
``plan.to_arrow()``: one row per task, built column-wise with no object per file. Both read the same
columns in the same order (the data files in manifest and entry order; a task's delete files in the delete
join's order), so a row of the table and the task at the same position describe the same file.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, overload

import numpy as np
import pyarrow as pa

from icebook.analysis.scan.columns import FileBuilder, ManifestScan, physical
from icebook.analysis.scan.delete_index import FileRows, equality_disjoint
from icebook.analysis.scan.lazy_items import LazyColumns, TaskRow, constant, rows_of
from icebook.analysis.scan.plan_items import ScanFile, ScanTask
from icebook.errors import OptionError

if TYPE_CHECKING:
    from icebook.analysis.scan.planner import ScanPlan

CHUNK = 512
"""Tasks built at a time while iterating: few enough that the objects a caller drops die young (a chunk
of thousands lives through the collector's younger generations, and their collections then cost more than
building the objects)."""

ROWS_PER_CHUNK = 1 << 20
"""Tasks per chunk of ``task_table``'s text columns."""


class ScanTasks(Sequence[ScanTask]):
    """The tasks of a plan (or of some of its data files), in order: each built when read, none kept."""

    __slots__ = ("_plan", "_positions", "_reference", "chunk")

    def __init__(
        self, plan: ScanPlan, positions: np.ndarray, *, like_reference: bool = False, chunk: int = CHUNK
    ) -> None:
        self._plan = plan
        self._positions = positions
        self._reference = like_reference
        self.chunk = chunk
        """Tasks built at a time while iterating."""

    def __len__(self) -> int:
        return len(self._positions)

    @overload
    def __getitem__(self, index: int) -> ScanTask: ...
    @overload
    def __getitem__(self, index: slice) -> ScanTasks: ...
    def __getitem__(self, index: int | slice) -> ScanTask | ScanTasks:
        if isinstance(index, slice):
            return ScanTasks(self._plan, self._positions[index], like_reference=self._reference, chunk=self.chunk)
        i = operator.index(index)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(f"task {index} of {len(self)}")
        return build_tasks(self._plan, self._positions[i : i + 1], like_reference=self._reference)[0]

    def __iter__(self) -> Iterator[ScanTask]:
        for start in range(0, len(self), self.chunk):
            chosen = self._positions[start : start + self.chunk]
            yield from build_tasks(self._plan, chosen, like_reference=self._reference)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ScanTasks | tuple | list):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<ScanTasks: {len(self):,} tasks of snapshot {self._plan.snapshot_id}>"


def builder(plan: ScanPlan) -> FileBuilder:
    """The plan's one ``FileBuilder`` (its partition texts are made once per partition)."""
    made = plan._views.get("builder")
    if made is None:
        assert plan.metadata is not None
        made = plan._views["builder"] = FileBuilder(plan.metadata)
    return made


def files_at(plan: ScanPlan, rows: FileRows, positions: np.ndarray) -> list[ScanFile]:
    """ScanFiles for ``positions`` of ``rows`` (a side of the delete join), in that order."""
    out: list[ScanFile] = []
    if not len(positions):
        return out
    scan_index, row_index = rows.scan_index[positions], rows.rows[positions]
    make = builder(plan)
    if scan_index[0] == scan_index[-1] and (len(scan_index) < 3 or (scan_index == scan_index[0]).all()):
        return make.files(plan.scans[int(scan_index[0])], row_index)  # one manifest (most chunks)
    cuts = np.flatnonzero(np.diff(scan_index)) + 1
    for s, e in zip(np.concatenate([[0], cuts]), np.concatenate([cuts, [len(positions)]]), strict=True):
        out.extend(make.files(plan.scans[int(scan_index[s])], row_index[s:e]))
    return out


def delete_files_at(plan: ScanPlan, positions: np.ndarray) -> dict[int, ScanFile]:
    """The delete side's ScanFiles at ``positions``, each made once per plan (delete files are few beside
    data files, and one applies to many tasks)."""
    assert plan.join is not None
    made: dict[int, ScanFile] = plan._views.setdefault("delete_files_by_position", {})
    missing = np.array([p for p in np.unique(positions).tolist() if p not in made], dtype=np.int64)
    if len(missing):
        made.update(zip(missing.tolist(), files_at(plan, plan.join.deletes, missing), strict=True))
    return made


def attached(plan: ScanPlan, *, like_reference: bool = False) -> np.ndarray:
    """Per pair of the delete join: whether the delete file is attached to the data file (the scope rules,
    and with ``like_reference`` less what column statistics rule out)."""
    join = plan.join
    assert join is not None
    if not like_reference:
        return join.applies
    if join.disjoint is None:
        raise OptionError("reference_tasks needs a plan made with equality_stats=True")
    return join.applies & ~join.disjoint


def build_tasks(plan: ScanPlan, chosen: np.ndarray, *, like_reference: bool = False) -> list[ScanTask]:
    """The tasks of the data files at positions ``chosen`` of the delete join's data side, in that order: each
    reads its fields from these tasks' columns, each made when first read (``lazy_items.TaskRow``)."""
    join, metadata = plan.join, plan.metadata
    assert join is not None and metadata is not None
    if not len(chosen):
        return []
    unpartitioned = plan._views.get("unpartitioned")
    if unpartitioned is None:
        specs = metadata.partition_specs.items()
        unpartitioned = plan._views["unpartitioned"] = frozenset(s for s, spec in specs if spec.is_unpartitioned)
    makers: dict[str, Callable[[LazyColumns], Sequence[Any]]] = {
        "file": lambda c: files_at(plan, join.data, chosen),
        "unpartitioned_specs": constant(unpartitioned),
        "_deletes": lambda c: task_deletes(plan, chosen, like_reference=like_reference),
    }
    for i, name in enumerate(("deletes", "candidates", "ruled_out", "ruled_out_reason")):
        makers[name] = partial(_nth, i)
    return list(rows_of(TaskRow, LazyColumns(len(chosen), makers)))


def _nth(i: int, c: LazyColumns) -> Sequence[Any]:
    return c._deletes[i]  # type: ignore[attr-defined, no-any-return]


def task_deletes(
    plan: ScanPlan, chosen: np.ndarray, *, like_reference: bool = False
) -> tuple[list[tuple[ScanFile, ...]], list[tuple[ScanFile, ...]], list[tuple[str, ...]], list[Any]]:
    """Per data file at ``chosen``: the delete files attached, those considered, the paths of those column
    statistics rule out, and the reason for those (``ScanTask``'s fields of the same names)."""
    join = plan.join
    assert join is not None
    n = len(chosen)
    applied: list[tuple[ScanFile, ...]] = [()] * n
    candidates: list[tuple[ScanFile, ...]] = [()] * n
    out_paths: list[tuple[str, ...]] = [()] * n
    reasons: list[Any] = [None] * n
    considered = plan._views.get("considered")
    if considered is None:
        considered = plan._views["considered"] = np.zeros(len(join.data), dtype=bool)
        considered[join.data_index] = True
    if not considered[chosen].any():  # most data files have no delete file to consider
        return applied, candidates, out_paths, reasons
    # The join's pairs are sorted by data position: each task's pairs are one run.
    starts = np.searchsorted(join.data_index, chosen, side="left")
    ends = np.searchsorted(join.data_index, chosen, side="right")
    ruled_out = join.disjoint if like_reference else None
    attach = attached(plan, like_reference=like_reference)
    with_pairs = np.flatnonzero(ends > starts).tolist()
    deletes = delete_files_at(plan, np.concatenate([join.delete_index[starts[i] : ends[i]] for i in with_pairs]))
    for i in with_pairs:
        start, end = int(starts[i]), int(ends[i])
        pair_deletes = join.delete_index[start:end].tolist()
        candidates[i] = tuple(deletes[x] for x in pair_deletes)
        applied[i] = tuple(d for d, ok in zip(candidates[i], attach[start:end].tolist(), strict=True) if ok)
        if ruled_out is not None:
            out_here = ruled_out[start:end].tolist()
            positions = {d.file_path: x for d, x, no in zip(candidates[i], pair_deletes, out_here, strict=True) if no}
            if positions:
                out_paths[i] = tuple(positions)
                reasons[i] = partial(ruled_out_reason, plan, int(chosen[i]), positions)
    return applied, candidates, out_paths, reasons


def ruled_out_reason(plan: ScanPlan, data_position: int, delete_positions: dict[str, int], d: ScanFile) -> str:
    """Why column statistics rule out equality delete ``d`` for the data file at ``data_position``."""
    assert plan.join is not None and plan.metadata is not None
    schema = plan.metadata.current_schema()
    fields = [x for i in d.equality_ids or () if (x := schema.find_field(i)) is not None]
    ids = {x.field_id for x in fields}
    data = plan.join.data.stats(data_position, schema, ids)
    delete = plan.join.deletes.stats(delete_positions[d.file_path], schema, ids)
    return equality_disjoint(data, delete, fields) or "statistics rule it out"


# ------------------------------------------------------------------------------------------ every task as Arrow


def partition_groups(plan: ScanPlan, rows: FileRows) -> tuple[np.ndarray, list[tuple[int, tuple[Any, ...]]], list[str]]:
    """(per row: the index of its partition, each partition's (spec id, values in physical form), each one's
    text as ``ScanFile.partition_text`` gives it). Only one row per distinct partition becomes Python values."""
    make = builder(plan)
    ids = np.zeros(len(rows), dtype=np.int64)
    keys: list[tuple[int, tuple[Any, ...]]] = []
    texts: list[str] = []
    known: dict[tuple[int, tuple[Any, ...]], int] = {}
    at = 0
    for i, part in rows.chunks("partition"):
        scan: ManifestScan = plan.scans[i]
        spec_id = scan.manifest.partition_spec_id
        spec = plan.metadata.spec_by_id(spec_id) if plan.metadata is not None else None
        names = [pf.name for pf in spec.fields][: part.type.num_fields] if spec is not None else []
        codes = np.zeros(len(part), dtype=np.int64)
        for j in range(len(names)):
            encoded = part.field(j).dictionary_encode(null_encoding="encode")
            index = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
            codes = codes * (len(encoded.dictionary) + 1) + index
        _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        firsts = part.take(pa.array(first))
        values = [physical(firsts.field(j)) for j in range(len(names))]
        local = np.empty(len(first), dtype=np.int64)
        for k in range(len(first)):
            key = (spec_id, tuple(v[k] for v in values))
            found = known.get(key)
            if found is None:
                found = known[key] = len(keys)
                keys.append(key)
                texts.append(make.partition_text(spec_id, tuple(zip(names, key[1], strict=True))))
            local[k] = found
        ids[at : at + len(part)] = local[inverse.reshape(-1)]
        at += len(part)
    return ids, keys, texts


def file_columns(plan: ScanPlan, positions: np.ndarray) -> dict[str, list[Any]]:
    """The data files at ``positions`` of the delete join's data side as plain columns (path, records, data
    sequence number, spec and partition text, as their ``ScanFile`` holds them), with no object per file."""
    assert plan.join is not None
    data = plan.join.data
    rows = FileRows(data.scans, data.scan_index[positions], data.rows[positions])
    ids, _, texts = partition_groups(plan, rows)
    return {
        "file_path": rows.column("file_path").to_pylist(),
        "record_count": rows.column("record_count").to_pylist(),
        "sequence_number": rows.sequence_numbers.tolist(),
        "spec_id": rows.spec_ids.tolist(),
        "partition_text": [texts[i] for i in ids.tolist()],
    }


TASK_COLUMNS = (
    "file_path",
    "file_format",
    "spec_id",
    "partition",
    "record_count",
    "file_size_in_bytes",
    "sequence_number",
    "file_sequence_number",
    "snapshot_id",
    "manifest_path",
    "delete_files",
)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class TaskColumns:
    """Every task of a plan as columns (``task_table``), with what a consumer that groups or weighs them
    needs besides: each row's partition as an index into ``partitions`` (spec id and values in physical
    form, as ``ScanFile.partition_key``) and the attached (data row, delete position) pairs."""

    table: pa.Table
    partition: np.ndarray
    partitions: list[tuple[int, tuple[Any, ...]]]
    partition_texts: list[str]
    pair_data: np.ndarray
    """Row of the table of each attached pair (ascending)."""
    pair_delete: np.ndarray
    """Position of its delete file on the delete join's delete side (``delete_files_at``)."""


def task_columns(plan: ScanPlan, *, like_reference: bool = False) -> TaskColumns:
    """One row per task, in ``plan.tasks``' order: the data file's fields as ``ScanFile`` names them (the
    partition as its text, the manifest path dictionary-encoded) and ``delete_files``, the paths of the delete
    files attached to it (``ScanTask.deletes``, in that order)."""
    join = plan.join
    empty = np.zeros(0, dtype=np.int64)
    if join is None or not len(join.data):
        return TaskColumns(
            table=_empty_table(), partition=empty, partitions=[], partition_texts=[], pair_data=empty, pair_delete=empty
        )
    data = join.data
    ids, keys, texts = partition_groups(plan, data)
    paths = [s.manifest.manifest_path for s in plan.scans]
    keep = attached(plan, like_reference=like_reference)
    pair_data, pair_delete = join.data_index[keep], join.delete_index[keep]
    offsets = np.concatenate([[0], np.cumsum(np.bincount(pair_data, minlength=len(data)))])
    partition_texts = pa.array(texts, pa.string())
    delete_paths = join.deletes.paths
    partition, delete_files = [], []
    # Text columns built ROWS_PER_CHUNK tasks at a time: millions of paths in one array would pass Arrow's
    # 2 GiB of string offsets.
    for start in range(0, len(data), ROWS_PER_CHUNK):
        end = min(len(data), start + ROWS_PER_CHUNK)
        partition.append(partition_texts.take(pa.array(ids[start:end])))
        first, last = offsets[start], offsets[end]
        attached_paths = delete_paths.take(pa.array(pair_delete[first:last])).combine_chunks()
        lists = pa.array((offsets[start : end + 1] - first).astype(np.int32))
        delete_files.append(pa.ListArray.from_arrays(lists, attached_paths))
    columns = {
        "file_path": data.paths,
        "file_format": data.chunked("file_format"),
        "spec_id": pa.array(data.spec_ids, pa.int32()),
        "partition": pa.chunked_array(partition, pa.string()),
        "record_count": data.chunked("record_count"),
        "file_size_in_bytes": data.chunked("file_size_in_bytes"),
        "sequence_number": pa.array(data.sequence_numbers, pa.int64()),
        "file_sequence_number": data.chunked("file_sequence_number"),
        "snapshot_id": data.chunked("snapshot_id"),
        "manifest_path": pa.DictionaryArray.from_arrays(
            pa.array(data.scan_index, pa.int32()), pa.array(paths, pa.string())
        ),
        "delete_files": pa.chunked_array(delete_files, pa.list_(pa.string())),
    }
    return TaskColumns(
        table=pa.table(columns),
        partition=ids,
        partitions=keys,
        partition_texts=texts,
        pair_data=pair_data,
        pair_delete=pair_delete,
    )


def task_table(plan: ScanPlan, *, like_reference: bool = False) -> pa.Table:
    """``task_columns(plan).table``: every task as one row (``ScanPlan.to_arrow``)."""
    return task_columns(plan, like_reference=like_reference).table


def _empty_table() -> pa.Table:
    return pa.table(
        {
            "file_path": pa.array([], pa.string()),
            "file_format": pa.array([], pa.string()),
            "spec_id": pa.array([], pa.int32()),
            "partition": pa.array([], pa.string()),
            "record_count": pa.array([], pa.int64()),
            "file_size_in_bytes": pa.array([], pa.int64()),
            "sequence_number": pa.array([], pa.int64()),
            "file_sequence_number": pa.array([], pa.int64()),
            "snapshot_id": pa.array([], pa.int64()),
            "manifest_path": pa.DictionaryArray.from_arrays(pa.array([], pa.int32()), pa.array([], pa.string())),
            "delete_files": pa.array([], pa.list_(pa.string())),
        }
    )


__all__ = [
    "CHUNK",
    "TASK_COLUMNS",
    "ScanTasks",
    "TaskColumns",
    "attached",
    "build_tasks",
    "delete_files_at",
    "file_columns",
    "files_at",
    "partition_groups",
    "ruled_out_reason",
    "task_columns",
    "task_deletes",
    "task_table",
]
