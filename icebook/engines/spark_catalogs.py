"""The user's PyIceberg catalogs, configured in Spark under the same name from the same configuration,
so Spark reads tables by name and commits branch and tag operations, write-audit-publish and the
maintenance procedures through the catalog every other writer uses.

- SQL: Iceberg's ``JdbcCatalog`` over the same tables PyIceberg's SQL catalog keeps (``iceberg_tables``,
  ``iceberg_namespace_properties``, rows keyed by the catalog's name). PyIceberg creates the
  ``iceberg_type`` column, so the JDBC catalog reads its rows with its V1 schema on its own; icebook
  never lets it create or alter catalog tables (``jdbc.init-catalog-tables=false``).
- REST: uri, credential or token, warehouse, prefix, OAuth settings, ``header.*``, and SigV4 signing
  where it is configured (``rest.sigv4-enabled``, ``rest.signing-region``, ``rest.signing-name`` and the
  ``rest.*`` credentials; the AWS bundle signs).
- Glue: the AWS bundle's client, with ``glue.*`` settings (``glue.endpoint``, ``glue.id``...) and the
  catalog's ``client.*``/``s3.*`` ones. Hive: the thrift uri.

Files are read and written with ``ResolvingFileIO``: Iceberg's FileIO for each location's scheme, given
the catalog's FileIO properties under their Java names (``spark_storage.fileio_properties``).
A commit that loses a race is retried by Iceberg (``commit.retry.num-retries``) and otherwise fails
with Iceberg's ``CommitFailedException``, which reaches the user as an ``EngineError``.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

from icebook.engines import spark_storage
from icebook.errors import EngineError
from icebook.io import catalogs

_REST_KEYS = ("uri", "credential", "token", "warehouse", "prefix", "oauth2-server-uri", "scope", "audience")
_PASSED_PREFIXES = ("header.", "rest.", "glue.")
"""Catalog properties whose names PyIceberg and Java share, passed as they are."""

_lock = threading.Lock()
_configured: dict[str, dict[str, str]] = {}


class CatalogUnavailable(EngineError):
    """Spark cannot have this catalog; the message says why and what to configure."""


def jdbc_uri(sqlalchemy_uri: str) -> tuple[str, dict[str, str], spark_storage.Library]:
    """A SQLAlchemy URI (PyIceberg's SQL catalog) as a JDBC URI, its user and password, and its driver."""
    scheme = sqlalchemy_uri.split("://", 1)[0].split("+", 1)[0].lower()
    if scheme == "sqlite":
        path = sqlalchemy_uri.split(":///", 1)[1] if ":///" in sqlalchemy_uri else ""
        if not path or path.startswith(":memory:"):
            raise CatalogUnavailable(f"an in-memory sqlite catalog ({sqlalchemy_uri}) cannot be shared with Spark")
        return f"jdbc:sqlite:{os.path.abspath(path.split('?', 1)[0])}", {}, spark_storage.SQLITE_JDBC
    if scheme in ("postgresql", "postgres"):
        parts = urlsplit(sqlalchemy_uri)
        host = parts.hostname or "localhost"
        port = f":{parts.port}" if parts.port else ""
        auth = {"jdbc.user": unquote(parts.username)} if parts.username else {}
        if parts.password:
            auth["jdbc.password"] = unquote(parts.password)
        query = f"?{parts.query}" if parts.query else ""
        return f"jdbc:postgresql://{host}{port}{parts.path}{query}", auth, spark_storage.POSTGRES_JDBC
    raise CatalogUnavailable(
        f"Spark has no JDBC driver icebook can supply for {scheme} (sqlite and PostgreSQL are supported)"
    )


def catalog_kind(conf: Mapping[str, Any]) -> str:
    """The catalog's type, inferred from its URI when not given, as PyIceberg infers it."""
    kind = str(conf.get("type") or "").lower()
    if kind or "py-catalog-impl" in conf:
        return kind
    uri = str(conf.get("uri") or "")
    return "rest" if uri.startswith(("http://", "https://")) else "hive" if uri.startswith("thrift://") else ""


def spark_catalog_conf(name: str, conf: Mapping[str, Any], *, fallback_warehouse: str | None) -> dict[str, str]:
    """Spark settings (``spark.sql.catalog.<name>.*``) for PyIceberg catalog ``name`` configured as ``conf``.
    Raises CatalogUnavailable naming what Spark would need."""
    props = {k: str(v) for k, v in conf.items() if not isinstance(v, Mapping)}
    kind = catalog_kind(props)
    warehouse_location = [props["warehouse"]] if "://" in props.get("warehouse", "") else []
    out: dict[str, str] = {
        "": "org.apache.iceberg.spark.SparkCatalog",
        "io-impl": spark_storage.RESOLVING_FILE_IO,
        **spark_storage.fileio_properties(props, warehouse_location),
    }
    if kind == "sql":
        uri, auth, _ = jdbc_uri(props.get("uri", ""))
        warehouse = props.get("warehouse") or fallback_warehouse
        out |= {"type": "jdbc", "uri": uri, "jdbc.init-catalog-tables": "false", **auth}
        if warehouse:
            out["warehouse"] = warehouse
    elif kind == "rest":
        out["type"] = "rest"
        out |= {key: props[key] for key in _REST_KEYS if props.get(key)}
        out |= {k: v for k, v in props.items() if k.startswith(_PASSED_PREFIXES)}
    elif kind == "hive":
        out |= {"type": "hive", "uri": props.get("uri", "")}
        if props.get("warehouse"):
            out["warehouse"] = props["warehouse"]
    elif kind == "glue":
        out |= {"type": "glue"}
        out |= {k: v for k, v in props.items() if k.startswith(_PASSED_PREFIXES)}
        if props.get("warehouse"):
            out["warehouse"] = props["warehouse"]
    else:
        raise CatalogUnavailable(f"icebook cannot configure a {kind or 'custom'}-type catalog in Spark")
    prefix = f"spark.sql.catalog.{name}"
    return {f"{prefix}.{k}" if k else prefix: v for k, v in out.items()}


def _required_library(conf: Mapping[str, Any]) -> spark_storage.Library | None:
    """The library Spark needs to speak to this catalog: a JDBC driver, or the AWS bundle for Glue and
    for SigV4 signing of a REST catalog."""
    kind = catalog_kind(conf)
    if kind == "sql":
        return jdbc_uri(str(conf.get("uri", "")))[2]
    if kind == "glue":
        return spark_storage.glue()
    if kind == "rest" and str(conf.get("rest.sigv4-enabled", "")).lower() == "true":
        return spark_storage.s3()
    return None


def ensure(spark: Any, name: str, *, table_location: str) -> None:
    """Configure PyIceberg catalog ``name`` in the session under the same name, unless the session
    already has a catalog of that name (the user's own settings win). Catalog settings are runtime
    settings, so this works on a running (or attached) session."""
    if _session_has(spark, name):
        return
    configs = catalogs.catalog_configs()
    conf = configs.get(name.lower())
    if conf is None:
        raise CatalogUnavailable(f"no PyIceberg catalog {name!r} to configure in Spark")
    try:
        settings = spark_catalog_conf(name, conf, fallback_warehouse=_warehouse_of(table_location))
    except CatalogUnavailable as exc:
        raise CatalogUnavailable(f"Spark cannot have catalog {name!r}: {exc}") from None
    library = _required_library(conf)
    if library is not None:
        spark_storage.require(spark, library, needed_for=f"Catalog {name!r} in Spark")
    with _lock:
        for key, value in settings.items():
            spark.conf.set(key, value)
        _configured[name] = settings


def _session_has(spark: Any, name: str) -> bool:
    try:
        return bool(spark.conf.get(f"spark.sql.catalog.{name}", None))
    except Exception:  # a closed session: nothing to ask
        return False


def _warehouse_of(table_location: str) -> str | None:
    """``<warehouse>/<namespace>/<table>`` -> ``<warehouse>``: the JDBC catalog insists on a warehouse,
    which only places new tables; existing ones keep their own locations."""
    parts = table_location.rstrip("/").rsplit("/", 2)
    return parts[0] if len(parts) == 3 and parts[0] and not parts[0].endswith(":/") else None


def configured() -> dict[str, dict[str, str]]:
    """Catalogs icebook configured in Spark (their settings may hold credentials: do not print them)."""
    with _lock:
        return {k: dict(v) for k, v in _configured.items()}


__all__ = ["CatalogUnavailable", "configured", "ensure", "jdbc_uri", "spark_catalog_conf"]
