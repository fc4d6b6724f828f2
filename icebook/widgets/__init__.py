"""The widgets' front-end files as anywidget takes them: the stylesheet and the ES module bundles, as paths.

The modules' sources are ``widgets/*.js`` in the checkout; each imports its helpers from the one
``widgets/dom.js``. esbuild bundles each into ``static/<name>`` here (``npm run build:widgets``, run by the
build hook of ``python -m build`` and by ``make widgets``), so the wheel ships them built and a module loaded
from a blob URL has no import left to resolve. anywidget reads a ``pathlib.Path`` given as ``_esm`` or
``_css``; with ``ANYWIDGET_HMR=1`` (and ``watchfiles``) it watches the file and sends each new version to live
widgets, so ``npm run watch:widgets`` (esbuild rebuilding on every save) reloads them while developing.
"""

from __future__ import annotations

from pathlib import Path

from icebook.errors import EnvironmentProblem

ASSETS = Path(__file__).resolve().parent
"""The folder holding the assets (inside the installed package, or the checkout's ``icebook/widgets``)."""

BUNDLES = ASSETS / "static"
"""Where esbuild writes the bundled widget modules."""

STYLESHEET: Path = ASSETS / "icebook.css"
"""The one stylesheet: inlined by static HTML, loaded by live widgets (anywidget reads a ``Path``)."""


def bundle(name: str) -> Path:
    """The built ES module of one widget, e.g. ``bundle("tree.js")``, for a widget class's ``_esm``."""
    path = BUNDLES / name
    if not path.is_file():
        raise EnvironmentProblem(
            f"icebook's widget module {name} is not built ({path} is missing): run `make widgets` "
            "(or `npm install && npm run build:widgets`) in the checkout, or reinstall icebook"
        )
    return path
