"""``variant_v3``: semi-structured ``variant`` columns, first unshredded, then shredded into typed columns."""

from __future__ import annotations

from icebook.scenarios.scenario import Claims, Scenario, Step, create_table, set_properties

VARIANT_V3 = Scenario(
    name="variant_v3",
    version=1,
    title="Clickstream payloads as VARIANT: nested objects, arrays, nulls, then shredded files",
    steps=(
        create_table(
            "Create a format-version 3 table with a variant column and a variant inside a struct.",
            columns="""event_id BIGINT NOT NULL
                , payload VARIANT
                , context STRUCT<source: STRING, extra: VARIANT>""",
            format_version=3,
        ),
        Step(
            narrative="Append events whose payloads mix objects, arrays, numbers, strings, JSON null and SQL NULL.",
            sql="""INSERT INTO {table} VALUES
                (1, parse_json('{"page": "/home", "ms": 120, "tags": ["a", "b"], "user": {"id": 7, "vip": true}}'),
                    named_struct('source', 'web', 'extra', parse_json('{"ab": "B", "ratio": 0.25}'))),
                (2, parse_json('[1, 2.5, "three", null, {"four": 4}]'),
                    named_struct('source', 'ios', 'extra', parse_json('[]'))),
                (3, parse_json('null'), named_struct('source', 'web', 'extra', NULL)),
                (4, NULL, NULL),
                (5, parse_json('{"price": 19.99, "big": 12345678901234567890, "sci": 1.5e10, "neg": -3}'),
                    named_struct('source', 'android', 'extra', parse_json('"plain string"'))),
                (6, parse_json('{"nested": {"deeper": {"deepest": [[1], [2, [3]]]}}, "empty": {}}'),
                    named_struct('source', 'web', 'extra', parse_json('false')))""",
        ),
        Step(
            narrative="UPDATE one payload: copy-on-write rewrites its data file with the new value.",
            sql="""UPDATE {table} SET payload = parse_json('{"page": "/cart", "ms": 95, "tags": []}')
                WHERE event_id = 3""",
        ),
        set_properties(
            "Turn on shredding: new files store common paths of the variant in typed Parquet columns.",
            {"write.parquet.shred-variants": "true"},
        ),
        Step(
            narrative="Append events of one shape: page, ms and tags shred into typed columns.",
            sql="""INSERT INTO {table}
                SELECT id,
                       parse_json(concat('{"page": "/p', id, '", "ms": ', id * 10, ', "tags": ["t', id, '"]}')),
                       named_struct('source', 'web', 'extra', parse_json(concat('{"ab": "A", "n": ', id, '}')))
                FROM range(10, 20) AS r(id)""",
        ),
        Step(
            narrative="Append events whose shapes differ: what does not fit the typed columns stays in the value.",
            sql="""INSERT INTO {table} VALUES
                (30, parse_json('{"page": 404, "ms": "slow", "extra_field": [true, null]}'),
                    named_struct('source', 'batch', 'extra', parse_json('{"ab": null}'))),
                (31, parse_json('"just a string"'), named_struct('source', 'batch', 'extra', parse_json('12'))),
                (32, NULL, named_struct('source', 'batch', 'extra', NULL))""",
        ),
    ),
    claims=Claims(
        operations=("append", "overwrite", "append", "append"),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0}),
        format_version=3,
    ),
    tags=("format-v3", "variant"),
    spark_since=(4, 1),
)
