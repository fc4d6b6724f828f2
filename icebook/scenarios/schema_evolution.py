"""``schema_evolution``: every kind of schema change, with data written under each schema.

Spec ("Schema Evolution"): columns are tracked by field id, never by name or position, so adding,
dropping, renaming and reordering fields (top level and nested) and promoting types (int -> long,
float -> double, widening a decimal's precision) only write new metadata; old data files are read
by projecting their columns by field id. A dropped id is never reused: a column added later under
the same name is a new column.
"""

from __future__ import annotations

from icebook.scenarios.scenario import Claims, Scenario, Step, create_table

SCHEMA_EVOLUTION = Scenario(
    name="schema_evolution",
    version=1,
    title="Customers: add, drop, rename, reorder, type promotion and nested struct, list and map fields",
    steps=(
        create_table(
            "Create a v2 table with a struct, a list of structs and a map (schema 0).",
            columns="""
                id INT NOT NULL, name STRING, score FLOAT, balance DECIMAL(9,2),
                address STRUCT<street: STRING, city: STRING>,
                orders ARRAY<STRUCT<sku: STRING, qty: INT>>,
                prefs MAP<STRING, INT>""",
            format_version=2,
        ),
        Step(
            narrative="Append two customers under schema 0: this data file knows only the original field ids.",
            sql="""INSERT INTO {table} VALUES
                (1, 'ann', 1.5, 10.25, named_struct('street', '1 Main St', 'city', 'Oslo'),
                 array(named_struct('sku', 'a-1', 'qty', 2)), map('theme', 1)),
                (2, 'bob', 2.5, 20.50, named_struct('street', '2 High St', 'city', 'Lima'),
                 array(named_struct('sku', 'b-2', 'qty', 1), named_struct('sku', 'c-3', 'qty', 4)), map('lang', 2))""",
        ),
        Step(
            narrative="Add a top-level column and a field inside the address struct: new ids; old files read them as null.",
            sql="ALTER TABLE {table} ADD COLUMNS (email STRING, address.zip STRING)",
        ),
        Step(
            narrative="Add a field to the structs inside the orders list (orders.element.price).",
            sql="ALTER TABLE {table} ADD COLUMN orders.element.price DOUBLE",
        ),
        Step(
            narrative="Rename name to full_name: only the name changes, the field id stays.",
            sql="ALTER TABLE {table} RENAME COLUMN name TO full_name",
        ),
        Step(
            narrative="Rename a nested field: address.city becomes address.town (same field id).",
            sql="ALTER TABLE {table} RENAME COLUMN address.city TO town",
        ),
        Step(
            narrative="Type promotion: id int -> long (a safe widening; old files still hold 32-bit ints).",
            sql="ALTER TABLE {table} ALTER COLUMN id TYPE BIGINT",
        ),
        Step(
            narrative="Type promotion: score float -> double.",
            sql="ALTER TABLE {table} ALTER COLUMN score TYPE DOUBLE",
        ),
        Step(
            narrative="Type promotion: balance decimal(9,2) -> decimal(12,2) (precision may grow, scale may not change).",
            sql="ALTER TABLE {table} ALTER COLUMN balance TYPE DECIMAL(12,2)",
        ),
        Step(
            narrative="Type promotion inside a map: prefs values int -> long.",
            sql="ALTER TABLE {table} ALTER COLUMN prefs.value TYPE BIGINT",
        ),
        Step(
            narrative="Reorder: move email right after id. Only the schema's field order changes.",
            sql="ALTER TABLE {table} ALTER COLUMN email AFTER id",
        ),
        Step(
            narrative="Append a customer under the evolved schema: this file carries the new ids and wider types.",
            sql="""INSERT INTO {table} (id, email, full_name, score, balance, address, orders, prefs) VALUES
                (3000000000, 'cy@example.com', 'cy', 3.25, 1234567890.12,
                 named_struct('street', '3 Low St', 'town', 'Kyiv', 'zip', '01001'),
                 array(named_struct('sku', 'd-4', 'qty', 3, 'price', 9.5)), map('theme', 5000000000))""",
        ),
        Step(
            narrative="Drop score: its data stays in the old files but is no longer projected.",
            sql="ALTER TABLE {table} DROP COLUMN score",
        ),
        Step(
            narrative="Add a column named score again: it gets a new field id, so the old scores do not come back.",
            sql="ALTER TABLE {table} ADD COLUMN score DOUBLE",
        ),
        Step(
            narrative="Append one more customer with the new score column.",
            sql="""INSERT INTO {table} (id, email, full_name, balance, address, orders, prefs, score) VALUES
                (4, 'dee@example.com', 'dee', 0.01, named_struct('street', NULL, 'town', 'Rome', 'zip', NULL),
                 CAST(array() AS ARRAY<STRUCT<sku: STRING, qty: INT, price: DOUBLE>>),
                 CAST(map() AS MAP<STRING, BIGINT>), 99.0)""",
        ),
    ),
    claims=Claims(
        operations=("append", "append", "append"),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0}),
        delete_formats=frozenset(),
        format_version=2,
    ),
    tags=("schema-evolution", "type-promotion", "nested-types", "field-ids"),
)
