"""Real-browser fixtures: one JupyterLab server and one headless Chromium per run, a fresh page per test.

Both fail (never skip) when they cannot start: a browser test that silently skips tests nothing.
Artifacts land in test-artifacts/ (git-ignored): the server log and one screenshot per test.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from _lab import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, LabPage, LabServer, is_local, start_lab, stop_lab
from playwright.sync_api import Browser, ConsoleMessage, Error, Playwright, Route, expect, sync_playwright


def pytest_configure(config: pytest.Config) -> None:
    # Registered here rather than in pyproject so the browser suite stays self-contained (--strict-markers).
    config.addinivalue_line("markers", "browser: drives JupyterLab in headless Chromium (fails if unavailable)")


@pytest.fixture(scope="session", autouse=True)
def _patient_expect() -> None:
    # expect()'s default 5 s is too short for widget views to render on 2 cores shared with Spark.
    expect.set_options(timeout=20_000)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Lets `pytest -m "not browser"` deselect the whole directory. The hook sees every collected item, not
    # only this directory's, hence the path test.
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def lab_server(tmp_path_factory: pytest.TempPathFactory, warehouse: Path) -> Iterator[LabServer]:
    """JupyterLab on 127.0.0.1:<free port>, rooted at a temp dir that tests write notebooks into.

    Its kernels see the scenario warehouse as the demo warehouse, so notebooks open the test tables.
    """
    os.environ["ICEBOOK_DEMO_WAREHOUSE"] = str(warehouse)
    root = tmp_path_factory.mktemp("lab-root")
    home = tmp_path_factory.mktemp("lab-home")
    try:
        server = start_lab(root, home, ARTIFACTS / "browser" / "jupyter-lab.log")
    except RuntimeError as exc:
        error = str(exc)
    else:
        error = ""
    if error:  # outside the except block so the report shows our message, not a chained traceback
        pytest.fail(f"JupyterLab server could not start: {error}", pytrace=False)
    yield server
    stop_lab(server)


@pytest.fixture(scope="session")
def playwright_instance() -> Iterator[Playwright]:
    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="session")
def browser(playwright_instance: Playwright) -> Iterator[Browser]:
    """Headless Debian Chromium (Playwright cannot download its own browsers on this network)."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} not found: run scripts/install-system-deps.sh (installs Debian's chromium).",
            pytrace=False,
        )
    try:
        browser = playwright_instance.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
    except Error as exc:
        error = str(exc)
    else:
        error = ""
    if error:
        pytest.fail(f"Chromium at {CHROMIUM} could not start: {error}", pytrace=False)
    yield browser
    browser.close()


def _artifact_name(nodeid: str) -> str:
    name = nodeid.split("::", 1)[-1]
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "test"


@pytest.fixture
def lab_page(browser: Browser, lab_server: LabServer, request: pytest.FixtureRequest) -> Iterator[LabPage]:
    """A page in its own browser context; every request not to 127.0.0.1 is aborted and recorded.

    On teardown: screenshot to test-artifacts/screenshots/<test>.png, context closed, kernels shut down.
    """
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    lab = LabPage(page=page)

    def route(route: Route) -> None:
        if is_local(route.request.url):
            route.continue_()
        else:
            lab.blocked_requests.append(route.request.url)
            route.abort("blockedbyclient")

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            lab.console_errors.append(f"{message.text} @ {message.location.get('url', '')}")

    # Context-wide, so pages/iframes/workers opened by the notebook are covered too.
    context.route("**/*", route)
    page.on("console", on_console)
    page.on("pageerror", lambda exc: lab.page_errors.append(f"{exc.name}: {exc.message}"))
    yield lab
    shots = ARTIFACTS / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    try:
        page.screenshot(path=str(shots / f"{_artifact_name(request.node.nodeid)}.png"), full_page=True)
    finally:
        context.close()
        lab_server.shutdown_kernels()
