"""Manifest entries, columnar (spec: "Manifests", "Manifest Entry Fields", "Data File Fields").

``read_manifest_entries`` decodes a whole manifest into one Arrow table (one row per
entry). The bytes are read through FileIO and decoded in memory, so manifests on object
stores work the same as local ones. Decoders, fastest first:

* ``polars-avro`` (a Rust Avro reader; in-memory file objects, top-level projection);
* ``polars`` (its built-in ``read_avro``);
* ``fastavro`` (records as dicts; always available, the reference path).

A decoder that is missing, or fails on a file, hands over to the next one; all produce
the same table. Inheritance (snapshot id, sequence numbers, first row id) is then
applied column-wise, as the vectorised form of the named functions in
``icebook.spec.manifest``, with a boolean ``*_inherited`` column for each.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from icebook.errors import IcebookError, MetadataError
from icebook.io.avro_header import header_from_bytes, parse_container_header, write_container_header
from icebook.io.avro_list import iter_avro_records, read_bytes_for
from icebook.io.avro_schema import ManifestLayout, inheritance_version, manifest_layout
from icebook.spec.manifest import EntryStatus, ManifestFile

ENTRY_COLUMNS = ("status", "snapshot_id", "sequence_number", "file_sequence_number")
"""The manifest_entry fields outside data_file, in spec order (the first columns of an entries table)."""
INHERITED_FLAGS = (
    "snapshot_id_inherited",
    "sequence_number_inherited",
    "file_sequence_number_inherited",
    "first_row_id_inherited",
)
_INT_MAP = pa.map_(pa.int32(), pa.int64())
_BIN_MAP = pa.map_(pa.int32(), pa.binary())


def data_file_arrow_fields(partition_type: pa.StructType) -> list[pa.Field]:
    return [
        pa.field("content", pa.int32()),
        pa.field("file_path", pa.string()),
        pa.field("file_format", pa.string()),
        pa.field("spec_id", pa.int32()),
        pa.field("partition", partition_type),
        pa.field("record_count", pa.int64()),
        pa.field("file_size_in_bytes", pa.int64()),
        pa.field("column_sizes", _INT_MAP),
        pa.field("value_counts", _INT_MAP),
        pa.field("null_value_counts", _INT_MAP),
        pa.field("nan_value_counts", _INT_MAP),
        pa.field("lower_bounds", _BIN_MAP),
        pa.field("upper_bounds", _BIN_MAP),
        pa.field("key_metadata", pa.binary()),
        pa.field("split_offsets", pa.list_(pa.int64())),
        pa.field("equality_ids", pa.list_(pa.int32())),
        pa.field("sort_order_id", pa.int32()),
        pa.field("first_row_id", pa.int64()),
        pa.field("referenced_data_file", pa.string()),
        pa.field("content_offset", pa.int64()),
        pa.field("content_size_in_bytes", pa.int64()),
    ]


def entries_schema(partition_type: pa.StructType) -> pa.Schema:
    """The Arrow schema of ``read_manifest_entries`` for a manifest with this partition type."""
    entry = [
        pa.field("status", pa.int32()),
        pa.field("snapshot_id", pa.int64()),
        pa.field("sequence_number", pa.int64()),
        pa.field("file_sequence_number", pa.int64()),
    ]
    flags = [pa.field(name, pa.bool_()) for name in INHERITED_FLAGS]
    return pa.schema(entry + data_file_arrow_fields(partition_type) + flags)


# Columns computed by icebook rather than decoded: spec_id comes from the manifest.
_COMPUTED = {"spec_id"}


# ---------------------------------------------------------------------------- decoders
# Each decoder returns {spec column name: pa.Array (target type, file values, no inheritance)}.

Decoded = dict[str, pa.Array]


def _to_map(arr: pa.Array, target: pa.MapType) -> pa.Array:
    """list<struct<key, value>> (Iceberg's Avro map encoding) -> Arrow map."""
    if pa.types.is_map(arr.type):
        return arr.cast(target)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    lst = arr.cast(pa.list_(arr.type.value_type))
    entries = lst.values
    keys = entries.field(0).cast(target.key_type)
    items = entries.field(1).cast(target.item_type)
    mask = lst.is_null() if lst.null_count else None
    return pa.MapArray.from_arrays(lst.offsets, keys, items, type=target, mask=mask)


def _conform(arr: pa.Array, target: pa.DataType) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_map(target):
        return _to_map(arr, target)
    if pa.types.is_struct(target) and target.num_fields == 0:
        return pa.Array.from_buffers(target, len(arr), [None], children=[])
    if pa.types.is_struct(target):
        children = [_conform(arr.field(f.name), f.type) for f in target]
        mask = arr.is_null() if arr.null_count else None
        return pa.StructArray.from_arrays(children, fields=list(target), mask=mask)
    if pa.types.is_timestamp(arr.type) and pa.types.is_timestamp(target) and arr.type.tz != target.tz:
        # Polars reads every timestamp as UTC-aware; Iceberg's adjust-to-utc decides the Arrow type.
        # Re-labelling keeps the stored integer, which is what the file holds.
        return pa.Array.from_buffers(target, len(arr), arr.buffers(), null_count=arr.null_count, offset=arr.offset)
    if arr.type != target:
        return arr.cast(target)
    return arr


def _from_arrow_table(table: pa.Table, layout: ManifestLayout, targets: dict[str, pa.DataType]) -> Decoded:
    out: Decoded = {}
    for name in ENTRY_COLUMNS:
        avro_name = layout.entry_names.get(name)
        if name in targets and avro_name is not None and avro_name in table.column_names:
            out[name] = _conform(table.column(avro_name), targets[name])
    df_name = layout.entry_names["data_file"]
    if df_name in table.column_names:
        df = table.column(df_name).combine_chunks()
        present = {df.type.field(i).name for i in range(df.type.num_fields)}
        for name, avro_name in layout.data_file_names.items():
            if name not in targets or name in _COMPUTED:
                continue
            if avro_name in present:
                out[name] = _conform(df.field(avro_name), targets[name])
            elif name == "partition" and not layout.partition_fields:  # dropped empty record
                out[name] = pa.Array.from_buffers(pa.struct([]), len(df), [None], children=[])
    return out


def _top_level(layout: ManifestLayout, names: Sequence[str]) -> list[str]:
    wanted = []
    for name in ENTRY_COLUMNS:
        if name in names and name in layout.entry_names:
            wanted.append(layout.entry_names[name])
    if any(n not in ENTRY_COLUMNS for n in names):
        wanted.append(layout.entry_names["data_file"])
    return wanted


def _without_empty_partition(data: bytes, layout: ManifestLayout) -> bytes:
    """The same file with the zero-field ``partition`` record removed from its Avro schema.

    An unpartitioned manifest's partition is an empty record, which encodes to zero bytes,
    so dropping it from the writer schema leaves every data block valid. polars-avro cannot
    build an Arrow struct with no fields; this lets it read unpartitioned manifests.
    """
    meta, sync, header_len = parse_container_header(data)
    schema = json.loads(meta["avro.schema"])
    df_name = layout.entry_names["data_file"]
    part_name = layout.data_file_names["partition"]
    for f in schema["fields"]:
        if f["name"] == df_name:
            record = f["type"] if isinstance(f["type"], dict) else next(b for b in f["type"] if b != "null")
            record["fields"] = [g for g in record["fields"] if g["name"] != part_name]
    meta["avro.schema"] = json.dumps(schema).encode("utf-8")
    return write_container_header(meta, sync) + data[header_len:]


def decode_polars_avro(data: bytes, layout: ManifestLayout, targets: dict[str, pa.DataType]) -> Decoded:
    import polars_avro

    cols = _top_level(layout, list(targets))
    if not layout.partition_fields and layout.entry_names["data_file"] in cols:
        data = _without_empty_partition(data, layout)
    frame = polars_avro.read_avro(io.BytesIO(data), columns=cols)
    return _from_arrow_table(frame.to_arrow(), layout, targets)


def decode_polars(data: bytes, layout: ManifestLayout, targets: dict[str, pa.DataType]) -> Decoded:
    import polars

    cols = _top_level(layout, list(targets))
    frame = polars.read_avro(io.BytesIO(data), columns=cols)
    return _from_arrow_table(frame.to_arrow(), layout, targets)


def _py_value(value: Any, target: pa.DataType) -> Any:
    if value is None:
        return None
    if pa.types.is_map(target):
        return [(kv["key"], kv["value"]) for kv in value]
    return value


def decode_fastavro(data: bytes, layout: ManifestLayout, targets: dict[str, pa.DataType], *, path: str) -> Decoded:
    columns: dict[str, list[Any]] = {name: [] for name in targets if name not in _COMPUTED}
    entry_pairs = [(n, layout.entry_names[n]) for n in ENTRY_COLUMNS if n in columns and n in layout.entry_names]
    df_pairs = [(n, a) for n, a in layout.data_file_names.items() if n in columns]
    df_name = layout.entry_names["data_file"]
    for rec in iter_avro_records(data, path, "manifest"):
        for name, avro_name in entry_pairs:
            columns[name].append(rec.get(avro_name))
        df = rec[df_name]
        for name, avro_name in df_pairs:
            columns[name].append(_py_value(df.get(avro_name), targets[name]))
    out: Decoded = {}
    for name, values in columns.items():
        if name in dict(entry_pairs) or name in dict(df_pairs):
            out[name] = pa.array(values, type=targets[name])
    return out


DECODERS: dict[str, Callable[..., Decoded]] = {
    "polars-avro": decode_polars_avro,
    "polars": decode_polars,
}


def available_decoders() -> tuple[str, ...]:
    """Names of the decoders that can be imported here, fastest first; always ends with fastavro."""
    out = []
    for name, module in (("polars-avro", "polars_avro"), ("polars", "polars")):
        try:
            __import__(module)
        except ImportError:
            continue
        out.append(name)
    return (*out, "fastavro")


# ------------------------------------------------------------------------ inheritance


def _inherit(decoded: Decoded, n: int, manifest: ManifestFile, version: int) -> Decoded:
    """Vectorised ``inherit_snapshot_id`` / ``inherit_sequence_numbers`` / ``inherit_first_row_ids`` of
    ``icebook.spec.manifest`` (the definition; a test holds this equal to them on every scenario manifest)."""
    out = dict(decoded)
    if "snapshot_id" in out:
        col = out["snapshot_id"]
        missing = col.is_null()
        if manifest.added_snapshot_id is not None:
            out["snapshot_id"] = pc.fill_null(col, pa.scalar(manifest.added_snapshot_id, pa.int64()))
            out["snapshot_id_inherited"] = missing
        else:
            out["snapshot_id_inherited"] = pa.array([False] * n, pa.bool_())
    # "When reading v1 manifests with no sequence number column, sequence numbers ... default to 0."
    v1_style = version == 1
    status = out.get("status")
    for name in ("sequence_number", "file_sequence_number"):
        if name not in out:
            continue
        col = out[name]
        if v1_style:
            out[f"{name}_inherited"] = col.is_null()
            out[name] = pc.fill_null(col, pa.scalar(0, pa.int64()))
        elif manifest.sequence_number is not None and status is not None:
            flag = pc.and_(col.is_null(), pc.equal(status, pa.scalar(int(EntryStatus.ADDED), pa.int32())))
            out[f"{name}_inherited"] = flag
            out[name] = pc.if_else(flag, pa.scalar(manifest.sequence_number, pa.int64()), col)
        else:
            out[f"{name}_inherited"] = pa.array([False] * n, pa.bool_())
    if "first_row_id" in out:
        col = out["first_row_id"]
        if manifest.first_row_id is not None and "content" in out and "record_count" in out:
            flag = pc.and_(col.is_null(), pc.equal(out["content"], pa.scalar(0, pa.int32())))
            counts = pc.if_else(flag, out["record_count"], pa.scalar(0, pa.int64()))
            before = pc.subtract(pc.cumulative_sum(counts), counts)  # sum over preceding null-id data files
            assigned = pc.add(before, pa.scalar(manifest.first_row_id, pa.int64()))
            out["first_row_id"] = pc.if_else(flag, assigned, col)
            out["first_row_id_inherited"] = flag
        else:
            out["first_row_id_inherited"] = pa.array([False] * n, pa.bool_())
    return out


# ----------------------------------------------------------------------------- public


def _needed(columns: Sequence[str] | None, schema: pa.Schema) -> list[str]:
    all_names = schema.names
    if columns is None:
        return list(all_names)
    unknown = [c for c in columns if c not in all_names]
    if unknown:
        raise ValueError(f"unknown manifest entry columns {unknown}; available: {all_names}")
    need = set(columns)
    for flag in INHERITED_FLAGS:
        if flag in need:
            need.add(flag.removesuffix("_inherited"))
    if need & {"sequence_number", "file_sequence_number"}:
        need.add("status")
    if "first_row_id" in need:
        need |= {"content", "record_count"}
    return [n for n in all_names if n in need]


def read_manifest_entries(
    fileio: Any,
    manifest: ManifestFile,
    *,
    columns: Sequence[str] | None = None,
    decoder: str | None = None,
) -> pa.Table:
    """Every entry of ``manifest`` as one Arrow table, inheritance applied.

    Columns (see ``entries_schema``): status, snapshot_id, sequence_number,
    file_sequence_number, the data_file fields (content, file_path, file_format, spec_id,
    partition, record_count, ..., content_size_in_bytes) and the flags
    snapshot_id_inherited, sequence_number_inherited, file_sequence_number_inherited,
    first_row_id_inherited. ``columns`` selects a subset (decoding only the Avro columns
    they need); ``decoder`` forces one of ``available_decoders()``.
    """
    path = manifest.manifest_path
    data = read_bytes_for(fileio, path, "manifest")
    header = header_from_bytes(data, path)
    layout = manifest_layout(header)
    schema = entries_schema(layout.partition_type)
    needed = _needed(columns, schema)
    targets = {name: schema.field(name).type for name in needed if name not in INHERITED_FLAGS}
    order = [decoder] if decoder is not None else list(available_decoders())
    decoded: Decoded | None = None
    failures: list[str] = []
    for name in order:
        try:
            if name == "fastavro":
                decoded = decode_fastavro(data, layout, targets, path=path)
            elif name in DECODERS:
                decoded = DECODERS[name](data, layout, targets)
            else:
                raise ValueError(f"unknown decoder {name!r}; available: {available_decoders()}")
            break
        except ImportError as exc:
            failures.append(f"{name}: {exc}")
        except IcebookError:
            raise
        except Exception as exc:  # a fast decoder that cannot read this file: fall back
            if decoder is not None and name != "fastavro":
                raise MetadataError(path, None, f"{name} decoder failed: {exc}", kind="manifest") from None
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
    if decoded is None:
        raise MetadataError(path, None, "cannot decode: " + "; ".join(failures), kind="manifest")
    n = _row_count(decoded, data, layout, path)
    version = inheritance_version(header, layout, manifest)
    if "content" in targets and "content" not in decoded:  # v1: "all v1 files are data files"
        decoded["content"] = pa.array([0] * n, pa.int32())
    if "spec_id" in targets:
        spec_id = header.partition_spec_id if header.partition_spec_id is not None else manifest.partition_spec_id
        decoded["spec_id"] = pa.array([spec_id] * n, pa.int32())
    for name, type_ in targets.items():  # columns this file's schema does not have (older versions)
        if name not in decoded:
            decoded[name] = pa.nulls(n, type_)
    full = _inherit(decoded, n, manifest, version)
    return pa.Table.from_arrays([full[name] for name in needed], schema=pa.schema([schema.field(c) for c in needed]))


def _row_count(decoded: Decoded, data: bytes, layout: ManifestLayout, path: str) -> int:
    if decoded:
        return len(next(iter(decoded.values())))
    return sum(1 for _ in iter_avro_records(data, path, "manifest"))


__all__ = ["ENTRY_COLUMNS", "INHERITED_FLAGS", "available_decoders", "entries_schema", "read_manifest_entries"]
