"""Every partition transform, applied by icebook to the value in a file, gives the partition value Spark wrote.

Each row goes to its own data file, so a file's lower bound of a source column is that row's value;
decoding it (Appendix D) and applying the transform must give the partition tuple Spark stored.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

import icebook
from icebook.engines.spark_session import add_catalog
from icebook.spec.values import decode_value

pytestmark = pytest.mark.spark

ROWS = """
    (1, -7, 'apple', 'a', 12.345BD, X'0102', TIMESTAMP '1969-12-31 23:59:59', TIMESTAMP '2024-02-29 13:00:00',
     DATE '1969-12-31', TIMESTAMP_NTZ '2024-01-05 23:10:00', TIMESTAMP '1999-12-31 23:00:00'),
    (2, 123456789012, 'banana split', '', -0.005BD, X'', TIMESTAMP '2024-06-01 00:00:00',
     TIMESTAMP '1970-01-01 00:00:00', DATE '2024-01-01', TIMESTAMP_NTZ '1960-03-01 01:00:00', TIMESTAMP '2024-06-01 05:59:59'),
    (3, 0, 'ça va', 'zzzz', 999.999BD, X'FFFFFFFF', TIMESTAMP '2000-01-01 00:00:00',
     TIMESTAMP '1969-11-30 10:00:00', DATE '1900-01-01', TIMESTAMP_NTZ '2038-01-19 03:14:08', TIMESTAMP '1970-01-01 00:00:00'),
    (4, -1, '日本語のテキスト', 'é', -123.456BD, X'00', TIMESTAMP '2100-12-31 23:59:59',
     TIMESTAMP '2024-12-31 23:59:59', DATE '2024-12-31', TIMESTAMP_NTZ '2024-12-31 23:59:59', TIMESTAMP '1969-12-31 23:30:00')
"""


@pytest.fixture(scope="module")
def transform_table(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    warehouse = tmp_path_factory.mktemp("transforms-warehouse")
    catalog = f"xf_{uuid.uuid4().hex[:8]}"
    add_catalog(catalog, warehouse)
    spark.sql(f"""CREATE TABLE {catalog}.db.t (
        i INT, l BIGINT, s STRING, s2 STRING, d DECIMAL(6,3), b BINARY,
        ts_y TIMESTAMP, ts_m TIMESTAMP, dt DATE, ntz TIMESTAMP_NTZ, ts_h TIMESTAMP)
        USING iceberg PARTITIONED BY (
            i, bucket(8, l), bucket(4, s), truncate(3, s2), truncate(10, d), bucket(3, b),
            years(ts_y), months(ts_m), days(dt), days(ntz), hours(ts_h), truncate(4, l), bucket(5, dt))
        TBLPROPERTIES ('format-version'='2')""")
    spark.sql(f"INSERT INTO {catalog}.db.t VALUES {ROWS}")
    return warehouse / "db" / "t"


def test_every_transform_matches_spark(transform_table: Path) -> None:
    t = icebook.open(transform_table)
    spec = t.metadata.default_spec()
    schema = t.metadata.current_schema()
    files = t.inspect.data_files()
    assert len(files) == 4
    kinds = {str(pf.transform).split("[")[0] for pf in spec.fields}
    assert kinds == {"identity", "bucket", "truncate", "year", "month", "day", "hour"}
    checked = 0
    for _, row in files.iterrows():
        partition = row["partition"]
        lower = dict(row["lower_bounds"])
        for pf in spec.fields:
            source = schema.find_field(pf.source_ids[0])
            assert source is not None
            value = decode_value(lower[source.field_id], source.type)
            expected = partition[pf.name]
            ours = pf.transform.apply(value, source.type)
            result_type = pf.transform.result_type(source.type)
            spark_value = _physical(expected, str(result_type))
            assert ours == spark_value, (
                f"{pf.transform}({source.name}={value!r}): icebook {ours!r}, Spark {spark_value!r}"
            )
            checked += 1
    assert checked == 4 * len(spec.fields)


def _physical(value: Any, type_name: str) -> Any:
    """Spark shows date results as dates; transforms work on days since the epoch."""
    import datetime as dt

    if isinstance(value, dt.date) and type_name == "date":
        return (value - dt.date(1970, 1, 1)).days
    if isinstance(value, bytes | bytearray):
        return bytes(value)
    return value
