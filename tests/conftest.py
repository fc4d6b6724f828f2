"""Shared fixtures: one Spark session and one scenario warehouse per test run.

The warehouse is built once and cached under $ICEBOOK_HOME keyed by the scenarios' hash, so a
second run starts in seconds. A test that needs Spark fails when Spark cannot start; it never skips.

The suite runs in tiers (``spark``, ``browser``, ``services``: see ``_support/tiers.py``), under a
per-test timeout (``_support/timeouts.py``), and no test leaves the environment changed
(``_support/environment.py``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from icebook.engines.spark_session import add_catalog, get_session
from icebook.scenarios import SCENARIOS
from icebook.scenarios.warehouse import CATALOG, buildable, ensure_warehouse, table_location

pytest_plugins = ("pytester", "_support.tiers", "_support.timeouts", "_support.environment")


def pytest_configure(config: pytest.Config) -> None:
    """A run for one Spark line (``ICEBOOK_TEST_PYSPARK=3.5.9``, set by ``make test-spark35``) refuses to
    run on another: PYTHONPATH put the wrong pyspark first otherwise."""
    expected = os.environ.get("ICEBOOK_TEST_PYSPARK", "").strip()
    if expected:
        import pyspark

        if pyspark.__version__ != expected:
            raise pytest.UsageError(
                f"ICEBOOK_TEST_PYSPARK={expected} but pyspark {pyspark.__version__} is imported ({pyspark.__file__})"
            )


def pytest_report_header(config: pytest.Config) -> str:
    from icebook.engines.spark_jars import installed_spark_version
    from icebook.scenarios.warehouse import buildable

    version = installed_spark_version()
    left = [
        f"{n} (Spark {'.'.join(map(str, s.spark_since))}+)" for n, s in SCENARIOS.items() if n not in buildable(version)
    ]
    return f"pyspark {version}" + (
        f"; scenarios this Spark cannot build, not tested: {', '.join(left)}" if left else ""
    )


@pytest.fixture(scope="session")
def spark() -> Any:
    """The process's one SparkSession, with the Iceberg runtime (of the pyspark a run asked for)."""
    from _support.tiers import starting  # (imported here: pytest loads it as a plugin first, and rewrites it)

    # Said here, not left to the guards: a session a test started first is reused without a new start.
    starting("spark", "the suite's Spark session (a JVM)")
    session = get_session(progress=False)
    expected = os.environ.get("ICEBOOK_TEST_PYSPARK", "").strip()
    if expected and session.version != expected:
        raise AssertionError(f"ICEBOOK_TEST_PYSPARK={expected} but the JVM runs Spark {session.version}")
    return session


@pytest.fixture(scope="session")
def warehouse(spark: Any) -> Path:
    """The scenario warehouse, built by Spark on first use and cached on disk."""
    path = ensure_warehouse("test", progress=False)
    add_catalog(CATALOG, path)
    return path


@pytest.fixture(scope="session")
def scenario_locations(warehouse: Path) -> dict[str, Path]:
    """Scenario name -> table directory."""
    return {name: table_location(warehouse, name) for name in buildable()}


@pytest.fixture(scope="session")
def pyiceberg_scenarios() -> tuple[str, dict[str, str]]:
    """The PyIceberg-written scenarios in a SQL catalog (sqlite), built once per run (cached on disk): the
    catalog's name and the ``PYICEBERG_CATALOG__SQLCAT__*`` environment variables that configure it."""
    from icebook.scenarios.sql_catalog.pyiceberg_warehouse import (
        CATALOG_NAME,
        catalog_properties,
        ensure_pyiceberg_warehouse,
    )

    root = ensure_pyiceberg_warehouse("test", progress=False)
    prefix = f"PYICEBERG_CATALOG__{CATALOG_NAME.upper()}__"
    return CATALOG_NAME, {f"{prefix}{k.upper()}": v for k, v in catalog_properties(root).items()}


@pytest.fixture()
def pyiceberg_catalog(pyiceberg_scenarios: tuple[str, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> str:
    """The PyIceberg scenarios' catalog, configured for this test the way users configure catalogs:
    ``PYICEBERG_CATALOG__SQLCAT__*`` environment variables."""
    name, variables = pyiceberg_scenarios
    for key, value in variables.items():
        monkeypatch.setenv(key, value)
    return name


@pytest.fixture()
def shell(scenario_locations: dict[str, Path]) -> Iterator[Any]:
    """An IPython shell with icebook's magics loaded and the events table open as ``events``."""
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "icebook")
    ip.run_line_magic("ice", f"open {scenario_locations['events']} --as events")
    yield ip
    ip.run_line_magic("reload_ext", "icebook")  # a fresh session of open tables for the next test
