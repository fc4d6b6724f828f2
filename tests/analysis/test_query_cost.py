"""``Table.query_cost``: row groups decided by their statistics equal pyarrow's own statistics filtering of the
same file (``ParquetFileFragment.split_by_row_group``), and ``bytes_read`` equals the kept row groups'
projected column chunks read independently from each footer with ``pyarrow.parquet``.

The tables are written by PyIceberg into a temporary SQL catalog: small row groups, a partition column,
nulls, strings, decimals, dates and timestamps, several snapshots (appends and a delete)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from _support.cost_table import write_cost_table

from icebook.analysis.expr.binding import bind
from icebook.analysis.expr.filter_arrow import to_arrow
from icebook.analysis.expr.nodes import referenced_names
from icebook.io import parquet_footer
from icebook.io.manifest_cache import reset_shared_cache, shared_cache

PREDICATES = (
    "id < 30",
    "id >= 350",
    "id < 20 or id > 380",
    "region = 'eu' and id > 300",
    "qty is null",
    "qty is not null",
    "qty > 90",
    "note is null",
    "note is not null",
    "note = 'n0300'",
    "price = 1.5",
    "price <= 0.2",
    "day > '2024-01-03'",
    "ts < '2024-01-02T00:00:00'",
    "ts >= '2024-01-16T12:00:00'",
)


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return write_cost_table(tmp_path_factory.mktemp("query_cost"))


def _local(path: str) -> str:
    return path.removeprefix("file://")


def _pyarrow_kept(path: str, expr: Any) -> list[int]:
    fragment = next(iter(ds.dataset(_local(path), format="parquet").get_fragments()))
    return [f.row_groups[0].id for f in fragment.split_by_row_group(filter=expr, schema=fragment.physical_schema)]


def _chunk_bytes(path: str, row_group: int, columns: set[str]) -> int:
    group = pq.ParquetFile(_local(path)).metadata.row_group(row_group)
    chunks = (group.column(j) for j in range(group.num_columns))
    return sum(c.total_compressed_size for c in chunks if c.path_in_schema.split(".")[0] in columns)


def _has_nulls(path: str, row_group: int, columns: set[str]) -> bool:
    group = pq.ParquetFile(_local(path)).metadata.row_group(row_group)
    chunks = (group.column(j) for j in range(group.num_columns))
    return any(c.statistics.null_count > 0 for c in chunks if c.path_in_schema in columns)


@pytest.mark.parametrize("predicate", PREDICATES)
def test_row_groups_equal_pyarrow_statistics_filtering(table: Any, predicate: str) -> None:
    """Equal to pyarrow's filtering, except where pyarrow cannot decide: it keeps every row group whose
    filter column holds a null (its guarantee is then "in range or null", which it does not split). There
    the row group is checked on its rows: a skipped one holds no matching row."""
    decided = beyond_pyarrow = 0
    for snapshot in table.snapshots:
        cost = table.query_cost(predicate, at=snapshot.snapshot_id)
        bound = bind(predicate, table.read_schema(snapshot.snapshot_id))
        expr = to_arrow(bound)
        columns = set(referenced_names(bound))
        for path, group in cost.row_groups.groupby("file_path"):
            theirs = set(_pyarrow_kept(path, expr))
            parquet = pq.ParquetFile(_local(path))
            assert sorted(group["row_group"].astype(int)) == list(range(parquet.num_row_groups))
            for row in group.itertuples():
                index = int(row.row_group)
                if not row.kept:
                    assert parquet.read_row_group(index).filter(expr).num_rows == 0, (path, index)
                if row.kept != (index in theirs):
                    assert not row.kept and _has_nulls(path, index, columns), (path, index, row.reason)
                    beyond_pyarrow += 1
                decided += 1
        assert set(cost.row_groups["file_path"]) == {t.file.file_path for t in cost.plan.tasks}
    assert decided
    if predicate == "qty > 90":
        assert beyond_pyarrow  # the tables hold the case: nulls beside values out of range


@pytest.mark.parametrize(("predicate", "columns"), [("id < 30", ["note"]), ("qty is null", None), (None, ["day"])])
def test_bytes_read_are_the_kept_projected_chunks(table: Any, predicate: str | None, columns: list[str] | None) -> None:
    cost = table.query_cost(predicate, columns=columns)
    wanted = set(columns) if columns else {f.name for f in table.read_schema().columns}
    if predicate:
        wanted |= {predicate.split()[0]}  # a reader fetches the filter's column too
    assert set(cost.projected) == wanted
    total = 0
    for row in cost.row_groups.itertuples():
        expected = _chunk_bytes(row.file_path, int(row.row_group), wanted) if row.kept else 0
        assert row.bytes_read == expected
        total += expected
    assert cost.totals["bytes_read"] == total > 0
    everything = table.query_cost()
    assert everything.totals["table_bytes"] == sum(t.file.file_size_in_bytes for t in table.scan().tasks)
    assert everything.totals["row_groups_skipped"] == 0
    assert set(everything.row_groups["reason"]) == {"no filter"}


def test_skipped_row_groups_say_why_and_reasons_are_ranked(table: Any) -> None:
    cost = table.query_cost("qty > 90", at=table.snapshots[0].snapshot_id)  # ids 0-49 in one row group
    skipped = cost.row_groups[~cost.row_groups["kept"]]
    assert len(skipped)
    assert all(r.startswith("qty > 90: row group stats upper bound qty = ") for r in skipped["reason"])
    top = cost.top_reasons()
    assert list(top["predicate"]) == ["qty > 90"]
    assert int(top["row_groups"].iloc[0]) == len(skipped) and int(top["rows"].iloc[0]) == int(skipped["rows"].sum())
    text = cost.summary()
    assert f"{len(skipped)} skipped by their statistics" in text and "upper bound qty" in text


def test_footers_are_cached_on_disk(table: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICEBOOK_HOME", str(tmp_path))
    reset_shared_cache()
    try:
        cold = table.query_cost("id < 30")
        cache = shared_cache(parquet_footer.FOLDER)
        files = cold.plan.task_count
        assert cache.misses == files and cache.hits == 0 and cache.info().entries == files
        warm = table.query_cost("id < 30")
        assert cache.hits == files
        assert warm.row_groups.equals(cold.row_groups)
    finally:
        reset_shared_cache()


def test_cost_command_in_both_contexts(table: Any) -> None:
    from icebook.cli import main
    from icebook.commands import Context, Session, build_parser, execute, parse
    from icebook.display.cost_render import cost_text
    from icebook.display.registry import render_html

    where = "region = 'eu' and id > 300"
    parser = build_parser(Context.NOTEBOOK)
    args = parse(parser, f"cost --at {table.current_snapshot.snapshot_id} --columns id --where {where}")
    assert args.where == where and args.columns == "id"
    session = Session()
    session.put("t", table)
    cost = execute(args, session, Context.NOTEBOOK, parser)
    expected = table.query_cost(where, columns=["id"])
    assert cost.row_groups.equals(expected.row_groups)
    assert "<script" not in render_html(cost) and "row groups" in render_html(cost)
    out = io.StringIO()
    assert main(["cost", _local(table.metadata_location), "--where", where, "--columns", "id"], out=out) == 0
    assert out.getvalue().rstrip("\n") == cost_text(expected)  # the summary and the map, in the terminal's width
