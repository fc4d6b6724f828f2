"""The tour notebook runs in a real JupyterLab in Chromium, with no error and nothing fetched from outside."""

from __future__ import annotations

import shutil
from pathlib import Path

from _lab import LabPage, LabServer, cell_outputs, open_notebook, run_all_cells

TOUR = Path(__file__).resolve().parents[2] / "notebooks" / "00_tour.ipynb"


def test_tour_runs_in_jupyterlab(lab_server: LabServer, lab_page: LabPage) -> None:
    shutil.copy(TOUR, Path(lab_server.root_dir) / TOUR.name)
    page = lab_page.page
    open_notebook(page, lab_server, TOUR.name)
    run_all_cells(page)
    outputs = "\n".join(cell_outputs(page))
    assert "Traceback" not in outputs and "Error" not in outputs.split("\n")[0]
    assert "Lineage: 9 snapshots" in outputs and "SnapshotDiff" not in outputs.split("\n")[0]
    assert "Iceberg table" in outputs  # the Table's HTML view
    assert page.locator(".jp-OutputArea-output table").count() >= 5  # the DataFrames rendered as tables
    lab_page.assert_clean()
