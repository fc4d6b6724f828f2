"""A plan's two forms of its tasks agree: ``plan.tasks`` (objects built as they are read) and
``plan.to_arrow()`` (every task as columns), row by row, at every snapshot of every scenario table, the
reference implementation's attachment of deletes included."""

from __future__ import annotations

from pathlib import Path

import pytest

import icebook
from icebook.analysis.scan.plan_items import ScanTask
from icebook.analysis.scan.planner import plan_scan
from icebook.analysis.scan.tasks import CHUNK, TASK_COLUMNS, ScanTasks
from icebook.scenarios import SCENARIOS


def _row(task: ScanTask) -> dict[str, object]:
    f = task.file
    return {
        "file_path": f.file_path,
        "file_format": f.file_format.value,
        "spec_id": f.spec_id,
        "partition": f.partition_text,
        "record_count": f.record_count,
        "file_size_in_bytes": f.file_size_in_bytes,
        "sequence_number": f.sequence_number,
        "file_sequence_number": f.file_sequence_number,
        "snapshot_id": f.snapshot_id,
        "manifest_path": f.manifest_path,
        "delete_files": [d.file_path for d in task.deletes],
    }


pytestmark = pytest.mark.spark


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_the_task_table_equals_the_tasks(scenario_locations: dict[str, Path], name: str) -> None:
    t = icebook.open(scenario_locations[name])
    for snapshot in t.snapshots:
        plan = plan_scan(t, snapshot, equality_stats=True)
        for tasks, table in (
            (plan.tasks, plan.to_arrow()),
            (plan.reference_tasks, plan.to_arrow(like_reference=True)),
        ):
            assert tuple(table.column_names) == TASK_COLUMNS
            assert table.num_rows == len(tasks) == plan.task_count
            assert table.to_pylist() == [_row(task) for task in tasks], (snapshot.snapshot_id, name)


def test_tasks_are_a_sequence_built_as_read(scenario_locations: dict[str, Path]) -> None:
    plan = icebook.open(scenario_locations["events"]).scan()
    tasks = plan.tasks
    assert isinstance(tasks, ScanTasks) and len(tasks) == plan.task_count > 2
    every = list(tasks)
    assert tasks[0] == every[0] and tasks[-1] == every[-1] and list(tasks[1:3]) == every[1:3]
    assert tasks == tuple(every) and plan.tasks == tasks
    with pytest.raises(IndexError):
        tasks[len(every)]
    assert "_views" not in dir(tasks) and "tasks" not in plan._views  # nothing of them is kept by the plan
    assert CHUNK > 0
