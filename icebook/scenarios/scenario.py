"""What a scenario is: a named, versioned list of steps that build one Iceberg table with Spark.

Each step is a one-line narrative and the SQL that does it. The same scenarios build the demo
warehouse, the test fixtures and the teaching notebooks, so the narrative is written for people
learning the format.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """One commit-worthy action: ``narrative`` says what and why, ``sql`` does it.

    ``{table}`` in the SQL is replaced by the table's catalog name (``lake.db.<name>``).
    When ``action`` is given it runs instead (the step has no SQL), as ``action(spark, table_name)``: for
    what Spark SQL cannot write (e.g. equality deletes through the Iceberg Java API). An action
    may return a line saying what happened (e.g. the error a losing writer got); the build
    records it as the step's ``outcome`` and, when Spark reads the table, refreshes Spark's cached table.
    """

    narrative: str
    sql: str = ""
    action: Callable[[Any, str], str | None] | None = None


MERGE_ON_READ: Mapping[str, str] = {
    "write.delete.mode": "merge-on-read",
    "write.update.mode": "merge-on-read",
    "write.merge.mode": "merge-on-read",
}
"""Row-level DELETE, UPDATE and MERGE write delete files and leave data files as they are."""
COPY_ON_WRITE: Mapping[str, str] = {
    "write.delete.mode": "copy-on-write",
    "write.update.mode": "copy-on-write",
    "write.merge.mode": "copy-on-write",
}
"""Row-level DELETE, UPDATE and MERGE rewrite the data files they touch (Spark's default)."""


def create_table(
    narrative: str,
    *,
    columns: str,
    format_version: int,
    partitioned_by: str = "",
    properties: Mapping[str, str] | None = None,
) -> Step:
    """The step that creates the scenario's table: ``columns`` and ``partitioned_by`` as Spark SQL,
    ``format-version`` and then ``properties`` as its table properties, one clause or property per line."""
    column_lines = "\n".join(f"    {line.strip()}" for line in columns.strip().splitlines())
    sql = f"CREATE TABLE {{table}} (\n{column_lines}\n) USING iceberg"
    if partitioned_by:
        sql += f"\nPARTITIONED BY ({partitioned_by})"
    sql += "\nTBLPROPERTIES " + _property_list({"format-version": str(format_version), **(properties or {})})
    return Step(narrative=narrative, sql=sql)


def set_properties(narrative: str, properties: Mapping[str, str]) -> Step:
    """The step that sets table ``properties``, written as ``create_table`` writes them."""
    return Step(narrative=narrative, sql="ALTER TABLE {table} SET TBLPROPERTIES " + _property_list(properties))


def fill(template: str, **values: object) -> str:
    """``template`` with each ``{name}`` given in ``values`` replaced by the value's text.

    Placeholders not given stay, so a step's SQL can fill its own and leave ``{table}`` to the build.
    Not ``str.format``: the SQL holds other braces (JSON literals, ``{table}``) that it would read."""
    for name, value in values.items():
        template = template.replace("{" + name + "}", str(value))
    return template


def _property_list(properties: Mapping[str, str]) -> str:
    return "(\n" + ",\n".join(f"    '{k}'='{v}'" for k, v in properties.items()) + "\n)"


@dataclass(frozen=True, slots=True, kw_only=True)
class Claims:
    """What a scenario promises to leave behind; the test suite checks each claim with Spark.

    - ``operations``: the ``operation`` of every snapshot, in commit order (all branches).
    - ``refs``: ref name -> "BRANCH" or "TAG".
    - ``spec_ids``: partition spec ids used by live files of the current snapshot or any ref.
    - ``delete_formats``: file formats of the delete files any kept snapshot has ("PARQUET", "PUFFIN").
    - ``format_version``: the table's format version.
    """

    operations: tuple[str, ...]
    refs: Mapping[str, str]
    spec_ids: frozenset[int]
    delete_formats: frozenset[str] = frozenset()
    format_version: int = 2


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """A named, versioned script that builds the table ``lake.db.<name>``."""

    name: str
    version: int
    title: str
    steps: tuple[Step, ...]
    claims: Claims
    tags: tuple[str, ...] = field(default_factory=tuple)
    spark_reads: bool = True
    """False when Spark cannot read the table's rows (a type it lacks, such as ``timestamp_ns`` in Spark 4.1):
    the tests then read it with Iceberg's Java generic reader instead."""
    spark_since: tuple[int, int] = (3, 5)
    """The oldest Spark line (major, minor) this scenario builds on: its steps use what older lines lack
    (Spark 3.5 has no VARIANT or GEOMETRY type and does not write a column's write-default). Lines between
    3.5 and 4.1 are untested here, so a scenario known to fail on 3.5 says 4.1."""

    def builds_on(self, spark_version: str) -> bool:
        """Whether Spark ``spark_version`` (``"3.5.9"``, ``"4.1.4"``) can build this scenario."""
        major, minor = (int(part) for part in spark_version.split(".")[:2])
        return (major, minor) >= self.spark_since

    @property
    def table(self) -> str:
        return f"lake.db.{self.name}"

    def sql(self, step: Step) -> str:
        return fill(step.sql, table=self.table)
