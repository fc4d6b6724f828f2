"""``dv_v3``: format version 3, where merge-on-read deletes are deletion vectors in Puffin files."""

from __future__ import annotations

from icebook.scenarios.scenario import MERGE_ON_READ, Claims, Scenario, Step, create_table

DV_V3 = Scenario(
    name="dv_v3",
    version=1,
    title="Sensor readings in format version 3: deletion vectors, row lineage",
    steps=(
        create_table(
            "Create a format-version 3 table; merge-on-read deletes become deletion vectors (Puffin blobs).",
            columns="reading_id BIGINT NOT NULL, sensor STRING, reading DOUBLE, taken_at TIMESTAMP_NTZ",
            format_version=3,
            partitioned_by="sensor",
            properties=MERGE_ON_READ,
        ),
        Step(
            narrative="Append 40 readings from two sensors; v3 assigns them row ids (first-row-id).",
            sql="""INSERT INTO {table}
                SELECT id, IF(id % 2 = 0, 'north', 'south'), id * 1.5,
                       TIMESTAMP_NTZ '2024-05-01 00:00:00' + make_interval(0, 0, 0, 0, 0, CAST(id AS INT), 0)
                FROM range(1, 41) AS r(id)""",
        ),
        Step(
            narrative="DELETE every fifth reading: one deletion vector per affected data file.",
            sql="DELETE FROM {table} WHERE reading_id % 5 = 0",
        ),
        Step(
            narrative="DELETE more rows of the same files: the new vector replaces (merges) the old one.",
            sql="DELETE FROM {table} WHERE reading_id % 7 = 0",
        ),
        Step(
            narrative="UPDATE readings of one sensor: deletion vector plus new data files.",
            sql="UPDATE {table} SET reading = reading + 100 WHERE sensor = 'north' AND reading_id > 30",
        ),
        Step(
            narrative="Append more readings.",
            sql="""INSERT INTO {table} VALUES
                (41, 'east', 0.5, TIMESTAMP_NTZ '2024-05-02 00:00:00'),
                (42, 'east', 0.75, TIMESTAMP_NTZ '2024-05-02 00:01:00')""",
        ),
    ),
    claims=Claims(
        operations=("append", "delete", "delete", "overwrite", "append"),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0}),
        delete_formats=frozenset({"PUFFIN"}),
        format_version=3,
    ),
    tags=("format-v3", "deletion-vectors", "row-lineage"),
)
