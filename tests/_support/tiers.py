"""The suite's tiers, and the check that keeps them true.

A test carries the marker of each tier it needs: ``spark`` (it starts or uses a JVM: a Spark session, the
Spark-built scenario warehouse), ``browser`` (it drives Chromium) and ``services`` (it starts a server or an
emulator: moto, SeaweedFS, fake-gcs-server, Azurite, a Spark cluster, JupyterLab). Then
``pytest -m "not spark and not browser and not services"`` runs on a machine with none of them.

Checked for every test:

- before its setup: a test that reaches (directly or through other fixtures) a fixture that started one of
  these needs that tier's marker, so a test reusing a session-wide JVM or server is caught as surely as the
  test that started it;
- while it runs: starting a Spark session (pyspark's ``getOrCreate``, icebook's session), Chromium
  (Playwright's ``launch``) or a server (moto's werkzeug server, a subprocess of a known server program)
  fails a test without the marker;
- a test without ``spark`` runs with no Java at all: ``JAVA_HOME`` unset, a ``java`` first on ``PATH`` that
  refuses to run (so a JVM started in a subprocess fails too), and icebook's running session hidden.

Registered by ``tests/conftest.py``; the markers themselves are declared in pyproject.
"""

from __future__ import annotations

import os
import stat
import subprocess
import tempfile
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pytest

TIERS = ("spark", "browser", "services")

SERVER_PROGRAMS = ("weed", "fake-gcs-server", "azurite", "spark-class", "jupyter-lab", "jupyter-server")
"""Programs whose start, as a subprocess, is a server's start (matched on the start of the file name)."""
SERVER_MODULES = ("jupyterlab", "jupyter_server", "notebook")
"""``python -m <module>`` runs that start a server."""

_current: pytest.Item | None = None
_fixture_stack: list[pytest.FixtureDef[Any]] = []
_started_by: dict[pytest.FixtureDef[Any], set[str]] = {}
"""Fixture -> the tiers it started while it was set up: every test that reaches it needs their markers."""
_violations: dict[str, list[str]] = {}
"""Test id -> what it started without the marker (reported even when the test swallowed the failure)."""


def _missing(item: pytest.Item, tier: str) -> bool:
    return item.get_closest_marker(tier) is None


def starting(tier: str, what: str) -> None:
    """Called as ``what`` is about to start: fails the running test unless it carries ``tier``'s marker."""
    for fixture in _fixture_stack:
        _started_by.setdefault(fixture, set()).add(tier)
    item = _current
    if item is None or not _missing(item, tier):
        return
    message = f"{item.nodeid} starts {what} without the `{tier}` marker (add @pytest.mark.{tier})"
    _violations.setdefault(item.nodeid, []).append(message)
    pytest.fail(message, pytrace=False)


def _wrap(owner: Any, name: str, tier: str, what: str) -> None:
    original: Callable[..., Any] = getattr(owner, name)

    def guarded(*args: Any, **kwargs: Any) -> Any:
        starting(tier, what)
        return original(*args, **kwargs)

    guarded.__wrapped__ = original  # type: ignore[attr-defined]
    setattr(owner, name, guarded)


def _server_program(args: Any) -> str | None:
    argv = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
    if not argv:
        return None
    program = Path(os.fsdecode(argv[0])).name
    if program.startswith(SERVER_PROGRAMS):
        return program
    if program.startswith("python") and len(argv) > 2 and argv[1] == "-m" and argv[2] in SERVER_MODULES:
        return f"python -m {argv[2]}"
    return None


def _install_guards() -> None:
    from pyspark.sql.session import SparkSession

    from icebook.engines import spark_session

    _wrap(SparkSession.Builder, "getOrCreate", "spark", "a Spark session (a JVM)")
    _wrap(spark_session, "_start", "spark", "icebook's Spark session (a JVM)")

    from playwright.sync_api._generated import BrowserType

    for method in ("launch", "launch_persistent_context"):
        _wrap(BrowserType, method, "browser", "a browser (Playwright)")

    from werkzeug.serving import BaseWSGIServer

    _wrap(BaseWSGIServer, "__init__", "services", "an in-process server (moto's werkzeug server)")

    execute_child = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def guarded_execute_child(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> Any:
        program = _server_program(args)
        if program is not None:
            starting("services", f"a server ({program})")
        return execute_child(self, args, *rest, **kwargs)

    subprocess.Popen._execute_child = guarded_execute_child  # type: ignore[attr-defined]


def _refusing_java() -> Path:
    """A directory holding a ``java`` that refuses to run, to put first on PATH."""
    folder = Path(tempfile.mkdtemp(prefix="icebook-no-java-"))
    java = folder / "java"
    java.write_text(
        "#!/bin/sh\n"
        'echo "java: refused: a test without the spark marker runs with no Java (tests/_support/tiers.py)" >&2\n'
        "exit 127\n"
    )
    java.chmod(java.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return folder


_no_java: Path | None = None


def pytest_configure(config: pytest.Config) -> None:
    global _no_java
    _install_guards()
    _no_java = _refusing_java()


def pytest_unconfigure(config: pytest.Config) -> None:
    if _no_java is not None:
        for child in _no_java.iterdir():
            child.unlink()
        _no_java.rmdir()


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> Generator[None]:
    _fixture_stack.append(fixturedef)
    try:
        return (yield)
    finally:
        _fixture_stack.pop()


def _reached(item: pytest.Item) -> dict[str, set[str]]:
    """Fixture name -> the tiers it started, for the fixtures ``item`` uses (a name parametrized directly is a
    value, not the fixture of that name)."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return {}
    used = {name: definitions[-1] for name, definitions in info.name2fixturedefs.items() if definitions}
    return {name: _started_by[fixture] for name, fixture in used.items() if fixture in _started_by}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    global _current
    _current = item
    try:
        return (yield)
    finally:
        _current = None


_hidden: dict[str, pytest.MonkeyPatch] = {}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    reached = _reached(item)
    missing = sorted({t for tiers in reached.values() for t in tiers if _missing(item, t)})
    if missing:
        users = sorted(name for name, tiers in reached.items() if tiers & set(missing))
        pytest.fail(
            f"{item.nodeid} uses {', '.join(users)}, which started {', '.join(missing)}, without the marker "
            f"(add {' and '.join(f'@pytest.mark.{t}' for t in missing)})",
            pytrace=False,
        )
    if _missing(item, "spark"):
        _hidden[item.nodeid] = _without_java()


def _without_java() -> pytest.MonkeyPatch:
    from icebook.engines import spark_session

    patch = pytest.MonkeyPatch()
    patch.delenv("JAVA_HOME", raising=False)
    patch.setenv("PATH", f"{_no_java}{os.pathsep}{os.environ.get('PATH', '')}")
    patch.setattr(spark_session, "_session", None)
    return patch


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    try:
        return (yield)
    finally:
        patch = _hidden.pop(item.nodeid, None)
        if patch is not None:
            patch.undo()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    if report.failed:  # the failure is already reported, by this check or otherwise
        _violations.pop(item.nodeid, None)
    elif call.when == "teardown" and item.nodeid in _violations:
        # The test caught the failure itself: it still started what it must not.
        report.outcome = "failed"
        report.longrepr = "\n".join(_violations.pop(item.nodeid))
    return report
