"""No test leaves the environment changed for the next one.

The variables icebook, PyIceberg and the object stores' SDKs read are compared before each test's setup and
after its teardown: a test or fixture that changes them must restore them (``monkeypatch.setenv`` in a
function-scoped fixture, or ``pytest.MonkeyPatch.context()`` around the code that needs them). A shared
fixture that sets one for its whole scope would leak it into every test that runs meanwhile, so it fails
the test during which it did.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import Any

import pytest

WATCHED_PREFIXES = ("ICEBOOK_", "PYICEBERG_", "AWS_", "AZURE_", "GOOGLE_", "GCS_")
WATCHED_NAMES = ("SPARK_CONF_DIR",)

_before: dict[str, dict[str, str]] = {}


def _watched() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith(WATCHED_PREFIXES) or k in WATCHED_NAMES}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _before[item.nodeid] = _watched()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
    result = yield
    before = _before.pop(item.nodeid, None)
    after = _watched()
    if before is not None and after != before:
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        pytest.fail(
            f"environment variables changed by this test or a fixture it set up, not restored: "
            f"{', '.join(changed)} (use monkeypatch, or a fixture that restores them)",
            pytrace=False,
        )
    return result
