"""Imports follow the layers of docs/ARCHITECTURE.md ("Layers"): each module imports only what its unit's
"may import" cell names (read from that table, so the map and this test are one rule), plus errors, config,
text and version from anywhere; function-level (lazy) imports and ``from icebook import x`` count alike.
No import cycle between modules, lazy imports included.
Inside analysis, sub-packages are layered too, and static HTML never imports a widget library.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "icebook"
MAP = ROOT / "docs" / "ARCHITECTURE.md"

# Importable from anywhere (docs/ARCHITECTURE.md: the line under the layer diagram); their own cells say what
# they import themselves.
ANYWHERE = frozenset({"errors", "config", "text", "version"})
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


def read_map(text: str) -> dict[str, frozenset[str]]:
    """Each unit's "may import" cell of the table under "## Layers": the units it names (``"nothing"``:
    none), and with "and below" everything those units may import in turn."""
    layers = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    cells: dict[str, tuple[frozenset[str], bool]] = {}
    for line in layers.splitlines():
        row = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(row) != 3 or not row[0].startswith("`"):
            continue
        units = [
            m.group(2).removesuffix(".py")
            for m in re.finditer(r"`(icebook/)?([\w.]+)/?`", row[0])
            if m.group(1) or m.group(2) == "widgets"
        ]
        names = frozenset(m.group(1) for m in re.finditer(r"`([a-z_]+)`", row[2]))
        for unit in units:
            cells[unit] = (names, "and below" in row[2])

    def allowed(unit: str, seen: frozenset[str] = frozenset()) -> frozenset[str]:
        names, below = cells[unit]
        named = names & set(cells)
        out = set(named) | (set() if unit in ANYWHERE else set(ANYWHERE))
        if below:
            for name in named - seen:
                out |= allowed(name, seen | {unit})
        return frozenset(out)

    return {unit: allowed(unit) for unit in cells}


def _main_guard(node: ast.AST) -> bool:
    # ``if __name__ == "__main__":`` runs only when the module is a script, never on import.
    return (
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Compare)
        and isinstance(node.test.left, ast.Name)
        and node.test.left.id == "__name__"
    )


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(path: Path, package: Path = PACKAGE, *, runtime: bool = False) -> list[tuple[str, int]]:
    """Every module ``path`` imports, at any depth (a function's lazy import too, and ``import_module`` of a
    name written out), by the name imported:
    ``from a.b import c`` is ``a.b.c`` when that is a module of the package, else ``a.b``. ``runtime``
    leaves out what never runs on import or call: ``TYPE_CHECKING`` blocks and a script's main guard."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[str, int]] = []

    def is_module(name: str) -> bool:
        rel = Path(*name.split(".")[1:])
        return name.startswith("icebook.") and (
            (package / rel).is_dir() or (package / rel).with_suffix(".py").is_file() or name == "icebook.widgets"
        )

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if runtime and (_type_checking(child) or _main_guard(child)):
                continue
            if isinstance(child, ast.Import):
                found.extend((alias.name, child.lineno) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    raise AssertionError(f"{path}:{child.lineno}: use absolute imports (icebook.x), not relative ones")
                if child.module:
                    for alias in child.names:
                        sub = f"{child.module}.{alias.name}"
                        found.append((sub if is_module(sub) else child.module, child.lineno))
            elif (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Attribute)
                and child.func.attr == "import_module"
                and child.args
                and isinstance(child.args[0], ast.Constant)
                and isinstance(child.args[0].value, str)
            ):  # importlib.import_module("icebook.x") with the name written out
                found.append((child.args[0].value, child.lineno))
            visit(child)

    visit(tree)
    return found


def test_every_unit_has_a_row_in_the_map() -> None:
    units = {_unit(p) for p in PACKAGE.rglob("*.py")}
    mapped = set(read_map(MAP.read_text()))
    assert units <= mapped, f"modules without a row in docs/ARCHITECTURE.md's Layers: {sorted(units - mapped)}"
    assert mapped <= units | {"widgets"}, f"rows naming no module: {sorted(mapped - units)}"


def layer_problems(package: Path, may_import: dict[str, frozenset[str]]) -> list[str]:
    """Every import in ``package`` (a tree laid out like icebook's) that its unit's cell does not allow,
    one line each."""
    problems: list[str] = []
    for path in sorted(package.rglob("*.py")):
        unit = _unit(path, package)
        where = path.relative_to(package)
        for name, line in _imports(path, package):
            parts = name.split(".")
            if unit == "spec" and parts[0] in SPEC_FORBIDDEN:
                problems.append(f"{where}:{line}: spec/ is stdlib-only but imports {name}")
            if parts[0] != "icebook":
                continue
            target = parts[1] if len(parts) > 1 else "__init__"
            if target != unit and target not in may_import[unit]:
                allowed = ", ".join(sorted(may_import[unit])) or "nothing"
                problems.append(f"{where}:{line}: {unit} imports {name} (it may import {allowed})")
    return problems


def test_imports_follow_the_map() -> None:
    problems = layer_problems(PACKAGE, read_map(MAP.read_text()))
    assert not problems, "\n".join(problems)


def _module_name(path: Path, package: Path) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_cycles(package: Path) -> list[frozenset[str]]:
    """The groups of modules that import each other round a cycle (strongly connected components of the
    import graph, lazy imports included), each with more than one module."""
    paths = {_module_name(p, package): p for p in package.rglob("*.py")}
    graph = {
        name: {n for n, _ in _imports(path, package, runtime=True) if n in paths and n != name}
        for name, path in paths.items()
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[frozenset[str]] = []

    def connect(node: str) -> None:  # Tarjan's algorithm
        index[node] = low[node] = len(index)
        stack.append(node)
        for to in sorted(graph[node]):
            if to not in index:
                connect(to)
                low[node] = min(low[node], low[to])
            elif to in stack:
                low[node] = min(low[node], index[to])
        if low[node] == index[node]:
            group = {stack.pop()}
            while node not in group:
                group.add(stack.pop())
            if len(group) > 1:
                cycles.append(frozenset(group))

    for name in sorted(graph):
        if name not in index:
            connect(name)
    return cycles


def test_no_import_cycles() -> None:
    cycles = [sorted(c) for c in import_cycles(PACKAGE)]
    assert not cycles, f"modules importing each other round a cycle (a lazy import hides it until it runs): {cycles}"


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


MAP_SAMPLE = """
## Layers

| package | what it holds | may import |
| --- | --- | --- |
| `icebook/errors.py` | errors | nothing |
| `icebook/spec` | the spec | `errors` |
| `icebook/io` | storage | `spec` |
| `icebook/analysis` | analyses | `io`, `spec` |
| `icebook/engines` | rows | `analysis` and below |
| `icebook/display` | views | `analysis` and below |
| `icebook/table/` | the facade | `display`, `engines` and below |
| `icebook/book.py` | the book | `errors` |
"""


def test_checker_reads_the_map() -> None:
    may = read_map(MAP_SAMPLE)
    assert may["errors"] == frozenset()
    assert may["io"] == ANYWHERE | {"spec"}
    assert may["engines"] == ANYWHERE | {"analysis", "io", "spec"}
    assert may["table"] == ANYWHERE | {"analysis", "display", "engines", "io", "spec"}
    assert may["book"] == ANYWHERE


def test_checker_catches_an_upward_import(tmp_path: Path) -> None:
    # The check itself must work: run on a package laid out like icebook's with the sample map, it flags an
    # io module importing table (by module, through the package root, lazily in a function, by import_module), a display
    # module importing engines, spec importing pyarrow, the book importing the package root, and nothing that
    # imports downwards; and it finds the cycle two lazy imports close.
    package = tmp_path / "icebook"
    files = {
        "__init__.py": "",
        "io/__init__.py": "",
        "io/bad.py": "from icebook.table import Table\n",
        "io/also_bad.py": "import os\nfrom icebook import table\n",
        "io/lazy.py": "def f():\n    import icebook.table.facade\n",
        "io/dynamic.py": "import importlib\n\ndef f():\n    return importlib.import_module('icebook.table')\n",
        "display/crossed.py": "import icebook.engines.arrow\n",
        "spec/heavy.py": "import pyarrow\n",
        "book.py": "from icebook import __version__\n",
        "table/__init__.py": "from icebook.io.fileio import ArrowFileIO\nfrom icebook.errors import NotFound\n",
        "table/facade.py": "from icebook.io import lazy\n",
        "engines/arrow.py": "from icebook.analysis.scan import planner\n",
    }
    for name, text in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    may = read_map(MAP_SAMPLE)
    rule = {
        "display": "analysis, config, errors, io, spec, text, version",
        "io": "config, errors, spec, text, version",
        "book": "config, errors, text, version",
    }
    assert layer_problems(package, may) == [
        f"book.py:1: book imports icebook (it may import {rule['book']})",
        f"display/crossed.py:1: display imports icebook.engines.arrow (it may import {rule['display']})",
        f"io/also_bad.py:2: io imports icebook.table (it may import {rule['io']})",
        f"io/bad.py:1: io imports icebook.table (it may import {rule['io']})",
        f"io/dynamic.py:4: io imports icebook.table (it may import {rule['io']})",
        f"io/lazy.py:2: io imports icebook.table.facade (it may import {rule['io']})",
        "spec/heavy.py:1: spec/ is stdlib-only but imports pyarrow",
    ]
    assert import_cycles(package) == [frozenset({"icebook.io.lazy", "icebook.table.facade"})]


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


def test_module_file_names_say_what_they_hold() -> None:
    """No two modules share a file name (``__init__.py`` aside), so a name found in a traceback, an import
    or a search is one module (the public ``icebook/spark.py`` sits beside the engine's ``spark_engine.py``)."""
    where: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name != "__init__.py":
            where.setdefault(path.name, []).append(str(path.relative_to(PACKAGE)))
    shared = {name: paths for name, paths in where.items() if len(paths) > 1}
    assert not shared, f"modules sharing a file name: {shared}"
