"""Data and delete files in every format the spec allows: Parquet, ORC and Avro, read as Arrow.

Columns carry their Iceberg field ids in field metadata, so readers match them by id (spec:
"Column Projection"): Parquet keeps them as ``PARQUET:field_id``, ORC as the ``iceberg.id`` type
attribute (Appendix A, "ORC"), Avro as the ``field-id`` / ``element-id`` / ``key-id`` /
``value-id`` schema properties (Appendix A, "Avro"), which this module copies into
``PARQUET:field_id`` metadata of the Arrow fields it builds.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa

from icebook.errors import MetadataError, UnsupportedFeature
from icebook.io.fileio import FileIO

PARQUET_FIELD_ID = b"PARQUET:field_id"
ORC_FIELD_ID = b"iceberg.id"
FORMATS = ("PARQUET", "ORC", "AVRO")


def field_id(field: pa.Field) -> int | None:
    """The Iceberg field id an Arrow field carries in its metadata (Parquet or ORC style), if any."""
    meta = field.metadata or {}
    raw = meta.get(PARQUET_FIELD_ID) or meta.get(ORC_FIELD_ID)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


class DataFile(Protocol):
    """An open data or delete file: its Arrow schema (with field ids), row count, and columns."""

    schema: pa.Schema
    num_rows: int

    def read(self, columns: Sequence[str]) -> pa.Table: ...


@dataclass
class _Parquet:
    file: Any
    schema: pa.Schema
    num_rows: int

    def read(self, columns: Sequence[str]) -> pa.Table:
        return self.file.read(columns=list(columns), use_threads=False)


@dataclass
class _Orc:
    file: Any
    schema: pa.Schema
    num_rows: int

    def read(self, columns: Sequence[str]) -> pa.Table:
        if not columns:
            return pa.table({})  # readers take the row count from num_rows
        return self.file.read(columns=list(columns))


@dataclass
class _Avro:
    table: pa.Table
    schema: pa.Schema
    num_rows: int

    def read(self, columns: Sequence[str]) -> pa.Table:
        return self.table.select(list(columns))


@contextmanager
def open_data_file(fileio: FileIO, path: str, file_format: str) -> Iterator[DataFile]:
    """Open ``path`` as a ``file_format`` file (``PARQUET``, ``ORC`` or ``AVRO``), closing it after."""
    fmt = file_format.upper()
    if fmt not in FORMATS:
        raise UnsupportedFeature(
            f"{path}: file format {file_format!r} is not a data file format ({', '.join(FORMATS)})"
        )
    with fileio.open_input(path) as handle:
        if fmt == "PARQUET":
            import pyarrow.parquet as pq

            pf = pq.ParquetFile(handle)
            yield _Parquet(pf, pf.schema_arrow, pf.metadata.num_rows)
        elif fmt == "ORC":
            import pyarrow.orc as orc

            of = orc.ORCFile(handle)
            yield _Orc(of, of.schema, of.nrows)
        else:
            table = read_avro_table(handle.read(), path)
            yield _Avro(table, table.schema, table.num_rows)


# ---------------------------------------------------------------------- Avro data files


def read_avro_table(data: bytes, path: str) -> pa.Table:
    """An Avro data or delete file as an Arrow table whose fields carry Iceberg field ids."""
    import io

    import fastavro

    try:
        reader = fastavro.reader(io.BytesIO(data))
        schema = reader.writer_schema
        records: list[dict[str, Any]] = [r for r in reader if isinstance(r, dict)]
    except Exception as exc:  # fastavro raises ValueError, EOFError, SchemaParseException ...
        raise MetadataError(
            path, None, f"not a readable Avro file ({type(exc).__name__}: {exc})", kind="data file"
        ) from None
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise MetadataError(path, "schema", "an Avro data file's schema must be a record", kind="data file")
    fields, arrays = [], []
    for f in schema["fields"]:
        arrow_t, nullable = _avro_type(f["type"], path)
        values = [_avro_value(r.get(f["name"]), f["type"]) for r in records]
        arrays.append(pa.array(values, type=arrow_t))
        fields.append(_with_id(pa.field(f["name"], arrow_t, nullable=nullable), f.get("field-id")))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _with_id(field: pa.Field, fid: Any) -> pa.Field:
    return field.with_metadata({PARQUET_FIELD_ID: str(fid).encode()}) if fid is not None else field


def _non_null(avro: Any) -> tuple[Any, bool]:
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        if len(branches) != 1:
            raise UnsupportedFeature(f"Avro union {avro} is not an Iceberg type (only [null, T] unions are)")
        return branches[0], len(branches) != len(avro)
    return avro, False


_PRIMITIVES: dict[str, pa.DataType] = {
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "bytes": pa.binary(),
}


def _avro_type(avro: Any, path: str) -> tuple[pa.DataType, bool]:
    """(Arrow type, nullable) for an Avro schema node, field ids kept on nested fields."""
    inner, nullable = _non_null(avro)
    if isinstance(inner, str):
        if inner in _PRIMITIVES:
            return _PRIMITIVES[inner], nullable
        raise UnsupportedFeature(f"{path}: Avro type {inner!r} is not an Iceberg type")
    logical = inner.get("logicalType")
    kind = inner.get("type")
    if logical == "decimal":
        return pa.decimal128(int(inner["precision"]), int(inner.get("scale", 0))), nullable
    if logical == "date":
        return pa.date32(), nullable
    if logical == "time-micros":
        return pa.time64("us"), nullable
    if logical in ("timestamp-micros", "timestamp-nanos"):
        tz = "UTC" if inner.get("adjust-to-utc") else None
        return pa.timestamp("us" if logical == "timestamp-micros" else "ns", tz=tz), nullable
    if logical == "uuid":
        return pa.binary(16), nullable
    if kind == "fixed":
        return pa.binary(int(inner["size"])), nullable
    if kind == "record":
        children = []
        for f in inner["fields"]:
            t, n = _avro_type(f["type"], path)
            children.append(_with_id(pa.field(f["name"], t, nullable=n), f.get("field-id")))
        return pa.struct(children), nullable
    if kind == "array" and logical == "map":
        entry = _non_null(inner["items"])[0]
        key_f, value_f = entry["fields"][0], entry["fields"][1]
        key_t, _ = _avro_type(key_f["type"], path)
        value_t, value_null = _avro_type(value_f["type"], path)
        return pa.map_(
            _with_id(pa.field("key", key_t, nullable=False), key_f.get("field-id")),
            _with_id(pa.field("value", value_t, nullable=value_null), value_f.get("field-id")),
        ), nullable
    if kind == "array":
        t, n = _avro_type(inner["items"], path)
        return pa.list_(_with_id(pa.field("element", t, nullable=n), inner.get("element-id"))), nullable
    if kind == "map":
        t, n = _avro_type(inner["values"], path)
        return pa.map_(
            _with_id(pa.field("key", pa.string(), nullable=False), inner.get("key-id")),
            _with_id(pa.field("value", t, nullable=n), inner.get("value-id")),
        ), nullable
    if isinstance(kind, (str, dict, list)) and kind in _PRIMITIVES:
        return _PRIMITIVES[kind], nullable
    raise UnsupportedFeature(f"{path}: Avro type {inner} is not an Iceberg type")


def _avro_value(value: Any, avro: Any) -> Any:
    """A value as fastavro decoded it, in the shape ``pa.array`` takes for ``_avro_type(avro)``."""
    if value is None:
        return None
    inner, _ = _non_null(avro)
    if isinstance(inner, str):
        return value
    kind, logical = inner.get("type"), inner.get("logicalType")
    if logical == "uuid":
        return value.bytes if hasattr(value, "bytes") else value
    if kind == "record":
        return {f["name"]: _avro_value(value.get(f["name"]), f["type"]) for f in inner["fields"]}
    if kind == "array" and logical == "map":
        entry = _non_null(inner["items"])[0]
        key_f, value_f = entry["fields"][0], entry["fields"][1]
        return [
            (_avro_value(e[key_f["name"]], key_f["type"]), _avro_value(e[value_f["name"]], value_f["type"]))
            for e in value
        ]
    if kind == "array":
        return [_avro_value(v, inner["items"]) for v in value]
    if kind == "map":
        return [(k, _avro_value(v, inner["values"])) for k, v in value.items()]
    return value


__all__ = ["FORMATS", "ORC_FIELD_ID", "PARQUET_FIELD_ID", "DataFile", "field_id", "open_data_file", "read_avro_table"]
