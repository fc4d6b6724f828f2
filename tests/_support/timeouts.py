"""Per-test timeouts (pytest-timeout, ``timeout`` in pyproject): they stop a hung test, never a slow one.

Each test's setup, call and teardown share the timeout. The first test of a run to need a shared (session-
or module-scoped) fixture also pays for setting it up (a JVM, the Spark-built scenario warehouse, a server),
so it gets ``SHARED_SETUP_TIMEOUT`` instead: building the warehouses on a loaded two-core machine must not
be cut.
"""

from __future__ import annotations

import pytest

SHARED_SETUP_TIMEOUT = 3600


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
