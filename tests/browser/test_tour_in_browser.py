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
    # Analysis results without a widget show their static HTML; the others show live in the kernel.
    assert page.locator(".jp-OutputArea-output .ib-diff").count() == 1  # d = %ice diff ...
    assert page.locator(".jp-OutputArea-output .ib-lineage-widget").count() == 1  # graph = %ice lineage
    assert page.locator(".jp-OutputArea-output .ib-evolution-view").count() == 1  # ev = %ice evolution
    lab_page.assert_clean()
