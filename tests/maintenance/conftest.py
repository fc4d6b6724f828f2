"""Maintenance tests run Spark's procedures on copies of scenario tables, never on the cached warehouse."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from _copies import relocate_table

import icebook
from icebook.table import Table


@pytest.fixture
def copy_of(scenario_locations: dict[str, Path], tmp_path: Path) -> Callable[[str], Table]:
    """``copy_of(name)``: a writable copy of a scenario table (paths rewritten), opened."""

    def make(name: str) -> Table:
        # <warehouse>/<namespace>/<table>: Spark writes to it through a catalog named after the warehouse.
        target = relocate_table(scenario_locations[name], tmp_path / "wh" / "db" / name)
        return icebook.open(str(target))

    return make


@pytest.fixture(scope="module")
def tables_by_name(scenario_locations: dict[str, Path]) -> dict[str, Table]:
    """The cached scenario tables, opened read-only."""
    return {name: icebook.open(str(path)) for name, path in scenario_locations.items()}
