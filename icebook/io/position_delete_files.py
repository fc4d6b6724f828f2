"""Position delete files (spec: "Position Delete Files"): Parquet, ORC or Avro files of (file_path, pos[, row]).

Columns are found by their reserved field ids, not by name: ``file_path`` 2147483546, ``pos``
2147483545 and the optional ``row`` 2147483544 (spec: "Reserved Field IDs").
"""

from __future__ import annotations

import pyarrow as pa

from icebook.errors import IcebookError, MetadataError, NotFound, decoded_values
from icebook.io.datafiles import field_id, open_data_file
from icebook.io.fileio import FileIO
from icebook.spec.schema import DELETE_FILE_PATH_ID, DELETE_POS_ID

FILE_PATH_ID = DELETE_FILE_PATH_ID
POS_ID = DELETE_POS_ID
ROW_ID = 2147483544  # the optional ``row`` struct (spec: "Reserved Field IDs")


def read_position_deletes(fileio: FileIO, path: str, *, file_format: str = "PARQUET") -> pa.Table:
    """Every row of one position delete file (Parquet, ORC or Avro) as ``file_path`` (string),
    ``pos`` (int64) and ``row`` (the file's own struct of deleted row values, or absent when the
    file has none). Columns are found by field id (Appendix A), falling back to their names."""
    try:
        with open_data_file(fileio, path, file_format) as df:
            ids = {fid: f.name for f in df.schema if (fid := field_id(f)) is not None}
            names = df.schema.names
            columns = [ids.get(FILE_PATH_ID, "file_path"), ids.get(POS_ID, "pos")]
            has_row = ROW_ID in ids or "row" in names
            if has_row:
                columns.append(ids.get(ROW_ID, "row"))
            missing = [c for c in columns if c not in names]
            if missing:
                raise MetadataError(
                    path, missing[0], "column missing from the position delete file", kind="delete file"
                )
            table = df.read(columns)
    except NotFound:
        raise NotFound(f"position delete file {path} not found") from None
    except IcebookError:
        raise
    except Exception as exc:  # pyarrow raises many types for a truncated or foreign file
        raise MetadataError(path, None, f"cannot read as {file_format}: {exc}", kind="delete file") from exc
    out: dict[str, pa.Array] = {}
    for name, target in (("file_path", pa.string()), ("pos", pa.int64())):
        with decoded_values(path, name, kind="delete file"):  # a binary path not UTF-8, a pos not an integer
            out[name] = table.column(len(out)).cast(target).combine_chunks()
    if has_row:
        out["row"] = table.column(2).combine_chunks()
    return pa.table(out)


__all__ = ["FILE_PATH_ID", "POS_ID", "ROW_ID", "read_position_deletes"]
