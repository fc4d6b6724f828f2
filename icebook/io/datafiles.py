"""Data and delete files in every format the spec allows: Parquet, ORC and Avro, read as Arrow.

Columns carry their Iceberg field ids in field metadata, so readers match them by id (spec:
"Column Projection"): Parquet keeps them as ``PARQUET:field_id``, ORC as the ``iceberg.id`` type
attribute (Appendix A, "ORC"), Avro as the ``field-id`` / ``element-id`` / ``key-id`` /
``value-id`` schema properties (Appendix A, "Avro"), which ``io/avro_types.py`` (the one Avro-to-Arrow
type map) copies into ``PARQUET:field_id`` metadata of the Arrow fields it builds.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa

from icebook.errors import MetadataError, UnsupportedFeature, one_line
from icebook.io.avro_types import PARQUET_FIELD_ID, avro_arrow_type
from icebook.io.fileio import FileIO
from icebook.spec.manifest import FileFormat

ORC_FIELD_ID = b"iceberg.id"
FORMATS = (FileFormat.PARQUET, FileFormat.ORC, FileFormat.AVRO)
"""The formats a data or delete file may have (Puffin holds deletion vectors, read by ``io/puffin.py``)."""


def field_id(field: pa.Field) -> int | None:
    """The Iceberg field id an Arrow field carries in its metadata (Parquet or ORC style), if any."""
    meta = field.metadata or {}
    raw = meta.get(PARQUET_FIELD_ID) or meta.get(ORC_FIELD_ID)
    try:
        return int(raw) if raw is not None else None
    except ValueError:
        return None


class DataFileReader(Protocol):
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
def open_data_file(fileio: FileIO, path: str, file_format: str) -> Iterator[DataFileReader]:
    """Open ``path`` as a ``file_format`` file (``PARQUET``, ``ORC`` or ``AVRO``), closing it after."""
    fmt = file_format.upper()
    if fmt not in FORMATS:
        raise UnsupportedFeature(
            f"{path}: file format {file_format!r} is not a data file format ({', '.join(FORMATS)})"
        )
    with fileio.open_input(path) as handle:
        if fmt == FileFormat.PARQUET:
            import pyarrow.parquet as pq

            pf = pq.ParquetFile(handle)
            yield _Parquet(pf, pf.schema_arrow, pf.metadata.num_rows)
        elif fmt == FileFormat.ORC:
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
        raise MetadataError(path, None, f"not a readable Avro file ({one_line(exc)})", kind="data file") from None
    if not isinstance(schema, dict) or schema.get("type") != "record":
        raise MetadataError(path, "schema", "an Avro data file's schema must be a record", kind="data file")
    record, _ = avro_arrow_type(schema, file=path, where="", kind="data file")
    fields = [record.field(i) for i in range(record.num_fields)]
    arrays = []
    for f in fields:
        try:
            arrays.append(pa.array([_arrow_value(r.get(f.name), f.type) for r in records], type=f.type))
        except (pa.ArrowException, TypeError, ValueError, OverflowError, AttributeError) as exc:
            problem = f"values do not fit the schema's type {f.type} ({one_line(exc)})"
            raise MetadataError(path, f.name, problem[:300], kind="data file") from None
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _arrow_value(value: Any, t: pa.DataType) -> Any:
    """A value as fastavro decoded it, in the shape ``pa.array`` takes for the Arrow type ``t``."""
    if value is None:
        return None
    if isinstance(value, uuid.UUID):
        return value.bytes if pa.types.is_fixed_size_binary(t) else str(value)
    if pa.types.is_struct(t):
        return {f.name: _arrow_value(value.get(f.name), f.type) for f in (t.field(i) for i in range(t.num_fields))}
    if pa.types.is_map(t):
        # an Avro map is a dict; Iceberg's map with non-string keys an array of key/value records
        pairs = value.items() if isinstance(value, dict) else (tuple(entry.values()) for entry in value)
        return [(_arrow_value(k, t.key_type), _arrow_value(v, t.item_type)) for k, v in pairs]
    if pa.types.is_list(t):
        return [_arrow_value(v, t.value_type) for v in value]
    return value


__all__ = [
    "FORMATS",
    "ORC_FIELD_ID",
    "PARQUET_FIELD_ID",
    "DataFileReader",
    "field_id",
    "open_data_file",
    "read_avro_table",
]
