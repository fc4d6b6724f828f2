"""Opening a table by location or by name, and listing the catalogs and tables a name can resolve through."""

from __future__ import annotations

from collections.abc import Mapping

from icebook.errors import NotFound
from icebook.io import catalogs
from icebook.io.fileio import FileIO
from icebook.table import Table
from icebook.table.table_lookup import find_table


def open_table(
    location: str,
    *,
    catalog: str | None = None,
    fileio: FileIO | None = None,
    properties: Mapping[str, str] | None = None,
) -> Table:
    """Open a table directory or metadata file (local path or URI, read with FileIO ``properties``),
    or a table by name: ``catalog.namespace.table`` (or ``namespace.table`` with ``catalog=``).

    A name resolves through the PyIceberg catalog of that name when one is configured
    (``~/.pyiceberg.yaml``, ``PYICEBERG_CATALOG__*``), else through Spark's session catalog."""
    return Table._from(find_table(location, catalog=catalog, fileio=fileio, properties=properties))


def catalog_listing() -> list[dict[str, str]]:
    """Every catalog a name can resolve through: PyIceberg's configured catalogs (type, URI,
    warehouse; never credentials), then the catalogs of Spark's running session."""
    from icebook.engines import spark_engine

    rows = [{"catalog": name, "source": "pyiceberg", **catalogs.describe(name)} for name in catalogs.catalog_names()]
    for row in rows:
        row.pop("name", None)
    for name, warehouse in sorted(spark_engine.user_catalogs().items()):
        rows.append({"catalog": name, "source": "spark", "type": "hadoop", "warehouse": warehouse})
    return rows


def table_listing(namespace: str) -> list[str]:
    """Tables of ``catalog.namespace`` (or of every namespace of ``catalog``), as full names.
    Unknown catalogs and namespaces raise NotFound listing what exists."""
    from icebook.engines import spark_engine

    parts = namespace.split(".")
    name = parts[0]
    if catalogs.is_configured(name):
        if len(parts) == 1:
            return [f"{name}.{t}" for ns in catalogs.list_namespaces(name) for t in catalogs.list_tables(name, ns)]
        return [f"{name}.{t}" for t in catalogs.list_tables(name, ".".join(parts[1:]))]
    if spark_engine.has_catalog(name):
        return spark_engine.session_tables(namespace)
    known = [row["catalog"] for row in catalog_listing()]
    raise NotFound(f"no catalog {name!r} (neither a PyIceberg catalog nor one of Spark's)", available=known)


__all__ = ["catalog_listing", "open_table", "table_listing"]
