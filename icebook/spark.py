"""``icebook.spark``: the one configured local SparkSession (or one you attach).

spark = icebook.spark.session()                          # local, Iceberg by Maven coordinates
spark = icebook.spark.session(spark=my_cluster_session)  # attach your own

A session icebook starts asks Spark's Ivy for the Iceberg runtime that matches the installed pyspark,
Iceberg's cloud bundles (the SDKs of S3FileIO, GCSFileIO and ADLSFileIO) and the JDBC drivers of SQL
catalogs (``packages()`` lists them); tables opened through a PyIceberg catalog get that catalog in Spark
under the same name. An attached session keeps every setting it has: icebook only adds what is missing.
"""

from __future__ import annotations

from icebook.engines.spark_jars import ICEBERG_VERSION, Stack, installed_spark_version
from icebook.engines.spark_session import (
    DEFAULT_CATALOG,
    add_catalog,
    catalogs,
    find_java,
)
from icebook.engines.spark_session import get_session as session


def packages() -> list[str]:
    """The Maven coordinates a session icebook starts asks for, for the installed pyspark."""
    return [str(c) for c in Stack.from_env().packages(installed_spark_version())]


__all__ = [
    "DEFAULT_CATALOG",
    "ICEBERG_VERSION",
    "add_catalog",
    "catalogs",
    "find_java",
    "packages",
    "session",
]
