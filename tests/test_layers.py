"""Imports follow the layers of docs/ARCHITECTURE.md ("Layers"):
magics, cli -> commands -> table, scenarios -> display | engines -> analysis -> io -> spec; a module may
import any lower layer, not only the next one (commands also use analysis, display, engines, io and
scenarios directly); errors and text from anywhere.
Inside analysis, sub-packages are layered too, and static HTML never imports a widget library.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "icebook"

# Lower number = lower layer. A module may import icebook modules of a lower layer, or its own package.
LAYERS: dict[str, int] = {
    "errors": 0,
    "text": 0,
    "widgets": 0,  # front-end assets only
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
    "history": 5,
    "maintenance": 6,
    "cost": 7,
}
WIDGET_LIBRARIES = {"ipywidgets", "anywidget", "traitlets"}
SPEC_FORBIDDEN = {"pyarrow", "fastavro", "pyspark", "IPython", "pandas", "numpy", "polars", "ipywidgets", "anywidget"}


def _unit(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0].removesuffix(".py")


def _imports(path: Path) -> list[tuple[str, int]]:
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
                        if (PACKAGE / alias.name).is_dir() or (PACKAGE / f"{alias.name}.py").is_file()
                    ]
    return found


def test_every_unit_has_a_layer() -> None:
    units = {_unit(p) for p in PACKAGE.rglob("*.py")}
    assert units <= set(LAYERS), f"modules without a layer: {sorted(units - set(LAYERS))}"


def test_imports_flow_down() -> None:
    problems: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        unit = _unit(path)
        for name, line in _imports(path):
            root = name.split(".")[0]
            if unit == "spec" and root in SPEC_FORBIDDEN:
                problems.append(f"{path.relative_to(PACKAGE)}:{line}: spec/ is stdlib-only but imports {name}")
            if root != "icebook" or name == "icebook":
                continue
            target = name.split(".")[1]
            if target == unit:
                continue
            if (unit, target) in NEVER_EACH_OTHER:
                problems.append(f"{path.relative_to(PACKAGE)}:{line}: {unit} must not import {target}")
            elif LAYERS[target] >= LAYERS[unit]:
                problems.append(f"{path.relative_to(PACKAGE)}:{line}: {unit} (layer {LAYERS[unit]}) imports {name}")
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
    return path.stem.endswith("_view") or path.stem in {"tree", "workbench", "query_panel", "formatters", "assets"}


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
    # The check itself must work: an io module importing table is flagged.
    bad = tmp_path / "bad.py"
    bad.write_text("from icebook.table import Table\n")
    names = [n for n, _ in _imports(bad)]
    assert names == ["icebook.table"]
    assert LAYERS["table"] > LAYERS["io"]


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
