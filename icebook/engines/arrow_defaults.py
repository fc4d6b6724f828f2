"""Default values on the Arrow engine: a column a data file does not have is filled with the field's
``initial-default`` (spec: "Default values"), in the field's own Arrow type.

The defaults were checked against their types when the schema was parsed (``spec.defaults``), so reading
one here cannot fail. A struct whose default is ``{}`` is a struct of its fields' own defaults; one
whose default is null (or unset) is null, whatever its fields' defaults.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from icebook.analysis.arrow_types import arrow_type
from icebook.spec.defaults import parse_default
from icebook.spec.types import UUID, IcebergType, ListType, MapType, NestedField, StructType


def default_column(field: NestedField, n: int) -> pa.Array:
    """``n`` copies of ``field``'s initial default (nulls when it has none)."""
    target = arrow_type(field.type)
    if not field.has_initial_default or field.initial_default is None:
        return pa.nulls(n, target)
    value = parse_default(field.initial_default, field.type, file="<schema>", field=field.name)
    if isinstance(field.type, StructType):
        children = [default_column(child, n) for child in field.type.fields]
        return pa.StructArray.from_arrays(children, fields=list(target))
    return pa.repeat(pa.scalar(_arrow_value(value, field.type), target), n)


def _arrow_value(value: Any, t: IcebergType) -> Any:
    """A default's value (``spec.defaults``' form) as Arrow builds it: the same but for a uuid, whose
    Arrow type holds its 16 bytes."""
    if value is None:
        return None
    if t == UUID:
        return value.bytes
    if isinstance(t, ListType):
        return [_arrow_value(v, t.element.type) for v in value]
    if isinstance(t, MapType):
        return [(_arrow_value(k, t.key.type), _arrow_value(v, t.value.type)) for k, v in value]
    return value


__all__ = ["default_column"]
