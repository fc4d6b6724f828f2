"""Front-end assets (ES modules and CSS) of icebook's widgets, shipped in the wheel as ``icebook.widgets``."""

from __future__ import annotations

from pathlib import Path

ASSETS = Path(__file__).resolve().parent
"""The folder holding the assets (inside the installed package, or the source tree in development)."""


def asset(name: str) -> Path:
    """The path of one asset file, e.g. ``asset("icebook.css")``."""
    path = ASSETS / name
    if not path.is_file():
        raise FileNotFoundError(f"icebook widget asset {name!r} is missing from {ASSETS}")
    return path


STYLESHEET: Path = ASSETS / "icebook.css"
"""The one stylesheet: inlined by static HTML, loaded by live widgets (anywidget reads a ``Path``)."""
