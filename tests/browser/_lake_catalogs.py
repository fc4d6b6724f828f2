"""What the lake browser's tests share (imported by bare name, like ``_lab``): the catalogs they see."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

LAKE_EXTENSION = "icebook-lake-browser"
# Names that are markup: the panel must show them as text (no '.' or '/': PyIceberg splits names on '.').
HOSTILE_NAMESPACE = "<img src=x onerror=\"self['__icebookPwned']=1\">"
HOSTILE_TABLE = "<b onmouseover=alert(1)>bold"
SIZED_NAMESPACE = "sized"


@dataclass(frozen=True)
class LakeCatalogs:
    """The catalogs the lake browser's tests see: the PyIceberg scenarios, a catalog whose names are
    markup, a catalog that cannot be reached, a catalog of tables of different sizes (``SIZED_NAMESPACE``,
    ``_support.sized_tables``; ``sized_properties`` open it in PyIceberg), and a Spark Hadoop catalog over
    the scenario warehouse named in the ``spark-defaults.conf`` of ``spark_conf_dir`` (the server's and its
    kernels' SPARK_CONF_DIR);
    ``environment``: the ``PYICEBERG_CATALOG__*`` variables of the server's environment."""

    scenarios: str
    hostile: str
    offline: str
    spark: str
    sized: str
    sized_properties: dict[str, str]
    spark_conf_dir: Path
    environment: dict[str, str]
