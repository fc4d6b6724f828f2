"""The lake browser in a real JupyterLab: the "Iceberg" sidebar over a SQL catalog of PyIceberg tables,
a catalog whose names are markup, a catalog that cannot be reached, and a Spark catalog from Spark's
configuration; its server extension's endpoints
behind the server's authentication; a double-click opening the table in a notebook."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from _lab import (
    ARTIFACTS,
    KERNEL_TIMEOUT_MS,
    NOTEBOOK,
    LabPage,
    LabServer,
    cell_outputs,
    dismiss_dialogs,
    wait_for_idle,
)
from _lake_catalogs import HOSTILE_NAMESPACE, HOSTILE_TABLE, LAKE_EXTENSION, SIZED_NAMESPACE, LakeCatalogs
from _support.sized_tables import LOST, UNSIZED, by_bytes
from playwright.sync_api import Locator, Page, expect

import icebook
from icebook.scenarios.sql_catalog import NAMESPACE, PYICEBERG_SCENARIOS
from icebook.scenarios.warehouse import NAMESPACE as WAREHOUSE_NAMESPACE
from icebook.scenarios.warehouse import table_location

PANEL = "#icebook-lake-browser"


def _get(server: LabServer, path: str, headers: dict[str, str]) -> tuple[int, str]:
    request = urllib.request.Request(server.url + path, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


def test_endpoints_refuse_requests_without_the_token(lab_server: LabServer, lake_catalogs: LakeCatalogs) -> None:
    for path in (
        "/icebook/lake/catalogs",
        f"/icebook/lake/tables?catalog={lake_catalogs.scenarios}&namespace={NAMESPACE}",
        f"/icebook/lake/health?table={lake_catalogs.scenarios}.{NAMESPACE}.trips",
    ):
        status, body = _get(lab_server, path, {})
        assert status == 403, (path, status, body[:200])
        assert "trips" not in body
    status, body = _get(lab_server, "/icebook/lake/catalogs", {"Authorization": "token not-the-token"})
    assert status == 403
    status, body = _get(lab_server, "/icebook/lake/catalogs", {"Authorization": f"token {lab_server.token}"})
    assert status == 200
    names = [c["name"] for c in json.loads(body)]
    assert {lake_catalogs.scenarios, lake_catalogs.hostile, lake_catalogs.offline} <= set(names)


def test_tables_come_in_pages_with_their_cards(lab_server: LabServer, lake_catalogs: LakeCatalogs) -> None:
    query = f"/icebook/lake/tables?catalog={lake_catalogs.scenarios}&namespace={NAMESPACE}"
    whole = lab_server.api("GET", query)
    assert whole["total"] == len(PYICEBERG_SCENARIOS)
    first = lab_server.api("GET", query + "&limit=1")
    second = lab_server.api("GET", query + "&limit=1&offset=1")
    assert [t["identifier"] for t in first["tables"] + second["tables"]] == [
        t["identifier"] for t in whole["tables"][:2]
    ]
    only = lab_server.api("GET", query + "&filter=TRIP")
    assert [t["name"] for t in only["tables"]] == ["trips"]
    offline = lab_server.api("GET", f"/icebook/lake/namespaces?catalog={lake_catalogs.offline}")
    assert "offline" in offline["error"] and "\n" not in offline["error"]


def _lab(page: Page, server: LabServer) -> None:
    page.goto(f"{server.url}/lab?reset&token={server.token}")
    page.locator("#jp-main-dock-panel").wait_for(timeout=KERNEL_TIMEOUT_MS)


def _open_panel(page: Page) -> Locator:
    page.locator('.jp-SideBar .lm-TabBar-tab[title^="Iceberg"]').click()
    panel = page.locator(PANEL)
    expect(panel).to_be_visible()
    return panel


def _expand(scope: Locator, cls: str, name: str) -> Locator:
    """Click open the catalog or namespace of ``scope`` whose name is exactly ``name`` (compared in the page:
    names are arbitrary text, so no selector is built from them)."""
    items = scope.locator(f".{cls}")
    expect(items.first).to_be_visible()
    names = items.evaluate_all(
        "els => els.map(e => e.querySelector(':scope > .ib-lake-row > .ib-lake-name').textContent)"
    )
    assert name in names, names
    item = items.nth(names.index(name))
    item.locator(":scope > .ib-lake-row").click()
    return item


def _table(panel: Locator, identifier: str) -> Locator:
    rows = panel.locator(".ib-lake-table")
    expect(rows.first).to_be_visible()
    names = rows.evaluate_all("els => els.map(e => e.dataset.identifier)")
    assert names.count(identifier) == 1, names
    return rows.nth(names.index(identifier))


def test_panel_lists_catalogs_namespaces_and_tables_with_badges(
    lab_page: LabPage, lab_server: LabServer, lake_catalogs: LakeCatalogs
) -> None:
    page = lab_page.page
    _lab(page, lab_server)
    tab = page.locator('.jp-SideBar .lm-TabBar-tab[title^="Iceberg"]')
    expect(tab).to_have_count(1)
    expect(tab.locator(".lm-TabBar-tabLabel")).to_have_text("Iceberg")
    panel = _open_panel(page)
    catalogs = panel.locator(".ib-lake-catalog > .ib-lake-row > .ib-lake-name")
    expect(catalogs).to_contain_text([lake_catalogs.hostile, lake_catalogs.offline, lake_catalogs.scenarios])

    offline = _expand(panel, "ib-lake-catalog", lake_catalogs.offline)
    expect(offline.locator(".ib-lake-error")).to_contain_text("offline")

    scenarios = _expand(panel, "ib-lake-catalog", lake_catalogs.scenarios)
    _expand(scenarios, "ib-lake-namespace", NAMESPACE)
    for name in PYICEBERG_SCENARIOS:
        row = _table(panel, f"{lake_catalogs.scenarios}.{NAMESPACE}.{name}")
        expect(row.locator(".ib-lake-name")).to_have_text(name)
        expect(row.locator(".ib-lake-badge")).to_have_text(re.compile(r"^(ok|debt)$"))
        expect(row.locator(".ib-lake-card")).to_contain_text("snapshot")
    expected = lab_server.api("GET", f"/icebook/lake/tables?catalog={lake_catalogs.scenarios}&namespace={NAMESPACE}")
    for table in expected["tables"]:
        card = table["card"]
        row = _table(panel, table["identifier"])
        expect(row.locator(".ib-lake-badge")).to_have_text(table["badge"])
        expect(row.locator(".ib-lake-card")).to_contain_text(f"v{card['format_version']} · ")
        expect(row.locator(".ib-lake-card")).to_contain_text(f"{card['snapshots']} snapshot")
        expect(row.locator(".ib-lake-card")).to_contain_text(f"{card['records']:,} records")

    panel.locator(".ib-lake-filter").fill("read")
    expect(panel.locator(".ib-lake-table")).to_have_count(1)
    expect(panel.locator(".ib-lake-table .ib-lake-name")).to_have_text("readings")
    panel.locator(".ib-lake-filter").fill("")
    expect(panel.locator(".ib-lake-table")).to_have_count(len(PYICEBERG_SCENARIOS))
    lab_page.assert_clean()
    page.screenshot(path=str(ARTIFACTS / "lake-browser-panel.png"))


def _down_to(page: Page, server: LabServer, catalog: str, namespace: str, name: str) -> tuple[Locator, Locator]:
    """The panel opened down to table ``name`` of ``catalog.namespace``: the catalog's item and the table's row."""
    _lab(page, server)
    panel = _open_panel(page)
    item = _expand(panel, "ib-lake-catalog", catalog)
    _expand(item, "ib-lake-namespace", namespace)
    return item, _table(panel, f"{catalog}.{namespace}.{name}")


def test_panel_lists_a_spark_catalog_from_spark_configuration(
    lab_page: LabPage, lab_server: LabServer, lake_catalogs: LakeCatalogs, warehouse: Path
) -> None:
    _, row = _down_to(lab_page.page, lab_server, lake_catalogs.spark, WAREHOUSE_NAMESPACE, "events")
    expect(row.locator(".ib-lake-badge")).to_have_text(re.compile(r"^(ok|debt)$"))
    current = icebook.open(str(table_location(warehouse, "events"))).current_snapshot
    assert current is not None
    expect(row.locator(".ib-lake-card")).to_contain_text(f"{int(current.summary['total-records']):,} records")
    lab_page.assert_clean()


def test_markup_in_names_renders_as_text(lab_page: LabPage, lab_server: LabServer, lake_catalogs: LakeCatalogs) -> None:
    page = lab_page.page
    hostile, row = _down_to(page, lab_server, lake_catalogs.hostile, HOSTILE_NAMESPACE, HOSTILE_TABLE)
    panel = page.locator(PANEL)
    expect(row.locator(".ib-lake-name")).to_have_text(HOSTILE_TABLE)
    namespace = hostile.locator(".ib-lake-namespace > .ib-lake-row > .ib-lake-name")
    expect(namespace).to_have_text(HOSTILE_NAMESPACE)
    row.hover()
    assert panel.locator("img, b").count() == 0
    assert page.evaluate("() => window.__icebookPwned") is None
    lab_page.assert_clean()


def test_tables_sorted_by_bytes_and_unknown_bytes_said_in_place(
    lab_page: LabPage, lab_server: LabServer, lake_catalogs: LakeCatalogs
) -> None:
    from pyiceberg.catalog.sql import SqlCatalog

    order, sizes = by_bytes(SqlCatalog(lake_catalogs.sized, **lake_catalogs.sized_properties), SIZED_NAMESPACE)
    page = lab_page.page
    _lab(page, lab_server)
    panel = _open_panel(page)
    panel.locator(".ib-lake-sort").select_option("bytes")
    item = _expand(panel, "ib-lake-catalog", lake_catalogs.sized)
    _expand(item, "ib-lake-namespace", SIZED_NAMESPACE)
    rows = item.locator(".ib-lake-table")
    expect(rows).to_have_count(len(order) + 2)
    names = "els => els.map(e => e.querySelector('.ib-lake-name').textContent)"
    assert rows.evaluate_all(names) == [*order, LOST, UNSIZED]
    shown = rows.evaluate_all("els => els.map(e => e.querySelector('.ib-lake-bytes').dataset.bytes)")
    assert shown[: len(order)] == [str(sizes[name]) for name in order]
    large = rows.nth(0).locator(".ib-lake-bytes")
    expect(large).to_have_text(re.compile(r"^[0-9.]+ KiB$"))
    assert (large.get_attribute("title") or "").startswith(f"{sizes['large']} bytes: live bytes: ")
    lost, unsized = rows.nth(len(order)), rows.nth(len(order) + 1)
    expect(lost.locator(".ib-lake-badge")).to_have_text("error")
    expect(lost.locator(".ib-lake-error")).to_contain_text("00098-lost.metadata.json")
    expect(unsized.locator(".ib-lake-bytes")).to_have_text("? bytes")
    expect(unsized.locator(".ib-lake-bytes-error")).to_contain_text("summary has no total-files-size")
    expect(unsized.locator(".ib-lake-badge")).to_have_text(re.compile(r"^(ok|debt)$"))

    panel.locator(".ib-lake-sort").select_option("name")
    expect(rows.first.locator(".ib-lake-name")).to_have_text(sorted([*order, LOST, UNSIZED])[0])
    assert rows.evaluate_all(names) == sorted([*order, LOST, UNSIZED])
    lab_page.assert_clean()
    page.screenshot(path=str(ARTIFACTS / "lake-browser-by-bytes.png"))


def _trips(page: Page, server: LabServer, lake_catalogs: LakeCatalogs) -> tuple[Locator, str]:
    """The panel opened down to the ``trips`` table: its row and its current snapshot id."""
    _, row = _down_to(page, server, lake_catalogs.scenarios, NAMESPACE, "trips")
    identifier = f"{lake_catalogs.scenarios}.{NAMESPACE}.trips"
    expected = server.api("GET", f"/icebook/lake/tables?catalog={lake_catalogs.scenarios}&namespace={NAMESPACE}")
    snapshot_id = next(t for t in expected["tables"] if t["identifier"] == identifier)["card"]["current_snapshot_id"]
    return row, snapshot_id


def test_double_click_opens_the_table_in_a_notebook(
    lab_page: LabPage, lab_server: LabServer, lake_catalogs: LakeCatalogs
) -> None:
    page = lab_page.page
    identifier = f"{lake_catalogs.scenarios}.{NAMESPACE}.trips"
    row, snapshot_id = _trips(page, lab_server, lake_catalogs)
    row.locator(".ib-lake-name").dblclick()
    page.locator(NOTEBOOK).wait_for(timeout=KERNEL_TIMEOUT_MS)
    dismiss_dialogs(page)
    sources = _wait_for_cells(page, 3)
    assert sources[1].strip() == f"trips = %ice open '{identifier}' --as trips"
    assert sources[2].strip() == "trips.explore()"
    outputs = cell_outputs(page)
    assert "Error" not in "\n".join(outputs), outputs
    workbench = page.locator(f"{NOTEBOOK} .jp-CodeCell").nth(2).locator(".jp-OutputArea-output")
    expect(workbench).to_contain_text(snapshot_id, timeout=60_000)
    lab_page.assert_clean()


def test_labextension_list_shows_it_enabled(lab_server: LabServer) -> None:
    listing = subprocess.run(
        [sys.executable, "-m", "jupyter", "labextension", "list"],
        env=lab_server.jupyter_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    text = listing.stdout + listing.stderr
    line = next((ln for ln in text.splitlines() if LAKE_EXTENSION in ln), "")
    assert "enabled" in line and "OK" in line, text
    servers = subprocess.run(
        [sys.executable, "-m", "jupyter", "server", "extension", "list"],
        env=lab_server.jupyter_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    text = servers.stdout + servers.stderr
    line = next((ln for ln in text.splitlines() if "icebook.server" in ln), "")
    assert "enabled" in line, text


def _wait_for_cells(page: Page, count: int) -> list[str]:
    sources = page.locator(f"{NOTEBOOK} .jp-CodeCell .jp-InputArea-editor")
    expect(sources).to_have_count(count, timeout=KERNEL_TIMEOUT_MS)
    page.wait_for_function(
        "sel => Array.from(document.querySelectorAll(sel)).every(p => /\\[\\d+\\]/.test(p.textContent || ''))",
        arg=f"{NOTEBOOK} .jp-CodeCell .jp-InputArea-prompt",
        timeout=KERNEL_TIMEOUT_MS * 2,
    )
    wait_for_idle(page)
    return sources.all_inner_texts()


def test_full_health_on_demand_and_the_context_menu(
    lab_page: LabPage, lab_server: LabServer, lake_catalogs: LakeCatalogs
) -> None:
    page = lab_page.page
    identifier = f"{lake_catalogs.scenarios}.{NAMESPACE}.trips"
    row, snapshot_id = _trips(page, lab_server, lake_catalogs)
    deep = lab_server.api("GET", f"/icebook/lake/health?table={identifier}", timeout=120)
    row.locator(".ib-lake-badge").click()
    expect(row.locator(".ib-lake-badge")).to_have_text(f"{deep['badge']} ✓", timeout=120_000)
    expect(row.locator(".ib-lake-debt-kind")).to_have_text([d["kind"] for d in deep["debts"]])

    row.locator(".ib-lake-name").click(button="right")
    menu = page.locator(".lm-Menu")
    expect(menu.locator(".lm-Menu-itemLabel")).to_contain_text(
        ["Open in a new notebook", "Copy name", "Copy location", "Open health", "Open history", "Open metadata tree"]
    )
    menu.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Open history$")).click()
    page.locator(NOTEBOOK).wait_for(timeout=KERNEL_TIMEOUT_MS)
    dismiss_dialogs(page)
    sources = _wait_for_cells(page, 3)
    assert sources[2].strip() == "%ice history --table trips"
    outputs = cell_outputs(page)
    assert "Error" not in "\n".join(outputs), outputs
    assert snapshot_id in outputs[2]
    lab_page.assert_clean()


def test_open_with_icebook_in_the_file_browser(
    lab_page: LabPage, lab_server: LabServer, lake_catalogs: LakeCatalogs
) -> None:
    table = lab_server.api(
        "GET", f"/icebook/lake/tables?catalog={lake_catalogs.scenarios}&namespace={NAMESPACE}&filter=readings"
    )["tables"][0]
    source = Path(table["card"]["location"].removeprefix("file://"))
    copy = lab_server.root_dir / "readings_copy"
    if not copy.exists():
        shutil.copytree(source, copy)  # its metadata names the original files, which stay where they are
    page = lab_page.page
    _lab(page, lab_server)
    if not page.locator("#filebrowser").is_visible():
        page.locator('.jp-SideBar .lm-TabBar-tab[title^="File Browser"]').click()
    item = page.locator(".jp-DirListing-item", has_text="readings_copy")
    item.click(button="right")
    page.locator(".lm-Menu .lm-Menu-itemLabel", has_text=re.compile(r"^Open with icebook$")).click()
    page.locator(NOTEBOOK).wait_for(timeout=KERNEL_TIMEOUT_MS)
    dismiss_dialogs(page)
    sources = _wait_for_cells(page, 3)
    assert sources[1].strip() == f"readings_copy = %ice open '{copy.resolve()}' --as readings_copy"
    outputs = cell_outputs(page)
    assert "Error" not in "\n".join(outputs), outputs
    assert table["card"]["current_snapshot_id"] in outputs[2]
    lab_page.assert_clean()
