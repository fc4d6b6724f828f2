"""``types_v3``: v3's ``unknown`` and nanosecond timestamps, which only Iceberg's Java API writes today."""

from __future__ import annotations

from typing import Any

from icebook.scenarios.javaapi import fresh_handle, jvm, write_data_file
from icebook.scenarios.scenario import Claims, Scenario, Step, create_table


def add_nanosecond_columns(spark: Any, table_name: str) -> str:
    types = jvm(spark).org.apache.iceberg.types.Types
    table = fresh_handle(spark, table_name)
    update = table.updateSchema()
    update.addColumn("placeholder", types.UnknownType.get(), "always null: a type not decided yet")
    update.addColumn("seen_ns", types.TimestampNanoType.withoutZone(), "local time, nanoseconds")
    update.addColumn("seen_tz_ns", types.TimestampNanoType.withZone(), "UTC instant, nanoseconds")
    update.commit()
    return "added placeholder (unknown), seen_ns (timestamp_ns) and seen_tz_ns (timestamptz_ns)"


def append_nanosecond_rows(spark: Any, table_name: str) -> str:
    """One file through the generic Parquet writer; Spark 4.1 has no nanosecond type to write it with."""
    java_time = jvm(spark).java.time
    local, offset, utc = java_time.LocalDateTime, java_time.OffsetDateTime, java_time.ZoneOffset.UTC
    table = fresh_handle(spark, table_name)
    rows = [
        {"probe_id": 10, "seen_ns": local.of(2024, 5, 1, 12, 0, 0, 123456789),
         "seen_tz_ns": offset.of(2024, 5, 1, 12, 0, 0, 987654321, utc)},
        {"probe_id": 11, "seen_ns": local.of(1969, 12, 31, 23, 59, 59, 999999999),
         "seen_tz_ns": offset.of(2262, 4, 11, 23, 47, 16, 854775807, utc)},
        {"probe_id": 12},
    ]  # fmt: skip
    data_file = write_data_file(spark, table, rows, partition=None, label="ns")
    table.newAppend().appendFile(data_file).commit()
    return f"appended {data_file.location()}"


TYPES_V3 = Scenario(
    name="types_v3",
    version=1,
    title="Probe sightings with nanosecond timestamps and an unknown-typed column",
    steps=(
        create_table(
            "Create a format-version 3 table.",
            columns="probe_id INT NOT NULL",
            format_version=3,
        ),
        Step(narrative="Append probes written before the new columns.", sql="INSERT INTO {table} VALUES (1), (2)"),
        Step(
            narrative="Add an unknown column and two nanosecond timestamps (Java API: Spark has no such types).",
            action=add_nanosecond_columns,
        ),
        Step(
            narrative="Append sightings to the nanosecond, the last instant a 64-bit count of them can hold included.",
            action=append_nanosecond_rows,
        ),
    ),
    claims=Claims(
        operations=("append", "append"),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0}),
        format_version=3,
    ),
    tags=("format-v3", "nanosecond-timestamps", "unknown-type"),
    spark_reads=False,
)
