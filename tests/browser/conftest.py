"""Real-browser fixtures: one JupyterLab server and one headless Chromium per run, a fresh page per test.

Both fail (never skip) when they cannot start: a browser test that silently skips tests nothing.
Artifacts land in test-artifacts/ (git-ignored): the server log and one screenshot per test.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _lab import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    REPO,
    LabPage,
    LabServer,
    free_port,
    is_local,
    start_lab,
    stop_lab,
)
from _lake_catalogs import HOSTILE_NAMESPACE, HOSTILE_TABLE, LAKE_EXTENSION, SIZED_NAMESPACE, LakeCatalogs
from _support.sized_tables import create_sized_tables
from playwright.sync_api import Browser, ConsoleMessage, Error, Playwright, Route, expect, sync_playwright


@pytest.fixture(scope="session", autouse=True)
def _patient_expect() -> None:
    # expect()'s default 5 s is too short for widget views to render on 2 cores shared with Spark.
    expect.set_options(timeout=20_000)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Every test here runs against a JupyterLab server (services) whose kernels open the Spark-built scenario
    # warehouse (spark), nearly all in Chromium (browser): `pytest -m "not browser"` deselects the whole
    # directory. The hook sees every collected item, not only this directory's, hence the path test.
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            for tier in (pytest.mark.browser, pytest.mark.services, pytest.mark.spark):
                item.add_marker(tier)


_RUNNING_LABS: list[LabServer] = []


@pytest.hookimpl(trylast=True)  # after the test's own fixtures (a page shuts its kernels down) are torn down
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Stop JupyterLab after the last test here, not at the end of the run. The server keeps reconnecting to
    the ports of kernels it has shut down (ZMQ, hundreds of connects a second), and a connect that lands on
    the port where Spark serves a collect's Arrow batches kills Spark's serving thread before its result is
    set: that collect, in any later test, then waits forever."""
    here = Path(__file__).parent
    if here in item.path.parents and (nextitem is None or here not in nextitem.path.parents):
        while _RUNNING_LABS:
            stop_lab(_RUNNING_LABS.pop())


def _catalog_variables(name: str, properties: dict[str, str]) -> dict[str, str]:
    return {f"PYICEBERG_CATALOG__{name.upper()}__{key.upper()}": value for key, value in properties.items()}


@pytest.fixture(scope="session")
def lake_catalogs(
    pyiceberg_scenarios: tuple[str, dict[str, str]], warehouse: Path, tmp_path_factory: pytest.TempPathFactory
) -> LakeCatalogs:
    """Configured (``PYICEBERG_CATALOG__*``, a ``spark-defaults.conf``) in the server's environment when it
    starts, so its extension sees them."""
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField

    root = tmp_path_factory.mktemp("hostile-catalog")
    (root / "warehouse").mkdir()
    properties = {"type": "sql", "uri": f"sqlite:///{root / 'catalog.db'}", "warehouse": (root / "warehouse").as_uri()}
    catalog = SqlCatalog("hostile", **properties)
    catalog.create_namespace(HOSTILE_NAMESPACE)
    catalog.create_table((HOSTILE_NAMESPACE, HOSTILE_TABLE), Schema(NestedField(1, "id", LongType(), required=False)))
    scenarios, variables = pyiceberg_scenarios
    variables = {**variables, **_catalog_variables("hostile", properties)}
    sized_root = tmp_path_factory.mktemp("sized-catalog")
    (sized_root / "warehouse").mkdir()
    sized = {"uri": f"sqlite:///{sized_root / 'catalog.db'}", "warehouse": (sized_root / "warehouse").as_uri()}
    create_sized_tables(SqlCatalog("sized", **sized), SIZED_NAMESPACE)
    variables.update(_catalog_variables("sized", {"type": "sql", **sized}))
    # Nothing listens on this port: listing the catalog fails at once with a connection error.
    variables.update(_catalog_variables("offline", {"type": "rest", "uri": f"http://127.0.0.1:{free_port()}"}))
    spark_conf = tmp_path_factory.mktemp("spark-conf")
    (spark_conf / "spark-defaults.conf").write_text(
        "spark.sql.catalog.sparklake org.apache.iceberg.spark.SparkCatalog\n"
        "spark.sql.catalog.sparklake.type hadoop\n"
        f"spark.sql.catalog.sparklake.warehouse {warehouse.as_uri()}\n"
    )
    return LakeCatalogs(
        scenarios=scenarios,
        hostile="hostile",
        offline="offline",
        spark="sparklake",
        sized="sized",
        sized_properties=sized,
        spark_conf_dir=spark_conf,
        environment=variables,
    )


def _install_lake_browser(home: Path) -> bool:
    """Where the venv has no lake browser, or another checkout's (an editable install of another worktree),
    put this checkout's build in the server's private data dir; True when the server must then prefer that
    dir to the venv's (``JUPYTER_PREFER_ENV_PATH=0``: in a venv, Jupyter looks in the venv's first). The
    server extension's config goes to the private config dir when the venv has none."""
    built = REPO / "labextension" / "dist"
    installed = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / LAKE_EXTENSION
    ours = installed.exists() and installed.resolve() == built.resolve()
    if not ours:
        if not (built / "package.json").exists():
            pytest.fail("the lake browser extension is not built: run `make labextension`", pytrace=False)
        shutil.copytree(built, home / "data" / "labextensions" / LAKE_EXTENSION)
    config = Path(sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.d" / "icebook.json"
    if not config.exists():
        target = home / "config" / "jupyter_server_config.d"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "jupyter-config" / "server-config" / "icebook.json", target / "icebook.json")
    return not ours and installed.exists()


@pytest.fixture(scope="session")
def lab_server(
    tmp_path_factory: pytest.TempPathFactory, warehouse: Path, lake_catalogs: LakeCatalogs
) -> Iterator[LabServer]:
    """JupyterLab on 127.0.0.1:<free port>, rooted at a temp dir that tests write notebooks into.

    Its kernels see the scenario warehouse as the demo warehouse, so notebooks open the test tables;
    its lake browser sees the catalogs of ``lake_catalogs``. Both are the server's (and its kernels')
    environment only: this process's stays as it was.
    """
    root = tmp_path_factory.mktemp("lab-root")
    home = tmp_path_factory.mktemp("lab-home")
    private_first = _install_lake_browser(home)
    try:
        with pytest.MonkeyPatch.context() as env:
            if private_first:
                env.setenv("JUPYTER_PREFER_ENV_PATH", "0")
            env.setenv("ICEBOOK_DEMO_WAREHOUSE", str(warehouse))
            env.setenv("SPARK_CONF_DIR", str(lake_catalogs.spark_conf_dir))
            for key, value in lake_catalogs.environment.items():
                env.setenv(key, value)
            server = start_lab(root, home, ARTIFACTS / "browser" / "jupyter-lab.log")
    except RuntimeError as exc:
        error = str(exc)
    else:
        error = ""
    if error:  # outside the except block so the report shows our message, not a chained traceback
        pytest.fail(f"JupyterLab server could not start: {error}", pytrace=False)
    server.demo_warehouse = warehouse
    _RUNNING_LABS.append(server)
    yield server
    stop_lab(server)  # already stopped after the last test here (pytest_runtest_teardown): then nothing


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
