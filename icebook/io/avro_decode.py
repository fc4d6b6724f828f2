"""Decoders of Avro bytes, run inside the decoder worker process (``icebook.io.decode_worker``).

Nothing here is called with a table's bytes in the kernel's process: see
``icebook.io.worker_pool``. Decoders of manifests, fastest first:

* ``polars-avro`` (a Rust Avro reader; in-memory file objects, top-level projection);
* ``polars`` (its built-in ``read_avro``; only when asked for by name);
* ``fastavro`` (records as dicts; always available, the reference path).

All produce the same columns, which travel back to the kernel as Arrow IPC stream bytes.
"""

from __future__ import annotations

import contextlib
import io
import json
import pickle
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from functools import cache, lru_cache
from importlib.machinery import EXTENSION_SUFFIXES
from importlib.util import find_spec, module_from_spec, spec_from_file_location
from pathlib import Path
from typing import Any

import pyarrow as pa

from icebook.io.arrow_columns import single_array
from icebook.io.avro_header import check_framing, inflated, parse_container_header, write_container_header
from icebook.io.avro_schema import ManifestLayout
from icebook.io.avro_unions import guard_unions, unguard_batch
from icebook.io.entry_columns import ENTRY_COLUMNS
from icebook.io.metric_facts import METRIC_MAP_TYPES, METRIC_MAPS, facts_of_columns

COMPUTED = frozenset({"spec_id"})
"""Columns computed by icebook rather than decoded: spec_id comes from the manifest."""

Decoded = dict[str, pa.Array]
"""{spec column name: pa.Array (target type, file values, no inheritance)}."""
FactTuples = dict[str, tuple[int | None, int | None, int | None]]
"""{metric map name: ``MapFacts.as_tuple()``} for every metric map a decode read (plain values: they
travel back to the kernel, which unpickles nothing else)."""


def _to_map(arr: pa.Array, target: pa.MapType) -> pa.Array:
    """list<struct<key, value>> (Iceberg's Avro map encoding) -> Arrow map."""
    if pa.types.is_map(arr.type):
        return arr.cast(target)
    arr = single_array(arr)
    lst = arr.cast(pa.list_(arr.type.value_type))
    entries = lst.values
    keys = entries.field(0).cast(target.key_type)
    items = entries.field(1).cast(target.item_type)
    mask = lst.is_null() if lst.null_count else None
    return pa.MapArray.from_arrays(lst.offsets, keys, items, type=target, mask=mask)


def _conform(arr: pa.Array, target: pa.DataType) -> pa.Array:
    arr = single_array(arr)
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


def _from_arrow_table(
    table: pa.Table, layout: ManifestLayout, targets: dict[str, pa.DataType]
) -> tuple[Decoded, FactTuples]:
    """The ``targets`` columns of a columnar decoder's table, and the facts of every metric map in it
    (requested or not: the maps left out are checked through their facts)."""
    out: Decoded = {}
    facts: FactTuples = {}
    for name in ENTRY_COLUMNS:
        avro_name = layout.entry_names.get(name)
        if name in targets and avro_name is not None and avro_name in table.column_names:
            out[name] = _conform(table.column(avro_name), targets[name])
    df_name = layout.entry_names["data_file"]
    if df_name in table.column_names:
        df = single_array(table.column(df_name))
        present = {df.type.field(i).name for i in range(df.type.num_fields)}
        for name, avro_name in layout.data_file_names.items():
            if name not in targets or name in COMPUTED:
                continue
            if avro_name in present:
                out[name] = _conform(df.field(avro_name), targets[name])
            elif name == "partition" and not layout.partition_fields:  # dropped empty record
                out[name] = pa.Array.from_buffers(pa.struct([]), len(df), [None], children=[])
        maps = {
            name: df.field(layout.data_file_names[name])
            for name in METRIC_MAPS
            if layout.data_file_names.get(name) in present
        }
        facts = {name: f.as_tuple() for name, f in facts_of_columns(maps).items()}
    return out, facts


def _top_level(layout: ManifestLayout, names: Sequence[str]) -> list[str]:
    wanted = []
    for name in ENTRY_COLUMNS:
        if name in names and name in layout.entry_names:
            wanted.append(layout.entry_names[name])
    if any(n not in ENTRY_COLUMNS for n in names):
        wanted.append(layout.entry_names["data_file"])
    return wanted


def _without_empty_partition(layout: ManifestLayout) -> Callable[[dict[str, Any]], None]:
    """An edit of a manifest's writer schema that removes the zero-field ``partition`` record.

    An unpartitioned manifest's partition is an empty record, which encodes to zero bytes,
    so dropping it from the writer schema leaves every data block valid. polars-avro cannot
    build an Arrow struct with no fields; this lets it read unpartitioned manifests.
    """
    df_name = layout.entry_names["data_file"]
    part_name = layout.data_file_names["partition"]

    def edit(schema: dict[str, Any]) -> None:
        for f in schema["fields"]:
            if f["name"] == df_name:
                record = f["type"] if isinstance(f["type"], dict) else next(b for b in f["type"] if b != "null")
                record["fields"] = [g for g in record["fields"] if g["name"] != part_name]

    return edit


def decode_polars_avro(
    data: bytes, layout: ManifestLayout, targets: dict[str, pa.DataType]
) -> tuple[Decoded, FactTuples]:
    # Inflated here by zlib's rules, once: polars-avro then reads stored blocks and inflates nothing itself.
    data = inflated(data, check_framing(data, "<manifest>", kind="manifest"), "<manifest>", kind="manifest")
    cols = _top_level(layout, list(targets))
    edit = None
    if not layout.partition_fields and layout.entry_names["data_file"] in cols:
        edit = _without_empty_partition(layout)
    return _from_arrow_table(read_polars_avro(data, cols, edit), layout, targets)


_BATCH_ROWS = 32768  # read_avro's own batch size
_NATIVE_READER = "polars_avro._avro_rs"


@cache
def _native_reader() -> Any | None:
    """polars-avro's native reader class (``AvroSource``), loaded without the package's Python layer, which
    imports polars (a third of a second of a worker's start) to build frames the worker never uses; None
    when this polars-avro does not ship it that way (the next decoder, fastavro, then reads every manifest)."""
    module = sys.modules.get(_NATIVE_READER)
    registered = False
    try:
        if module is None:
            package = find_spec("polars_avro")
            folders = list(package.submodule_search_locations or ()) if package is not None else []
            found = [
                Path(folder) / f"_avro_rs{suffix}"
                for folder in folders
                for suffix in EXTENSION_SUFFIXES
                if (Path(folder) / f"_avro_rs{suffix}").is_file()
            ]
            spec = spec_from_file_location(_NATIVE_READER, found[0]) if found else None
            if spec is None or spec.loader is None:
                return None
            module = module_from_spec(spec)
            # Registered first, as an import does: the package, if imported later, finds it loaded once.
            sys.modules[_NATIVE_READER] = module
            registered = True
            spec.loader.exec_module(module)
        return module.AvroSource
    except Exception:
        if registered:
            del sys.modules[_NATIVE_READER]
        return None


def preload() -> None:
    """Load the manifest decoder before a worker says it is ready, so its first manifest is not slower."""
    _native_reader()


@lru_cache(maxsize=64)
def _guarded_json(schema: bytes) -> bytes:
    """``guard_unions`` of a writer schema's JSON, kept: a worker reads many manifests of one schema."""
    return json.dumps(guard_unions(json.loads(schema))).encode("utf-8")


def read_polars_avro(
    data: bytes, columns: list[str] | None, edit: Callable[[dict[str, Any]], None] | None = None
) -> pa.Table:
    """The ``columns`` (None: all) of the Avro container ``data`` as polars-avro's reader decodes them, with
    every optional value read strictly (``io/avro_unions.py``: a damaged union index raises) and the writer
    schema first changed by ``edit``, when given. The reader's Arrow batches are imported as they are:
    ``read_avro`` wraps the same reader in a polars LazyFrame, built anew for each file, and then converts
    the frame to Arrow, which on manifests of a few thousand entries costs more CPU than the reading; nor can
    polars hold the guarded unions. ImportError when this polars-avro does not have the reader where
    ``_native_reader`` looks: the next decoder reads the file."""
    reader = _native_reader()
    if reader is None:
        raise ImportError(f"polars-avro's native reader ({_NATIVE_READER}) is not installed")
    meta, sync, header_len = parse_container_header(data)
    written = meta["avro.schema"]
    if edit is not None:
        schema = json.loads(written)
        edit(schema)
        written = json.dumps(schema).encode("utf-8")
    meta["avro.schema"] = _guarded_json(written)
    data = write_container_header(meta, sync) + data[header_len:]
    buffer = io.BytesIO(data)

    def opened() -> contextlib.AbstractContextManager[io.BytesIO]:
        buffer.seek(0)  # the reader opens its source again to rewind it
        return contextlib.nullcontext(buffer)

    source = reader([opened], False, False)  # strict, utf8_view: as read_avro's defaults
    batches = [unguard_batch(pa.record_batch(batch)) for batch in source.batch_iter(_BATCH_ROWS, columns)]
    if not batches:
        empty = pa.record_batch(source.schema())
        batches = [unguard_batch(empty if columns is None else empty.select(columns))]
    return pa.Table.from_batches(batches)


def decode_polars(data: bytes, layout: ManifestLayout, targets: dict[str, pa.DataType]) -> tuple[Decoded, FactTuples]:
    import polars

    cols = _top_level(layout, list(targets))
    frame = polars.read_avro(io.BytesIO(data), columns=cols)
    return _from_arrow_table(frame.to_arrow(), layout, targets)


def iter_records(data: bytes) -> Iterator[dict[str, Any]]:
    import fastavro

    yield from fastavro.reader(io.BytesIO(data), return_record_name=False)  # type: ignore[misc]


def _py_value(value: Any, target: pa.DataType) -> Any:
    if value is None:
        return None
    if pa.types.is_map(target):
        return [(kv["key"], kv["value"]) for kv in value]
    return value


def decode_fastavro(data: bytes, layout: ManifestLayout, targets: dict[str, pa.DataType]) -> tuple[Decoded, FactTuples]:
    # The metric maps are collected whether asked for or not: their facts are reported either way.
    wanted = {**{n: t for n, t in METRIC_MAP_TYPES.items() if n in layout.data_file_names}, **targets}
    columns: dict[str, list[Any]] = {name: [] for name in wanted if name not in COMPUTED}
    entry_pairs = [(n, layout.entry_names[n]) for n in ENTRY_COLUMNS if n in columns and n in layout.entry_names]
    df_pairs = [(n, a) for n, a in layout.data_file_names.items() if n in columns]
    df_name = layout.entry_names["data_file"]
    for rec in iter_records(data):
        for name, avro_name in entry_pairs:
            columns[name].append(rec.get(avro_name))
        df = rec[df_name]
        for name, avro_name in df_pairs:
            columns[name].append(_py_value(df.get(avro_name), wanted[name]))
    decoded: Decoded = {}
    for name, values in columns.items():
        if name in dict(entry_pairs) or name in dict(df_pairs):
            decoded[name] = pa.array(values, type=wanted[name])
    facts = {name: f.as_tuple() for name, f in facts_of_columns(decoded).items()}
    return {name: column for name, column in decoded.items() if name in targets}, facts


DECODERS: dict[str, Callable[[bytes, ManifestLayout, dict[str, pa.DataType]], tuple[Decoded, FactTuples]]] = {
    "polars-avro": decode_polars_avro,
    "polars": decode_polars,
    "fastavro": decode_fastavro,
}


@cache
def available_decoders() -> tuple[str, ...]:
    """Names of the decoders that can be imported here, fastest first; always ends with fastavro
    (looked up once: every manifest read asks)."""
    # Found without importing: the kernel asks this too, and the decoders only ever run in a worker.
    found = [name for name, module in (("polars-avro", "polars_avro"), ("polars", "polars")) if find_spec(module)]
    return (*found, "fastavro")


def _ipc(columns: Decoded) -> pickle.PickleBuffer:
    """The columns as an Arrow IPC stream, sent out of band by the worker (never copied into its pickle)."""
    table = pa.table(columns) if columns else pa.table({})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return pickle.PickleBuffer(sink.getvalue())


# ------------------------------------------------------------------ worker tasks


def manifest_columns(
    data: bytes, layout: ManifestLayout, targets: dict[str, pa.DataType], decoders: Sequence[str]
) -> tuple[str, pickle.PickleBuffer, FactTuples]:
    """(the decoder that read it, Arrow IPC stream of the ``targets`` columns, the facts of every metric
    map decoded) for one manifest. Only the asked-for columns are converted and sent back: the metric
    maps are most of a manifest, and a plan without a filter needs none of them.

    Decoders are tried in order; a failure (a Python error or a native panic) hands over to
    the next. All failing raises ValueError listing why each failed.
    """
    failures: list[str] = []
    for name in decoders:
        try:
            decoded, facts = DECODERS[name](data, layout, targets)
            return name, _ipc(decoded), facts
        except ImportError as exc:
            failures.append(f"{name}: {exc}")
        except KeyError as exc:
            failures.append(f"{name}: missing field {exc}")
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            failures.append(f"{name}: {type(exc).__name__}: {str(exc)[:300]}")
    raise ValueError("cannot decode: " + "; ".join(failures))


def avro_records(data: bytes) -> list[dict[str, Any]]:
    """Every record of a small Avro file (a manifest list), as dicts."""
    return list(iter_records(data))


def manifest_entry_record(
    data: bytes, layout: ManifestLayout, index: int
) -> tuple[dict[str, Any] | None, list[int], list[int], list[int | None]]:
    """(record ``index``, or None when there are fewer, and the content, record_count and
    first_row_id of every entry up to and including it: what "First Row ID Inheritance" reads)."""
    df_name = layout.entry_names["data_file"]
    first_name = layout.data_file_names.get("first_row_id", "")
    content_name = layout.data_file_names.get("content", "")
    count_name = layout.data_file_names["record_count"]
    contents: list[int] = []
    record_counts: list[int] = []
    first_row_ids: list[int | None] = []
    for i, rec in enumerate(iter_records(data)):
        df = rec[df_name]
        contents.append(int(df.get(content_name) or 0))
        record_counts.append(int(df[count_name]))
        first_row_ids.append(df.get(first_name))
        if i == index:
            return rec, contents, record_counts, first_row_ids
    return None, contents, record_counts, first_row_ids


def sleep(seconds: float) -> float:
    """Test task: stand in for a decoder that does not return."""
    time.sleep(seconds)
    return seconds


def exit_now(code: int) -> None:
    """Test task: stand in for a decoder that crashes the process."""
    import os

    os._exit(code)


__all__ = [
    "COMPUTED",
    "DECODERS",
    "Decoded",
    "available_decoders",
    "avro_records",
    "manifest_columns",
    "manifest_entry_record",
    "read_polars_avro",
]
