"""Default values with provenance (spec: "Default values", "Column Projection").

A v3 field may carry an ``initial-default`` (the value of the field in every row written before the field
existed) and a ``write-default`` (what a writer fills when a write leaves the field out). A reader takes,
for each data file, the file's own values when the file holds the field id, else the ``initial-default``
(null when there is none). Whether a file holds the field is read from the file's schema, by field id
(a renamed column keeps its id; a re-added column with the old name does not).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import pandas as pd

from icebook.analysis.scan.planner import plan_scan
from icebook.analysis.store.table_like import TableLike
from icebook.analysis.v3.file_fields import file_field_ids
from icebook.spec.defaults import parse_default
from icebook.spec.schema import Schema
from icebook.spec.snapshots import Snapshot
from icebook.spec.types import NestedField, StructType, is_primitive
from icebook.spec.values import to_human


class Source(StrEnum):
    """Where a reader's value of a column comes from, for one data file."""

    FILE = "file"
    INITIAL_DEFAULT = "initial-default"
    NULL = "null"


@dataclass(frozen=True, slots=True, kw_only=True)
class ColumnDefaults:
    """A field with a default, its values in their Iceberg type (``spec.defaults.parse_default``'s form)."""

    field_id: int
    name: str
    type: str
    required: bool
    initial_default: Any
    has_initial_default: bool
    write_default: Any
    has_write_default: bool
    initial_default_text: str = "(none)"
    """The initial default as Spark shows a value of the type (``spec.values.to_human``)."""
    write_default_text: str = "(none)"


@dataclass(frozen=True, slots=True, kw_only=True)
class FileDefault:
    """What a reader takes for one column in one data file, and why."""

    field_id: int
    column: str
    file_path: str
    record_count: int
    source: Source
    value: Any
    """The constant a reader fills (for ``initial-default`` and ``null``); None when read from the file."""
    value_text: str
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Defaults:
    """``t.v3(at).defaults``: every field with a default in the read schema, and per live data file what a
    reader takes for it."""

    location: str
    snapshot_id: int | None
    columns: tuple[ColumnDefaults, ...]
    files: tuple[FileDefault, ...]

    def to_pandas(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                (f.column, f.field_id, f.file_path, f.record_count, f.source.value, f.value, f.reason)
                for f in self.files
            ],
            columns=["column", "field_id", "file_path", "record_count", "source", "value", "reason"],
        )

    def __repr__(self) -> str:
        old = sum(f.source != Source.FILE for f in self.files)
        return (
            f"<Defaults snapshot {self.snapshot_id}: {len(self.columns)} columns with defaults, "
            f"{old} (column, file) pairs a reader fills>"
        )


def _fields(struct: StructType, prefix: str = "") -> list[tuple[str, NestedField]]:
    out = []
    for f in struct.fields:
        name = f"{prefix}{f.name}"
        out.append((name, f))
        if isinstance(f.type, StructType):
            out.extend(_fields(f.type, f"{name}."))
    return out


def _value(raw: Any, f: NestedField, name: str, which: str, metadata_location: str) -> Any:
    return parse_default(raw, f.type, file=metadata_location, field=f"schema field {f.field_id} ({name}) {which}")


def _text(value: Any, present: bool, f: NestedField) -> str:
    if not present:
        return "(none)"
    if value is None:
        return "null"
    if is_primitive(f.type):
        try:
            return to_human(value, f.type)
        except (TypeError, ValueError, OverflowError):
            return str(value)
    return str(value)


def column_defaults(schema: Schema, metadata_location: str) -> tuple[ColumnDefaults, ...]:
    """Fields of ``schema`` with an initial or write default; a default that is not a value of the field's
    type is one ``MetadataError`` naming the metadata file and the field."""
    out = []
    for name, f in _fields(schema.fields):
        if not (f.has_initial_default or f.has_write_default):
            continue
        initial = _value(f.initial_default, f, name, "initial-default", metadata_location)
        write = _value(f.write_default, f, name, "write-default", metadata_location)
        out.append(
            ColumnDefaults(
                field_id=f.field_id,
                name=name,
                type=str(f.type),
                required=f.required,
                initial_default=initial,
                has_initial_default=f.has_initial_default,
                write_default=write,
                has_write_default=f.has_write_default,
                initial_default_text=_text(initial, f.has_initial_default, f),
                write_default_text=_text(write, f.has_write_default, f),
            )
        )
    return tuple(out)


def _provenance(column: ColumnDefaults, held: frozenset[int]) -> tuple[Source, Any, str]:
    if column.field_id in held:
        return Source.FILE, None, f"the file holds field id {column.field_id}: its own values are read"
    if column.has_initial_default and column.initial_default is not None:
        return (
            Source.INITIAL_DEFAULT,
            column.initial_default,
            f"the file has no field id {column.field_id} (written before the column existed): every row reads "
            "the initial-default",
        )
    return (
        Source.NULL,
        None,
        f"the file has no field id {column.field_id} and the column has no initial-default: every row reads null",
    )


def defaults(table: TableLike, snapshot: Snapshot | None, schema: Schema) -> Defaults:
    """Columns of ``schema`` (the read schema at ``snapshot``) with defaults, and for each live data file
    what a reader takes for them."""
    columns = column_defaults(schema, table.metadata_location)
    files: list[FileDefault] = []
    if snapshot is not None and columns:
        for task in plan_scan(table, snapshot, schema=schema).tasks:
            f = task.file
            held = file_field_ids(table.fileio, f.file_path, f.file_format.value, f.file_size_in_bytes)
            for column in columns:
                source, value, reason = _provenance(column, held)
                files.append(
                    FileDefault(
                        field_id=column.field_id,
                        column=column.name,
                        file_path=f.file_path,
                        record_count=f.record_count,
                        source=source,
                        value=value,
                        value_text={
                            Source.FILE: "(the file's values)",
                            Source.INITIAL_DEFAULT: column.initial_default_text,
                            Source.NULL: "null",
                        }[source],
                        reason=reason,
                    )
                )
    return Defaults(
        location=table.location,
        snapshot_id=None if snapshot is None else snapshot.snapshot_id,
        columns=columns,
        files=tuple(files),
    )


__all__ = ["ColumnDefaults", "Defaults", "FileDefault", "Source", "column_defaults", "defaults"]
