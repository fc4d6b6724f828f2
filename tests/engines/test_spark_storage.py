"""The one table from PyIceberg's FileIO properties to the Java FileIOs', the bundle each store needs, and
PyIceberg catalog configurations as Spark catalogs (no JVM: the settings themselves)."""

from __future__ import annotations

from typing import Any

import pytest

from icebook.engines import spark_catalogs, spark_storage
from icebook.engines.spark_catalogs import CatalogUnavailable, jdbc_uri, spark_catalog_conf


def test_pyiceberg_properties_under_the_java_fileios_names() -> None:
    minio = {
        "s3.endpoint": "http://minio:9000",
        "s3.access-key-id": "etl",
        "s3.secret-access-key": "secret",
        "s3.region": "eu-west-1",
        "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO",  # PyIceberg's own: not a FileIO property
        "uri": "sqlite:///c.db",
    }
    assert spark_storage.fileio_properties(minio) == {
        "s3.endpoint": "http://minio:9000",
        "s3.access-key-id": "etl",
        "s3.secret-access-key": "secret",
        "client.region": "eu-west-1",
        "s3.path-style-access": "true",  # a custom endpoint is addressed by path, as pyarrow does
    }
    # a Java name given as is wins; a path-style setting is normalised
    both = {"s3.region": "eu-west-1", "client.region": "us-east-2", "s3.path-style-access": "False", "s3.endpoint": "e"}
    assert spark_storage.fileio_properties(both) == {
        "client.region": "us-east-2",
        "s3.path-style-access": "false",
        "s3.endpoint": "e",
    }
    gcs = {
        "gcs.service.host": "http://127.0.0.1:4443",
        "gcs.project-id": "p",
        "gcs.oauth2.token": "t",
        "gcs.no-auth": "true",
    }
    assert spark_storage.fileio_properties(gcs) == {
        "gcs.service.host": "http://127.0.0.1:4443",
        "gcs.project-id": "p",
        "gcs.no-auth": "true",
    }
    assert spark_storage.fileio_properties({"gcs.endpoint": "http://g"}) == {"gcs.service.host": "http://g"}


def test_adls_settings_are_keyed_by_the_tables_account() -> None:
    host = "devstoreaccount1.dfs.core.windows.net"
    emulator = {
        "adls.account-name": "devstoreaccount1",
        "adls.account-key": "k==",
        "adls.blob-storage-authority": "127.0.0.1:10000",
        "adls.blob-storage-scheme": "http",
    }
    props = spark_storage.fileio_properties(emulator, [f"abfs://lake@{host}/wh/db/t"])
    assert props["adls.auth.shared-key.account.name"] == "devstoreaccount1"
    assert props["adls.auth.shared-key.account.key"] == "k=="
    # an emulator at an address serves the account by path, as Azure's SDK addresses it
    assert props[f"adls.connection-string.{host}"] == "http://127.0.0.1:10000/devstoreaccount1"
    real = {"adls.dfs-storage-authority": "acct.dfs.core.windows.net", "adls.sas-token": "sv=1&sig=x"}
    host2 = "acct.dfs.core.windows.net"
    props = spark_storage.fileio_properties(real, [f"abfss://c@{host2}/wh"])
    assert props[f"adls.connection-string.{host2}"] == "https://acct.dfs.core.windows.net"
    assert props[f"adls.sas-token.{host2}"] == "sv=1&sig=x" and "adls.sas-token" not in props
    connection = "DefaultEndpointsProtocol=http;AccountName=a;AccountKey=k;BlobEndpoint=http://127.0.0.1:1/a;"
    props = spark_storage.fileio_properties(
        {"adls.connection-string": connection}, ["abfs://c@a.dfs.core.windows.net/"]
    )
    assert props == {"adls.connection-string.a.dfs.core.windows.net": "http://127.0.0.1:1/a"}
    assert spark_storage.fileio_properties({"adls.connection-string": connection}, ["/tmp/wh"]) == {}


def test_each_store_needs_its_bundle() -> None:
    assert spark_storage.library_for("s3a://b/k") == spark_storage.s3()
    assert spark_storage.library_for("gs://b/k") == spark_storage.gcs()
    assert spark_storage.library_for("abfss://c@a.dfs.core.windows.net/k") == spark_storage.adls()
    assert spark_storage.library_for("/tmp/wh") is None and spark_storage.library_for("file:///tmp/wh") is None
    assert spark_storage.s3().coordinate == "org.apache.iceberg:iceberg-aws-bundle:1.12.0"
    assert spark_storage.gcs().coordinate == "org.apache.iceberg:iceberg-gcp-bundle:1.11.0"
    assert spark_storage.adls().coordinate == "org.apache.iceberg:iceberg-azure-bundle:1.10.0"
    assert spark_storage.SQLITE_JDBC.coordinate == "org.xerial:sqlite-jdbc:3.50.3.0"
    settings = spark_storage.reading_catalog_conf("icebook_files_x", {"s3.endpoint": "e"}, "/tmp/d")
    assert settings["spark.sql.catalog.icebook_files_x.io-impl"] == "org.apache.iceberg.io.ResolvingFileIO"
    assert settings["spark.sql.catalog.icebook_files_x.uri"] == "jdbc:sqlite:/tmp/d/icebook_files_x.db"
    assert settings["spark.sql.catalog.icebook_files_x.s3.endpoint"] == "e"


def test_sql_catalog_uris_as_jdbc() -> None:
    uri, auth, driver = jdbc_uri("sqlite:////data/lake/catalog.db")
    assert (uri, auth, driver) == ("jdbc:sqlite:/data/lake/catalog.db", {}, spark_storage.SQLITE_JDBC)
    uri, auth, driver = jdbc_uri("postgresql+psycopg2://etl:p%40ss@db:5433/lake")
    assert uri == "jdbc:postgresql://db:5433/lake" and auth == {"jdbc.user": "etl", "jdbc.password": "p@ss"}
    assert driver is spark_storage.POSTGRES_JDBC
    with pytest.raises(CatalogUnavailable, match="in-memory"):
        jdbc_uri("sqlite:///:memory:")
    with pytest.raises(CatalogUnavailable, match="mysql"):
        jdbc_uri("mysql+pymysql://u@h/db")


def test_pyiceberg_catalogs_as_spark_catalogs() -> None:
    sql = spark_catalog_conf(
        "lake", {"type": "sql", "uri": "sqlite:////d/c.db", "s3.endpoint": "x"}, fallback_warehouse="s3://b/wh"
    )
    assert sql == {
        "spark.sql.catalog.lake": "org.apache.iceberg.spark.SparkCatalog",
        "spark.sql.catalog.lake.io-impl": "org.apache.iceberg.io.ResolvingFileIO",
        "spark.sql.catalog.lake.s3.endpoint": "x",
        "spark.sql.catalog.lake.s3.path-style-access": "true",
        "spark.sql.catalog.lake.type": "jdbc",
        "spark.sql.catalog.lake.uri": "jdbc:sqlite:/d/c.db",
        "spark.sql.catalog.lake.jdbc.init-catalog-tables": "false",
        "spark.sql.catalog.lake.warehouse": "s3://b/wh",
    }
    rest = spark_catalog_conf(
        "prod",
        {
            "uri": "https://cat",
            "credential": "id:secret",
            "warehouse": "analytics",
            "prefix": "p",
            "header.X-Team": "data",
            "rest.sigv4-enabled": "true",
            "rest.signing-region": "us-east-1",
            "rest.signing-name": "s3tables",
        },
        fallback_warehouse=None,
    )
    assert rest["spark.sql.catalog.prod.type"] == "rest"
    assert rest["spark.sql.catalog.prod.credential"] == "id:secret"
    assert rest["spark.sql.catalog.prod.header.X-Team"] == "data" and rest["spark.sql.catalog.prod.prefix"] == "p"
    assert rest["spark.sql.catalog.prod.rest.sigv4-enabled"] == "true"
    assert rest["spark.sql.catalog.prod.rest.signing-region"] == "us-east-1"
    assert rest["spark.sql.catalog.prod.rest.signing-name"] == "s3tables"
    glue = spark_catalog_conf(
        "g",
        {"type": "glue", "glue.endpoint": "http://127.0.0.1:5000", "client.region": "us-east-1"},
        fallback_warehouse=None,
    )
    assert (
        glue["spark.sql.catalog.g.type"] == "glue"
        and glue["spark.sql.catalog.g.glue.endpoint"] == "http://127.0.0.1:5000"
    )
    assert glue["spark.sql.catalog.g.client.region"] == "us-east-1"
    hive = spark_catalog_conf("h", {"type": "hive", "uri": "thrift://hms:9083"}, fallback_warehouse=None)
    assert hive["spark.sql.catalog.h.type"] == "hive" and hive["spark.sql.catalog.h.uri"] == "thrift://hms:9083"
    with pytest.raises(CatalogUnavailable, match="dynamodb"):
        spark_catalog_conf("d", {"type": "dynamodb"}, fallback_warehouse=None)


class _Conf:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def set(self, key: str, value: str) -> None:
        self.values[key] = value


class _Session:
    def __init__(self, values: dict[str, str]) -> None:
        self.conf = _Conf(values)


def test_an_attached_sessions_own_catalog_is_never_overridden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYICEBERG_CATALOG__MINE__TYPE", "hive")
    monkeypatch.setenv("PYICEBERG_CATALOG__MINE__URI", "thrift://elsewhere:9083")
    users = {"spark.sql.catalog.mine": "org.apache.iceberg.spark.SparkCatalog", "spark.sql.catalog.mine.type": "rest"}
    session = _Session(dict(users))
    spark_catalogs.ensure(session, "mine", table_location="s3://b/wh/db/t")
    assert session.conf.values == users
    fresh = _Session({})
    spark_catalogs.ensure(fresh, "mine", table_location="s3://b/wh/db/t")
    assert fresh.conf.values["spark.sql.catalog.mine.uri"] == "thrift://elsewhere:9083"
