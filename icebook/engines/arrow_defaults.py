"""Default values on the Arrow engine: a column a data file does not have is filled with the field's
``initial-default`` (spec: "Default values"), in the field's own Arrow type.

The defaults were checked against their types when the schema was parsed (``spec.defaults``), so reading
one here cannot fail. A struct whose default is ``{}`` is a struct of its fields' own defaults; one
whose default is null (or unset) is null, whatever its fields' defaults.
"""

from __future__ import annotations

import pyarrow as pa

from icebook.analysis.arrow_types import arrow_type
from icebook.spec.defaults import parse_default
from icebook.spec.types import NestedField, StructType


def default_column(field: NestedField, n: int) -> pa.Array:
    """``n`` copies of ``field``'s initial default (nulls when it has none)."""
    target = arrow_type(field.type)
    if not field.has_initial_default or field.initial_default is None:
        return pa.nulls(n, target)
    value = parse_default(field.initial_default, field.type, file="<schema>", field=field.name)
    if isinstance(field.type, StructType):
        children = [default_column(child, n) for child in field.type.fields]
        return pa.StructArray.from_arrays(children, fields=list(target))
    return pa.repeat(pa.scalar(value, target), n)


__all__ = ["default_column"]
