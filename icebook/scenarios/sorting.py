"""``sort_order``: the same rows unsorted, then sorted by a compaction, then a sorted write.

Spec ("Sorting", "Manifests": ``lower_bounds``/``upper_bounds``, ``sort_order_id``): a sort order
makes each data file cover a narrow range of the sort column, so the column bounds in the
manifests let a scan skip files. The first snapshot holds 2,000 readings in four files that each
span almost every temperature; a sort compaction (a ``replace`` snapshot) rewrites the same rows
into files with disjoint ranges; a later append is sorted as it is written.
"""

from __future__ import annotations

from icebook.scenarios.scenario import Claims, Scenario, Step, create_table, fill

_READINGS = """INSERT INTO {table}
    SELECT id, concat('sensor-', CAST(id % 5 AS STRING)), CAST((id * 7919) % 1000 AS INT) - 200
    FROM range({start}, {stop}, 1, {tasks})"""

SORT_ORDER = Scenario(
    name="sort_order",
    version=1,
    title="Readings: unsorted files, a sort compaction (replace) and a sorted write; bounds and file skipping",
    steps=(
        create_table(
            "Create an unsorted v2 table. Small advisory partitions make each write produce several files.",
            columns="reading_id BIGINT, sensor STRING, temperature INT",
            format_version=2,
            properties={"write.spark.advisory-partition-size-bytes": "4096"},
        ),
        Step(
            narrative="Append 2,000 readings from four tasks: four files, each spanning nearly every temperature.",
            sql=fill(_READINGS, start=0, stop=2000, tasks=4),
        ),
        Step(
            narrative="Set the table's sort order: WRITE ORDERED BY temperature (sort order 1).",
            sql="ALTER TABLE {table} WRITE ORDERED BY temperature",
        ),
        Step(
            narrative="Sort compaction: rewrite the same rows sorted by temperature (operation replace); each new "
            "file covers its own range.",
            sql="""CALL lake.system.rewrite_data_files(table => '{table}', strategy => 'sort',
                options => map('rewrite-all', 'true', 'target-file-size-bytes', '4096'))""",
        ),
        Step(
            narrative="Append 400 more readings: the write is sorted (range-distributed) by the table's sort order.",
            sql=fill(_READINGS, start=2000, stop=2400, tasks=2),
        ),
    ),
    claims=Claims(
        operations=("append", "replace", "append"),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0}),
        delete_formats=frozenset(),
        format_version=2,
    ),
    tags=("sort-order", "bounds", "file-skipping", "compaction", "replace"),
)
