"""The static book: every notebook executed and rendered to HTML that opens without a kernel or a server.

``icebook book OUT`` (or ``python -m icebook.book [OUT]``, ``make book``) executes the lessons (``notebooks/*.ipynb``,
shipped in the package as ``icebook/lessons``) top to bottom on the demo warehouse, then writes one page per notebook and an ``index.html`` into OUT (``build/book``).
Pages link to each other by relative paths and load nothing from the network:

- widgets show the static HTML each of them carries next to its live view (``text/html``);
- charts, which JupyterLab draws from a Vega spec, become the SVG that vl-convert renders from it;
- the JupyterLab page template is used without its require.js and MathJax script tags.
"""

from __future__ import annotations

import argparse
import copy
import html
import queue
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from icebook.errors import EngineError, NotFound

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
"""The lessons in a checkout; an installed package holds them as ``icebook/lessons``."""
VEGA = "application/vnd.vega.v5+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
SVG = "image/svg+xml"
_TEMPLATE = """{%- extends "lab/index.html.j2" -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class Page:
    """One rendered notebook of the book."""

    notebook: str
    """The notebook's file name, e.g. ``30_optimistic_concurrency.ipynb``."""
    file: str
    """The page's file name in the book folder, e.g. ``30_optimistic_concurrency.html``."""
    title: str
    errors: tuple[str, ...]
    """``ename: evalue`` of every error output (an executed notebook in the book should have none)."""
    seconds: float


def lessons_folder() -> Path:
    """Where the lessons are: ``icebook/lessons`` in an installed package, else the checkout's ``notebooks``."""
    shipped = Path(__file__).resolve().parent / "lessons"
    for folder in (shipped, NOTEBOOKS):
        if any(folder.glob("*.ipynb")):
            return folder
    raise NotFound(f"no lessons: neither {shipped} nor {NOTEBOOKS} holds a notebook (reinstall icebook)")


def notebook_paths(folder: Path | None = None) -> list[Path]:
    """The notebooks of ``folder`` (the lessons by default), in order; NotFound when there is none."""
    folder = lessons_folder() if folder is None else folder
    if not folder.is_dir():
        raise NotFound(f"no folder {folder}")
    paths = sorted(folder.glob("*.ipynb"))
    if not paths:
        raise NotFound(f"no notebook (*.ipynb) in {folder}")
    return paths


_POLL_SECONDS = 1.0


def _poll_in_slices(channel: Any) -> None:
    """Make the channel's ``get_msg(timeout=T)`` wait in polls of at most a second.

    An asyncio zmq socket is woken through an edge-triggered file descriptor. When a wake-up is
    missed, one long poll waits out its whole timeout with the message already there: the kernel
    sits idle and the run hangs until the cell times out. Each new poll first checks the socket.
    """
    get_msg = channel.get_msg

    async def sliced(timeout: float | None = None) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            left = _POLL_SECONDS if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                return await get_msg(timeout=min(_POLL_SECONDS, left))
            except queue.Empty:
                if deadline is not None and time.monotonic() >= deadline:
                    raise

    channel.get_msg = sliced


def execute(path: Path, *, timeout: int = 900, workdir: Path | None = None) -> Any:
    """Run a notebook top to bottom in a fresh ``python3`` kernel; returns the executed notebook.
    Errors are kept in the outputs (the book shows them; ``errors_of`` lists them)."""
    import nbformat
    from nbclient import NotebookClient

    class Client(NotebookClient):  # type: ignore[misc]
        async def async_start_new_kernel_client(self) -> Any:
            kc = await super().async_start_new_kernel_client()
            for channel in (kc.shell_channel, kc.iopub_channel):
                _poll_in_slices(channel)
            return kc

    nb = nbformat.read(path, as_version=4)
    client = Client(
        nb,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=True,
        resources={"metadata": {"path": str(workdir or path.parent)}},
    )
    client.execute()
    return nb


def errors_of(nb: Any) -> tuple[str, ...]:
    return tuple(
        f"{o.get('ename')}: {o.get('evalue')}"
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.get("outputs", [])
        if o.get("output_type") == "error"
    )


def _svg(spec: Any) -> str:
    import vl_convert as vlc

    svg: str = vlc.vega_to_svg(spec)
    return svg


def staticize(nb: Any) -> Any:
    """A copy of an executed notebook whose outputs need no kernel and no network: widget views give
    way to their static HTML, Vega specs to SVG, and the saved widget state is dropped."""
    out = copy.deepcopy(nb)
    out.metadata.pop("widgets", None)
    for cell in out.cells:
        for output in cell.get("outputs", []):
            data = output.get("data")
            if not data:
                continue
            if WIDGET_VIEW in data:
                del data[WIDGET_VIEW]
                if "text/html" not in data:
                    data["text/plain"] = data.get("text/plain", "(an interactive view: run the notebook to use it)")
            if VEGA in data:
                data[SVG] = _svg(data.pop(VEGA))
    return out


def _exporter() -> Any:
    import jinja2
    from nbconvert import HTMLExporter

    return HTMLExporter(
        template_name="lab",
        extra_loaders=[jinja2.DictLoader({"icebook_book.html.j2": _TEMPLATE})],
        template_file="icebook_book.html.j2",
    )


def title_of(nb: Any, fallback: str) -> str:
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    return fallback


def _nav(pages: Sequence[tuple[str, str]], index: int) -> str:
    links = ['<a href="index.html">Contents</a>']
    if index > 0:
        links.append(f'<a href="{html.escape(pages[index - 1][0])}">&larr; {html.escape(pages[index - 1][1])}</a>')
    if index + 1 < len(pages):
        links.append(f'<a href="{html.escape(pages[index + 1][0])}">{html.escape(pages[index + 1][1])} &rarr;</a>')
    style = "font:14px sans-serif;padding:8px 16px;border-bottom:1px solid #ddd;display:flex;gap:24px"
    return f'<nav class="icebook-book-nav" style="{style}">{"".join(links)}</nav>'


def render(nb: Any, title: str) -> str:
    """The static HTML page of one executed notebook."""
    body, _ = _exporter().from_notebook_node(staticize(nb), resources={"metadata": {"name": title}})
    return str(body)


def write_book(executed: Iterable[tuple[Path, Any, float]], out: Path) -> list[Page]:
    """Write a page per executed notebook and an index into ``out``; returns the pages."""
    out.mkdir(parents=True, exist_ok=True)
    items = list(executed)
    files = [(path.with_suffix(".html").name, title_of(nb, path.stem)) for path, nb, _ in items]
    pages: list[Page] = []
    for i, (path, nb, seconds) in enumerate(items):
        file, title = files[i]
        page = render(nb, title)
        head, body_tag, rest = page.partition("<body")
        tag_end = rest.index(">") + 1
        page = head + body_tag + rest[:tag_end] + _nav(files, i) + rest[tag_end:]
        (out / file).write_text(page, encoding="utf-8")
        pages.append(Page(notebook=path.name, file=file, title=title, errors=errors_of(nb), seconds=seconds))
    (out / "index.html").write_text(index_html(pages), encoding="utf-8")
    return pages


def index_html(pages: Sequence[Page]) -> str:
    rows = "\n".join(
        f'<li><a href="{html.escape(p.file)}">{html.escape(p.title)}</a> '
        f'<span class="nb">{html.escape(p.notebook)}</span></li>'
        for p in pages
    )
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>icebook: the book</title>
<style>
body {{ font: 16px/1.5 system-ui, sans-serif; max-width: 760px; margin: 40px auto; padding: 0 16px; color: #1f2328; }}
li {{ margin: 8px 0; }} .nb {{ color: #6e7781; font-size: 13px; margin-left: 8px; }}
</style></head>
<body>
<h1>icebook: the book</h1>
<p>The teaching notebooks of icebook, executed on the demo warehouse and saved with their outputs.
Widgets appear in their static form and charts as pictures; run the notebooks in JupyterLab
(<code>make lab</code>) to use them live.</p>
<ol>
{rows}
</ol>
</body></html>
"""


def build(out: Path, notebooks: Sequence[Path] | None = None, *, progress: bool = True) -> list[Page]:
    """Execute every notebook (in a working folder under ``out``: the lessons may be read-only, in
    site-packages), then write the book into ``out``."""
    paths = list(notebooks) if notebooks is not None else notebook_paths()
    missing = [p for p in paths if not p.is_file()]
    if not paths or missing:
        raise NotFound(f"no notebook {missing[0]}" if missing else "no notebooks to build a book from")
    workdir = out / ".work"
    workdir.mkdir(parents=True, exist_ok=True)
    executed = []
    for path in paths:
        started = time.monotonic()
        if progress:
            print(f"icebook book: running {path.name} ...", file=sys.stderr, flush=True)
        nb = execute(path, workdir=workdir)
        executed.append((path, nb, round(time.monotonic() - started, 1)))
    return write_book(executed, out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m icebook.book", description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="build/book", help="folder to write (build/book)")
    parser.add_argument("--lessons", help="a folder of notebooks (default: the lessons icebook ships)")
    args = parser.parse_args(argv)
    try:
        pages = build(Path(args.out), notebook_paths(Path(args.lessons) if args.lessons else None))
    except NotFound as exc:  # nothing to build from: an error, never an empty book
        print(f"icebook book: {exc}", file=sys.stderr)
        return 1
    failed = [p for p in pages if p.errors]
    for p in pages:
        status = "ERRORS: " + "; ".join(p.errors) if p.errors else "ok"
        print(f"{p.file:45} {p.seconds:6.1f} s  {status}")
    print(f"book: {Path(args.out) / 'index.html'}")
    if failed:
        raise EngineError(f"{len(failed)} notebook(s) raised errors: {', '.join(p.notebook for p in failed)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
