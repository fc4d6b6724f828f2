"""Imports follow the layers of docs/ARCHITECTURE.md ("Layers"):
magics, cli -> commands -> table, scenarios -> display | engines -> analysis -> io -> spec; a module may
import any lower layer, not only the next one (commands also use analysis, display, engines, io and
scenarios directly); errors, config and text from anywhere.
Inside analysis, sub-packages are layered too, and static HTML never imports a widget library.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "icebook"

# Lower number = lower layer. A module may import icebook modules of a lower layer, or its own package.
LAYERS: dict[str, float] = {
    "errors": 0,
    "config": 0.5,  # the ICEBOOK_* environment variables; raises errors' ConfigError
    "text": 0,
    "widgets": 0.5,  # front-end assets and their paths; raises errors' EnvironmentProblem when one is not built
    "spec": 1,
    "io": 2,
    "analysis": 3,
    "engines": 4,
    "display": 4,
    "table": 5,
    "scenarios": 5,
    "book": 5,  # runs notebooks in their own kernels; `icebook book` (commands) calls it
    "spark": 6,
    "commands": 6,
    "magics": 7,
    "cli": 7,
    "server": 7,  # the Jupyter server extension of the lake browser
    "__init__": 8,
}
NEVER_EACH_OTHER = {("display", "engines"), ("engines", "display")}
# Inside icebook/analysis, lowest first; the root modules (shared by all) sit below every sub-package.
ANALYSIS_LAYERS: dict[str, int] = {
    "": 0,
    "expr": 1,
    "store": 2,
    "scan": 3,
    "tables": 4,
    "v3": 4,  # the v3 inspector: beside tables, below history and maintenance (which show its findings)
    "history": 5,
    "maintenance": 6,
    "cost": 7,
}
WIDGET_LIBRARIES = {"ipywidgets", "anywidget", "traitlets"}
SPEC_FORBIDDEN = {"pyarrow", "fastavro", "pyspark", "IPython", "pandas", "numpy", "polars", "ipywidgets", "anywidget"}


def _unit(path: Path, package: Path = PACKAGE) -> str:
    rel = path.relative_to(package)
    return rel.parts[0].removesuffix(".py")


def _imports(path: Path, package: Path = PACKAGE) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                raise AssertionError(f"{path}:{node.lineno}: use absolute imports (icebook.x), not relative ones")
            if node.module:
                found.append((node.module, node.lineno))
                if node.module == "icebook":
                    found += [
                        (f"icebook.{alias.name}", node.lineno)
                        for alias in node.names
                        if (package / alias.name).is_dir() or (package / f"{alias.name}.py").is_file()
                    ]
    return found


def test_every_unit_has_a_layer() -> None:
    units = {_unit(p) for p in PACKAGE.rglob("*.py")}
    assert units <= set(LAYERS), f"modules without a layer: {sorted(units - set(LAYERS))}"


def layer_problems(package: Path) -> list[str]:
    """Every import in ``package`` (a tree laid out like icebook's) that breaks the layers, one line each."""
    problems: list[str] = []
    for path in sorted(package.rglob("*.py")):
        unit = _unit(path, package)
        where = path.relative_to(package)
        for name, line in _imports(path, package):
            root = name.split(".")[0]
            if unit == "spec" and root in SPEC_FORBIDDEN:
                problems.append(f"{where}:{line}: spec/ is stdlib-only but imports {name}")
            if root != "icebook" or name == "icebook":
                continue
            target = name.split(".")[1]
            if target == unit:
                continue
            if (unit, target) in NEVER_EACH_OTHER:
                problems.append(f"{where}:{line}: {unit} must not import {target}")
            elif LAYERS[target] >= LAYERS[unit]:
                problems.append(f"{where}:{line}: {unit} (layer {LAYERS[unit]}) imports {name}")
    return problems


def test_imports_flow_down() -> None:
    problems = layer_problems(PACKAGE)
    assert not problems, "\n".join(problems)


def _analysis_part(parts: tuple[str, ...]) -> str:
    """The sub-package of analysis a module belongs to ("" for the root's own modules)."""
    return parts[1] if len(parts) > 2 else ""


def test_analysis_subpackages_flow_down() -> None:
    problems: list[str] = []
    analysis = PACKAGE / "analysis"
    subpackages = {p.name for p in analysis.iterdir() if p.is_dir() and not p.name.startswith("_")}
    assert subpackages == set(ANALYSIS_LAYERS) - {""}, f"analysis sub-packages without a layer: {subpackages}"
    for path in sorted(analysis.rglob("*.py")):
        part = _analysis_part(path.relative_to(PACKAGE).parts)
        for name, line in _imports(path):
            parts = tuple(name.split("."))
            if parts[:2] != ("icebook", "analysis") or len(parts) < 3:
                continue
            target = parts[2] if parts[2] in ANALYSIS_LAYERS else ""
            if target != part and ANALYSIS_LAYERS[target] >= ANALYSIS_LAYERS[part]:
                where = part or "the analysis root"
                problems.append(f"{path.relative_to(PACKAGE)}:{line}: {where} imports {name}")
    assert not problems, "\n".join(problems)


def _is_widget_module(path: Path) -> bool:
    return path.stem.endswith("_view") or path.stem in {"tree", "workbench", "query_panel", "formatters"}


def test_static_html_never_imports_widget_libraries() -> None:
    # Static HTML is what a saved notebook, the book and the command line show: no widget library may
    # load for it (the registry names live widgets as "module:callable" strings instead).
    problems: list[str] = []
    for path in sorted((PACKAGE / "display").rglob("*.py")):
        if _is_widget_module(path):
            continue
        for name, line in _imports(path):
            if name.split(".")[0] in WIDGET_LIBRARIES or (
                name.startswith("icebook.display.") and _is_widget_module(Path(name.split(".")[-1] + ".py"))
            ):
                problems.append(f"{path.relative_to(PACKAGE)}:{line}: static HTML imports {name}")
    assert not problems, "\n".join(problems)


def test_spec_is_stdlib_only() -> None:
    stdlib = set(sys.stdlib_module_names)
    for path in (PACKAGE / "spec").rglob("*.py"):
        for name, line in _imports(path):
            root = name.split(".")[0]
            assert root in stdlib or root in {"icebook", "__future__"}, f"{path}:{line}: spec/ imports {name}"


def test_checker_catches_an_upward_import(tmp_path: Path) -> None:
    # The check itself must work: run on a package laid out like icebook's, it flags an io module importing
    # table (by module and through the package root), a display module importing engines, and spec importing
    # pyarrow, and nothing that imports downwards.
    package = tmp_path / "icebook"
    files = {
        "io/bad.py": "from icebook.table import Table\n",
        "io/also_bad.py": "import os\nfrom icebook import table\n",
        "display/crossed.py": "import icebook.engines.arrow\n",
        "spec/heavy.py": "import pyarrow\n",
        "table/__init__.py": "from icebook.io.fileio import ArrowFileIO\nfrom icebook.errors import NotFound\n",
        "engines/arrow.py": "from icebook.analysis.scan import planner\n",
    }
    for name, text in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    assert layer_problems(package) == [
        "display/crossed.py:1: display must not import engines",
        "io/also_bad.py:2: io (layer 2) imports icebook.table",
        "io/bad.py:1: io (layer 2) imports icebook.table",
        "spec/heavy.py:1: spec/ is stdlib-only but imports pyarrow",
    ]


def test_every_class_name_is_defined_once() -> None:
    """One name per class: two classes of one name in the package are either one thing (reuse it) or
    two (name each for what it is)."""
    where: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(str(path.relative_to(PACKAGE)))
    twice = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert not twice, f"class names defined more than once: {twice}"


# Modules that still share a file name: the scenarios are named for the tables they build and their
# sources are hashed into the cached warehouse's name (a rename rebuilds it); ``spark.py`` is the public
# face of ``engines/spark.py``; the scan plan's ``model.py``.
SHARED_FILE_NAMES = {"build.py", "model.py", "sort_order.py", "spark.py", "transforms.py"}


def test_module_file_names_say_what_they_hold() -> None:
    """No two modules share a file name (``__init__.py`` aside), so a name found in a traceback, an import
    or a search is one module; the few that still do are listed, and the list only shrinks."""
    where: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name != "__init__.py":
            where.setdefault(path.name, []).append(str(path.relative_to(PACKAGE)))
    shared = {name for name, paths in where.items() if len(paths) > 1}
    assert shared <= SHARED_FILE_NAMES, (
        f"modules sharing a file name: { {n: where[n] for n in shared - SHARED_FILE_NAMES} }"
    )
    assert shared >= SHARED_FILE_NAMES, f"no longer shared, drop from the list: {SHARED_FILE_NAMES - shared}"
