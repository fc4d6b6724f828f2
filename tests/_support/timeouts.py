"""Per-test timeouts (pytest-timeout, ``timeout`` in pyproject): they stop a hung test, never a slow one.

Each test's setup, call and teardown share the timeout. The first test of a run to need a shared (session-
or module-scoped) fixture also pays for setting it up (a JVM, the Spark-built scenario warehouse, a server),
so it gets ``SHARED_SETUP_TIMEOUT`` instead: building the warehouses on a loaded two-core machine must not
be cut.

pytest-timeout stops a test with a signal, which Python handles only when the main thread runs Python: a test
stuck in native code (a lock, a thread pool) would never be stopped and would hold the run until CI's own
limit, printing nothing. So ``GRACE`` seconds after a test's timeout, ``faulthandler`` (a native watchdog
thread) prints every thread's stack and ends the run.
"""

from __future__ import annotations

import faulthandler
import os
from collections.abc import Iterator

import pytest

SHARED_SETUP_TIMEOUT = 3600
GRACE = 60
_STDERR = pytest.StashKey[int]()


@pytest.hookimpl(trylast=True)  # after deselection (-m, -k): the order of the tests that will run
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    seen: set[tuple[str, object]] = set()
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is None:
            continue
        shared = set()
        for name, definitions in info.name2fixturedefs.items():
            scope = definitions[-1].scope
            if scope == "session":
                shared.add((name, None))
            elif scope in ("package", "module", "class"):
                shared.add((name, item.path))
        if shared - seen:
            item.add_marker(pytest.mark.timeout(SHARED_SETUP_TIMEOUT), append=False)
        seen |= shared


def pytest_configure(config: pytest.Config) -> None:
    # The run's own stderr, kept before any test's output is captured (a dump must reach the log).
    config.stash[_STDERR] = os.dup(2)


def pytest_unconfigure(config: pytest.Config) -> None:
    os.close(config.stash[_STDERR])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    marker = item.get_closest_marker("timeout")
    timeout = float(marker.args[0]) if marker is not None and marker.args else float(item.config.getini("timeout"))
    if timeout > 0:
        faulthandler.dump_traceback_later(timeout + GRACE, exit=True, file=item.config.stash[_STDERR])
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
