"""``lineage_v3``: row lineage in format version 3, through every kind of write that moves rows."""

from __future__ import annotations

from icebook.scenarios.scenario import MERGE_ON_READ, Claims, Scenario, Step, create_table

LINEAGE_V3 = Scenario(
    name="lineage_v3",
    version=1,
    title="Stock levels with row lineage: _row_id and _last_updated_sequence_number through every write",
    steps=(
        create_table(
            "Create a format-version 3 table: every row gets a row id, every change a sequence number.",
            columns="sku BIGINT NOT NULL, store STRING, qty INT",
            format_version=3,
            partitioned_by="store",
            properties=MERGE_ON_READ,
        ),
        Step(
            narrative="Append 12 rows in two stores: the snapshot's first-row-id is 0, the table's next-row-id 12.",
            sql="""INSERT INTO {table}
                SELECT id, IF(id % 2 = 0, 'north', 'south'), CAST(id * 10 AS INT) FROM range(0, 12) AS r(id)""",
        ),
        Step(
            narrative="Append 6 more rows: their row ids continue at 12.",
            sql="INSERT INTO {table} SELECT id, 'east', CAST(id AS INT) FROM range(12, 18) AS r(id)",
        ),
        Step(
            narrative="UPDATE three rows: they keep their row ids; their _last_updated_sequence_number moves on.",
            sql="UPDATE {table} SET qty = qty + 1 WHERE sku IN (1, 2, 3)",
        ),
        Step(
            narrative="DELETE two rows: deletion vectors hide them; no row id is reused.",
            sql="DELETE FROM {table} WHERE sku IN (4, 13)",
        ),
        Step(
            narrative="MERGE: matched rows keep their ids, inserted rows get new ones.",
            sql="""MERGE INTO {table} AS t
                USING (SELECT 5 AS sku, 'south' AS store, 500 AS qty
                       UNION ALL SELECT 100, 'west', 1
                       UNION ALL SELECT 101, 'west', 2) AS s
                ON t.sku = s.sku
                WHEN MATCHED THEN UPDATE SET qty = s.qty
                WHEN NOT MATCHED THEN INSERT *""",
        ),
        Step(
            narrative="Compact every data file: rows move to new files and keep their row ids and sequence numbers.",
            sql="CALL lake.system.rewrite_data_files(table => 'db.lineage_v3', options => map('rewrite-all', 'true'))",
        ),
    ),
    claims=Claims(
        operations=("append", "append", "overwrite", "delete", "overwrite", "replace"),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0}),
        delete_formats=frozenset({"PUFFIN"}),
        format_version=3,
    ),
    tags=("format-v3", "row-lineage", "deletion-vectors"),
)
