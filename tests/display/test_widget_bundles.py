"""The widgets' ES modules: each live widget loads its esbuild bundle (the one ``dom.js`` imported, not copied),
the bundles in the package are what esbuild makes of today's sources, and anywidget's live reload
(``ANYWIDGET_HMR=1``) sends a rebuilt bundle to a live widget."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import time
from pathlib import Path

import anywidget
import pytest

from icebook.display.cost_view import CostWidget
from icebook.display.lineage_view import LineageWidget
from icebook.display.timelapse_view import TimelapseWidget
from icebook.display.tree import TreeWidget
from icebook.errors import EnvironmentProblem
from icebook.widgets import BUNDLES, STYLESHEET, bundle

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "widgets"
WIDGET_CLASSES = {
    "tree.js": TreeWidget,
    "lineage.js": LineageWidget,
    "cost.js": CostWidget,
    "timelapse.js": TimelapseWidget,
}


def test_every_module_has_its_widget_and_its_bundle() -> None:
    modules = {p.name for p in SOURCES.glob("*.js")} - {"dom.js"}
    assert modules == set(WIDGET_CLASSES)
    assert {p.name for p in BUNDLES.glob("*.js")} == modules


@pytest.mark.parametrize("name", sorted(WIDGET_CLASSES))
def test_each_widget_loads_its_bundle(name: str) -> None:
    widget_class = WIDGET_CLASSES[name]
    text = bundle(name).read_text()
    assert str(widget_class._esm) == text  # anywidget read the bundle's path (its public file API)
    assert str(widget_class._css) == STYLESHEET.read_text()
    # The source imports the one helper module; the bundle holds it once and imports nothing.
    source = (SOURCES / name).read_text()
    assert re.search(r'^import \{[^}]*\} from "\./dom\.js";$', source, re.M) and "function h(" not in source
    assert not re.search(r"^\s*import\b", text, re.M) and "dom.js" not in text.replace("// widgets/dom.js", "")
    assert text.count("function h(") == 1 and text.count("export default") + text.count("as default") == 1


def test_bundles_are_what_esbuild_makes_of_the_sources(tmp_path: Path) -> None:
    """The package's bundles are fresh: esbuild, run now with package.json's own command into another folder,
    writes the same bytes (a source edited without `make widgets` fails here)."""
    script = json.loads((ROOT / "package.json").read_text())["scripts"]["build:widgets"]
    esbuild = ROOT / "node_modules" / ".bin" / "esbuild"
    assert esbuild.is_file(), "esbuild is not installed: run `make widgets` (npm install)"
    command = [str(esbuild), *shlex.split(script)[1:], f"--outdir={tmp_path}"]  # the last --outdir wins
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True, timeout=120)
    for built in sorted(BUNDLES.glob("*.js")):
        assert (tmp_path / built.name).read_bytes() == built.read_bytes(), f"{built.name} is stale: run `make widgets`"


def test_a_missing_bundle_says_how_to_build_it() -> None:
    with pytest.raises(EnvironmentProblem, match=r"no_such\.js is not built.*make widgets"):
        bundle("no_such.js")


def test_a_rebuilt_bundle_reaches_a_live_widget(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """What `npm run watch:widgets` with ANYWIDGET_HMR=1 gives a developer: anywidget watches a widget's bundle
    path (outside site-packages) and sends each new version to live widgets; no private API is involved."""
    import watchfiles  # noqa: F401  (anywidget's watcher; a dev dependency)

    monkeypatch.setenv("ANYWIDGET_HMR", "1")
    live = tmp_path / "tree.js"
    shutil.copyfile(bundle("tree.js"), live)

    class Reloading(anywidget.AnyWidget):  # type: ignore[misc]
        _esm = live

    widget = Reloading()
    assert widget._esm == bundle("tree.js").read_text()
    time.sleep(0.5)  # the watcher thread starts watching
    rebuilt = bundle("tree.js").read_text() + "\n// rebuilt\n"
    live.write_text(rebuilt)
    deadline = time.monotonic() + 30
    while widget._esm != rebuilt and time.monotonic() < deadline:
        time.sleep(0.1)
    Reloading._esm.stop_thread()
    assert widget._esm == rebuilt
