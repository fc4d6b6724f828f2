"""IPython formatters for models that cannot carry ``_repr_html_`` themselves (spec/ is stdlib-only)."""

from __future__ import annotations

from typing import Any

from icebook.display.summary import snapshot_html
from icebook.spec.snapshots import Snapshot


def register_formatters(ip: Any = None) -> bool:
    """Show ``Snapshot`` objects as HTML cards in IPython; returns False outside IPython."""
    if ip is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        ip = get_ipython()
    if ip is None:
        return False
    html = ip.display_formatter.formatters["text/html"]
    html.for_type(Snapshot, lambda s: snapshot_html(s))
    return True
