"""The suite's tiers, and the check that keeps them true.

A test carries the marker of each tier it needs: ``spark`` (it starts or uses a JVM: a Spark session, the
Spark-built scenario warehouse), ``browser`` (it drives Chromium) and ``services`` (it starts a server or an
emulator: moto, SeaweedFS, fake-gcs-server, Azurite, a Spark cluster, JupyterLab). Then
``pytest -m "not spark and not browser and not services"`` runs on a machine with none of them.

Checked for every test:

- before its setup: a test that reaches (directly or through other fixtures) a fixture that started one of
  these needs that tier's marker, so a test reusing a session-wide JVM or server is caught as surely as the
  test that started it;
- while it runs: starting a Spark session (pyspark's ``getOrCreate``, icebook's session, the suite's
  ``spark`` fixture), Chromium (Playwright's ``launch``) or a server (moto's server, a subprocess or
  ``os.system`` command that runs a known server program, a JVM or a browser, wherever its name stands in
  the command) fails a test without the marker;
- a test without ``spark`` runs with no Java at all: ``JAVA_HOME`` unset, a ``java`` first on ``PATH`` that
  refuses to run (so a JVM started in a subprocess fails too), and icebook's running session hidden.

A test's own stub server from the standard library (``http.server``, in the test's process) is no tier: it
needs nothing installed and starts in milliseconds.

Registered by ``tests/conftest.py``; the markers themselves are declared in pyproject.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import pytest

TIERS = ("spark", "browser", "services")

PROGRAMS = {
    "services": ("weed", "fake-gcs-server", "azurite", "spark-class", "jupyter-lab", "jupyter-server", "moto_server"),
    "spark": ("java", "spark-submit", "spark-shell", "pyspark"),
    "browser": ("chromium", "chrome", "google-chrome", "headless_shell"),
}
"""Tier -> programs whose run, as a subprocess, starts it (matched on the start of the file name of any word
of the command, so an interpreter's script such as Azurite's counts too)."""
STARTS = {"services": "a server", "spark": "a JVM", "browser": "a browser"}
SERVER_MODULES = ("jupyterlab", "jupyter_server", "notebook", "moto.server")
"""``python -m <module>`` runs that start a server."""
JUPYTER_SERVERS = ("lab", "server", "notebook")
"""``jupyter <subcommand>`` runs that start a server."""

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


def _words(args: Any) -> list[str]:
    """The words of a command: a sequence's items, or a shell string split as the shell would (roughly)."""
    if isinstance(args, (str, bytes, os.PathLike)):
        text = os.fsdecode(args)
        try:
            return shlex.split(text)
        except ValueError:  # unbalanced quotes: words by white space are enough to find a program's name
            return text.split()
    return [os.fsdecode(a) for a in args]


def _real(word: str) -> bool:
    """False for a ``java`` that is a script: a stand-in a test writes (to check how a version is read) or the
    refusing one above, which start no JVM; a JVM is a native program."""
    if not Path(word).name.startswith("java"):
        return True
    found = word if os.sep in word else shutil.which(word)
    try:
        with open(found or word, "rb") as program:
            return program.read(4) == b"\x7fELF"
    except OSError:
        return True  # not found here: it may be found elsewhere, and what it is cannot be told


def command_tiers(args: Any) -> list[tuple[str, str]]:
    """(tier, what) for each tier a command starts: a known program anywhere in it, ``python -m`` a server
    module, or ``jupyter lab``/``server``/``notebook``."""
    words = _words(args)
    names = [Path(w).name for w in words]
    found: list[tuple[str, str]] = []
    for tier, programs in PROGRAMS.items():
        hit = next((n for w, n in zip(words, names, strict=True) if n.startswith(programs) and _real(w)), None)
        if hit is not None:
            found.append((tier, f"{STARTS[tier]} ({hit})"))
    for i, word in enumerate(words[:-1]):
        if word == "-m" and words[i + 1] in SERVER_MODULES:
            found.append(("services", f"a server (python -m {words[i + 1]})"))
        if names[i] == "jupyter" and words[i + 1] in JUPYTER_SERVERS:
            found.append(("services", f"a server (jupyter {words[i + 1]})"))
    return found


def _install_guards() -> None:
    from pyspark.sql.session import SparkSession

    from icebook.engines import spark_session

    _wrap(SparkSession.Builder, "getOrCreate", "spark", "a Spark session (a JVM)")
    _wrap(spark_session, "_start", "spark", "icebook's Spark session (a JVM)")

    from playwright.sync_api._generated import BrowserType

    for method in ("launch", "launch_persistent_context"):
        _wrap(BrowserType, method, "browser", "a browser (Playwright)")

    from moto.server import ThreadedMotoServer
    from werkzeug.serving import BaseWSGIServer

    # moto builds its werkzeug server on a thread of its own, where a failure would leave start() waiting.
    _wrap(ThreadedMotoServer, "start", "services", "a server (moto)")
    _wrap(BaseWSGIServer, "__init__", "services", "an in-process server (moto's werkzeug server)")

    execute_child = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def guarded_execute_child(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> Any:
        for tier, what in command_tiers(args):
            starting(tier, what)
        return execute_child(self, args, *rest, **kwargs)

    subprocess.Popen._execute_child = guarded_execute_child  # type: ignore[attr-defined]
    system = os.system

    def guarded_system(command: Any) -> int:
        for tier, what in command_tiers(command):
            starting(tier, what)
        return system(command)

    os.system = guarded_system


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
