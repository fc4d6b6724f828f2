"""``legacy_v1``: a format-version 1 table, the way older writers left them."""

from __future__ import annotations

from icebook.scenarios.scenario import Claims, Scenario, Step, create_table

LEGACY_V1 = Scenario(
    name="legacy_v1",
    version=1,
    title="Inventory in format version 1: appends and a partition overwrite, no sequence numbers",
    steps=(
        create_table(
            "Create a format-version 1 table partitioned by identity(category) and truncate(2, sku).",
            columns="sku STRING, category STRING, qty INT, price DOUBLE, in_stock BOOLEAN, updated DATE",
            format_version=1,
            partitioned_by="category, truncate(2, sku)",
        ),
        Step(
            narrative="Append the first stock count. v1 has no sequence numbers: readers treat them as 0.",
            sql="""INSERT INTO {table} VALUES
                ('ab-100', 'tools', 10, 9.99, true, DATE '2023-06-01'),
                ('ab-200', 'tools', 0, 19.5, false, DATE '2023-06-01'),
                ('cd-100', 'garden', 25, 4.25, true, DATE '2023-06-02')""",
        ),
        Step(
            narrative="Append more stock.",
            sql="""INSERT INTO {table} VALUES
                ('cd-200', 'garden', 7, 12.0, true, DATE '2023-06-03'),
                ('ef-100', 'kitchen', 3, 30.0, true, DATE '2023-06-03')""",
        ),
        Step(
            narrative="Overwrite the tools partition with a fresh count (operation overwrite; other partitions untouched).",
            sql="""INSERT OVERWRITE {table} PARTITION (category = 'tools')
                SELECT * FROM VALUES ('ab-100', 12, 9.99, true, DATE '2023-07-01'),
                                     ('ab-300', 5, 15.0, true, DATE '2023-07-01')
                AS s(sku, qty, price, in_stock, updated)""",
        ),
    ),
    claims=Claims(
        operations=("append", "append", "overwrite"),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0}),
        delete_formats=frozenset(),
        format_version=1,
    ),
    tags=("format-v1",),
)
