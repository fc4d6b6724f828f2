"""``hostile``: a table whose names and values are HTML/JS payloads, to prove every view escapes them.

Iceberg and Spark accept any string as a column name (quoted with backquotes), a property key
or value, a branch or tag name, and of course as a row value; a partition value also becomes
part of a data file's path. Tables are untrusted input, and this one says so loudly.
"""

from __future__ import annotations

from icebook.scenarios.scenario import Claims, Scenario, Step, create_table

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(2)</script>"

HOSTILE = Scenario(
    name="hostile",
    version=1,
    title="Hostile names and values: HTML/JS payloads in columns, properties, refs, partitions and rows",
    steps=(
        create_table(
            "Create a table whose column names, a property key and value, and the partition field are HTML payloads.",
            columns=f"id BIGINT, `{IMG}` STRING, `{SCRIPT}` STRING COMMENT '{SCRIPT}', note STRING",
            format_version=2,
            partitioned_by=f"`{IMG}`",
            properties={"comment.payload": SCRIPT, IMG: SCRIPT},
        ),
        Step(
            narrative="Append rows whose values (and so partition values, bounds and file paths) are payloads.",
            sql=f"""INSERT INTO {{table}} VALUES
                (1, '{IMG}', '{SCRIPT}', '{SCRIPT}'),
                (2, '{SCRIPT}', '{IMG}', 'plain')""",
        ),
        Step(
            narrative="A branch named like an <img> tag with an onerror handler.",
            sql=f"ALTER TABLE {{table}} CREATE BRANCH `{IMG}`",
        ),
        Step(
            narrative="A tag named like a <script> element.",
            sql=f"ALTER TABLE {{table}} CREATE TAG `{SCRIPT}`",
        ),
        Step(
            narrative="Another append on main, so the branch and main differ.",
            sql=f"INSERT INTO {{table}} VALUES (3, 'ok', '{IMG}', '{IMG}')",
        ),
    ),
    claims=Claims(
        operations=("append", "append"),
        refs={"main": "BRANCH", IMG: "BRANCH", SCRIPT: "TAG"},
        spec_ids=frozenset({0}),
        format_version=2,
    ),
    tags=("security", "escaping"),
)
