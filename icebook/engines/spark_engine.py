"""The Spark engine: time travel by snapshot id, branch, tag or time, SQL over a pinned table, and
branch/tag operations, through the one configured session (see ``spark_session``).

Spark's Iceberg runtime is the reference implementation, so this module adds no semantics of its
own: it translates icebook's ``at`` into Spark's read options and icebook's operations into Iceberg's
SQL extensions and stored procedures, and turns Spark's failures into ``EngineError``.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from icebook.engines import spark_catalogs, spark_storage
from icebook.engines.spark_session import (
    INTERNAL_CATALOG_PREFIX,
    active_session,
    add_catalog,
    catalog_configured_for_startup,
    catalogs,
    get_session,
    session_running,
    user_catalogs,
)
from icebook.errors import EngineError, EnvironmentProblem, IcebookError, NotFound, OptionError, StorageError
from icebook.io.filesystems import split_location
from icebook.text import spark_timestamp

VIEW_NAME = "t"
_IDENTIFIER = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w-]*){2,}$")


@dataclass(frozen=True, slots=True)
class SparkPoint:
    """How Spark should pin a read: exactly one of snapshot id, branch, tag or timestamp (ms)."""

    snapshot_id: int | None = None
    branch: str | None = None
    tag: str | None = None
    as_of_timestamp_ms: int | None = None

    def options(self) -> dict[str, str]:
        """Spark's time-travel read options (``versionAsOf`` and ``timestampAsOf``: the names both Spark 3.5
        and Spark 4 take; Iceberg's Spark 4 source refuses the older ``snapshot-id``/``tag``/``as-of-timestamp``)."""
        if self.snapshot_id is not None:
            return {"versionAsOf": str(self.snapshot_id)}
        if self.branch is not None:
            return {"branch": self.branch}
        if self.tag is not None:
            return {"versionAsOf": self.tag}
        if self.as_of_timestamp_ms is not None:
            return {"timestampAsOf": spark_timestamp(self.as_of_timestamp_ms).removeprefix("TIMESTAMP ").strip("'")}
        return {}

    def describe(self) -> str:
        for name, value in self.options().items():
            return f"{name}={value}"
        return "current"


def first_line(exc: BaseException) -> str:
    """Spark's own message without the Java stack (the first meaningful line)."""
    text = getattr(exc, "desc", None) or _java_message(exc) or str(exc)
    for line in str(text).strip().splitlines():
        line = line.strip()
        if line and not line.startswith(("at ", "JVM stacktrace", "Traceback")):
            return line
    return type(exc).__name__


def _java_message(exc: BaseException) -> str | None:
    """A Py4JJavaError's Java exception (``class: message``): its own str() starts with
    "An error occurred while calling o50.load.", which says nothing."""
    java = getattr(exc, "java_exception", None)
    if java is None:
        return None
    try:
        return str(java.toString())
    except Exception:  # the gateway may be gone
        return None


@contextmanager
def spark_errors(action: str) -> Iterator[None]:
    """Re-raise Spark and py4j failures as EngineError whose first line is Spark's message."""
    try:
        yield
    except IcebookError:
        raise
    except Exception as exc:  # pyspark raises AnalysisException, Py4JJavaError, IllegalArgumentException ...
        if type(exc).__module__.startswith(("pyspark", "py4j")):
            raise EngineError(f"{first_line(exc)}\n(while {action})") from exc
        raise


def looks_like_identifier(location: str) -> bool:
    """``catalog.namespace.table`` (no slash, no scheme): a name to resolve through Spark."""
    return "/" not in location and "://" not in location and bool(_IDENTIFIER.match(location))


def metadata_location_of(identifier: str) -> str:
    """The current metadata file of a catalog table, as Spark's catalog knows it now.

    Spark is not started (half a minute and a JVM) for a name no catalog could hold: with no
    session running, the name's catalog must be configured where a new session would find it.
    """
    catalog = identifier.split(".", 1)[0]
    if not session_running() and not catalog_configured_for_startup(catalog):
        raise NotFound(
            f"no table {identifier}: it is not a path, and no Spark catalog {catalog!r} is configured "
            "(start one with icebook.spark.session(warehouse=..., catalog=...), or open the table by its path)"
        )
    spark = get_session()
    try:
        with spark_errors(f"resolving {identifier}"):
            spark.sql(f"REFRESH TABLE {identifier}")
    except EngineError as exc:
        if "TABLE_OR_VIEW_NOT_FOUND" in str(exc):
            raise NotFound(f"no table {identifier}", available=_tables_like(identifier)) from None
        if "REQUIRES_SINGLE_PART_NAMESPACE" in str(exc) or "CATALOG_NOT_FOUND" in str(exc):
            catalog = identifier.split(".", 1)[0]
            raise NotFound(f"no catalog {catalog!r} in the Spark session", available=sorted(user_catalogs())) from None
        raise
    with spark_errors(f"resolving {identifier}"):
        rows = spark.sql(
            f"SELECT file FROM {identifier}.metadata_log_entries ORDER BY timestamp DESC LIMIT 1"
        ).collect()
    if not rows:
        raise NotFound(f"table {identifier} has no metadata file")
    return str(rows[0].file)


def _tables_like(identifier: str) -> list[str]:
    """Tables of the identifier's namespace, to suggest in a NotFound (empty when it cannot tell)."""
    namespace = identifier.rsplit(".", 1)[0]
    try:
        rows = get_session().sql(f"SHOW TABLES IN {namespace}").collect()
    except Exception:  # the namespace or catalog itself may not exist
        return []
    return sorted(f"{namespace}.{r.tableName}" for r in rows)


def session_tables(namespace: str) -> list[str]:
    """``catalog.namespace`` -> its tables as Spark's session lists them (``catalog.namespace.table``);
    ``catalog`` alone -> the tables of each of its namespaces. NotFound lists the namespaces."""
    spark = get_session()
    catalog = namespace.split(".", 1)[0]
    with spark_errors(f"listing namespaces of {catalog}"):
        namespaces = sorted(f"{catalog}.{r[0]}" for r in spark.sql(f"SHOW NAMESPACES IN {catalog}").collect())
    wanted = namespaces if "." not in namespace else [namespace]
    if "." in namespace and namespace not in namespaces:
        raise NotFound(f"no namespace {namespace!r} in Spark's catalog {catalog!r}", available=namespaces)
    found: list[str] = []
    for ns in wanted:
        with spark_errors(f"listing tables of {ns}"):
            found += [f"{ns}.{r.tableName}" for r in spark.sql(f"SHOW TABLES IN {ns}").collect()]
    return sorted(found)


def has_catalog(name: str) -> bool:
    """Whether the running Spark session has a catalog called ``name`` (never starts Spark)."""
    if name in catalogs():
        return True
    spark = active_session()
    if spark is None:
        return False
    try:
        return bool(spark.conf.get(f"spark.sql.catalog.{name}", None))
    except Exception:  # a closed or foreign session: treat as unknown
        return False


_sources: dict[tuple[int, str], str] = {}
"""(session, metadata file) -> the name Spark reads a table opened by path on an object store by."""


def prepare_table(location: str, metadata_location: str, properties: Mapping[str, str]) -> None:
    """Give the session what it needs to reach a table's files. A table on an object store is read
    through Iceberg's FileIO for its scheme with the table's FileIO properties: registered, by its exact
    metadata file, in icebook's reading catalog (``spark_storage.read_by_path``). Local and HDFS tables
    are read by path."""
    if not spark_storage.on_object_store(metadata_location):
        return
    spark = get_session()
    key = (id(spark), metadata_location)
    if key in _sources:
        return
    try:
        with spark_errors(f"opening {metadata_location}"):
            _sources[key] = spark_storage.read_by_path(spark, location, metadata_location, properties)
    except EngineError as exc:
        raise storage_problem(exc, location) from exc


_probed: set[tuple[int, str, str]] = set()
"""(session, name, metadata file) whose metadata file Spark's catalog has read once."""


def probe_by_name(identifier: str, location: str, metadata_location: str) -> None:
    """A table on an object store that Spark reads by name: its metadata file read once through the FileIO
    Spark's catalog gives the table (the user's settings or icebook's), so wrong credentials stop a read
    or a change in one line before anything is written (a REST catalog needs no storage for a ref change)."""
    if not spark_storage.on_object_store(metadata_location):
        return
    spark = get_session()
    key = (id(spark), identifier, metadata_location)
    if key in _probed:
        return
    try:
        with spark_errors(f"opening {identifier}"):
            jvm: Any = spark._jvm
            table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, identifier)
            table.io().newInputFile(metadata_location).getLength()
    except EngineError as exc:
        raise storage_problem(exc, location) from exc
    _probed.add(key)


def source_of(metadata_location: str) -> str:
    """What Spark loads for a table opened by path: its reading-catalog name, or the metadata file."""
    spark = active_session()
    return _sources.get((id(spark), metadata_location), metadata_location)


def metadata_table(metadata_location: str, name: str) -> str:
    """What Spark loads for the metadata table ``name`` (``files``, ``entries`` ...) of a table opened by path."""
    source = source_of(metadata_location)
    return f"{source}.{name}" if source != metadata_location else f"{metadata_location}#{name}"


def catalog_identifier(identifier: str, location: str) -> tuple[str | None, str]:
    """For a table opened through a PyIceberg catalog: its catalog configured in the session under the
    same name, and the name Spark reads it by; or None and why Spark cannot have that catalog."""
    catalog = identifier.split(".", 1)[0]
    try:
        spark_catalogs.ensure(get_session(), catalog, table_location=location)
    except (spark_catalogs.CatalogUnavailable, EnvironmentProblem) as exc:  # e.g. no JDBC driver in the session
        return None, str(exc)
    return identifier, ""


def dataframe(location: str, point: SparkPoint, *, identifier: str | None = None) -> Any:
    """A Spark DataFrame of the table at ``point``: by catalog name when given, else ``location``,
    a metadata file (Iceberg's Spark source loads it as a static table, so tables of any catalog
    and any writer read the same way) or a Hadoop-layout table directory."""
    spark = get_session()
    reader = spark.read.format("iceberg")
    for key, value in point.options().items():
        reader = reader.option(key, value)
    try:
        with spark_errors(f"reading {identifier or location} at {point.describe()}"):
            if identifier is not None:
                spark.sql(f"REFRESH TABLE {identifier}")
            return reader.load(identifier or source_of(location))
    except EngineError as exc:
        from icebook.engines.spark_v3_types import type_spark_lacks

        raise type_spark_lacks(exc, identifier or location) or storage_problem(exc, location) from exc


# Spark's messages when no FileIO or Hadoop file system handles a location's scheme.
_NO_FILESYSTEM = (
    "Failed to get file system for path",
    "No FileSystem for scheme",
    "UnsupportedFileSystemException",
    "NoClassDefFoundError",
    "ClassNotFoundException",
)
# ... and when the store refuses the credentials.
_DENIED = ("AccessDenied", "Access Denied", "403", "Forbidden", "InvalidAccessKeyId", "SignatureDoesNotMatch")


def storage_problem(exc: EngineError, location: str) -> IcebookError:
    """Spark's failure to reach an object store as one line naming the store, the bucket and the fix;
    any other failure unchanged."""
    loc = split_location(location)
    text = f"{exc}\n{exc.__cause__ or ''}"  # the Java trace's causes say what the store answered
    library = spark_storage.library_for(location)
    if library is None:
        return exc
    where = f"{loc.scheme}://{loc.authority}/ (bucket {loc.bucket!r} on {library.what})"
    if any(m in text for m in _NO_FILESYSTEM):
        return EngineError(
            f"Spark cannot reach {where}: its session lacks {library.coordinate} (add it to spark.jars.packages "
            f'and restart Python), or read with engine="arrow"; Spark said: {first_line(exc)}'
        )
    if any(m in text for m in _DENIED):
        said = next((line.strip() for line in text.splitlines() if any(m in line for m in _DENIED)), first_line(exc))
        return StorageError(
            f"Spark was refused by {where}: access denied; check the table's FileIO credentials (and any set "
            f"for that catalog in your Spark session, which icebook never overrides); Spark said: {said[:300]}"
        )
    return exc


def to_arrow(df: Any) -> pa.Table:
    """Collect a Spark DataFrame as Arrow, keeping Spark's types (timestamps in UTC), the v3 types in
    icebook's Arrow form (``spark_v3_types``)."""
    from icebook.engines.spark_v3_types import from_spark

    with spark_errors("collecting results"):
        batches = df._collect_as_arrow()
    schema = batches[0].schema if batches else _arrow_schema(df)
    return from_spark(pa.Table.from_batches(batches, schema=schema))


def _arrow_schema(df: Any) -> pa.Schema:
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(df.schema)


def read(
    location: str,
    point: SparkPoint,
    *,
    identifier: str | None = None,
    filter: str | None = None,
    columns: list[str] | None = None,
) -> pa.Table:
    """Rows of the table at ``point`` as Arrow, with an optional SQL filter and column list."""
    df = dataframe(location, point, identifier=identifier)
    try:
        with spark_errors(f"filtering {identifier or location}"):
            if filter:
                df = df.where(filter)
            if columns:
                df = df.select(*columns)
        return to_arrow(df)
    except EngineError as exc:
        raise storage_problem(exc, location) from exc


def sql(
    location: str,
    query: str,
    point: SparkPoint,
    *,
    identifier: str | None = None,
    as_spark: bool = False,
    lineage: Sequence[str] = (),
) -> Any:
    """Run ``query`` with the table bound as the temporary view ``t``, pinned to ``point``: Spark's result
    collected as Arrow (Spark's own types and names), or the Spark DataFrame with ``as_spark``. ``lineage``:
    metadata columns ``t`` has after the table's own (a view hides a table's metadata columns from SQL)."""
    spark = get_session()
    df = dataframe(location, point, identifier=identifier)
    with spark_errors(f"running {query.strip()[:80]!r}"):
        if lineage:
            df = df.select("*", *lineage)
        df.createOrReplaceTempView(VIEW_NAME)
        result = spark.sql(query)
        if as_spark:
            return result
        if not lineage:
            return to_arrow(result)
        # Iceberg 1.12 pushes an aggregate of a metadata column into its scan and fails there ("Cannot
        # find field '_row_id'"), on the table itself too; without the push-down Spark answers it.
        with _conf(spark, "spark.sql.iceberg.aggregate-push-down.enabled", "false"):
            return to_arrow(result)


@contextmanager
def _conf(spark: Any, key: str, value: str) -> Iterator[None]:
    """The session setting ``key`` is ``value`` inside, as it was after."""
    before = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


# ---------------------------------------------------------------------- writes (only when asked)


def writable_identifier(location: str, identifier: str | None) -> str:
    """A catalog identifier Spark can write through. Tables opened by path in a Hadoop-catalog
    layout (``<warehouse>/<namespace>/<table>/metadata/version-hint.text``) get a catalog named
    after their warehouse, added at runtime."""
    if identifier is not None:
        return identifier
    if spark_storage.on_object_store(location):
        raise EngineError(
            f"cannot change {location} through Spark: a table on an object store changes through its catalog; "
            "open it by its catalog name (catalog.namespace.table)"
        )
    path = location.removeprefix("file:").rstrip("/")
    parts = path.split("/")
    if len(parts) < 3:
        raise EngineError(f"cannot write to {location} through Spark: open it by catalog name (catalog.db.table)")
    warehouse, namespace, name = "/".join(parts[:-2]), parts[-2], parts[-1]
    for catalog, root in catalogs().items():
        if root.rstrip("/") == warehouse:
            return f"{catalog}.{namespace}.{name}"
    catalog = INTERNAL_CATALOG_PREFIX + hashlib.sha1(warehouse.encode()).hexdigest()[:10]
    get_session()
    add_catalog(catalog, warehouse)
    return f"{catalog}.{namespace}.{name}"


def run(statement: str) -> None:
    """Run one SQL statement (DDL or CALL) and raise EngineError on failure."""
    spark = get_session()
    with spark_errors(f"running {statement.strip()[:120]!r}"):
        spark.sql(statement).collect()


@contextmanager
def wap_branch(branch: str) -> Iterator[None]:
    """Writes inside go to ``branch`` (Iceberg's write-audit-publish ``spark.wap.branch``)."""
    spark = get_session()
    spark.conf.set("spark.wap.branch", branch)
    try:
        yield
    finally:
        spark.conf.unset("spark.wap.branch")


def retention_sql(ms: int | _dt.timedelta | None) -> str:
    """A Spark SQL duration (``7 DAYS``, ``90 MINUTES``) for a retention in ms or a timedelta."""
    if ms is None:
        return ""
    total_ms = int(ms.total_seconds() * 1000) if isinstance(ms, _dt.timedelta) else int(ms)
    for unit, size in (("DAYS", 86_400_000), ("HOURS", 3_600_000), ("MINUTES", 60_000)):
        if total_ms % size == 0 and total_ms > 0:
            return f"{total_ms // size} {unit}"
    raise OptionError(f"retention {ms} must be a positive whole number of minutes")
