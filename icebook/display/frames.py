"""DataFrames as icebook shows them: text for the terminal (``display/terminal.py``), and a row limit in notebooks that leaves
pandas' global display options alone."""

from __future__ import annotations

from typing import Any, ClassVar

import pandas as pd

from icebook.display.terminal import frame_text


class ShownFrame(pd.DataFrame):
    """A DataFrame that displays at most ``display_rows`` rows (first and last ones, like pandas does).

    The limit holds for this object's own display only (``pd.option_context`` around pandas' renderers);
    anything derived from it is a plain DataFrame again.
    """

    _metadata: ClassVar[list[str]] = ["display_rows"]
    display_rows: int = 50

    @property
    def _constructor(self) -> Any:
        return pd.DataFrame

    def _limits(self) -> Any:
        rows = max(int(self.display_rows), 1)
        return pd.option_context("display.max_rows", rows, "display.min_rows", min(rows, 20))

    def __repr__(self) -> str:
        with self._limits():
            return super().__repr__()

    def _repr_html_(self) -> str | None:
        with self._limits():
            html: str | None = super()._repr_html_()  # type: ignore[misc]
            return html


def limited(result: Any, rows: int) -> Any:
    """``result`` ready for a notebook cell: a DataFrame shown with at most ``rows`` rows, else itself."""
    if isinstance(result, pd.DataFrame):
        shown = ShownFrame(result)
        shown.attrs.update(result.attrs)  # what the frame says of itself (its fields' types) goes along
        shown.display_rows = rows
        return shown
    return result


__all__ = ["ShownFrame", "frame_text", "limited"]
