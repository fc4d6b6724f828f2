"""Front-end assets (ES modules and CSS) of icebook's widgets, shipped in the wheel as ``icebook.widgets``."""

from __future__ import annotations

from importlib import resources


def read_asset(name: str) -> str:
    """Text of one asset file, e.g. ``read_asset("icebook.css")``."""
    return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")
