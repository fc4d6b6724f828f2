"""Variant shredding per data file, from the Parquet footer (Parquet "VariantShredding"; spec: "Variant").

A variant column is a Parquet group with ``metadata`` and ``value`` (binary) and, when shredded, a
``typed_value``: a primitive (the whole value shredded), a group of object fields (each again ``value`` and
``typed_value``) or a LIST of elements (each again ``value`` and ``typed_value``). Each ``typed_value`` leaf
is a shredded path; each ``value`` leaf below the top holds what did not fit the typed column. The column
is found by its field id, so a variant inside a struct is found too.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from icebook.analysis.scan.planner import plan_scan
from icebook.analysis.store.table_like import TableLike
from icebook.io.datafiles import field_id
from icebook.io.parquet_footer import read_footer
from icebook.spec.schema import Schema
from icebook.spec.snapshots import Snapshot
from icebook.spec.types import Primitive, PrimitiveType

TYPED, VALUE = "typed_value", "value"


@dataclass(frozen=True, slots=True, kw_only=True)
class ShreddedPath:
    """One path of a variant shredded into a typed Parquet column."""

    path: str
    """The variant path: ``$`` (the whole value), ``$.a.b``, ``$.items[*]``."""
    column: str
    """The Parquet column (dotted path) holding it."""
    physical_type: str
    logical_type: str


@dataclass(frozen=True, slots=True, kw_only=True)
class FileVariant:
    """One variant column of one data file."""

    file_path: str
    field_id: int
    column: str
    """The column's name in the table schema (dotted inside structs)."""
    parquet_path: str | None
    """The Parquet group of the column; None when the file does not hold it."""
    shredded: tuple[ShreddedPath, ...]
    residual: tuple[str, ...] = ()
    """Variant paths whose values that did not fit the typed column stay in a ``value`` binary column."""

    @property
    def is_shredded(self) -> bool:
        return bool(self.shredded)


@dataclass(frozen=True, slots=True, kw_only=True)
class VariantShredding:
    """``t.v3(at).variants``: for each live Parquet data file and variant column, which paths are shredded."""

    location: str
    snapshot_id: int | None
    columns: tuple[str, ...]
    files: tuple[FileVariant, ...]

    def to_pandas(self) -> pd.DataFrame:
        rows = []
        for f in self.files:
            for s in f.shredded or (None,):
                rows.append(
                    (
                        f.file_path,
                        f.column,
                        f.field_id,
                        f.is_shredded,
                        s.path if s else None,
                        s.column if s else None,
                        f"{s.physical_type} {s.logical_type}".strip() if s else None,
                    )
                )
        return pd.DataFrame(
            rows, columns=["file_path", "column", "field_id", "shredded", "variant_path", "typed_column", "type"]
        )

    def __repr__(self) -> str:
        shredded = sum(f.is_shredded for f in self.files)
        return (
            f"<VariantShredding snapshot {self.snapshot_id}: {len(self.columns)} variant columns, "
            f"{shredded} of {len(self.files)} (file, column) pairs shredded>"
        )


def _variant_fields(schema: Schema) -> dict[int, str]:
    return {
        fid: name
        for fid, name in schema.id_to_name().items()
        if isinstance(t := schema.find_type(fid), PrimitiveType) and t.name == Primitive.VARIANT
    }


def _parquet_paths(fields: list[pa.Field], prefix: str, out: dict[int, str]) -> None:
    """Field id -> the Parquet path of its column (the standard three-level lists and maps)."""
    for f in fields:
        path = f"{prefix}{f.name}"
        fid = field_id(f)
        if fid is not None:
            out[fid] = path
        t = f.type
        if pa.types.is_struct(t):
            _parquet_paths([t.field(i) for i in range(t.num_fields)], f"{path}.", out)
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            _parquet_paths([t.value_field.with_name("element")], f"{path}.list.", out)
        elif pa.types.is_map(t):
            _parquet_paths([t.key_field.with_name("key"), t.item_field.with_name("value")], f"{path}.key_value.", out)


def _variant_path(parts: list[str]) -> tuple[str, bool] | None:
    """The variant path of a leaf below a variant group (``parts`` after the group's name) and whether it is
    a typed column; None for the group's own ``metadata`` and ``value``."""
    path, i = "$", 0
    while i < len(parts):
        if parts[i] != TYPED:
            return None
        i += 1
        if i == len(parts):
            return path, True
        if parts[i : i + 2] == ["list", "element"]:
            path, i = f"{path}[*]", i + 2
        else:
            path, i = f"{path}.{parts[i]}", i + 1
        if i < len(parts) and parts[i] == VALUE and i == len(parts) - 1:
            return path, False
    return None


def file_variants(meta: pq.FileMetaData, file_path: str, columns: dict[int, str]) -> list[FileVariant]:
    """Each variant column of ``columns`` (field id -> name) in one Parquet file's footer."""
    paths: dict[int, str] = {}
    _parquet_paths(list(meta.schema.to_arrow_schema()), "", paths)
    leaves = [meta.schema.column(i) for i in range(len(meta.schema))]
    out = []
    for fid, name in columns.items():
        group = paths.get(fid)
        shredded: list[ShreddedPath] = []
        residual: list[str] = []
        if group is not None:
            for leaf in leaves:
                if not leaf.path.startswith(group + "."):
                    continue
                found = _variant_path(leaf.path[len(group) + 1 :].split("."))
                if found is None:
                    continue
                path, typed = found
                if typed:
                    logical = str(leaf.logical_type) if leaf.logical_type is not None else ""
                    shredded.append(
                        ShreddedPath(
                            path=path,
                            column=leaf.path,
                            physical_type=leaf.physical_type,
                            logical_type="" if logical == "None" else logical,
                        )
                    )
                else:
                    residual.append(path)
        out.append(
            FileVariant(
                file_path=file_path,
                field_id=fid,
                column=name,
                parquet_path=group,
                shredded=tuple(shredded),
                residual=tuple(residual),
            )
        )
    return out


def variant_shredding(table: TableLike, snapshot: Snapshot | None, schema: Schema) -> VariantShredding:
    """Variant shredding of every live Parquet data file at ``snapshot`` (footers read once, then cached)."""
    columns = _variant_fields(schema)
    files: list[FileVariant] = []
    if snapshot is not None and columns:
        for task in plan_scan(table, snapshot, schema=schema).tasks:
            f = task.file
            if f.file_format.value != "PARQUET":
                continue
            meta = read_footer(table.fileio, f.file_path, f.file_size_in_bytes)
            files.extend(file_variants(meta, f.file_path, columns))
    return VariantShredding(
        location=table.location,
        snapshot_id=None if snapshot is None else snapshot.snapshot_id,
        columns=tuple(columns.values()),
        files=tuple(files),
    )


__all__ = ["FileVariant", "ShreddedPath", "VariantShredding", "file_variants", "variant_shredding"]
