"""``Table.compare_plans`` without Spark's column: on a PyIceberg-written table, the ``pyiceberg`` column is
PyIceberg's own ``plan_files`` (called here directly with PyIceberg's parser), every file a planner skips holds
no matching row (read with pyarrow), every difference has a reason, and a planner that cannot run says why
in one line. Spark's column is held equal to icebook's on the scenario tables in
``tests/engines/test_compare_plans_spark.py``."""

from __future__ import annotations

from typing import Any

import pyarrow.parquet as pq
import pytest
from _support.cost_table import write_cost_table

from icebook.analysis.expr.binding import bind
from icebook.analysis.expr.filter_arrow import to_arrow

PREDICATES = {
    "id < 30": "id < 30",
    "region = 'eu' and id > 300": "region = 'eu' and id > 300",
    "qty is null": "qty is null",
    "note is not null": "note is not null",
    "note = 'n0300'": "note = 'n0300'",
    "price <= 0.2": "price <= 0.20",  # PyIceberg's parser takes a decimal at the column's scale only
    "day > '2024-01-03'": "day > '2024-01-03'",
    "ts < '2024-01-02T00:00:00'": "ts < '2024-01-02T00:00:00'",
    "id in (5, 399)": "id in (5, 399)",
    "region != 'us'": "region != 'us'",
}


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return write_cost_table(tmp_path_factory.mktemp("compare_plans"))


@pytest.mark.spark  # compare_plans asks Spark's planner too
@pytest.mark.parametrize("predicate", sorted(PREDICATES))
def test_pyiceberg_column_is_plan_files_and_skips_are_sound(table: Any, predicate: str) -> None:
    from pyiceberg.table import StaticTable

    for snapshot in table.snapshots:
        at = snapshot.snapshot_id
        result = table.compare_plans(predicate, at=at)
        frame = result.files
        py = StaticTable.from_metadata(table.metadata_location)
        theirs = {t.file.file_path for t in py.scan(row_filter=PREDICATES[predicate], snapshot_id=at).plan_files()}
        assert set(frame.loc[frame["pyiceberg"].fillna(False).astype(bool), "file_path"]) == theirs
        assert set(frame["file_path"]) == {t.file.file_path for t in table.scan(at).tasks}
        assert set(frame.loc[frame["icebook"].astype(bool), "file_path"]) == {
            t.file.file_path for t in table.scan(at, predicate).tasks
        }
        expr = to_arrow(bind(predicate, table.read_schema(at)))
        for row in frame.itertuples():
            if not row.icebook or not row.pyiceberg:
                rows = pq.read_table(row.file_path.removeprefix("file://")).filter(expr)
                assert rows.num_rows == 0, (row.file_path, predicate)
            assert (row.reason != "") == (row.icebook != row.pyiceberg), row
        assert "spark" not in result.unavailable, result.unavailable  # marked spark: Spark must answer
        assert frame["spark"].notna().all()


@pytest.mark.spark  # compare_plans asks Spark's planner too: Spark starts, though PyIceberg's is the one broken
def test_a_planner_that_cannot_run_says_so_in_one_line(table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from icebook.engines import other_planners

    def broken(*_args: Any) -> set[str]:
        raise RuntimeError("no planner here\nsecond line")

    monkeypatch.setattr(other_planners, "pyiceberg_planned", broken)
    result = table.compare_plans("id < 30")
    assert result.unavailable["pyiceberg"] == "RuntimeError: no planner here"
    assert result.files["pyiceberg"].isna().all()
    assert "PyIceberg could not plan: RuntimeError: no planner here" in result.summary()


def test_differences_are_explained_in_words(table: Any) -> None:
    from icebook.analysis.cost.compare_plans import compare_plans

    plan, everything = table.scan(None, "id < 30"), table.scan()
    kept = {t.file.file_path for t in plan.tasks}
    every = {t.file.file_path for t in everything.tasks}
    other = sorted(every - kept)[0]
    result = compare_plans(plan, everything, {"spark": every, "pyiceberg": set()})
    row = result.files.set_index("file_path").loc[other]
    assert row["spark"] and not row["icebook"]
    assert row["reason"].startswith("Spark keeps it; icebook skips ")
    assert "id < 30" in row["reason"]
    for path in kept:
        assert "PyIceberg skips it; icebook keeps it" in result.files.set_index("file_path").loc[path, "reason"]
