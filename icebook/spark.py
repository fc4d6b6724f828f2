"""``icebook.spark``: the one configured local SparkSession (or one you attach).

spark = icebook.spark.session()                       # local, Iceberg runtime from PyPI
spark = icebook.spark.session(spark=my_cluster_session)  # attach your own
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

__all__ = ["DEFAULT_CATALOG", "add_catalog", "catalogs", "find_java", "iceberg_runtime_jar", "session"]
