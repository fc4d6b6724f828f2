"""Which equality delete files the reference implementation attaches to a data file.

The spec's scope rules (see ``scan.match_deletes``) say an equality delete file *may* apply to every
older data file of its partition (or of the whole table, for a global delete). The reference
implementation's delete index then drops pairs that column statistics prove disjoint, field by
equality field: a data file whose values are all null and a delete file with no null; a delete
file of only nulls and a data file with no null; or value ranges (lower..upper bounds) that do not
overlap. Rows are the same either way; the count of delete files per data file is not, and the
maintenance planners decide by that count (``delete-file-threshold``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.scan.planner import ScanFile, ScanTask
from icebook.analysis.store.manifests import ManifestStore
from icebook.spec.manifest import FileContent
from icebook.spec.metadata import TableMetadata
from icebook.spec.snapshots import Snapshot
from icebook.spec.types import DecimalType, FixedType, NestedField, PrimitiveType
from icebook.spec.values import decode_value

_STATS = ("lower_bounds", "upper_bounds", "null_value_counts", "value_counts")


@dataclass(frozen=True, slots=True, kw_only=True)
class ColumnStats:
    """One file's statistics for some field ids; a map absent from the manifest entry is None."""

    lower: dict[int, bytes] | None
    upper: dict[int, bytes] | None
    nulls: dict[int, int] | None
    values: dict[int, int] | None


def _stats_by_path(store: ManifestStore, snapshot: Snapshot, paths: set[str], ids: set[int]) -> dict[str, ColumnStats]:
    out: dict[str, ColumnStats] = {}
    for manifest in store.manifest_list(snapshot):
        table = store.entries(manifest)
        if table.num_rows == 0:
            continue
        mask = pc.is_in(table.column("file_path"), value_set=pa.array(sorted(paths), pa.string()))
        hits = table.filter(mask)
        if hits.num_rows == 0:
            continue
        columns: dict[str, list[Any]] = {}
        present: dict[str, list[bool]] = {}
        for name in _STATS:
            arr = hits.column(name).combine_chunks()
            present[name] = arr.is_valid().to_pylist()
            columns[name] = arr.to_pylist()
        file_paths = hits.column("file_path").to_pylist()
        for i, path in enumerate(file_paths):
            maps: dict[str, dict[int, Any] | None] = {}
            for name in _STATS:
                if not present[name][i]:
                    maps[name] = None
                else:
                    maps[name] = {int(k): v for k, v in (columns[name][i] or []) if int(k) in ids}
            out[path] = ColumnStats(
                lower=maps["lower_bounds"],
                upper=maps["upper_bounds"],
                nulls=maps["null_value_counts"],
                values=maps["value_counts"],
            )
    return out


def _contains_null(stats: ColumnStats, field: NestedField) -> bool:
    if field.required:
        return False
    if stats.nulls is None or stats.nulls.get(field.field_id) is None:
        return True
    return stats.nulls[field.field_id] > 0


def _all_non_null(stats: ColumnStats, field: NestedField) -> bool:
    if field.required:
        return True
    if stats.nulls is None or stats.nulls.get(field.field_id) is None:
        return False
    return stats.nulls[field.field_id] <= 0


def _all_null(stats: ColumnStats, field: NestedField) -> bool:
    if field.required or stats.nulls is None or stats.values is None:
        return False
    nulls, values = stats.nulls.get(field.field_id), stats.values.get(field.field_id)
    return nulls is not None and values is not None and nulls == values


def may_contain_deletes(data: ColumnStats, delete: ColumnStats, fields: Sequence[NestedField], where: str) -> bool:
    """False when the statistics prove no row of ``data`` equals a row of ``delete``."""
    check_ranges = (
        data.lower is not None and data.upper is not None and delete.lower is not None and delete.upper is not None
    )
    for field in fields:
        if not isinstance(field.type, PrimitiveType | DecimalType | FixedType):
            continue  # no statistics for nested types: assume a match
        if _contains_null(data, field) and _contains_null(delete, field):
            continue
        if _all_null(data, field) and _all_non_null(delete, field):
            return False
        if _all_null(delete, field) and _all_non_null(data, field):
            return False
        if not check_ranges:
            continue
        fid = field.field_id
        bounds = (
            (data.lower or {}).get(fid),
            (data.upper or {}).get(fid),
            (delete.lower or {}).get(fid),
            (delete.upper or {}).get(fid),
        )
        present = [b for b in bounds if b is not None]
        if len(present) < len(bounds):
            continue
        d_lo, d_hi, x_lo, x_hi = (decode_value(b, field.type, field=f"bounds[{fid}]", file=where) for b in present)
        if d_lo > x_hi or x_lo > d_hi:
            return False
    return True


def attach_like_reference(
    tasks: Sequence[ScanTask], metadata: TableMetadata, store: ManifestStore, snapshot: Snapshot
) -> tuple[ScanTask, ...]:
    """``tasks`` with equality deletes that column statistics rule out removed from ``deletes``."""
    eq = {d.file_path: d for t in tasks for d in t.deletes if d.content == FileContent.EQUALITY_DELETES}
    if not eq:
        return tuple(tasks)
    schema = metadata.current_schema()
    ids = {i for d in eq.values() for i in (d.equality_ids or ())}
    paths = set(eq) | {t.file.file_path for t in tasks if any(d.file_path in eq for d in t.deletes)}
    stats = _stats_by_path(store, snapshot, paths, ids)
    out = []
    for task in tasks:
        kept: list[ScanFile] = []
        for d in task.deletes:
            if d.content == FileContent.EQUALITY_DELETES:
                fields = [f for i in (d.equality_ids or ()) if (f := schema.find_field(i)) is not None]
                data_stats, delete_stats = stats.get(task.file.file_path), stats.get(d.file_path)
                if (
                    data_stats is not None
                    and delete_stats is not None
                    and not may_contain_deletes(data_stats, delete_stats, fields, d.file_path)
                ):
                    continue
            kept.append(d)
        out.append(task if len(kept) == len(task.deletes) else replace(task, deletes=tuple(kept)))
    return tuple(out)


__all__ = ["ColumnStats", "attach_like_reference", "may_contain_deletes"]
