"""Benchmark: the tree widget on a manifest with 100,000 entries, in a real browser.

The table is ``large_table.py --files 100000 --files-per-manifest 100000`` (five manifests of 100,000
entries). Measured in one run:

a. in Python, ``TreeSource.children`` of the manifest at offsets 0, 25,000, 50,000 and 99,800 (one page
   of 200 entries each): paging slices the decoded Arrow entries, so every page costs the same
b. in JupyterLab in headless Chromium (the browser tests' harness): click to expand the manifest until
   its first 200 rows are shown, with the disk cache of decoded manifests off (the kernel decodes the
   manifest) and on (a new kernel reads it from the cache an earlier process filled); then "load more"
   five times, each until 200 more rows are shown (``*_in_page_ms``: the widget's own request-to-render
   time; the others: click to rows, as Playwright sees them, which includes its polling of the row count)
c. the reference point: the same expand of a 2,500-entry manifest of the 500,000-file table

Prints milliseconds per step. There is no peer for a tree widget; (c) is the flatness reference.

    python benchmarks/tree_paging.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "browser"))

import large_table  # noqa: E402  (after the path tweak, so the script runs from any directory)

PAGES = 5


def python_pages(location: Path) -> list[tuple[int, float]]:
    import icebook
    from icebook.display.tree_ids import NodeId, NodeKind
    from icebook.display.tree_nodes import TreeSource

    t = icebook.open(str(location))
    snapshot = t.snapshots[0]
    source = TreeSource(t)
    node = NodeId(kind=NodeKind.MANIFEST, snapshot_id=snapshot.snapshot_id, manifest=0)
    out = []
    for offset in (0, 25_000, 50_000, 99_800):
        started = time.perf_counter()
        total, page = source.children(node, offset, 200)
        out.append((offset, (time.perf_counter() - started) * 1000))
        assert total == 100_000 and len(page) == 200, (total, len(page))
    return out


def browser_run(location: Path, *, disk_cache: bool, label: str, pages: int = PAGES) -> dict[str, float]:
    from _lab import CHROMIUM, CHROMIUM_ARGS, LabPage, start_lab, stop_lab
    from _widgets import CELLS_PRELUDE, cell, expand, run_notebook
    from playwright.sync_api import expect, sync_playwright

    os.environ["ICEBOOK_MANIFEST_CACHE"] = "on" if disk_cache else "off"
    root = Path(tempfile.mkdtemp(prefix="tree-bench-root-"))
    home = Path(tempfile.mkdtemp(prefix="tree-bench-home-"))
    server = start_lab(root, home, root / "jupyter-lab.log")
    figures: dict[str, float] = {}
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            expect.set_options(timeout=120_000)
            lab = LabPage(page=page)
            first = icebook_first_snapshot(location)
            run_notebook(
                lab,
                server,
                "tree.ipynb",
                [CELLS_PRELUDE + f"\nt = icebook.open({str(location)!r})", f"D.tree_widget(t, at={first})"],
            )
            tree = cell(page, 1).locator(".ib-tree-widget")
            row = tree.locator('.ib-row[data-kind="manifest"]').first
            expect(row).to_be_visible()
            files = tree.locator('.ib-row[data-kind="data_file"]')
            started = time.perf_counter()
            expand(row)
            expect(files).to_have_count(200)
            figures["expand_ms"] = (time.perf_counter() - started) * 1000
            figures["expand_in_page_ms"] = float(tree.get_attribute("data-last-load-ms") or "nan")
            more = tree.locator("button.ib-more")
            for i in range(pages):
                started = time.perf_counter()
                more.click()
                expect(files).to_have_count(200 * (i + 2))
                figures[f"page_{i + 2}_ms"] = (time.perf_counter() - started) * 1000
                figures[f"page_{i + 2}_in_page_ms"] = float(tree.get_attribute("data-last-load-ms") or "nan")
            browser.close()
    finally:
        stop_lab(server)
    print(f"{label:<52} " + "  ".join(f"{k} {v:,.0f}" for k, v in figures.items()), flush=True)
    return figures


def icebook_first_snapshot(location: Path) -> int:
    import icebook

    return icebook.open(str(location)).snapshots[0].snapshot_id


def main() -> int:
    big = large_table.ensure_large_table(100_000, files_per_manifest=100_000)
    small = large_table.ensure_large_table(500_000)
    print(f"table: {big} (manifests of 100,000 entries)")
    print("python, TreeSource.children, one page of 200 (the manifest decoded on the first call):")
    for offset, ms in python_pages(big):
        print(f"  offset {offset:>7,}: {ms:>8.1f} ms")
    browser_run(big, disk_cache=False, label="browser, 100,000 entries, cold (cache off)")
    browser_run(big, disk_cache=True, label="browser, 100,000 entries, fills the disk cache")
    browser_run(big, disk_cache=True, label="browser, 100,000 entries, warm start (disk cache)")
    browser_run(small, disk_cache=False, label="browser, 2,500 entries, cold (reference)", pages=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
