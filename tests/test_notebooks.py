"""Every notebook in notebooks/ runs top to bottom (its own asserts included) on the scenario tables."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


def test_there_is_a_tour() -> None:
    assert any(p.name == "00_tour.ipynb" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path: Path, warehouse: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The kernel inherits this environment: point the demo tables at the already-built test warehouse.
    monkeypatch.setenv("ICEBOOK_DEMO_WAREHOUSE", str(warehouse))
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors
    assert os.environ["ICEBOOK_DEMO_WAREHOUSE"] == str(warehouse)
