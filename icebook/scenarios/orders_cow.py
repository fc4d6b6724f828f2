"""``orders_cow``: copy-on-write UPDATE, DELETE and MERGE rewrite whole data files."""

from __future__ import annotations

from icebook.scenarios.scenario import COPY_ON_WRITE, Claims, Scenario, Step, create_table

ORDERS_COW = Scenario(
    name="orders_cow",
    version=1,
    title="Orders: copy-on-write UPDATE, DELETE and MERGE rewrite data files instead of writing deletes",
    steps=(
        create_table(
            "Create a v2 table partitioned by months(order_date); row-level changes use copy-on-write (the default).",
            columns="order_id BIGINT NOT NULL, customer STRING, status STRING, total DECIMAL(12,2), order_date DATE",
            format_version=2,
            partitioned_by="months(order_date)",
            properties=COPY_ON_WRITE,
        ),
        Step(
            narrative="Append January and February orders.",
            sql="""INSERT INTO {table} VALUES
                (1, 'ada', 'placed', 120.00, DATE '2024-01-03'),
                (2, 'bob', 'placed', 35.50, DATE '2024-01-09'),
                (3, 'cy', 'cancelled', 12.00, DATE '2024-01-15'),
                (4, 'dee', 'placed', 80.00, DATE '2024-02-01'),
                (5, 'ada', 'placed', 64.25, DATE '2024-02-11')""",
        ),
        Step(
            narrative="Append March orders.",
            sql="""INSERT INTO {table} VALUES
                (6, 'eve', 'placed', 15.00, DATE '2024-03-02'),
                (7, 'bob', 'cancelled', 99.99, DATE '2024-03-05'),
                (8, 'fay', 'placed', 42.00, DATE '2024-03-20')""",
        ),
        Step(
            narrative="Copy-on-write UPDATE: every file holding a matching row is rewritten (operation overwrite).",
            sql="UPDATE {table} SET status = 'shipped' WHERE order_date < DATE '2024-02-01' AND status = 'placed'",
        ),
        Step(
            narrative="Copy-on-write DELETE of some rows: the affected files are rewritten without them.",
            sql="DELETE FROM {table} WHERE status = 'cancelled'",
        ),
        Step(
            narrative="Copy-on-write MERGE: update matched orders and insert new ones in one commit.",
            sql="""MERGE INTO {table} t USING (
                    SELECT * FROM VALUES
                        (5, 'ada', 'shipped', 64.25, DATE '2024-02-11'),
                        (9, 'gus', 'placed', 23.00, DATE '2024-03-28')
                    AS s(order_id, customer, status, total, order_date)
                ) s ON t.order_id = s.order_id
                WHEN MATCHED THEN UPDATE SET t.status = s.status
                WHEN NOT MATCHED THEN INSERT *""",
        ),
        Step(
            narrative="DELETE of a whole partition: no file needs rewriting, so it is a metadata-only delete.",
            sql="DELETE FROM {table} WHERE order_date < DATE '2024-02-01'",
        ),
    ),
    claims=Claims(
        operations=("append", "append", "overwrite", "overwrite", "overwrite", "delete"),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0}),
        delete_formats=frozenset(),
        format_version=2,
    ),
    tags=("copy-on-write",),
)
