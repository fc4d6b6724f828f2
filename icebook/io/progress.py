"""Progress bars only where a person watches: a terminal or a notebook, never a log or a pipe.

tqdm redraws its bar with carriage returns, which in a file or a CI log become one long line per
update; off a terminal and outside a notebook there is no bar at all.
"""

from __future__ import annotations

import sys
from typing import Any


def progress_wanted() -> bool:
    """Whether a bar would be seen: stderr is a terminal, or this is a Jupyter kernel."""
    kernel = sys.modules.get("ipykernel")
    if kernel is not None:
        try:
            from IPython import get_ipython

            shell = get_ipython()
        except ImportError:
            shell = None
        if shell is not None and getattr(shell, "kernel", None) is not None:
            return True
    stream = sys.stderr
    return bool(stream is not None and hasattr(stream, "isatty") and stream.isatty())


def progress_bar(total: int, **options: Any) -> Any:
    """A tqdm bar (a widget in a notebook) when ``progress_wanted``, else None."""
    if not progress_wanted():
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, file=sys.stderr, **options)
