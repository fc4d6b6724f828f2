"""``Table.query_cost`` on every scenario table, at every snapshot: each Parquet data file's row groups kept
equal pyarrow's own statistics filtering of the same file with the same predicate (or, where pyarrow keeps a
row group only because its filter column holds nulls, the skipped row group holds no matching row), and
``bytes_read`` is the sum of the kept row groups' projected column chunks read from each footer with
``pyarrow.parquet``. Files in ORC or Avro say that row-group detail is not available for their format."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from _support.predicates import predicates

import icebook
from icebook.analysis.expr.binding import bind
from icebook.analysis.expr.filter_arrow import to_arrow
from icebook.analysis.expr.nodes import referenced_ids
from icebook.errors import IcebookError
from icebook.io.datafiles import field_id
from icebook.scenarios import SCENARIOS

pytestmark = pytest.mark.spark


def _local(path: str) -> str:
    return path.removeprefix("file://")


def _names(schema: Any) -> dict[int, str]:
    return {i: f.name for f in schema if (i := field_id(f)) is not None}


def _check_file(path: str, rows: Any, bound: Any, projected: set[int]) -> int:
    parquet = pq.ParquetFile(_local(path))
    names = _names(parquet.schema_arrow)
    filter_ids = referenced_ids(bound)
    if not filter_ids <= set(names):  # a column the file lacks reads as null: pyarrow cannot filter by it
        return 0
    expr = to_arrow(bound, names)
    fragment = next(iter(ds.dataset(_local(path), format="parquet").get_fragments()))
    theirs = {f.row_groups[0].id for f in fragment.split_by_row_group(filter=expr, schema=fragment.physical_schema)}
    meta = parquet.metadata
    wanted = {names[i] for i in projected if i in names}
    filter_names = {names[i] for i in filter_ids}
    assert sorted(rows["row_group"].astype(int)) == list(range(meta.num_row_groups))
    for row in rows.itertuples():
        index = int(row.row_group)
        group = meta.row_group(index)
        chunks = [group.column(j) for j in range(group.num_columns)]
        expected = sum(c.total_compressed_size for c in chunks if c.path_in_schema.split(".")[0] in wanted)
        assert row.bytes_read == (expected if row.kept else 0), (path, index)
        if row.kept != (index in theirs):
            assert not row.kept, (path, index, "kept what pyarrow skips")
            nulls = any(c.statistics.null_count > 0 for c in chunks if c.path_in_schema in filter_names)
            assert nulls and parquet.read_row_group(index).filter(expr).num_rows == 0, (path, index, row.reason)
    return len(rows)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_row_groups_and_bytes_at_every_snapshot(scenario_locations: dict[str, Path], name: str) -> None:
    t = icebook.open(str(scenario_locations[name]))
    checked = 0
    for predicate in predicates(t)[:6]:
        for snapshot in t.snapshots:
            at = snapshot.snapshot_id
            try:
                bound = bind(predicate, t.read_schema(at))
            except IcebookError:
                continue  # the column is not in this snapshot's schema
            cost = t.query_cost(predicate, at=at)
            ids = {f.field_id for f in t.read_schema(at).columns if f.name in cost.projected}
            for path, rows in cost.row_groups.groupby("file_path"):
                if rows["row_group"].isna().all():
                    assert not path.endswith(".parquet") or path.endswith("-misfiled.parquet")
                    assert rows["reason"].iloc[0].startswith("row-group detail is not available for ")
                    continue
                checked += _check_file(path, rows, bound, ids)
    assert checked
