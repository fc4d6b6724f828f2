"""Helpers for the widget browser tests: write a notebook of cells, run it, find icebook views."""

from __future__ import annotations

import nbformat
from _lab import LabPage, LabServer, cell_outputs, open_notebook, run_all_cells
from playwright.sync_api import Dialog, Locator, Page

CELLS_PRELUDE = """import icebook
from IPython.display import HTML, display
from icebook import display as D
from icebook.scenarios.warehouse import demo_table"""

# Counts what markup injected into a page would have left behind: images, scripts, inline handlers.
INJECTED_JS = """() => ({
  imgs: Array.from(document.querySelectorAll('img')).filter(i => i.getAttribute('src') === 'x').length,
  scripts: Array.from(document.querySelectorAll('script')).filter(s => (s.textContent || '').includes('alert(2)')).length,
  handlers: Array.from(document.querySelectorAll('[onerror]')).length,
})"""

SPARK_TIMEOUT_MS = 180_000  # the first Spark query in a kernel starts a JVM (~10-30 s on 2 busy cores)


def run_notebook(lab: LabPage, server: LabServer, name: str, cells: list[str], timeout: float = 180_000) -> list[str]:
    """Write ``cells`` as a notebook, open it in JupyterLab, run all cells, return each cell's output text.

    Fails on a traceback in any output: a widget that did not build is a failed test, not a blank cell.
    """
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, server.root_dir / name)
    dialogs = open_notebook(lab.page, server, name)
    assert dialogs == [], f"unexpected dialogs while opening {name}: {dialogs}"
    run_all_cells(lab.page, timeout=timeout)
    outputs = cell_outputs(lab.page)
    assert not any("Traceback" in out for out in outputs), "\n\n".join(outputs)
    return outputs


def cell(page: Page, index: int) -> Locator:
    return page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").nth(index)


def expand(row: Locator) -> None:
    """Click the caret of a tree row (expanding loads its children from the kernel)."""
    row.locator(".ib-caret").click()


def record_dialogs(page: Page) -> list[str]:
    """The messages of the browser's own dialogs (``alert`` and friends) the page opens from now on, each
    dismissed: a payload that ran shows up here."""
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    return dialogs
