"""``upgrade_v3``: a format-version 2 table with position deletes, upgraded to version 3."""

from __future__ import annotations

from icebook.scenarios.scenario import MERGE_ON_READ, Claims, Scenario, Step, create_table, set_properties

UPGRADE_V3 = Scenario(
    name="upgrade_v3",
    version=1,
    title="Parcels upgraded from format version 2 to 3: position deletes meet deletion vectors",
    steps=(
        create_table(
            "Create a format-version 2 merge-on-read table, partitioned by depot.",
            columns="parcel_id BIGINT NOT NULL, depot STRING, weight_kg DOUBLE",
            format_version=2,
            partitioned_by="depot",
            properties=MERGE_ON_READ,
        ),
        Step(
            narrative="Append 30 parcels in two depots.",
            sql="""INSERT INTO {table}
                SELECT id, IF(id % 2 = 0, 'lyon', 'oslo'), id * 0.5 FROM range(0, 30) AS r(id)""",
        ),
        Step(
            narrative="DELETE every fifth parcel: version 2 writes Parquet position-delete files in both depots.",
            sql="DELETE FROM {table} WHERE parcel_id % 5 = 0",
        ),
        set_properties(
            "Upgrade to format version 3: no file is rewritten, the position deletes stay live.",
            {"format-version": "3"},
        ),
        Step(
            narrative="DELETE in lyon: one deletion vector per data file, merging that file's old position deletes.",
            sql="DELETE FROM {table} WHERE depot = 'lyon' AND parcel_id % 4 = 0",
        ),
        Step(
            narrative="Append parcels after the upgrade: they get row ids from the table's next-row-id.",
            sql="INSERT INTO {table} SELECT id, 'oslo', id * 0.25 FROM range(30, 36) AS r(id)",
        ),
        Step(
            narrative="Compact the delete files: oslo's remaining position deletes become deletion vectors.",
            sql="""CALL lake.system.rewrite_position_delete_files(
                table => 'db.upgrade_v3', options => map('rewrite-all', 'true'))""",
        ),
    ),
    claims=Claims(
        operations=("append", "delete", "delete", "append", "replace"),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0}),
        delete_formats=frozenset({"PARQUET", "PUFFIN"}),
        format_version=3,
    ),
    tags=("format-v3", "deletion-vectors", "upgrade"),
)
