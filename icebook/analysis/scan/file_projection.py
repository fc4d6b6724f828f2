"""How one data file's columns map onto a table schema: projection by field id.

Spec ("Column Projection", "Schema Evolution"): readers find a table column in a data file by its
field id, never by name or position. A column the file lacks reads as null (or its initial
default); a file column whose id the schema no longer has (a dropped column) is ignored; a renamed
column is found under its old name; a promoted type (int -> long, float -> double, a wider
decimal) is widened as it is read. ``file_projection`` lays this out column by column for one
data file, reading only its Parquet footer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from icebook.errors import MetadataError
from icebook.io.fileio import FileIO
from icebook.spec.schema import Schema

FIELD_ID = b"PARQUET:field_id"
COLUMNS = ["field_id", "table_column", "table_type", "file_column", "file_type", "read_as"]


def _file_fields(schema: pa.Schema) -> dict[int, tuple[str, pa.DataType]]:
    """Field id -> (dotted name in the file, Arrow type), for every nested field that carries an id."""
    found: dict[int, tuple[str, pa.DataType]] = {}

    def walk(field: pa.Field, prefix: str) -> Iterator[None]:
        name = f"{prefix}.{field.name}" if prefix else field.name
        raw = (field.metadata or {}).get(FIELD_ID)
        if raw is not None:
            found[int(raw)] = (name, field.type)
        t = field.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                yield from walk(t.field(i), name)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            yield from walk(t.value_field, name)
        elif pa.types.is_map(t):
            yield from walk(t.key_field, name)
            yield from walk(t.item_field, name)
        yield None

    for f in schema:
        for _ in walk(f, ""):
            pass
    return found


def _verdict(table_name: str, table_type: str, file_entry: tuple[str, pa.DataType] | None) -> str:
    if file_entry is None:
        return "missing in this file: read as null"
    file_name, file_type = file_entry
    notes = ["nested: its fields follow"] if table_type.startswith(("struct<", "list<", "map<")) else []
    leaf = table_name.rsplit(".", 1)[-1]
    if file_name.rsplit(".", 1)[-1] not in (leaf, "element", "key", "value"):
        notes.append(f"renamed since written (was {file_name.rsplit('.', 1)[-1]})")
    promoted = {
        ("int32", "long"): "int -> long",
        ("float", "double"): "float -> double",
    }.get((str(file_type), table_type))
    if promoted:
        notes.append(f"promoted {promoted}")
    elif pa.types.is_decimal(file_type) and table_type.startswith("decimal"):
        written = f"decimal({file_type.precision}, {file_type.scale})"
        if written.replace(" ", "") != table_type.replace(" ", ""):
            notes.append(f"promoted {written} -> {table_type}")
    return "; ".join(notes) if notes else "read as is"


def file_projection(fileio: FileIO, data_file: str, schema: Schema) -> pd.DataFrame:
    """One row per field of ``schema`` (nested fields as dotted names) and per file column the schema
    no longer has: which file column feeds it, and how it is read."""
    try:
        with fileio.open_input(data_file) as f:
            physical = pq.read_schema(f)
    except (pa.ArrowInvalid, OSError) as exc:
        raise MetadataError(data_file, None, f"cannot read the Parquet footer: {exc}", kind="data file") from None
    in_file = _file_fields(physical)
    rows: list[dict[str, Any]] = []
    seen: set[int] = set()
    for field_id, name in schema.id_to_name().items():
        field = schema.find_field(field_id)
        type_text = str(field.type) if field is not None else "?"
        entry = in_file.get(field_id)
        seen.add(field_id)
        rows.append(
            {
                "field_id": field_id,
                "table_column": name,
                "table_type": type_text,
                "file_column": entry[0] if entry else None,
                "file_type": str(entry[1]) if entry else None,
                "read_as": _verdict(name, type_text, entry),
            }
        )
    for field_id, (name, arrow_type) in sorted(in_file.items()):
        if field_id not in seen:
            rows.append(
                {
                    "field_id": field_id,
                    "table_column": None,
                    "table_type": None,
                    "file_column": name,
                    "file_type": str(arrow_type),
                    "read_as": "not in this schema (dropped): ignored",
                }
            )
    return pd.DataFrame(rows, columns=COLUMNS).sort_values("field_id", ignore_index=True)
