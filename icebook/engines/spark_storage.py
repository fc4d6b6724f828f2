"""Object stores for Spark through Iceberg's own FileIOs, as production configures them.

Spark reaches a table's files through ``ResolvingFileIO``, which picks Iceberg's FileIO by the
location's scheme: ``S3FileIO`` for ``s3``, ``s3a`` and ``s3n``, ``GCSFileIO`` for ``gs``, ``ADLSFileIO``
for ``abfs(s)`` and ``wasb(s)``, Hadoop's file systems for the rest (local, HDFS). The FileIOs live in
the runtime jar; the cloud SDKs they call come in Iceberg's bundles (``spark_jars``).

A FileIO takes its settings from its catalog's properties. PyIceberg and Java share most property names
(``s3.endpoint``, ``s3.access-key-id``, ``gcs.project-id`` ...); ``JAVA_NAMES`` is the one table of the
names that differ, and ``fileio_properties`` the one translation.

A table opened by path has no catalog, and Iceberg's Spark source reads paths only through Hadoop's
file systems. So a table on an object store opened by path is registered, by its exact metadata file,
in a catalog of icebook's own for reading: an Iceberg JDBC catalog on a sqlite file in this process's
temporary directory, configured with the FileIO and the table's properties. Registering writes one
row to that local file and nothing to the store; icebook never commits through it.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from icebook.engines import spark_jars
from icebook.errors import EnvironmentProblem, StorageError
from icebook.io.filesystems import (
    AZURE_SCHEMES,
    GCS_SCHEMES,
    S3_SCHEMES,
    azure_connection_string,
    split_location,
    truthy,
)
from icebook.text import spark_string

RESOLVING_FILE_IO = "org.apache.iceberg.io.ResolvingFileIO"


@dataclass(frozen=True, slots=True)
class Library:
    """A library Spark needs on its classpath for a store or a catalog: the Maven coordinate icebook's
    sessions ask for, and a class only it provides."""

    what: str
    """What it serves, as a person names it (``S3``, ``GCS``, ``sqlite JDBC``)."""
    coordinate: str
    probe_class: str


def _bundle(cloud: str) -> str:
    version = spark_jars.Stack.from_env().bundles.get(cloud) or spark_jars.BUNDLE_VERSIONS[cloud]
    return f"org.apache.iceberg:iceberg-{cloud}-bundle:{version}"


def s3() -> Library:
    return Library("S3 (S3FileIO)", _bundle("aws"), "software.amazon.awssdk.services.s3.S3Client")


def gcs() -> Library:
    return Library("GCS (GCSFileIO)", _bundle("gcp"), "com.google.cloud.storage.Storage")


def adls() -> Library:
    return Library("ADLS (ADLSFileIO)", _bundle("azure"), "com.azure.storage.file.datalake.DataLakeFileClient")


def glue() -> Library:
    return Library("AWS Glue", _bundle("aws"), "software.amazon.awssdk.services.glue.GlueClient")


SQLITE_JDBC = Library("sqlite JDBC", spark_jars.SQLITE_JDBC, "org.sqlite.JDBC")
POSTGRES_JDBC = Library("PostgreSQL JDBC", spark_jars.POSTGRES_JDBC, "org.postgresql.Driver")


def has_class(spark: Any, name: str) -> bool:
    """Whether the session's driver can load class ``name`` (its classpath holds the library)."""
    try:
        return bool(spark._jvm.org.apache.spark.util.Utils.classIsLoadable(name))
    except Exception:  # Spark Connect or a closed gateway: no JVM to ask
        return False


def require(spark: Any, library: Library, *, needed_for: str) -> None:
    """One line naming the coordinate to add, unless the session has the library. A session icebook
    starts has them all; one the user attached may not."""
    if has_class(spark, library.probe_class):
        return
    raise EnvironmentProblem(
        f"{needed_for} needs {library.what} in Spark: add {library.coordinate} to the session's "
        "spark.jars.packages (Spark's classpath is fixed when it starts: restart the Python process, or "
        "let icebook.spark.session() start Spark, which adds it)"
    )


def library_for(location: str) -> Library | None:
    """The library a location's FileIO needs (None for local and HDFS paths)."""
    scheme = split_location(location).scheme
    if scheme in S3_SCHEMES:
        return s3()
    if scheme in GCS_SCHEMES:
        return gcs()
    if scheme in AZURE_SCHEMES:
        return adls()
    return None


def on_object_store(location: str) -> bool:
    return library_for(location) is not None


# ---------------------------------------------------------------------- the one table of property names

JAVA_NAMES: Mapping[str, str] = {
    "s3.region": "client.region",
    "glue.region": "client.region",  # Java's AWS clients, Glue's among them, share one region
    "gcs.endpoint": "gcs.service.host",
    "adls.account-name": "adls.auth.shared-key.account.name",
    "adls.account-key": "adls.auth.shared-key.account.key",
}
"""PyIceberg FileIO (and AWS client) property -> the Java name for it, where the two differ. Every other
``s3.*``, ``client.*``, ``gcs.*``, ``adls.*`` and ``glue.*`` property passes through under its own name
(``glue.endpoint``, ``glue.id``, ``glue.skip-archive`` are the same in both). Java has no property for
Glue's static keys (PyIceberg's ``glue.access-key-id``...): its Glue client takes credentials from AWS's
default chain (environment, ``aws.accessKeyId`` system properties, profile, role) or from
``client.credentials-provider``."""
_PASSED = ("s3.", "client.", "gcs.", "adls.", "glue.")
_PER_ACCOUNT = {"adls.connection-string": "adls.connection-string", "adls.sas-token": "adls.sas-token"}
"""Set per account in Java (``<name>.<account>.dfs.core.windows.net``), once for all in PyIceberg."""


def fileio_properties(props: Mapping[str, str], locations: Sequence[str] = ()) -> dict[str, str]:
    """Java FileIO properties for a table (or catalog) configured for PyIceberg with ``props``, whose
    files are at ``locations`` (their ADLS accounts key the per-account settings)."""
    out: dict[str, str] = {}
    for key, value in props.items():
        if value in (None, "") or not key.startswith(_PASSED) or key in _PER_ACCOUNT:
            continue
        out.setdefault(JAVA_NAMES.get(key, key), str(value))
    for key, value in props.items():  # a Java name given as is wins over a translated one
        if key in JAVA_NAMES.values() and value not in (None, ""):
            out[key] = str(value)
    endpoint = out.get("s3.endpoint") or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        out["s3.endpoint"] = endpoint
        # icebook's own S3 reader (pyarrow) addresses a custom endpoint by path; so does S3FileIO, when told
        out.setdefault("s3.path-style-access", "true")
    if "s3.path-style-access" in out:
        out["s3.path-style-access"] = "true" if truthy(out["s3.path-style-access"]) else "false"
    if truthy(props.get("gcs.no-auth")) or truthy(props.get("gcs.anonymous")):
        out["gcs.no-auth"] = "true"
        for token in ("gcs.oauth2.token", "gcs.oauth2.token-expires-at"):
            out.pop(token, None)
    for location in locations:
        out |= _adls_account_settings(props, location)
    return out


def _adls_account_settings(props: Mapping[str, str], location: str) -> dict[str, str]:
    """ADLS settings keyed by the account host of ``location`` (``container@account.dfs.core.windows.net``):
    PyIceberg's connection string or endpoint authority become the Java FileIO's per-account endpoint."""
    loc = split_location(location)
    if loc.scheme not in AZURE_SCHEMES:
        return {}
    if "@" not in loc.authority:
        raise StorageError(
            f"Spark's ADLSFileIO cannot address {location}: it reads ADLS locations that name their account, "
            f"{loc.scheme}://<container>@<account>.dfs.core.windows.net/<path> (this one names container "
            f'{loc.bucket!r} and no account); read it with engine="arrow"'
        )
    host = loc.authority.partition("@")[2]
    account = host.split(".", 1)[0]
    out: dict[str, str] = {}
    connection = azure_connection_string(props.get("adls.connection-string", ""))
    endpoint = connection.get("BlobEndpoint") or connection.get("DfsEndpoint")
    authority = props.get("adls.dfs-storage-authority") or props.get("adls.blob-storage-authority")
    if not endpoint and authority:
        scheme = props.get("adls.dfs-storage-scheme") or props.get("adls.blob-storage-scheme") or "https"
        # an emulator (an address, not a name with the account in it) serves accounts by path, as Azure's SDK does
        path = "" if authority.startswith(f"{account}.") else f"/{account}"
        endpoint = f"{scheme}://{authority}{path}"
    if endpoint:
        out[f"adls.connection-string.{host}"] = endpoint
    given_key = props.get("adls.account-key") or props.get("adls.auth.shared-key.account.key")
    if connection.get("AccountName") == account and connection.get("AccountKey") and not given_key:
        # the Java FileIO takes the shared key on its own, not from the connection string
        out["adls.auth.shared-key.account.name"] = account
        out["adls.auth.shared-key.account.key"] = connection["AccountKey"]
    if props.get("adls.sas-token"):
        out[f"adls.sas-token.{host}"] = str(props["adls.sas-token"])
    return out


# ---------------------------------------------------------------------- reading tables opened by path

_lock = threading.Lock()
_registered: dict[tuple[str, str], str] = {}
"""(catalog, metadata file) -> the name Spark reads it by."""


def reading_catalog_conf(name: str, props: Mapping[str, str], directory: str) -> dict[str, str]:
    """Spark settings of icebook's reading catalog ``name`` for tables with FileIO ``props``."""
    prefix = f"spark.sql.catalog.{name}"
    db = os.path.join(directory, f"{name}.db")
    return {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "jdbc",
        f"{prefix}.uri": f"jdbc:sqlite:{db}",
        f"{prefix}.jdbc.schema-version": "V1",  # a new catalog database: Iceberg's current table layout
        f"{prefix}.warehouse": "file:" + os.path.join(directory, "unused-warehouse"),
        f"{prefix}.io-impl": RESOLVING_FILE_IO,
        **{f"{prefix}.{k}": v for k, v in props.items()},
    }


def read_by_path(spark: Any, location: str, metadata_location: str, props: Mapping[str, str]) -> str:
    """The name Spark reads a table opened by path on an object store by: its exact metadata file
    registered in icebook's reading catalog for the table's FileIO properties."""
    library = library_for(metadata_location) or library_for(location)
    if library is not None:
        require(spark, library, needed_for=f"Reading {metadata_location}")
    require(spark, SQLITE_JDBC, needed_for="Reading a table by its path on an object store")
    java = fileio_properties(props, [location, metadata_location])
    digest = hashlib.sha256(repr(sorted(java.items())).encode()).hexdigest()[:12]
    catalog = f"icebook_files_{digest}"
    table = "t_" + hashlib.sha256(metadata_location.encode()).hexdigest()[:16]
    with _lock:
        known = _registered.get((catalog, metadata_location))
        if known is not None:
            return known
        directory = os.path.join(tempfile.gettempdir(), f"icebook-spark-{os.getpid()}")
        os.makedirs(directory, exist_ok=True)
        for key, value in reading_catalog_conf(catalog, java, directory).items():
            spark.conf.set(key, value)
        spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {catalog}.files").collect()
        if not spark.catalog.tableExists(f"{catalog}.files.{table}"):
            spark.sql(
                f"CALL {catalog}.system.register_table(table => 'files.{table}', "
                f"metadata_file => {spark_string(metadata_location)})"
            )
        name = f"{catalog}.files.{table}"
        _registered[(catalog, metadata_location)] = name
        return name


def reading_catalog(name: str) -> bool:
    """Whether ``name`` is one of icebook's reading catalogs (nothing is ever committed through them)."""
    return name.startswith("icebook_files_")


__all__ = [
    "JAVA_NAMES",
    "POSTGRES_JDBC",
    "RESOLVING_FILE_IO",
    "SQLITE_JDBC",
    "Library",
    "adls",
    "fileio_properties",
    "gcs",
    "glue",
    "has_class",
    "library_for",
    "on_object_store",
    "read_by_path",
    "reading_catalog",
    "require",
    "s3",
]
