"""What the lake browser's tests share (imported by bare name, like ``_lab``): the catalogs they see."""

from __future__ import annotations

from dataclasses import dataclass

LAKE_EXTENSION = "icebook-lake-browser"
# Names that are markup: the panel must show them as text (no '.' or '/': PyIceberg splits names on '.').
HOSTILE_NAMESPACE = "<img src=x onerror=\"self['__icebookPwned']=1\">"
HOSTILE_TABLE = "<b onmouseover=alert(1)>bold"


@dataclass(frozen=True)
class LakeCatalogs:
    """The catalogs the lake browser's tests see: the PyIceberg scenarios, a catalog whose names are
    markup, and a catalog that cannot be reached."""

    scenarios: str
    hostile: str
    offline: str
