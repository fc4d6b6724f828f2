"""``exact_values``: values a careless conversion changes, so every view can be checked to keep them.

Spec ("Primitive Types"): a ``long`` is a 64-bit integer; ids above 2^53 have no exact double, so a
nullable long column that becomes float64 changes them without a word. A ``date`` is a day, not a
moment; a ``decimal`` keeps its scale; a ``map`` may hold null values. Two appends and a tag give
every read a second point in history.
"""

from __future__ import annotations

from icebook.scenarios.scenario import Claims, Scenario, Step, create_table

EXACT_VALUES = Scenario(
    name="exact_values",
    version=1,
    title="Ids above 2^53 beside nulls, dates, decimals, timestamps and maps with null values",
    steps=(
        create_table(
            "Create a v2 table partitioned by day: a nullable long id, a date, a decimal, a timestamp "
            "and a map whose values may be null.",
            columns="id BIGINT, day DATE, amount DECIMAL(18,6), seen TIMESTAMP, tags MAP<STRING, BIGINT>",
            format_version=2,
            partitioned_by="day",
        ),
        Step(
            narrative="Append ids just above 2^53 (9007199254740993 has no exact double) beside a null id.",
            sql="""INSERT INTO {table} VALUES
                (9007199254740993, DATE '2024-01-07', 12345678901.123456, TIMESTAMP '2024-01-07 10:00:00.123456',
                 map('a', 9007199254740993, 'b', CAST(NULL AS BIGINT))),
                (NULL, DATE '1969-12-31', -0.000001, TIMESTAMP '1969-12-31 23:59:59.999999', map()),
                (-9223372036854775808, DATE '2024-01-08', NULL, NULL, NULL)""",
        ),
        Step(
            narrative="Tag the first append, then append more: a read at the tag and one at main differ.",
            sql="ALTER TABLE {table} CREATE TAG first",
        ),
        Step(
            narrative="Append the largest long and another null id.",
            sql="""INSERT INTO {table} VALUES
                (9223372036854775807, DATE '9999-12-31', 999999999999.999999, TIMESTAMP '2024-02-29 00:00:00',
                 map('z', CAST(NULL AS BIGINT))),
                (NULL, NULL, 0.5, TIMESTAMP '2024-01-07 00:00:00', map('c', 1))""",
        ),
    ),
    claims=Claims(
        operations=("append", "append"),
        refs={"main": "BRANCH", "first": "TAG"},
        spec_ids=frozenset({0}),
        delete_formats=frozenset(),
        format_version=2,
    ),
    tags=("types", "long", "date", "decimal", "map", "exact"),
)
