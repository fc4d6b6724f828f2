"""A manifest with ~3,000 entries stays responsive in the tree: 200 rows per page, "load more" for the rest.

The table is written by Spark in one commit (one data file per task, so one manifest holds them all) and
cached under $ICEBOOK_HOME keyed by its SQL, like the scenario warehouse.
"""

from __future__ import annotations

import hashlib
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from _lab import LabPage, LabServer
from _widgets import CELLS_PRELUDE, cell, expand, run_notebook
from playwright.sync_api import expect

import icebook
from icebook.engines.spark_session import add_catalog
from icebook.io.manifest_cache import icebook_home

FILES = 3000
SQL = (
    "CREATE TABLE {t} (id BIGINT, label STRING) USING iceberg PARTITIONED BY (bucket(16, id)) "
    "TBLPROPERTIES ('format-version'='2', 'write.distribution-mode'='none')",
    # Round-robin into FILES tasks: each task writes one file, all in one commit -> one manifest.
    f"INSERT INTO {{t}} SELECT /*+ REPARTITION({FILES}) */ id, concat('row-', id) FROM range({FILES})",
)
MARKER = ".built"


@pytest.fixture(scope="session")
def big_manifest_table(spark: Any) -> Path:
    key = hashlib.sha256("\n".join(SQL).encode()).hexdigest()[:10]
    warehouse = icebook_home() / f"widgets-big-{key}"
    location = warehouse / "db" / "wide"
    if not (warehouse / MARKER).exists():
        shutil.rmtree(warehouse, ignore_errors=True)
        add_catalog("widgetsbig", warehouse)
        for statement in SQL:
            spark.sql(statement.replace("{t}", "widgetsbig.db.wide"))
        (warehouse / MARKER).write_text(key)
    return location


def test_tree_pages_a_manifest_with_thousands_of_entries(
    lab_page: LabPage, lab_server: LabServer, big_manifest_table: Path
) -> None:
    table = icebook.open(str(big_manifest_table))
    (manifest,) = table.store.manifest_list(table.current_snapshot)
    total = manifest.added_files_count
    assert total is not None and total >= 2_500, total

    page = lab_page.page
    run_notebook(
        lab_page,
        lab_server,
        "paging.ipynb",
        [
            CELLS_PRELUDE + f"\nt = icebook.open({str(big_manifest_table)!r})",
            "tree = D.tree_widget(t, at='main')\ntree",
        ],
    )
    tree = cell(page, 1).locator(".ib-tree-widget")
    row = tree.locator('.ib-row[data-kind="manifest"]')
    expect(row).to_be_visible()
    expect(row.locator(".ib-count")).to_have_text(f"({total:,})")

    files = tree.locator('.ib-row[data-kind="data_file"]')
    started = time.perf_counter()
    expand(row)
    expect(files).to_have_count(200, timeout=30_000)
    seconds = time.perf_counter() - started
    in_page = float(tree.get_attribute("data-last-load-ms") or "nan")
    print(
        f"\nexpand of a {total:,}-entry manifest: first 200 rows in {seconds * 1000:.0f} ms (click to rows, "
        f"Playwright), {in_page:.0f} ms request-to-render in the page"
    )
    assert seconds < 10

    more = tree.locator("button.ib-more")
    expect(more).to_contain_text(f"{total - 200:,} not shown")
    started = time.perf_counter()
    more.click()
    expect(files).to_have_count(400)
    print(f"load more: next 200 rows in {(time.perf_counter() - started) * 1000:.0f} ms")
    expect(tree.locator(".ib-status")).to_contain_text(f"400 of {total:,} shown")
    files.nth(399).click()
    expect(tree.locator(".ib-details .ib-details-title")).to_have_text("Manifest entry 399")
    lab_page.assert_clean()
