"""Smoke test of the browser harness: a notebook with text, ipywidgets, an anywidget and altair charts renders
in real JupyterLab without touching any host but 127.0.0.1.

It also pins down how icebook can show altair charts offline. altair 6 emits Vega-Lite v6, and JupyterLab 4.6's
built-in renderer knows only the Vega 5 / Vega-Lite 3-5 mimetypes (altair's "mimetype" renderer emits
``application/vnd.vegalite.v6.json``, which JupyterLab shows as plain text; its default "html" renderer
loads vega from cdn.jsdelivr.net). Two recipes work offline and are both exercised here:

1. ``alt.JupyterChart.enable_offline()`` then ``alt.JupyterChart(chart)``: an anywidget whose ES module is a
   vl-convert bundle of vega-embed 7 / vega 6 / vega-lite 6.4. Interactive, selections sync back to Python.
2. ``vl_convert.vegalite_to_vega(chart.to_dict(), vl_version="5.20")`` displayed raw as
   ``application/vnd.vega.v5+json``: JupyterLab's own vega5 renderer draws it, no widget, and the output is
   saved in the .ipynb so it renders again without a kernel.
"""

from __future__ import annotations

import nbformat
from _lab import LabPage, LabServer, cell_outputs, open_notebook, run_all_cells
from playwright.sync_api import Locator, expect

MARKER = "icebook-browser-smoke-7f3a"
ANYWIDGET_TEXT = "anywidget rendered: 42"

CELLS = [
    f"print({MARKER!r})",
    "import ipywidgets\nipywidgets.IntSlider(value=7, min=0, max=10, description='smoke')",
    f'''import anywidget
import traitlets


class Hello(anywidget.AnyWidget):
    _esm = """
    function render({{ model, el }}) {{
      const div = document.createElement("div");
      div.className = "smoke-anywidget";
      div.textContent = model.get("text");
      el.appendChild(div);
    }}
    export default {{ render }};
    """
    text = traitlets.Unicode({ANYWIDGET_TEXT!r}).tag(sync=True)


Hello()''',
    """import altair as alt
import pandas as pd

chart = alt.Chart(pd.DataFrame({"k": ["a", "b", "c"], "v": [1, 3, 2]})).mark_bar().encode(x="k", y="v")
# Recipe 1: the bundle is built in-kernel by vl-convert (~5 s, once per kernel process).
alt.JupyterChart.enable_offline()
alt.JupyterChart(chart)""",
    """import vl_convert as vlc
from IPython.display import display

# Recipe 2: compile to Vega 5 for JupyterLab's built-in renderer.
vega = vlc.vegalite_to_vega(chart.to_dict(), vl_version="5.20")
display({"application/vnd.vega.v5+json": vega, "text/plain": "<bar chart>"}, raw=True)""",
]


def write_notebook(server: LabServer, name: str, sources: list[str]) -> str:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    # The venv's kernelspec; naming it avoids the "Select Kernel" dialog.
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    nbformat.write(nb, server.root_dir / name)
    return name


def painted_pixels(canvas: Locator) -> int:
    """Non-transparent pixels of a canvas: proof that vega drew something, not just made an empty canvas."""
    return int(
        canvas.evaluate(
            """c => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                      let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n; }"""
        )
    )


def assert_chart_drawn(cell: Locator) -> None:
    """A vega-embed in ``cell`` whose ``.marks`` (vega's svg or canvas root) shows three bars' worth of ink.

    ``.marks`` rather than any svg: the vega-embed actions button is itself an svg icon.
    """
    marks = cell.locator(".vega-embed .marks").first
    expect(marks).to_be_visible(timeout=30_000)
    if marks.evaluate("m => m.tagName.toLowerCase()") == "svg":
        expect(marks.locator(".mark-rect path")).to_have_count(3)
    else:
        assert painted_pixels(marks) > 1_000


def test_lab_renders_widgets_and_charts_offline(lab_page: LabPage, lab_server: LabServer) -> None:
    page = lab_page.page
    dialogs = open_notebook(page, lab_server, write_notebook(lab_server, "smoke.ipynb", CELLS))
    assert dialogs == [], f"unexpected dialogs while opening the notebook: {dialogs}"

    run_all_cells(page)

    cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell")
    expect(cells).to_have_count(len(CELLS))
    outputs = cell_outputs(page)
    assert not any("Traceback" in out or "Error" in out for out in outputs), outputs

    expect(cells.nth(0).locator(".jp-OutputArea-output")).to_contain_text(MARKER)

    slider = cells.nth(1).locator(".widget-slider")
    expect(slider).to_be_visible()
    expect(slider.locator(".widget-readout")).to_have_text("7")

    expect(cells.nth(2).locator(".smoke-anywidget")).to_have_text(ANYWIDGET_TEXT)

    assert_chart_drawn(cells.nth(3))  # alt.JupyterChart, offline bundle
    assert_chart_drawn(cells.nth(4))  # application/vnd.vega.v5+json, JupyterLab's renderer

    # Nothing ignored: this notebook must render with zero console errors and no host but 127.0.0.1.
    lab_page.assert_clean()
