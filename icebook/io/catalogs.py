"""Catalogs, configured the way Python users already configure them: PyIceberg's catalog layer.

PyIceberg reads ``~/.pyiceberg.yaml`` (or ``$PYICEBERG_HOME/.pyiceberg.yaml``, or one in the
working directory) and ``PYICEBERG_CATALOG__<NAME>__<KEY>`` environment variables, and speaks each
catalog's protocol (REST, SQL, Glue, Hive, DynamoDB, ...). icebook asks it only for what a name
means: the table's current metadata file and the FileIO properties to read it with (the
catalog's own plus any credentials it vends for that table). Everything after that is icebook's
own reading. Nothing here writes: SQL catalogs are opened without creating their tables.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from icebook.errors import CatalogError, IcebookError, NotFound, one_line


@dataclass(frozen=True, slots=True, kw_only=True)
class CatalogTable:
    """What a catalog says about one table."""

    catalog: str
    """The catalog's configured name."""
    namespace: tuple[str, ...]
    name: str
    metadata_location: str
    """The table's current metadata file, as the catalog records it."""
    properties: Mapping[str, str] = field(repr=False)
    """FileIO properties to read the table with (may hold credentials: never shown)."""

    @property
    def identifier(self) -> str:
        return ".".join((self.catalog, *self.namespace, self.name))


def catalog_configs() -> dict[str, dict[str, Any]]:
    """Catalog name -> its PyIceberg configuration, read fresh (file and environment)."""
    from pyiceberg.utils.config import Config

    catalogs = Config().config.get("catalog", {})
    if not isinstance(catalogs, Mapping):
        raise CatalogError("PyIceberg configuration: 'catalog' must map catalog names to their properties")
    return {str(name): dict(conf) for name, conf in catalogs.items() if isinstance(conf, Mapping)}


def catalog_names() -> list[str]:
    """Names of the catalogs PyIceberg's configuration defines."""
    return sorted(catalog_configs())


def is_configured(name: str) -> bool:
    return name.lower() in catalog_configs()


def describe(name: str) -> dict[str, str]:
    """A catalog's type and URI/warehouse, for listings (never credentials)."""
    conf = _config(name)
    shown = {"name": name.lower(), "type": str(conf.get("type") or conf.get("py-catalog-impl") or "")}
    for key in ("uri", "warehouse"):
        if conf.get(key):
            shown[key] = _redact(str(conf[key]))
    return shown


def _redact(uri: str) -> str:
    """``postgresql://user:secret@host/db`` -> ``postgresql://user:***@host/db``."""
    if "://" in uri and "@" in uri.split("://", 1)[1].split("/", 1)[0]:
        scheme, rest = uri.split("://", 1)
        auth, _, host = rest.partition("@")
        user = auth.split(":", 1)[0]
        return f"{scheme}://{user}:***@{host}" if ":" in auth else uri
    return uri


def _config(name: str) -> dict[str, Any]:
    configs = catalog_configs()
    conf = configs.get(name.lower())
    if conf is None:
        raise NotFound(f"no catalog {name!r} in the PyIceberg configuration", available=sorted(configs))
    return conf


_lock = threading.Lock()
_loaded: dict[tuple[str, tuple[tuple[str, str], ...]], Any] = {}


def load(name: str) -> Any:
    """The PyIceberg ``Catalog`` named ``name`` (cached while its configuration is unchanged)."""
    conf = _config(name)
    props = {k: str(v) for k, v in conf.items() if not isinstance(v, Mapping)}
    if str(props.get("type", "")).lower() == "sql":
        props.setdefault("init_catalog_tables", "false")  # reading must not create catalog tables
    key = (name.lower(), tuple(sorted(props.items())))
    with _lock:
        hit = _loaded.get(key)
    if hit is not None:
        return hit
    from pyiceberg.catalog import load_catalog

    with catalog_errors(name, props):
        catalog = load_catalog(name.lower(), **props)
    with _lock:
        _loaded[key] = catalog
    return catalog


@contextmanager
def catalog_errors(name: str, props: Mapping[str, str] | None = None) -> Iterator[None]:
    """PyIceberg's and its drivers' exceptions as one line naming the catalog and its URI."""
    try:
        yield
    except IcebookError:
        raise
    except Exception as exc:
        from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

        if isinstance(exc, (NoSuchNamespaceError, NoSuchTableError)):
            raise
        conf = props if props is not None else {k: str(v) for k, v in _config(name).items()}
        where = _redact(str(conf.get("uri") or conf.get("warehouse") or "(no uri configured)"))
        raise CatalogError(f"catalog {name!r} at {where}: {_message(exc)}") from exc


def _message(exc: BaseException) -> str:
    """The server's (or driver's) own message, on one line (``errors.one_line``), without the SQL a database
    driver's error carries (SQLAlchemy's original exception is the driver's)."""
    return one_line(getattr(exc, "orig", None) or exc).split(" [SQL:")[0]


def _parse(identifier: str | tuple[str, ...]) -> tuple[str, ...]:
    parts = tuple(identifier.split(".")) if isinstance(identifier, str) else tuple(identifier)
    if not parts or any(not p for p in parts):
        raise NotFound(f"{'.'.join(parts)!r} is not a namespace.table name")
    return parts


def list_namespaces(name: str, parent: str | tuple[str, ...] = ()) -> list[str]:
    """Namespaces of catalog ``name`` (under ``parent``), dotted."""
    catalog = load(name)
    with catalog_errors(name):
        found = catalog.list_namespaces(_parse(parent) if parent else ())
    return sorted(".".join(ns) for ns in found)


def list_tables(name: str, namespace: str | tuple[str, ...]) -> list[str]:
    """Tables of ``namespace`` in catalog ``name``, as ``namespace.table``; NotFound lists the namespaces."""
    from pyiceberg.exceptions import NoSuchNamespaceError

    catalog = load(name)
    ns = _parse(namespace)
    try:
        with catalog_errors(name):
            found = catalog.list_tables(ns)
    except NoSuchNamespaceError:
        raise NotFound(f"no namespace {'.'.join(ns)!r} in catalog {name!r}", available=list_namespaces(name)) from None
    tables = sorted(".".join(ident) for ident in found)
    if not tables and ".".join(ns) not in list_namespaces(name, ns[:-1]):
        # Some catalogs list an unknown namespace as empty instead of failing.
        raise NotFound(f"no namespace {'.'.join(ns)!r} in catalog {name!r}", available=list_namespaces(name))
    return tables


def resolve_table(name: str, table: str | tuple[str, ...]) -> CatalogTable:
    """Ask catalog ``name`` for table ``namespace.table``: its current metadata file and FileIO
    properties. Unknown namespaces and tables raise NotFound listing what exists."""
    from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError

    parts = _parse(table)
    if len(parts) < 2:
        raise NotFound(
            f"{'.'.join(parts)!r}: name a table as namespace.table in catalog {name!r}",
            available=list_namespaces(name),
        )
    catalog = load(name)
    try:
        with catalog_errors(name):
            loaded = catalog.load_table(parts)
    except (NoSuchTableError, NoSuchNamespaceError):
        namespace = parts[:-1]
        tables = list_tables(name, namespace)  # NotFound for the namespace itself, listing namespaces
        raise NotFound(f"no table {'.'.join(parts)!r} in catalog {name!r}", available=tables) from None
    props = {k: v for k, v in loaded.io.properties.items() if isinstance(v, str)}
    return CatalogTable(
        catalog=name.lower(),
        namespace=parts[:-1],
        name=parts[-1],
        metadata_location=str(loaded.metadata_location),
        properties=props,
    )


__all__ = [
    "CatalogTable",
    "catalog_configs",
    "catalog_names",
    "describe",
    "is_configured",
    "list_namespaces",
    "list_tables",
    "load",
    "resolve_table",
]
