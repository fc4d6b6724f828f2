"""The ``position_deletes`` metadata table: one row per deleted position of a snapshot.

Shaped like Spark's: ``file_path`` and ``pos`` of the deleted row, ``row`` (the deleted values when
the delete file stores them, else null), the delete file's ``partition`` (the table-wide partition
type; dropped for an unpartitioned table) and ``spec_id``, ``delete_file_path``, and for v3 tables
``content_offset`` and ``content_size_in_bytes`` of a deletion vector's blob. Deletion vectors
(spec: "Deletion Vectors") expand to their positions, with ``file_path`` the referenced data file.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa

from icebook.analysis.arrow_types import arrow_type
from icebook.analysis.store.manifests import ManifestStore, parallel_map, table_partition_type
from icebook.io.position_delete_files import read_position_deletes
from icebook.io.puffin import read_deletion_vector
from icebook.spec.manifest import FileContent, FileFormat, ManifestContent, ManifestFile
from icebook.spec.schema import Schema
from icebook.spec.snapshots import Snapshot
from icebook.spec.types import StructType


def _row_type(schema: Schema) -> pa.DataType:
    return arrow_type(StructType(schema.columns))


def _project_row(row: pa.Array, schema: Schema) -> pa.Array:
    """A delete file's ``row`` struct, re-shaped to the current schema by column name; columns the
    file lacks read as null."""
    target = _row_type(schema)
    children = []
    for f in target:
        if row.type.get_field_index(f.name) >= 0:
            child = row.field(f.name)
            children.append(child if child.type == f.type else child.cast(f.type))
        else:
            children.append(pa.nulls(len(row), f.type))
    return pa.StructArray.from_arrays(children, fields=list(target), mask=row.is_null())


def position_deletes_arrow(
    store: ManifestStore,
    snapshot: Snapshot | None,
    *,
    unify: Callable[[ManifestFile], pa.Table],
    progress: bool = True,
) -> pa.Table:
    """Every position deleted by the live position delete files and deletion vectors of ``snapshot``.

    ``unify(manifest)`` gives a manifest's live entries with the partition in the table-wide type.
    """
    metadata = store.metadata
    schema = metadata.current_schema()
    row_type = _row_type(schema)
    partition_type = arrow_type(table_partition_type(metadata))
    partitioned = bool(table_partition_type(metadata).fields)
    v3 = metadata.format_version >= 3
    manifests = [m for m in (store.manifest_list(snapshot) if snapshot else ()) if m.content == ManifestContent.DELETES]

    def one_manifest(manifest: ManifestFile) -> list[pa.Table]:
        entries = unify(manifest)
        out = []
        for entry in entries.to_pylist():
            if entry["content"] != FileContent.POSITION_DELETES:
                continue
            if FileFormat.parse(str(entry["file_format"]), file=manifest.manifest_path) == FileFormat.PUFFIN:
                positions = read_deletion_vector(
                    store.fileio, entry["file_path"], entry["content_offset"], entry["content_size_in_bytes"]
                )
                rows = pa.table(
                    {
                        "file_path": pa.array([entry["referenced_data_file"]] * len(positions), pa.string()),
                        "pos": pa.array(np.asarray(positions, dtype=np.int64)),
                    }
                )
            else:
                rows = read_position_deletes(store.fileio, entry["file_path"], file_format=entry["file_format"])
            n = rows.num_rows
            row = _project_row(rows.column("row").combine_chunks(), schema) if "row" in rows.column_names else None
            columns: dict[str, pa.Array] = {
                "file_path": rows.column("file_path").combine_chunks(),
                "pos": rows.column("pos").combine_chunks(),
                "row": row if row is not None else pa.nulls(n, row_type),
            }
            if partitioned:
                columns["partition"] = pa.array([entry["partition"]] * n, partition_type)
            columns["spec_id"] = pa.array([manifest.partition_spec_id] * n, pa.int32())
            columns["delete_file_path"] = pa.array([entry["file_path"]] * n, pa.string())
            if v3:
                columns["content_offset"] = pa.array([entry["content_offset"]] * n, pa.int64())
                columns["content_size_in_bytes"] = pa.array([entry["content_size_in_bytes"]] * n, pa.int64())
            out.append(pa.table(columns))
        return out

    parts = [
        t for tables in parallel_map(one_manifest, manifests, progress=progress, label="manifests") for t in tables
    ]
    if parts:
        return pa.concat_tables(parts)
    empty: dict[str, pa.Array] = {
        "file_path": pa.array([], pa.string()),
        "pos": pa.array([], pa.int64()),
        "row": pa.array([], row_type),
    }
    if partitioned:
        empty["partition"] = pa.array([], partition_type)
    empty["spec_id"] = pa.array([], pa.int32())
    empty["delete_file_path"] = pa.array([], pa.string())
    if v3:
        empty["content_offset"] = pa.array([], pa.int64())
        empty["content_size_in_bytes"] = pa.array([], pa.int64())
    return pa.table(empty)


__all__ = ["position_deletes_arrow"]
