"""Position delete files (spec: "Position Delete Files"): Parquet files of (file_path, pos[, row]).

Columns are found by their reserved field ids, not by name: ``file_path`` 2147483546, ``pos``
2147483545 and the optional ``row`` 2147483544 (spec: "Reserved Field IDs").
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from icebook.errors import IcebookError, MetadataError, NotFound, UnsupportedFeature
from icebook.io.fileio import FileIO
from icebook.spec.schema import DELETE_FILE_PATH_ID, DELETE_POS_ID

FILE_PATH_ID = DELETE_FILE_PATH_ID
POS_ID = DELETE_POS_ID
ROW_ID = 2147483544  # the optional ``row`` struct (spec: "Reserved Field IDs")
_FIELD_ID = b"PARQUET:field_id"


def _field_ids(schema: pa.Schema) -> dict[int, str]:
    out = {}
    for f in schema:
        raw = (f.metadata or {}).get(_FIELD_ID)
        if raw is not None:
            out[int(raw)] = f.name
    return out


def read_position_deletes(fileio: FileIO, path: str, *, file_format: str = "PARQUET") -> pa.Table:
    """Every row of one position delete file as ``file_path`` (string), ``pos`` (int64) and ``row``
    (the file's own struct of deleted row values, or absent when the file has none)."""
    if file_format.upper() != "PARQUET":
        raise UnsupportedFeature(f"position delete file {path}: {file_format} delete files are not read yet")
    try:
        with fileio.open_input(path) as handle:
            pf = pq.ParquetFile(handle)
            ids = _field_ids(pf.schema_arrow)
            names = {fid: ids.get(fid, default) for fid, default in ((FILE_PATH_ID, "file_path"), (POS_ID, "pos"))}
            columns = [names[FILE_PATH_ID], names[POS_ID]]
            has_row = ROW_ID in ids or "row" in pf.schema_arrow.names
            if has_row:
                columns.append(ids.get(ROW_ID, "row"))
            missing = [c for c in columns if c not in pf.schema_arrow.names]
            if missing:
                raise MetadataError(
                    path, missing[0], "column missing from the position delete file", kind="delete file"
                )
            table = pf.read(columns=columns, use_threads=False)
    except NotFound:
        raise NotFound(f"position delete file {path} not found") from None
    except IcebookError:
        raise
    except Exception as exc:  # pyarrow raises many types for a truncated or foreign file
        raise MetadataError(path, None, f"cannot read as Parquet: {exc}", kind="delete file") from exc
    out = {
        "file_path": table.column(0).cast(pa.string()).combine_chunks(),
        "pos": table.column(1).cast(pa.int64()).combine_chunks(),
    }
    if has_row:
        out["row"] = table.column(2).combine_chunks()
    return pa.table(out)


__all__ = ["FILE_PATH_ID", "POS_ID", "ROW_ID", "read_position_deletes"]
