"""Many manifest lists decoded at once, run inside the decoder worker (``icebook.io.decode_worker``).

A table with a long history has one manifest list per snapshot: tens of thousands of small Avro files.
Decoding them one by one costs more in per-file overhead than in records, so this task frames each file
(``check_framing``, as the kernel does), copies the data blocks of every file that shares a writer schema
and codec into one object container with a single sync marker, and decodes each such container at once
with the columnar decoder, keeping only the asked-for top-level fields (integers, and the strings asked for
as such). The rows keep their file order;
the caller maps them back to files by the record counts the framing declared.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from icebook.io.avro_decode import read_polars_avro
from icebook.io.avro_header import AvroFraming, check_deflate_blocks, check_framing, write_container_header, write_long

_SYNC = b"icebook-lists-16"
_KIND = "manifest list"


def _read_local(path: str) -> bytes:
    """A local file's bytes; only regular files (a FIFO would block the read forever)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"not a regular file: {path}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


def _record_fields(schema_json: bytes) -> set[str]:
    schema = json.loads(schema_json)
    if isinstance(schema, dict) and isinstance(schema.get("fields"), list):
        return {f["name"] for f in schema["fields"] if isinstance(f, dict) and isinstance(f.get("name"), str)}
    return set()


def _container(schema_json: bytes, codec: str, files: list[tuple[bytes, AvroFraming]]) -> bytes:
    parts = [write_container_header({"avro.schema": schema_json, "avro.codec": codec.encode()}, _SYNC)]
    for data, framing in files:
        for block in framing.blocks:
            parts += [write_long(block.count), write_long(block.size), data[block.offset : block.offset + block.size]]
            parts.append(_SYNC)
    return b"".join(parts)


def list_columns(sources: Sequence[str | bytes], names: Sequence[str], strings: Sequence[str] = ()) -> tuple[Any, ...]:
    """Decode the manifest lists ``sources`` (local paths to read here, or file contents) into one
    table of the top-level fields ``names`` (int64, or large_string for those in ``strings``; null where a
    file's schema lacks one), rows in file order. Replies, as plain values:

    - ``("ok", counts, ipc)``: records per file, and an Arrow IPC stream of the rows;
    - ``("failed", index, field, problem)``: file ``index`` cannot be read or framed;
    - ``("undecodable", problem)``: a group of files did not decode as a whole (the caller reads them
      one at a time, which names the file).
    """
    groups: dict[tuple[bytes, str], list[tuple[int, bytes, AvroFraming]]] = {}
    counts: list[int] = []
    for index, source in enumerate(sources):
        label = source if isinstance(source, str) else f"#{index}"
        try:
            data = _read_local(source) if isinstance(source, str) else source
            framing = check_framing(data, label, kind=_KIND)
            check_deflate_blocks(data, framing, label, kind=_KIND)  # polars-avro inflates leniently
        except OSError as exc:
            return ("failed", index, None, f"cannot read: {exc}")
        except Exception as exc:  # MetadataError and UnsupportedFeature: passed on as text
            return ("failed", index, getattr(exc, "field", None), getattr(exc, "problem", str(exc)))
        counts.append(framing.record_count)
        key = (bytes(framing.metadata.get("avro.schema", b"")), framing.codec)
        groups.setdefault(key, []).append((index, data, framing))

    order: list[int] = []  # file index of each group, in the order their rows are emitted
    tables: list[pa.Table] = []
    for (schema_json, codec), files in groups.items():
        try:
            present = _record_fields(schema_json)
        except (ValueError, TypeError, KeyError) as exc:
            return ("undecodable", f"unreadable writer schema: {exc}")
        wanted = [n for n in names if n in present]
        expected = sum(f.record_count for _, _, f in files)
        if "partition_spec_id" not in present:
            return ("undecodable", "a writer schema has no partition_spec_id")
        if expected:
            try:
                decoded = read_polars_avro(_container(schema_json, codec, [(d, f) for _, d, f in files]), wanted)
            except BaseException as exc:  # a native panic is a BaseException; both mean "read them one by one"
                if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                    raise
                return ("undecodable", f"{type(exc).__name__}: {str(exc)[:300]}")
            if decoded.num_rows != expected:
                return ("undecodable", f"the blocks declare {expected} records but {decoded.num_rows} were decoded")
            columns = {}
            for name in names:
                kind = pa.large_string() if name in strings else pa.int64()
                if name not in wanted:
                    columns[name] = pa.nulls(expected, kind)
                    continue
                column = decoded.column(name)
                if pa.types.is_null(column.type) or (
                    pa.types.is_string(column.type) or pa.types.is_large_string(column.type)
                    if name in strings
                    else pa.types.is_integer(column.type)
                ):
                    columns[name] = column.cast(kind)
                    continue
                return (
                    "undecodable",
                    f"{name} is {column.type}, not {'a string' if name in strings else 'an integer'}",
                )
            tables.append(pa.table(columns))
        order += [index for index, _, framing in files for _ in range(framing.record_count)]

    empty = {n: pa.array([], pa.large_string() if n in strings else pa.int64()) for n in names}
    table = pa.concat_tables(tables) if tables else pa.table(empty)
    table = table.append_column("list_index", pa.array(order, pa.int64()))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return ("ok", counts, sink.getvalue().to_pybytes())


__all__ = ["list_columns"]
