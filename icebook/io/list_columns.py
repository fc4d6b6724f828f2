"""A few fields of every manifest of many manifest lists, column-wise (spec: "Manifest Lists").

History analyses over tens of thousands of snapshots need, of each snapshot's manifest list, only which
partition specs its manifests were written with and how many live files and rows each holds. Reading
the lists one by one costs about a hundred microseconds each in the kernel; here batches of lists go to
the decoder workers (``icebook.io.list_decode``), which read local lists themselves, check every file's
framing, and decode each batch in one columnar pass. Lists on other storage are read through the FileIO
in the kernel and sent as bytes. A batch that does not decode as a whole is read again one list at a time
(``icebook.io.avro_list``), whose errors name the file and the field.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icebook.errors import IcebookError, MetadataError
from icebook.io.avro_decode import available_decoders
from icebook.io.avro_list import (
    NON_NEGATIVE,
    avro_records,
    int_fields,
    missing_field,
    negative_field,
    negative_length,
    path_field,
    read_bytes_for,
)
from icebook.io.fileio import ArrowFileIO, FileIO
from icebook.io.worker_pool import SETTINGS, decode_isolated
from icebook.spec.manifest import ManifestContent

LIST_COLUMNS = (
    "partition_spec_id",
    "content",
    "added_files_count",
    "existing_files_count",
    "added_rows_count",
    "existing_rows_count",
)
"""The manifest_file fields read by default, by name; each int64, null where a list's schema does not have it (v1)."""
STRING_FIELDS = ("manifest_path",)
"""The manifest_file fields that can be asked for as strings (large_string); every other is an integer."""
_KIND = "manifest list"
_BATCH = 2048
_ALLOWANCE_PER_PATH = 16 * 1024  # bytes a list read by a worker is assumed to have, for its deadline
_PROGRESS_LISTS = 500


def read_list_columns(
    fileio: FileIO, paths: Sequence[str], *, names: Sequence[str] = LIST_COLUMNS, progress: bool = True
) -> pa.Table:
    """One row per manifest of every manifest list in ``paths``, in list order and file order within a
    list: ``list_index`` (the list's position in ``paths``) and the fields ``names`` (by default
    ``LIST_COLUMNS``; each of ``STRING_FIELDS`` a string, every other an integer). ``partition_spec_id``
    is always read (it is required, and says a list's schema is a manifest list's)."""
    names = tuple(dict.fromkeys(("partition_spec_id", *names)))
    if "polars-avro" not in available_decoders():
        return _concat(
            [_one_by_one(fileio, paths[i : i + _BATCH], i, names) for i in range(0, len(paths), _BATCH)], names
        )
    local = type(fileio) is ArrowFileIO  # a FileIO of one's own may serve other bytes under a path
    starts = list(range(0, len(paths), _BATCH))
    bar = None
    if progress and len(paths) >= _PROGRESS_LISTS:
        from icebook.io.progress import progress_bar

        bar = progress_bar(len(paths), unit="list", desc="reading manifest lists", leave=False)

    def batch(start: int) -> pa.Table:
        table = _batch(fileio, paths[start : start + _BATCH], start, local, names)
        if bar is not None:
            bar.update(min(_BATCH, len(paths) - start))
        return table

    try:
        with ThreadPoolExecutor(max_workers=SETTINGS.workers) as pool:
            return _concat(list(pool.map(batch, starts)), names)
    finally:
        if bar is not None:
            bar.close()


def holds_data(columns: pa.Table) -> np.ndarray:
    """Which rows of a ``read_list_columns`` table are data manifests: ``content`` DATA, or null (a v1
    list stores none, "0 for all v1 manifests"), column-wise as ``ManifestFile.effective_content``."""
    content = pc.fill_null(columns.column("content"), int(ManifestContent.DATA))
    return np.asarray(content.to_numpy(zero_copy_only=False) == int(ManifestContent.DATA), dtype=bool)


def _batch(fileio: FileIO, paths: Sequence[str], start: int, local: bool, names: Sequence[str]) -> pa.Table:
    sources: list[str | bytes] = []
    for path in paths:
        on_disk = _local_path(fileio, path) if local else None
        sources.append(on_disk if on_disk is not None else read_bytes_for(fileio, path, _KIND))
    size = sum(len(s) if isinstance(s, bytes) else _ALLOWANCE_PER_PATH for s in sources)
    strings = [n for n in names if n in STRING_FIELDS]
    reply = decode_isolated(
        "list_columns", sources, names, strings, data_size=size, path=paths[0], kind=_KIND, columnar=True
    )
    status = reply[0] if isinstance(reply, tuple) and reply else None
    if status == "failed" and len(reply) == 4 and isinstance(reply[1], int) and 0 <= reply[1] < len(paths):
        _, index, field, problem = reply
        raise MetadataError(paths[index], field if isinstance(field, str) else None, str(problem), kind=_KIND)
    if status == "ok" and len(reply) == 3:
        table = _decoded(reply[1], reply[2], paths, names)
        if table is not None:
            _check_values(table, paths)
            return _with_start(table, start)
    # Undecodable as a batch (or an unexpected reply): one list at a time names the file at fault.
    return _one_by_one(fileio, paths, start, names)


def _check_values(table: pa.Table, paths: Sequence[str]) -> None:
    """The value checks of a list read record by record (``avro_list.int_fields``), column-wise: a projected
    decode reads none of the strings a damaged block breaks, so the integers it reads are checked here."""
    checks = [(name, pc.less(table.column(name), 0)) for name in NON_NEGATIVE if name in table.column_names]
    if "manifest_length" in table.column_names:
        checks.append(
            (
                "manifest_length",
                pc.or_kleene(pc.is_null(table.column("manifest_length")), pc.less(table.column("manifest_length"), 0)),
            )
        )
    if "manifest_path" in table.column_names:
        checks.append(("manifest_path", pc.is_null(table.column("manifest_path"))))
    if "content" in table.column_names:
        content = table.column("content")  # null in v1 lists: every manifest holds data
        known = pc.is_in(content, value_set=pa.array([0, 1], pa.int64()))
        checks.append(("content", pc.and_(pc.is_valid(content), pc.invert(known))))
    for name, bad in checks:
        rows = np.flatnonzero(np.asarray(pc.fill_null(bad, False).to_numpy(zero_copy_only=False), dtype=bool))
        if not len(rows):
            continue
        row = int(rows[0])
        value = table.column(name)[row].as_py()
        path = paths[int(table.column("list_index")[row].as_py())]
        if name == "content":
            raise MetadataError(path, "content", f"expected 0 or 1, found {value}", kind=_KIND)
        if value is None:
            raise missing_field(name, path)
        if name == "manifest_length":
            raise negative_length(value, path)
        raise negative_field(name, value, path)


def _local_path(fileio: FileIO, path: str) -> str | None:
    if not isinstance(fileio, ArrowFileIO):
        return None
    try:
        return fileio.local_path(path)
    except IcebookError as exc:  # a path no file can have (a NUL byte): named as a read would name it
        raise MetadataError(path, None, str(exc), kind=_KIND) from None


def _decoded(counts: object, ipc: object, paths: Sequence[str], names: Sequence[str]) -> pa.Table | None:
    if not isinstance(counts, list) or len(counts) != len(paths) or not isinstance(ipc, bytes):
        return None
    try:
        table = pa.ipc.open_stream(pa.py_buffer(ipc)).read_all()
    except (pa.ArrowInvalid, OSError):
        return None
    expected = _schema(names)
    if not table.schema.equals(expected) or table.num_rows != sum(c for c in counts if isinstance(c, int)):
        return None
    if table.column("partition_spec_id").null_count:  # required: the one-by-one reader says where it is missing
        return None
    index = table.column("list_index").to_numpy()
    if len(index) and (index.min() < 0 or index.max() >= len(paths)):
        return None
    if np.any(np.diff(index) < 0):  # rows come grouped by writer schema: back to list order
        table = table.take(pa.array(np.argsort(index, kind="stable")))
    return table


def _one_by_one(fileio: FileIO, paths: Sequence[str], start: int, names: Sequence[str]) -> pa.Table:
    columns: dict[str, list[int | str | None]] = {name: [] for name in names}
    index: list[int] = []
    for i, path in enumerate(paths):
        for rec in avro_records(read_bytes_for(fileio, path, _KIND), path, _KIND):
            values: dict[str, int | str | None] = {**int_fields(rec, path)}
            if "manifest_path" in columns:
                values["manifest_path"] = path_field(rec, path)
            for name in names:
                columns[name].append(values[name])
            if rec.get("partition_spec_id") is None:
                raise missing_field("partition_spec_id", path)
            index.append(i)
    schema = _schema(names)
    table = pa.table(
        [*(pa.array(columns[n], schema.field(n).type) for n in names), pa.array(index, pa.int64())], schema=schema
    )
    _check_values(table, paths)
    return _with_start(table, start)


def _schema(names: Sequence[str]) -> pa.Schema:
    fields = [pa.field(n, pa.large_string() if n in STRING_FIELDS else pa.int64()) for n in names]
    return pa.schema([*fields, pa.field("list_index", pa.int64())])


def _with_start(table: pa.Table, start: int) -> pa.Table:
    if not start:
        return table
    shifted = pa.array(table.column("list_index").to_numpy() + start, pa.int64())
    return table.set_column(table.schema.get_field_index("list_index"), "list_index", shifted)


def _concat(tables: list[pa.Table], names: Sequence[str]) -> pa.Table:
    if not tables:
        return _schema(names).empty_table()
    return pa.concat_tables(tables)


__all__ = ["LIST_COLUMNS", "STRING_FIELDS", "holds_data", "read_list_columns"]
