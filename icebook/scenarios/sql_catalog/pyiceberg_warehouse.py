"""Build the PyIceberg scenarios into a SQL catalog (sqlite) and a local warehouse, once, cached
by a hash of their code, like the Spark scenarios (see ``icebook.scenarios.warehouse``).

Layout: ``<ICEBOOK_HOME>/<kind>-pyiceberg-warehouse-<hash>/catalog.db`` (the catalog) and
``.../warehouse/`` (the tables). ``catalog_properties`` gives the PyIceberg properties of it, to
put into ``.pyiceberg.yaml`` or ``PYICEBERG_CATALOG__SQLCAT__<KEY>`` variables (the catalog must be
named ``sqlcat``: a SQL catalog records each table's catalog name).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from icebook import config
from icebook.errors import EngineError
from icebook.scenarios.scenario import Scenario
from icebook.scenarios.sql_catalog import NAMESPACE, PYICEBERG_SCENARIOS
from icebook.scenarios.warehouse import MARKER, _progress_bar, cached_build, source_hash

CATALOG_FILE = "catalog.db"
CATALOG_NAME = "sqlcat"
"""The name the tables are registered under: a SQL catalog keeps each table's catalog name, so
readers must configure the catalog under this same name."""


def scenario_hash() -> str:
    """Hash of these scenario sources and the PyIceberg version: a change to either rebuilds."""
    from importlib.metadata import version

    return source_hash(Path(__file__).parent, version("pyiceberg"))


def warehouse_path(kind: str = "demo") -> Path:
    return config.icebook_home() / f"{kind}-pyiceberg-warehouse-{scenario_hash()}"


def catalog_properties(root: Path) -> dict[str, str]:
    """PyIceberg catalog properties of a built warehouse (a ``type: sql`` catalog on sqlite)."""
    return {
        "type": "sql",
        "uri": f"sqlite:///{root / CATALOG_FILE}",
        "warehouse": (root / "warehouse").as_uri(),
    }


def ensure_pyiceberg_warehouse(
    kind: str = "demo", names: Iterable[str] | None = None, *, progress: bool = True
) -> Path:
    """A warehouse holding the named PyIceberg scenarios (all by default), built if needed."""
    return cached_build(
        warehouse_path(kind),
        names,
        PYICEBERG_SCENARIOS,
        lambda root, scenarios: build(root, scenarios, progress=progress),
        what="PyIceberg scenario",
        kind=f"{kind}-pyiceberg",
    )


def build(root: Path, scenarios: list[Scenario], *, progress: bool = True) -> dict[str, Any]:
    """Run every step of every scenario with PyIceberg; write the marker last."""
    from pyiceberg.catalog.sql import SqlCatalog

    (root / "warehouse").mkdir(parents=True, exist_ok=True)
    catalog = SqlCatalog(CATALOG_NAME, **catalog_properties(root))
    catalog.create_namespace(NAMESPACE)
    record: dict[str, Any] = {"hash": scenario_hash(), "scenarios": {}}
    started = time.monotonic()
    bar = _progress_bar(sum(len(s.steps) for s in scenarios), progress)
    try:
        for scenario in scenarios:
            name = f"{NAMESPACE}.{scenario.name}"
            for i, step in enumerate(scenario.steps, 1):
                bar.set_description(f"{scenario.name}: {step.narrative[:60]}")
                assert step.action is not None
                try:
                    step.action(catalog, name)
                except Exception as exc:  # PyIceberg raises many exception types; report the step
                    raise EngineError(f"scenario {scenario.name}, step {i} ({step.narrative}): {exc}") from exc
                bar.update(1)
            table = catalog.load_table(name)
            record["scenarios"][scenario.name] = {
                "version": scenario.version,
                "title": scenario.title,
                "identifier": name,
                "location": table.location(),
                "metadata_location": table.metadata_location,
                "steps": [s.narrative for s in scenario.steps],
            }
    finally:
        bar.close()
    record["seconds"] = round(time.monotonic() - started, 1)
    (root / MARKER).write_text(json.dumps(record, indent=2))
    return record


def main(argv: list[str] | None = None) -> int:
    """``python -m icebook.scenarios.sql_catalog.pyiceberg_warehouse [demo|test]``: build and print the catalog's properties."""
    args = sys.argv[1:] if argv is None else argv
    root = ensure_pyiceberg_warehouse(args[0] if args else "demo")
    print(json.dumps(catalog_properties(root), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
