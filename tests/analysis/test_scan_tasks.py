"""A plan's two forms of its tasks agree: ``plan.tasks`` (objects built as they are read) and
``plan.to_arrow()`` (every task as columns), row by row, at every snapshot of every scenario table, the
reference implementation's attachment of deletes included."""

from __future__ import annotations

import copy
import gc
import pickle
from dataclasses import FrozenInstanceError, fields, replace
from pathlib import Path

import numpy as np
import pytest

import icebook
from icebook.analysis.scan import tasks as tasks_module
from icebook.analysis.scan.lazy_items import TaskRow
from icebook.analysis.scan.plan_items import ScanFile, ScanTask
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


@pytest.mark.parametrize("name", ["equality_deletes", "dv_v3", "events"])
def test_the_task_table_built_in_chunks_equals_the_tasks(
    scenario_locations: dict[str, Path], name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its text columns built a few tasks at a time (as millions of paths must be: one array of them passes
    Arrow's 2 GiB of string offsets), the task table is row for row the same, with deletes attached to the
    tasks on either side of a chunk's edge."""
    monkeypatch.setattr(tasks_module, "ROWS_PER_CHUNK", 2)
    t = icebook.open(scenario_locations[name])
    chunked = 0
    for snapshot in t.snapshots:
        plan = plan_scan(t, snapshot, equality_stats=True)
        for tasks, table in (
            (plan.tasks, plan.to_arrow()),
            (plan.reference_tasks, plan.to_arrow(like_reference=True)),
        ):
            assert table.column("delete_files").num_chunks == table.column("partition").num_chunks
            chunked += table.column("delete_files").num_chunks > 1 and any(task.deletes for task in tasks)
            assert table.to_pylist() == [_row(task) for task in tasks], (snapshot.snapshot_id, name)
    assert chunked, "some plan has deletes and more than one chunk"


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


def test_tasks_and_files_read_from_columns_are_their_dataclasses(scenario_locations: dict[str, Path]) -> None:
    """A task (and its files) read from the plan's columns is a ``ScanTask`` (``ScanFile``) in every way a
    caller sees: the same fields and values as the plain dataclass, equal to it either way round, the same
    hash and repr, frozen, and copied, pickled or replaced as the plain dataclass."""
    t = icebook.open(scenario_locations["equality_deletes"])
    plan = plan_scan(t, t.snapshots[-1], equality_stats=True)
    with_deletes = [task for task in plan.reference_tasks if task.candidates]
    assert with_deletes, "the scenario's last snapshot has data files with delete files to consider"
    for task in [*with_deletes, plan.tasks[0]]:
        plain = task.materialized()  # type: ignore[attr-defined]
        assert type(plain) is ScanTask and type(plain.file) is ScanFile and isinstance(task, ScanTask)
        assert all(type(d) is ScanFile for d in (*plain.deletes, *plain.candidates))
        for f in fields(ScanTask):
            assert getattr(plain, f.name) == getattr(task, f.name), f.name
        for got, want in ((task, plain), (task.file, plain.file)):
            assert got == want and want == got and hash(got) == hash(want) and repr(got) == repr(want)
            assert got != replace(want, **{fields(want)[1].name: "x"}) and {got: 1}[want] == 1
        file = task.file
        plain_file = ScanFile(**{f.name: getattr(file, f.name) for f in fields(ScanFile)})
        assert plain_file == file and file == plain_file
        assert [m.reason for m in task.matches] == [m.reason for m in plain.matches]
        with pytest.raises(FrozenInstanceError):
            file.file_path = "elsewhere"  # type: ignore[misc]
        assert type(copy.copy(file)) is ScanFile and copy.copy(file) == file
        assert type(pickle.loads(pickle.dumps(file))) is ScanFile and pickle.loads(pickle.dumps(file)) == file
        moved = replace(file, file_path="elsewhere")
        assert type(moved) is ScanFile and moved.file_path == "elsewhere" and moved.record_count == file.record_count
    assert plan.tasks[0] != plan.tasks[1] and plan.tasks[0].file != plan.tasks[1].file


def test_a_plan_read_task_by_task_holds_one_chunk(scenario_locations: dict[str, Path]) -> None:
    """Iterating ``plan.tasks`` keeps no task the caller dropped: at most the chunk being read is alive."""
    t = icebook.open(scenario_locations["events"])
    plan = t.scan()
    tasks = plan.tasks
    if len(tasks) <= CHUNK:  # the scenario is small: read its tasks in smaller chunks
        tasks = ScanTasks(plan, np.arange(plan.task_count), chunk=2)
    gc.collect()
    alive = []
    for i, task in enumerate(tasks):
        if i % tasks.chunk == 0:
            del task
            gc.collect()
            alive.append(sum(isinstance(o, TaskRow) for o in gc.get_objects()))
    assert len(alive) > 2 and max(alive) <= tasks.chunk, alive
