"""``icebook.spark``: the one configured local SparkSession (or one you attach).

spark = icebook.spark.session()                       # local, Iceberg runtime from PyPI
spark = icebook.spark.session(spark=my_cluster_session)  # attach your own

A session icebook starts also gets the object-store connectors and JDBC drivers installed from PyPI
(``connector_requirements()``); tables opened through a PyIceberg catalog get that catalog in Spark
under the same name. An attached session keeps every setting it has: icebook only adds what is missing.
"""

from __future__ import annotations

from icebook.engines.spark_session import (
    DEFAULT_CATALOG,
    add_catalog,
    catalogs,
    find_java,
    iceberg_runtime_jar,
)
from icebook.engines.spark_session import get_session as session
from icebook.engines.spark_storage import requirements as connector_requirements

__all__ = [
    "DEFAULT_CATALOG",
    "add_catalog",
    "catalogs",
    "connector_requirements",
    "find_java",
    "iceberg_runtime_jar",
    "session",
]
