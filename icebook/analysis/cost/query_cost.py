"""What a read costs, down to row groups: the scan plan, then each kept Parquet data file's row groups
skipped or read by their statistics, and the bytes of the projected column chunks still read.

The plan (``scan.planner.plan_scan``) decides manifests and files; the footers of the files it keeps
are read on demand, in parallel, through the footer cache (``io.parquet_footer``); each row group is
decided by the planner's own evaluator (``cost.row_groups``). A reader also fetches the columns the
filter reads, so those count as projected. Files in ORC or Avro are listed whole: their row-group
(stripe, block) detail is not read.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pandas as pd

from icebook.analysis._frames import frame
from icebook.analysis.cost.row_groups import decide_row_groups
from icebook.analysis.expr.nodes import AlwaysTrue, Expr, push_not, referenced_ids
from icebook.analysis.scan.plan_items import ScanFile
from icebook.analysis.scan.planner import ScanPlan, plan_scan
from icebook.analysis.scan.summary import summarize_scan
from icebook.analysis.store.table_like import TableLike
from icebook.io.parquet_footer import read_footer
from icebook.spec.manifest import FileFormat
from icebook.spec.schema import Schema
from icebook.spec.snapshots import Snapshot
from icebook.spec.types import IcebergType, ListType, MapType, StructType
from icebook.text import byte_size

ROW_GROUP_COLUMNS = ["file_path", "file_format", "row_group", "rows", "kept", "reason", "bytes_read", "total_bytes"]
_INTS = ("row_group", "rows", "bytes_read", "total_bytes")
_FOOTER_THREADS = 8  # footers are small ranged reads: latency-bound, not CPU-bound


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class QueryCost:
    """A read's plan and, for each data file it keeps, the row groups read or skipped and the bytes read."""

    plan: ScanPlan
    row_groups: pd.DataFrame
    """One row per row group of each kept Parquet data file (``row_group`` null for a file in another
    format): ``file_path``, ``file_format``, ``row_group``, ``rows``, ``kept``, ``reason``,
    ``bytes_read`` (projected column chunks of a kept row group), ``total_bytes`` (all its chunks)."""
    projected: tuple[str, ...]
    """The top-level columns a reader fetches: those asked for and those the filter reads."""
    table_files: int
    table_bytes: int
    """Live data files of the snapshot and their bytes (what a read of every file would fetch)."""
    delete_bytes: int
    """Bytes of the delete files that apply to the files read (each file once)."""

    def to_pandas(self) -> pd.DataFrame:
        return self.row_groups

    @property
    def totals(self) -> dict[str, Any]:
        """Files, row groups and bytes: read against the table's."""
        rg = self.row_groups
        parquet = rg[rg["row_group"].notna()]
        other = rg[rg["row_group"].isna()]
        kept = parquet[parquet["kept"]]
        return {
            "data_files": self.table_files,
            "data_files_read": self.plan.task_count,
            "data_files_skipped": self.table_files - self.plan.task_count,
            "row_groups": len(parquet),
            "row_groups_read": len(kept),
            "row_groups_skipped": len(parquet) - len(kept),
            "files_without_row_group_detail": len(other),
            "bytes_read": int(kept["bytes_read"].sum()),
            "bytes_of_files_read": int(self._file_sizes().sum()),
            "delete_bytes": self.delete_bytes,
            "table_bytes": self.table_bytes,
        }

    def _file_sizes(self) -> pd.Series:
        sizes = {t.file.file_path: t.file.file_size_in_bytes for t in self.plan.tasks}
        return pd.Series(sizes, dtype="int64")

    def top_reasons(self, n: int = 5) -> pd.DataFrame:
        """Why row groups were skipped, by predicate, most row groups first: ``predicate``, ``row_groups``,
        ``rows`` and one ``example`` reason in full."""
        skipped = self.row_groups[~self.row_groups["kept"]]
        keyed = skipped.assign(predicate=skipped["reason"].str.split(": ", n=1).str[0])
        grouped = keyed.groupby("predicate", sort=False).agg(
            row_groups=("kept", "size"), rows=("rows", "sum"), example=("reason", "first")
        )
        ordered = grouped.sort_values(["row_groups", "rows"], ascending=False).head(n).reset_index()
        return ordered.astype({"row_groups": "int64", "rows": "int64"})

    def summary(self) -> str:
        t = self.totals
        share = f" ({t['bytes_read'] / t['table_bytes']:.1%} of the table)" if t["table_bytes"] else ""
        lines = [
            f"query cost @ {self.plan.snapshot_id}, filter {self.plan.filter}, columns {', '.join(self.projected)}",
            f"  data files: {t['data_files_read']:,} read, {t['data_files_skipped']:,} skipped by the plan "
            f"(of {t['data_files']:,})",
            f"  row groups: {t['row_groups_read']:,} read, {t['row_groups_skipped']:,} skipped by their statistics "
            f"(of {t['row_groups']:,})",
            f"  bytes read: {byte_size(t['bytes_read'])}{share}, of {byte_size(t['bytes_of_files_read'])} in the files "
            f"read and {byte_size(t['table_bytes'])} in the table; delete files {byte_size(t['delete_bytes'])}",
        ]
        if t["files_without_row_group_detail"]:
            lines.append(
                f"  {t['files_without_row_group_detail']:,} files not in Parquet: row-group detail is not available"
            )
        reasons = self.top_reasons()
        if len(reasons):
            lines.append("  top reasons row groups were skipped:")
            lines += [
                f"    {r.row_groups:,} ({r.rows:,} rows) by {r.predicate}, e.g. {r.example}"
                for r in reasons.itertuples()
            ]
        return "\n".join(lines)

    def __repr__(self) -> str:
        t = self.totals
        return (
            f"<QueryCost @ {self.plan.snapshot_id}: {t['data_files_read']:,} files, "
            f"{t['row_groups_read']:,} of {t['row_groups']:,} row groups, {byte_size(t['bytes_read'])} read "
            f"of {byte_size(t['table_bytes'])}>"
        )


def _nested_ids(t: IcebergType) -> set[int]:
    children = t.fields if isinstance(t, StructType) else ()
    if isinstance(t, ListType):
        children = (t.element,)
    elif isinstance(t, MapType):
        children = (t.key, t.value)
    out: set[int] = set()
    for f in children:
        out |= {f.field_id, *_nested_ids(f.type)}
    return out


def projected_ids(schema: Schema, columns: Sequence[str], bound: Expr) -> frozenset[int]:
    """Top-level field ids a reader fetches: ``columns`` and every column holding a field the filter reads."""
    wanted = referenced_ids(bound)
    out = set()
    for f in schema.columns:
        if f.name in columns or f.field_id in wanted or wanted & _nested_ids(f.type):
            out.add(f.field_id)
    return frozenset(out)


def _file_rows(table: TableLike, f: ScanFile, schema: Schema, row_filter: Expr, ids: frozenset[int]) -> list[dict]:
    base = {"file_path": f.file_path, "file_format": f.file_format.name}
    if f.file_format != FileFormat.PARQUET:
        reason = f"row-group detail is not available for {f.file_format.name} files"
        return [{**base, "row_group": None, "rows": f.record_count, "kept": True, "reason": reason}]
    meta = read_footer(table.fileio, f.file_path, f.file_size_in_bytes)
    no_filter = isinstance(row_filter, AlwaysTrue)
    return [
        {
            **base,
            "row_group": d.row_group,
            "rows": d.rows,
            "kept": d.kept,
            "reason": "no filter" if no_filter else d.reason,
            "bytes_read": d.bytes_read,
            "total_bytes": d.total_bytes,
        }
        for d in decide_row_groups(meta, schema, row_filter, ids)
    ]


def query_cost(
    table: TableLike,
    snapshot: Snapshot,
    filter: Expr | str | None = None,
    columns: Sequence[str] | None = None,
    *,
    schema: Schema | None = None,
) -> QueryCost:
    """The cost of reading ``snapshot`` with ``filter`` and ``columns`` (all when None)."""
    plan = plan_scan(table, snapshot, filter, columns, schema=schema)
    row_filter = push_not(plan.filter)
    ids = projected_ids(plan.schema, plan.columns, plan.filter)
    files = [t.file for t in plan.tasks]
    with ThreadPoolExecutor(max_workers=_FOOTER_THREADS) as pool:
        per_file = list(pool.map(lambda f: _file_rows(table, f, plan.schema, row_filter, ids), files))
    rows = [row for file_rows in per_file for row in file_rows]
    row_groups = frame(rows, ROW_GROUP_COLUMNS, ints=_INTS)
    row_groups["kept"] = row_groups["kept"].astype(bool)
    everything = summarize_scan(table, snapshot, None, schema=plan.schema).totals
    return QueryCost(
        plan=plan,
        row_groups=row_groups,
        projected=tuple(f.name for f in plan.schema.columns if f.field_id in ids),
        table_files=everything.data_files,
        table_bytes=everything.bytes,
        delete_bytes=sum(d.file_size_in_bytes for d in plan.delete_files),  # each path once
    )


__all__ = ["ROW_GROUP_COLUMNS", "QueryCost", "projected_ids", "query_cost"]
