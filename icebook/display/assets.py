"""The widgets' front-end files as anywidget wants them: ``_css`` as a path, ``_esm`` with its shared helpers.

The stylesheet is a ``pathlib.Path``: anywidget reads it, and with ``ANYWIDGET_HMR=1`` (and ``watchfiles``)
reloads it in live widgets when the file changes. Each ES module imports its helpers from ``widgets/dom.js``,
but anywidget loads a module from a blob URL, against which a relative ``import ... from "./dom.js"`` has
nothing to resolve, and a kernel has no place to serve a sibling file from. So the one ``dom.js`` is
inlined in place of that import line when the widget class is defined (no bundler). With ``ANYWIDGET_HMR=1``
both files are watched and the composed module is pushed to live widgets again on every change, through
anywidget's own file-contents objects (the ones its ``%%vfile`` magic uses).
"""

from __future__ import annotations

import importlib.util
import os
import re
from typing import Any

from icebook.widgets import STYLESHEET, asset

__all__ = ["STYLESHEET", "compose", "widget_module"]
HELPERS = "dom.js"
_HELPER_IMPORT = re.compile(r'^import \{[^}]*\} from "\./dom\.js";\n', re.M)
_WATCHERS: list[Any] = []  # kept alive for the life of the process


def compose(name: str) -> str:
    """The ES module ``name`` with its ``import ... from "./dom.js"`` line replaced by ``dom.js`` itself."""
    source = asset(name).read_text(encoding="utf-8")
    if not _HELPER_IMPORT.search(source):
        return source
    helpers = asset(HELPERS).read_text(encoding="utf-8")
    return _HELPER_IMPORT.sub(lambda _m: helpers, source, count=1)


def widget_module(name: str) -> Any:
    """``_esm`` for a widget class: the composed module, recomposed on change while developing."""
    try:
        from anywidget._file_contents import FileContents, VirtualFileContents
    except ImportError:  # an anywidget without file contents: the module as it is now, no live reload
        return compose(name)
    module = VirtualFileContents(compose(name))
    if os.environ.get("ANYWIDGET_HMR") == "1" and importlib.util.find_spec("watchfiles") is not None:
        for part in (name, HELPERS):
            watcher = FileContents(asset(part), start_thread=True)
            watcher.changed.connect(lambda _text: setattr(module, "contents", compose(name)))
            _WATCHERS.append(watcher)
    return module
