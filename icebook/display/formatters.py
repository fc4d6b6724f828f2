"""IPython shows icebook's results through the renderer registry, with or without ``%load_ext icebook``.

Results are plain data without ``_repr_html_``; this teaches IPython's formatters, for every type in
``icebook.display.registry``: text/plain (``render_text``), text/html (``render_html``: the static view a
saved notebook keeps) and, in a kernel, the live widget (a widget-view bundle next to the static HTML).
It runs when a table is opened inside IPython and on ``%load_ext icebook``; outside IPython it does
nothing and imports nothing.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any

_TAUGHT: weakref.WeakKeyDictionary[Any, tuple[int, int]] = weakref.WeakKeyDictionary()
"""Shell -> how many types it has been taught, loaded and by name (a type registered later is taught on the
next call)."""
WIDGET_MIMETYPE = "application/vnd.jupyter.widget-view+json"


def current_shell() -> Any | None:
    """The running IPython shell, without importing IPython when the program never did."""
    ipython = sys.modules.get("IPython")
    if ipython is None:
        return None
    return ipython.get_ipython()


def register_formatters(ip: Any = None) -> bool:
    """Register the registry's renderers with ``ip`` (default: the running shell); False outside IPython."""
    shell = ip if ip is not None else current_shell()
    if shell is None:
        return False
    from icebook.display import registry
    from icebook.display.registry import render_html

    # Types not imported yet are taught by name (IPython matches them when one is shown), so that opening a
    # table in a kernel imports no analysis.
    types, by_name = registry.loaded(), registry.not_loaded()
    if _TAUGHT.get(shell) == (len(types), len(by_name)):
        return True
    display = shell.display_formatter
    for cls, entry in types.items():
        display.formatters["text/plain"].for_type(cls, _plain)
        display.formatters["text/html"].for_type(cls, render_html)
        if entry.widget is not None:
            display.mimebundle_formatter.for_type(cls, _live)
    for module, name, widget in by_name:
        display.formatters["text/plain"].for_type_by_name(module, name, _plain)
        display.formatters["text/html"].for_type_by_name(module, name, render_html)
        if widget:
            display.mimebundle_formatter.for_type_by_name(module, name, _live)
    _TAUGHT[shell] = (len(types), len(by_name))
    return True


def _plain(obj: Any, printer: Any, cycle: bool) -> None:
    from icebook.display.registry import render_text

    printer.text(render_text(obj))


def _live(obj: Any) -> dict[str, Any] | None:
    """The widget-view part of the live view's bundle; only in a kernel (a terminal cannot show widgets)."""
    shell = current_shell()
    if shell is None or getattr(shell, "kernel", None) is None:
        return None
    from icebook.display.registry import render_widget

    widget = render_widget(obj)
    if widget is None:
        return None
    # The static HTML comes from the text/html formatter: the widget need not render it again.
    bundle = widget._repr_mimebundle_(exclude={"text/html"})
    data = bundle[0] if isinstance(bundle, tuple) else bundle
    if not data or WIDGET_MIMETYPE not in data:
        return None
    return {WIDGET_MIMETYPE: data[WIDGET_MIMETYPE]}
