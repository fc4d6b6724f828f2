"""``defaults_v3``: columns added with default values, read from files written before they existed."""

from __future__ import annotations

from typing import Any

from icebook.scenarios.javaapi import fresh_handle, jvm
from icebook.scenarios.scenario import Claims, Scenario, Step, create_table


def add_columns_with_defaults(spark: Any, table_name: str) -> str:
    """Add ``tier`` (string, default 'standard') and ``credit`` (int, default 100) through the Java API:
    Spark's ``ADD COLUMN ... DEFAULT`` refuses, ``UpdateSchema.addColumn(name, type, doc, Literal)`` does not."""
    iceberg = jvm(spark).org.apache.iceberg
    types, literal = iceberg.types.Types, iceberg.expressions.Literal
    table = fresh_handle(spark, table_name)
    update = table.updateSchema()
    update.addColumn("tier", types.StringType.get(), "service tier", literal.of("standard"))
    update.addColumn("credit", types.IntegerType.get(), "starting credit", literal.of(100))
    update.commit()
    return "added tier (initial and write default 'standard') and credit (100)"


def change_write_default(spark: Any, table_name: str) -> str:
    """New rows that leave ``tier`` out now get 'basic'; old files still read as 'standard'."""
    literal = jvm(spark).org.apache.iceberg.expressions.Literal
    table = fresh_handle(spark, table_name)
    table.updateSchema().updateColumnDefault("tier", literal.of("basic")).commit()
    return "write default of tier is now 'basic'; its initial default stays 'standard'"


DEFAULTS_V3 = Scenario(
    name="defaults_v3",
    version=1,
    title="Customers gain columns with default values: initial-default for old files, write-default for new rows",
    steps=(
        create_table(
            "Create a format-version 3 table of customers.",
            columns="customer_id BIGINT NOT NULL, name STRING",
            format_version=3,
        ),
        Step(
            narrative="Append three customers: these files will never hold the columns added later.",
            sql="INSERT INTO {table} VALUES (1, 'Ada'), (2, 'Brook'), (3, 'Cyd')",
        ),
        Step(
            narrative="Add tier and credit with defaults (Java API): old rows read them as 'standard' and 100.",
            action=add_columns_with_defaults,
        ),
        Step(
            narrative="Insert a customer leaving tier and credit out: Spark writes their write defaults.",
            sql="INSERT INTO {table} (customer_id, name) VALUES (4, 'Dee')",
        ),
        Step(
            narrative="Change tier's write default to 'basic' (Java API); the initial default cannot change.",
            action=change_write_default,
        ),
        Step(
            narrative="Insert a customer leaving tier and credit out: tier is now 'basic', credit still 100.",
            sql="INSERT INTO {table} (customer_id, name) VALUES (5, 'Eli')",
        ),
        Step(
            narrative="Insert a customer giving every column, a NULL tier included.",
            sql="INSERT INTO {table} VALUES (6, 'Fay', NULL, 250)",
        ),
    ),
    claims=Claims(
        operations=("append", "append", "append", "append"),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0}),
        format_version=3,
    ),
    tags=("format-v3", "default-values"),
    spark_since=(4, 1),
)
