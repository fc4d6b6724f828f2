"""Predicates made from a table's own values (the middle value of a column at the current state), so they
select some files and not others: every partition source column, then the first columns of other kinds."""

from __future__ import annotations

from typing import Any

import pyarrow.compute as pc

from icebook.analysis.expr.binding import convert_literal
from icebook.analysis.expr.nodes import literal_text
from icebook.spec.types import PrimitiveType
from icebook.spec.values import to_human

_KINDS = ("int", "long", "string", "date", "timestamp", "timestamptz", "decimal", "double")


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def predicates(t: Any) -> list[str]:
    """A few predicates per table: every partition source column, then the first columns of other kinds."""
    schema = t.read_schema()
    sources = [
        schema.find_field(pf.source_id)
        for spec in t.metadata.partition_specs.values()
        for pf in spec.fields
        if schema.find_field(pf.source_id) is not None
    ]
    chosen: list[Any] = []
    for f in [*sources, *schema.columns]:
        if f in chosen or (not isinstance(f.type, PrimitiveType) and not str(f.type).startswith("decimal")):
            continue
        if str(f.type).split("(")[0] in _KINDS and schema.find_column_name(f.field_id) == f.name:
            chosen.append(f)
    chosen = chosen[:4]
    rows = t.read(columns=[f.name for f in chosen])
    out = []
    for f in chosen:
        values = pc.drop_null(rows.column(f.name)).to_pylist()
        column = _quoted(f.name)
        out.append(f"{column} is null")
        if values:
            middle = sorted(values)[len(values) // 2]
            physical = convert_literal(middle, f.type, f.name)
            # full ISO text for times: Spark reads '2024-05-02T12:00:00+00:00', not '2024-05-02T12:00Z'
            text = f"'{to_human(physical, f.type)}'" if "timestamp" in str(f.type) else literal_text(physical, f.type)
            out += [f"{column} = {text}", f"{column} < {text}", f"{column} >= {text}"]
    return out
