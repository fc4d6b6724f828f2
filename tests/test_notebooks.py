"""Every notebook in notebooks/ runs top to bottom (its own checks included) on the scenario tables,
and the static book built from those runs opens without a kernel or a network and shows each lesson.

The book test reuses the executions of the notebook tests (one run per notebook per test session).
"""

from __future__ import annotations

import re
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import nbformat
import pytest

from icebook.book import VEGA, WIDGET_VIEW, Page, errors_of, execute, notebook_paths, write_book

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = notebook_paths()
BOOK = REPO / "test-artifacts" / "book"

# What each page must show once rendered without a kernel: (description, text in the page's HTML).
KEY_VIEWS: dict[str, list[tuple[str, str]]] = {
    "00_tour": [("metadata tree", 'class="icebook'), ("a chart or listing", "snapshot_id")],
    "10_widgets": [("charts as pictures", 'data-mime-type="image/svg+xml"'), ("tree fallback", "ib-tree")],
    "20_row_level_deletes": [("sequence numbers", "sequence_number"), ("changelog", "_change_type")],
    "30_optimistic_concurrency": [
        ("attempt 2 in a manifest list name", "-2-"),
        ("the Java conflict", "ValidationException"),
        ("the lineage", "Lineage"),
        ("the tree's static form", "ib-tree"),
        ("orphans", "writer-b-compaction"),
    ],
    "40_schema_evolution": [
        ("projection by field id", "promoted int -&gt; long"),
        ("ids never reused", "last-column-id"),
    ],
    "50_partitioning_and_sort_orders": [
        ("partition predicates per spec", "ts_hour &gt;="),
        ("void transform", "void"),
        ("charts as pictures", 'data-mime-type="image/svg+xml"'),
        ("files skipped by bounds", "SKIP data/"),
    ],
    "60_history_and_retention": [
        ("snapshot log", "made_current_at"),
        ("expiry", "expire"),
        ("theta sketches", "apache-datasketches-theta-v1"),
        ("expiry previewed before it runs", "expire_preview("),
    ],
    "70_files_and_names": [
        ("manifest list parts", "commit_uuid="),
        ("statistics file", ".stats"),
        ("provenance", "names agree"),
    ],
    "85_slow_and_big": [
        ("bytes read per row group", "bytes_read"),
        ("the three planners", "PyIceberg keeps"),
        ("where the bytes are", "history: expires now"),
        ("why a live file stays", "commit on main"),
        ("an orphan's call", "remove_orphan_files(older_than="),
    ],
    "90_format_v3": [
        ("a deletion vector's positions", "1-3, 10, 20-24, 40"),
        ("a replaced vector", "replaced: 4 → 9 deleted rows"),
        ("row ids", "_last_updated_sequence_number"),
        ("a variant as JSON", "extra_field"),
        ("nanoseconds", "23:47:16.854775807"),
    ],
    "80_time_lapse": [
        ("the growth chart", "ib-tl-growth"),
        ("heatmap small multiples", "ib-tl-multiple"),
        ("a frame starting afresh", "not in this time-lapse"),
    ],
}

_runs: dict[str, tuple[Any, float]] = {}


def run(path: Path, warehouse: Path, workdir: Path) -> Any:
    """Execute ``path`` once per test session (the kernel sees the test warehouse as the demo one)."""
    if path.name not in _runs:
        with pytest.MonkeyPatch.context() as env:  # the kernel's environment; this process's stays as it was
            env.setenv("ICEBOOK_DEMO_WAREHOUSE", str(warehouse))
            started = time.monotonic()
            nb = execute(path, workdir=workdir)
        _runs[path.name] = (nb, time.monotonic() - started)
    return _runs[path.name][0]


def test_there_is_a_tour_and_a_lesson_per_concept() -> None:
    names = {p.stem for p in NOTEBOOKS}
    assert names == set(KEY_VIEWS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_lesson_is_valid_nbformat_with_an_id_on_every_cell(path: Path) -> None:
    """A lesson validates without a warning: a cell without an id is one now, and an error in later nbformat."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nbformat.validate(nbformat.read(path, as_version=4))


@pytest.mark.spark
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path: Path, warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    nb = run(path, warehouse, tmp_path_factory.mktemp(path.stem))
    assert errors_of(nb) == ()
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# ")
    if path.stem[:2] >= "20":  # the lessons: what you will learn, and a summary at the end
        assert "What you will learn" in first.source
        assert any(c.cell_type == "markdown" and c.source.startswith("## Summary") for c in nb.cells[-3:])


@pytest.fixture(scope="module")
def book(warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Page]:
    """The book of this run's executed lessons, written to ``test-artifacts/book`` (never one left there by an
    earlier run)."""
    executed = [(p, run(p, warehouse, tmp_path_factory.mktemp(p.stem)), _runs[p.name][1]) for p in NOTEBOOKS]
    return write_book(executed, BOOK)


@pytest.mark.spark
def test_book_is_static_and_shows_each_lesson(book: list[Page]) -> None:
    pages = book
    index = (BOOK / "index.html").read_text()
    assert [p.file for p in pages] == [p.with_suffix(".html").name for p in NOTEBOOKS]
    for page in pages:
        assert f'href="{page.file}"' in index
        assert page.errors == (), page.errors
        text = (BOOK / page.file).read_text()
        assert 'class="icebook-book-nav"' in text and 'href="index.html"' in text
        # Nothing is fetched: no remote scripts, styles or images, no live-only output left behind.
        assert not re.search(r'<(script|link|img)[^>]+(src|href)="(https?:)?//', text), page.file
        assert VEGA not in text and WIDGET_VIEW not in text and "jp-OutputArea-output" in text
        assert 'class="ansi-red-fg"' not in text and "Traceback" not in text
        for what, marker in KEY_VIEWS[Path(page.notebook).stem]:
            assert marker in text, f"{page.file} does not show {what} ({marker!r})"


@pytest.mark.spark
@pytest.mark.browser
def test_book_opens_in_a_browser_from_files(book: list[Page]) -> None:
    """Headless Chromium opens every page from file:// with every other request blocked; a screenshot
    of each lands in test-artifacts/screenshots/book-<page>.png."""
    from playwright.sync_api import sync_playwright

    shots = REPO / "test-artifacts" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    blocked: list[str] = []
    errors: list[str] = []

    # The browser tests' session keeps a sync Playwright (and its event loop) open on this thread;
    # a second one must run on a thread of its own.
    def visit() -> None:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox"])
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.route(
                "**/*",
                lambda route: (
                    route.continue_()
                    if route.request.url.startswith(("file:", "data:"))
                    else (blocked.append(route.request.url), route.abort())[1]
                ),
            )
            page = context.new_page()
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto((BOOK / "index.html").as_uri())
            links = page.locator("ol a")
            assert links.count() == len(NOTEBOOKS)
            for i in range(links.count()):
                page.goto((BOOK / "index.html").as_uri())
                page.locator("ol a").nth(i).click()
                page.wait_for_load_state("load")
                assert page.locator(".jp-Notebook").count() == 1
                name = Path(page.url).stem
                page.screenshot(path=str(shots / f"book-{name}.png"), full_page=False)
            browser.close()

    failures: list[BaseException] = []

    def run() -> None:
        try:
            visit()
        except BaseException as exc:
            failures.append(exc)

    worker = threading.Thread(target=run, name="book-in-chromium")
    worker.start()
    worker.join()
    if failures:
        raise failures[0]
    assert blocked == [] and errors == []
