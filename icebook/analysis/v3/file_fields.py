"""The Iceberg field ids a data file holds, from its own schema (Parquet footers through the footer cache)."""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from icebook.errors import IcebookError, MetadataError
from icebook.io.datafiles import field_id, open_data_file
from icebook.io.fileio import FileIO
from icebook.io.parquet_footer import read_footer
from icebook.spec.manifest import FileFormat


def _ids(fields: list[pa.Field]) -> Iterator[int]:
    for f in fields:
        fid = field_id(f)
        if fid is not None:
            yield fid
        t = f.type
        if pa.types.is_struct(t):
            yield from _ids([t.field(i) for i in range(t.num_fields)])
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            yield from _ids([t.value_field])
        elif pa.types.is_map(t):
            yield from _ids([t.key_field, t.item_field])


def file_field_ids(fileio: FileIO, path: str, file_format: str, size: int | None) -> frozenset[int]:
    """Every field id (nested ones too) written in the data file ``path``."""
    if file_format.upper() == FileFormat.PARQUET:
        schema = read_footer(fileio, path, size).schema.to_arrow_schema()
        return frozenset(_ids(list(schema)))
    try:
        with open_data_file(fileio, path, file_format) as df:
            return frozenset(_ids(list(df.schema)))
    except IcebookError:
        raise
    except Exception as exc:  # a foreign reader's failure, said once with the file
        raise MetadataError(path, None, f"cannot read the file's schema: {exc}", kind="data file") from exc


__all__ = ["file_field_ids"]
