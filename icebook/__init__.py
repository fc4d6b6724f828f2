"""icebook: a Jupyter workbench for seeing inside Apache Iceberg tables and travelling through their history.

import icebook
t = icebook.open("path/to/table")      # a table directory or a metadata file, local or URI
t.inspect.files()
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from icebook.version import __version__

if TYPE_CHECKING:
    from icebook.table import Table


def open(
    location: str | os.PathLike[str], *, catalog: str | None = None, properties: dict[str, str] | None = None
) -> Table:
    """Open an Iceberg table: a table directory or a metadata file (a local path or a URI such as
    ``s3://bucket/db/events``), or a catalog table by name: ``"prod.db.events"``, or
    ``open("db.events", catalog="prod")``. Catalogs are PyIceberg's (``~/.pyiceberg.yaml``,
    ``PYICEBERG_CATALOG__<NAME>__<KEY>``), else Spark's session catalogs.

    ``properties``: FileIO properties for a location opened directly (``s3.endpoint``,
    ``s3.access-key-id``, ``s3.secret-access-key``, ``s3.region``, ``gcs.oauth2.token``,
    ``adls.account-key``, ...); without them each object store's usual environment applies."""
    from icebook.table.opening import open_table

    return open_table(os.fspath(location), catalog=catalog, properties=properties)


def variant_json(values: Any) -> Any:
    """Each value of a ``variant`` column (as ``read()``, ``sql()`` and ``lazy()`` return it, from either
    engine: ``struct<metadata, value>``; an Arrow array, a pandas or polars column) as the JSON text Spark's ``to_json`` gives, a ``pyarrow`` string
    array (null where the variant is null). Malformed bytes are one ``icebook.errors.MetadataError``."""
    from icebook.analysis.variant_text import variant_json as to_text

    return to_text(values)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext icebook``: registers the ``%ice`` / ``%%ice`` magics."""
    from icebook.magics import load_ipython_extension as load

    load(ipython)


def __getattr__(name: str) -> Any:
    # Heavy submodules load on first use so `import icebook` stays fast.
    if name == "spark":
        import importlib

        return importlib.import_module("icebook.spark")
    raise AttributeError(f"module 'icebook' has no attribute {name!r}")


__all__ = ["__version__", "load_ipython_extension", "open", "variant_json"]
