"""The Arrow engine: read a snapshot's rows with pyarrow, no JVM.

It follows a ``ScanPlan``: each data file (Parquet, ORC or Avro) is read through the table's
FileIO and projected by field id into the read schema (spec: "Column Projection"); columns of
identity partitions take the value of the file's partition tuple, as Iceberg's Java readers fill
them (constants, even where the file's own column disagrees). Then position deletes, deletion
vectors and equality deletes that the plan matched to it are applied (spec: "Row-level
Deletes"), in any of the three formats, then the residual filter. Output types follow Spark's
read: ``timestamptz`` as ``timestamp[us, tz=UTC]``, decimals as ``decimal128``, ``uuid`` as its
canonical string (``8-4-4-4-12`` hex, as Spark returns it); the v3 types as docs/ARCHITECTURE.md
"v3 types in Arrow" says (``arrow_v3_types``). A missing file fails the whole read.
The row-lineage metadata columns of a v3 table are read when asked for by name (``arrow_lineage``).
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.arrow_types import arrow_field, arrow_type, uuid_as_string
from icebook.analysis.expr.filter_arrow import to_arrow
from icebook.analysis.expr.nodes import AlwaysTrue, Expr, referenced_ids
from icebook.analysis.resolve import snapshot_schema
from icebook.analysis.scan.plan_items import ScanFile, ScanTask
from icebook.analysis.scan.planner import ScanPlan, plan_scan
from icebook.analysis.store.table_like import TableLike
from icebook.engines import arrow_lineage
from icebook.engines.arrow_defaults import default_column
from icebook.engines.arrow_v3_types import conform_collection, conform_v3, holds_v3_value, is_v3_value
from icebook.errors import EngineError, IcebookError, MetadataError, NotFound, UnsupportedFeature
from icebook.io.datafiles import field_id, open_data_file
from icebook.io.fileio import FileIO
from icebook.io.puffin import read_deletion_vector
from icebook.spec import properties
from icebook.spec.metadata import TableMetadata
from icebook.spec.schema import DELETE_FILE_PATH_ID, DELETE_POS_ID, Schema
from icebook.spec.snapshots import Snapshot
from icebook.spec.transforms import IdentityTransform
from icebook.spec.types import IcebergType, ListType, MapType, NestedField, StructType
from icebook.spec.variant import VariantError

_THREADS = 8


def read(
    table: TableLike,
    snapshot: Snapshot,
    filter: Expr | str | None = None,
    columns: Sequence[str] | None = None,
    *,
    schema: Schema | None = None,
) -> pa.Table:
    """Rows of ``snapshot`` matching ``filter``, as Spark's ``SELECT <columns> ... VERSION AS OF`` reads them.

    ``schema`` defaults to the snapshot's schema (time travel by snapshot id); pass the table's
    current schema to read a branch as Spark does. ``columns`` may name the row-lineage metadata columns
    ``_row_id`` and ``_last_updated_sequence_number`` (v3), returned where they are named.
    """
    schema = schema or snapshot_schema(table.metadata, snapshot)
    data_columns, lineage = arrow_lineage.split_columns(table.metadata, schema, columns)
    plan = plan_scan(table, snapshot, filter, data_columns, schema=schema)
    rows = read_plan(table.fileio, table.metadata, plan, lineage=lineage)
    if not lineage or columns is None:
        return rows
    names = iter(plan.columns)
    return rows.select([c.lower() if c.lower() in lineage else next(names) for c in columns])


def read_live_rows(
    table: TableLike, snapshot: Snapshot, files: Collection[str] | None = None, *, schema: Schema | None = None
) -> pa.Table:
    """Every live row of ``snapshot`` (of the data files in ``files`` when given) in ``schema``,
    plus ``_file`` (data file path) and ``_pos`` (row position in it): row identity for changelogs."""
    plan = plan_scan(table, snapshot, None, None, schema=schema)
    return read_plan(table.fileio, table.metadata, plan, with_positions=True, files=files)


def read_plan(
    fileio: FileIO,
    metadata: TableMetadata,
    plan: ScanPlan,
    *,
    with_positions: bool = False,
    files: Collection[str] | None = None,
    lineage: Sequence[str] = (),
) -> pa.Table:
    """Execute a scan plan: read every task in parallel and concatenate in task order; the row-lineage
    columns named in ``lineage`` follow the plan's columns."""
    tasks = tuple(plan.tasks_for(files))  # a read holds every task it reads; built once
    reader = _Reader(fileio, metadata, plan, tasks, with_positions, tuple(lineage))
    if len(tasks) <= 1:
        parts = [reader.task(t) for t in tasks]
    else:
        with ThreadPoolExecutor(max_workers=min(_THREADS, len(tasks))) as pool:
            parts = list(pool.map(reader.task, tasks))
    out_schema = reader.output_schema
    if not parts:
        return out_schema.empty_table()
    rows = pa.concat_tables(parts).combine_chunks() if len(parts) > 1 else parts[0]
    if arrow_lineage.ROW_ID in lineage:
        arrow_lineage.check_unique(rows.column(arrow_lineage.ROW_ID), [t.file for t in tasks])
    return rows


def _field_for(metadata: TableMetadata, schema: Schema, field_id: int) -> NestedField | None:
    """A field by id: from the read schema, else from the newest schema that has it."""
    f = schema.find_field(field_id)
    if f is not None:
        return f
    for s in sorted(metadata.schemas.values(), key=lambda s: -s.schema_id):
        if (f := s.find_field(field_id)) is not None:
            return f
    return None


class _Reader:
    def __init__(
        self,
        fileio: FileIO,
        metadata: TableMetadata,
        plan: ScanPlan,
        tasks: Sequence[ScanTask],
        with_positions: bool,
        lineage: tuple[str, ...] = (),
    ) -> None:
        self.fileio = fileio
        self.metadata = metadata
        self.plan = plan
        self.with_positions = with_positions
        schema = plan.schema
        by_name = {f.name: f for f in schema.columns}
        self.output = [by_name[c] for c in plan.columns]
        self.filter = plan.filter
        needed: dict[int, NestedField] = {f.field_id: f for f in self.output}
        for fid in referenced_ids(plan.filter):
            top = _top_level_of(schema, fid)
            if top is not None:
                needed.setdefault(top.field_id, top)
        for task in tasks:
            for d in task.equality_deletes:
                for fid in d.equality_ids or ():
                    f = _field_for(metadata, schema, fid)
                    if f is not None:
                        needed.setdefault(fid, f)
        self.lineage = [arrow_lineage.LINEAGE_FIELDS[name] for name in lineage]
        self.snapshot = metadata.snapshot_by_id(plan.snapshot_id) if lineage else None
        needed |= {f.field_id: f for f in self.lineage}
        self.needed = needed
        shown = {o.field_id for o in self.output} | {f.field_id for f in self.lineage}
        self.names = {fid: (f.name if fid in shown else f"__id{fid}") for fid, f in needed.items()}
        for fid in referenced_ids(plan.filter):  # nested filter columns keep their dotted names
            self.names.setdefault(fid, schema.find_column_name(fid) or str(fid))
        fields = [arrow_field(f.name, f.type, not f.required, rows=True) for f in self.output]
        fields += [pa.field(f.name, pa.int64()) for f in self.lineage]
        if with_positions:
            fields += [pa.field("_file", pa.string()), pa.field("_pos", pa.int64())]
        self.output_schema = pa.schema(fields)
        self._deletes: dict[str, pa.Table] = {}
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- one task

    def task(self, task: ScanTask) -> pa.Table:
        f = task.file
        table = self._read_data(f)
        n = table.num_rows
        keep = np.ones(n, dtype=bool)
        for dv in task.deletion_vectors:
            positions = self._dv(dv)
            keep[positions[positions < n]] = False
        for d in task.position_deletes:
            positions = self._positions(d, f.file_path)
            keep[positions[(positions >= 0) & (positions < n)]] = False
        for d in task.equality_deletes:
            keep &= ~self._equality_mask(d, table)
        positions = np.arange(n, dtype=np.int64)
        if not keep.all():
            mask = pa.array(keep)
            table = table.filter(mask)
            positions = positions[keep]
        if not isinstance(self.filter, AlwaysTrue) and table.num_rows:
            table = table.append_column("__pos", pa.array(positions))
            table = table.filter(to_arrow(self.filter, self.names))
            positions = table.column("__pos").to_numpy()
        arrays = [uuid_as_string(table.column(self.names[o.field_id]), o.type) for o in self.output]
        if self.lineage:
            arrays += self._lineage(f, table, positions)
        if self.with_positions:
            arrays += [pa.array([f.file_path] * table.num_rows, pa.string()), pa.array(positions, pa.int64())]
        return pa.Table.from_arrays(arrays, schema=self.output_schema)

    def _lineage(self, f: ScanFile, table: pa.Table, positions: np.ndarray) -> list[pa.Array]:
        """The row-lineage columns asked for, of the rows left of data file ``f`` at ``positions``."""
        arrow_lineage.check_first_row_id(f, self.snapshot)
        out = []
        for field in self.lineage:
            written = table.column(field.name).combine_chunks()
            if field.name == arrow_lineage.ROW_ID:
                out.append(arrow_lineage.row_ids(f, written, positions))
            else:
                out.append(arrow_lineage.last_updated(f, written))
        return out

    def _file(self, owner: ScanFile, what: str, columns: Any) -> tuple[pa.Table, dict[int, pa.Field], int]:
        """Read the columns ``columns(fields by id)`` names of one data or delete file (Parquet, ORC
        or Avro), closing it after."""
        path = owner.file_path
        try:
            with open_data_file(self.fileio, path, owner.file_format) as df:
                fields = _ids_of(df.schema, self.metadata, path)
                table = df.read(columns(fields))
                return table, fields, df.num_rows
        except NotFound:
            raise NotFound(
                f"{what} {path} not found (listed in manifest {owner.manifest_path}, read for snapshot "
                f"{self.plan.snapshot_id}); nothing was returned"
            ) from None
        except IcebookError:
            raise
        except Exception as exc:
            raise EngineError(f"cannot read {what} {path}: {exc}") from exc

    def _read_data(self, f: ScanFile) -> pa.Table:
        constants = self._identity_partition_values(f)
        raw, file_fields, n = self._file(
            f,
            "data file",
            lambda fields: [fields[fid].name for fid in self.needed if fid in fields and fid not in constants],
        )
        arrays, names = [], []
        for fid, field in self.needed.items():
            if fid in constants:
                arr = _constant(constants[fid], field.type, n)
            elif fid in file_fields:
                try:
                    arr = _conform(raw.column(file_fields[fid].name).combine_chunks(), field.type)
                except VariantError as exc:  # bytes of a v3 value: name the file and the column
                    raise MetadataError(f.file_path, field.name, str(exc), kind="data file") from None
            else:
                arr = default_column(field, n)
            arrays.append(arr)
            names.append(self.names[fid])
        return pa.Table.from_arrays(arrays, names=names)

    def _identity_partition_values(self, f: ScanFile) -> dict[int, Any]:
        """Source field id -> value of each identity partition field of the file's spec.

        Spec ("Column Projection"): a column missing from the file takes its identity partition
        value; Iceberg's Java readers (Spark's) go further and use the partition tuple for these
        columns even when the file has them, so a file whose column disagrees with its partition
        reads as its partition says. Null partition values are constants too."""
        spec = self.metadata.spec_by_id(f.spec_id)
        out = {}
        for pf, (_, value) in zip(spec.fields, f.partition, strict=False):
            if isinstance(pf.transform, IdentityTransform) and len(pf.source_ids) == 1:
                out[pf.source_ids[0]] = value
        return out

    # ---------------------------------------------------------------- deletes

    def _cached(self, d: ScanFile, loader: Any) -> Any:
        with self._lock:
            hit = self._deletes.get(d.file_path)
        if hit is not None:
            return hit
        value = loader()
        with self._lock:
            self._deletes[d.file_path] = value
        return value

    def _dv(self, d: ScanFile) -> np.ndarray:
        """Deletion vector (spec: "Deletion Vectors"): the Puffin blob at content_offset/content_size_in_bytes."""
        if d.content_offset is None or d.content_size_in_bytes is None:
            raise EngineError(f"deletion vector {d.file_path} has no content_offset/content_size_in_bytes")
        try:
            positions = read_deletion_vector(self.fileio, d.file_path, d.content_offset, d.content_size_in_bytes)
        except NotFound:
            raise NotFound(
                f"deletion vector file {d.file_path} not found (listed in manifest {d.manifest_path}, read for "
                f"snapshot {self.plan.snapshot_id}); nothing was returned"
            ) from None
        if len(positions) != d.record_count:  # a DV's record_count is its cardinality ("Data File Fields")
            raise MetadataError(
                d.manifest_path,
                "record_count",
                f"the deletion vector for {d.referenced_data_file or '?'} in {d.file_path} holds {len(positions)} "
                f"positions but its manifest entry records {d.record_count}",
                kind="manifest",
            )
        return positions

    def _positions(self, d: ScanFile, data_path: str) -> np.ndarray:
        """Position delete file (spec: "Position Delete Files"): rows (file_path, pos) of deleted rows."""

        def columns(fields: dict[int, pa.Field]) -> list[str]:
            path_col, pos_col = fields.get(DELETE_FILE_PATH_ID), fields.get(DELETE_POS_ID)
            return [path_col.name if path_col else "file_path", pos_col.name if pos_col else "pos"]

        def load() -> pa.Table:
            t, _, _ = self._file(d, "position delete file", columns)
            return pa.table({"file_path": t.column(0).cast(pa.string()), "pos": t.column(1).cast(pa.int64())})

        table: pa.Table = self._cached(d, load)
        hits = table.filter(pc.equal(table.column("file_path"), data_path))
        return np.asarray(hits.column("pos").to_numpy(), dtype=np.int64)

    def _equality_mask(self, d: ScanFile, data: pa.Table) -> np.ndarray:
        """Equality delete file (spec: "Equality Delete Files"): a row is deleted when its values of
        every equality field equal a delete row's, nulls equal to nulls."""
        ids = list(d.equality_ids or ())
        if not ids:
            raise EngineError(f"equality delete file {d.file_path} has no equality_ids")

        def columns(fields: dict[int, pa.Field]) -> list[str]:
            missing = [fid for fid in ids if fid not in fields]
            if missing:
                raise EngineError(f"equality delete file {d.file_path} lacks equality field ids {missing}")
            return [fields[fid].name for fid in ids]

        def load() -> pa.Table:
            t, _, _ = self._file(d, "equality delete file", columns)
            cols = []
            for i, fid in enumerate(ids):
                field = self.needed[fid]
                cols.append(_conform(t.column(i).combine_chunks(), field.type))
            return pa.Table.from_arrays(cols, names=[str(fid) for fid in ids])

        deletes: pa.Table = self._cached(d, load)
        n = data.num_rows
        if n == 0 or deletes.num_rows == 0:
            return np.zeros(n, dtype=bool)
        codes_data, codes_del = [], []
        for fid in ids:
            left = data.column(self.names[fid]).combine_chunks()
            right = deletes.column(str(fid)).combine_chunks()
            both = pa.concat_arrays([left, right.cast(left.type)])
            encoded = pc.dictionary_encode(both, null_encoding="encode").indices
            codes_data.append(encoded.slice(0, n))
            codes_del.append(encoded.slice(n))
        if len(ids) == 1:
            return np.asarray(pc.is_in(codes_data[0], value_set=codes_del[0]).to_numpy(zero_copy_only=False))
        keys = [f"k{i}" for i in range(len(ids))]
        left_t = pa.Table.from_arrays([*codes_data, pa.array(np.arange(n))], names=[*keys, "__row"])
        right_t = pa.Table.from_arrays(codes_del, names=keys).group_by(keys).aggregate([])
        hit = left_t.join(right_t, keys=keys, join_type="left semi").column("__row").to_numpy()
        mask = np.zeros(n, dtype=bool)
        mask[hit] = True
        return mask


def _top_level_of(schema: Schema, field_id: int) -> NestedField | None:
    name = schema.find_column_name(field_id)
    if name is None:
        return None
    head = name.split(".")[0]
    return next((f for f in schema.columns if f.name == head), None)


def _constant(value: Any, t: IcebergType, n: int) -> pa.Array:
    """A column of ``n`` copies of a partition value (in the transform's physical form)."""
    if hasattr(value, "bytes") and not isinstance(value, (bytes, str)):
        value = value.bytes  # uuid.UUID -> its 16 bytes
    return pa.array([value] * n, arrow_type(t))


def _ids_of(schema: pa.Schema, metadata: TableMetadata, path: str) -> dict[int, pa.Field]:
    """Top-level columns by field id (Parquet ``PARQUET:field_id``, ORC ``iceberg.id``, Avro
    ``field-id``); files without ids are matched by the table's name mapping, else by current
    column names."""
    out: dict[int, pa.Field] = {}
    for f in schema:
        fid = field_id(f)
        if fid is not None:
            out[fid] = f
    if out or len(schema) == 0:
        return out
    mapping = _name_mapping(metadata)
    for f in schema:
        fid = mapping.get(f.name)
        if fid is not None:
            out[fid] = f
    if not out:
        raise UnsupportedFeature(f"{path}: a file without field ids, and no name mapping matches its columns")
    return out


def _name_mapping(metadata: TableMetadata) -> dict[str, int]:
    """Top-level column name -> field id: the table's name mapping, else the current schema's names."""
    mapping = properties.NAME_MAPPING.read(metadata.properties)
    if mapping:
        return {name: m.field_id for m in mapping if m.field_id is not None for name in m.names}
    return {f.name: f.field_id for f in metadata.current_schema().columns}


def _conform(arr: pa.Array, t: IcebergType) -> pa.Array:
    """A file column as Iceberg type ``t``: promoted types widened, nested fields matched by id."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if is_v3_value(t):
        return conform_v3(arr, t)
    if isinstance(t, StructType):
        by_id: dict[int, int] = {}
        for i in range(arr.type.num_fields):
            fid = field_id(arr.type.field(i))
            if fid is not None:
                by_id[fid] = i
        children, fields = [], []
        flat = arr.flatten() if arr.null_count else None  # a null struct's children are null (not whatever is stored)
        for child in t.fields:
            target = arrow_type(child.type)
            if child.field_id in by_id:
                source = flat[by_id[child.field_id]] if flat is not None else arr.field(by_id[child.field_id])
                children.append(_conform(source, child.type))
            else:
                children.append(default_column(child, len(arr)))
            fields.append(arrow_field(child.name, child.type, not child.required))
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
    if isinstance(t, (ListType, MapType)):
        if holds_v3_value(t):
            return conform_collection(arr, t, _conform)
        target = arrow_type(t)
        return arr if arr.type == target else arr.cast(target)
    target = arrow_type(t)
    if isinstance(arr.type, pa.ExtensionType):
        arr = arr.storage  # e.g. Arrow's uuid extension over fixed_size_binary(16)
    if arr.type == target:
        return arr
    if pa.types.is_timestamp(arr.type) and pa.types.is_timestamp(target) and arr.type.unit == target.unit:
        return arr.view(target)  # the stored instant/wall time is the value; only the label differs
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    return arr.cast(target)


__all__ = ["read", "read_live_rows", "read_plan"]
