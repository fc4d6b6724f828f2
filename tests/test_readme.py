"""The README's examples run as written in a fresh kernel, on a fresh icebook home (so the first one
builds the demo warehouse, as it does for a new user); the examples that need one's own catalog and
object store (the section that says so) are not run."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from icebook.book import errors_of, execute

README = Path(__file__).resolve().parents[1] / "README.md"
NEEDS_YOUR_OWN_LAKE = "Your own lake"
_BLOCK = re.compile(r"^```([\w-]*)\n(.*?)^```", re.S | re.M)


def readme_cells() -> list[str]:
    """The code cells of the README's runnable examples, in order: each Python block is one cell; a block
    of magics is a cell per paragraph (a ``%%ice`` cell holds its query)."""
    cells: list[str] = []
    for section in re.split(r"^## ", README.read_text(), flags=re.M)[1:]:
        if section.startswith(NEEDS_YOUR_OWN_LAKE):
            continue
        for info, body in _BLOCK.findall(section):
            if info == "python":
                cells.append(body.strip())
            elif info == "" and body.lstrip().startswith("%"):
                cells += [p.strip() for p in body.split("\n\n") if p.strip()]
    return cells


def test_the_readme_has_examples_of_each_kind() -> None:
    cells = readme_cells()
    assert any(c.startswith("%%ice") for c in cells) and any("%ice open" in c for c in cells)
    assert any("t.sql(" in c for c in cells) and any("health()" in c for c in cells)


@pytest.mark.spark
def test_readme_examples_run_in_a_fresh_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICEBOOK_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ICEBOOK_DEMO_WAREHOUSE", raising=False)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in readme_cells()])
    path = tmp_path / "readme.ipynb"
    nbformat.write(nb, path)
    executed = execute(path, timeout=1200, workdir=tmp_path)
    errors = errors_of(executed)
    assert not errors, "\n".join(errors)
    outputs = [o for c in executed.cells for o in c.get("outputs", [])]
    text = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    assert "events = the table at" in text  # %ice open --as said it bound the name
