"""Manifest entries, columnar (spec: "Manifests", "Manifest Entry Fields", "Data File Fields").

``read_manifest_entries`` decodes a whole manifest into one Arrow table (one row per
entry). The bytes are read through FileIO, so manifests on object stores work the same as
local ones; their framing is checked here and they are decoded in a worker process
(``icebook.io.avro_decode``: polars-avro, then fastavro), never in the kernel's own, so that
corrupt bytes cannot hang or crash it. Inheritance (snapshot id, sequence numbers, first row
id) is then applied column-wise, as the vectorised form of the named functions in
``icebook.spec.manifest``, with a boolean ``*_inherited`` column for each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from icebook.errors import MetadataError, decoded_values
from icebook.io.avro_decode import COMPUTED, Decoded
from icebook.io.avro_decode import available_decoders as _importable_decoders
from icebook.io.avro_header import AvroFraming, check_framing, header_from_metadata
from icebook.io.avro_list import read_bytes_for
from icebook.io.avro_schema import ManifestLayout, inheritance_version, manifest_layout
from icebook.io.entry_columns import INHERITED_FLAGS, entries_schema
from icebook.io.fileio import FileIO
from icebook.io.metric_facts import METRIC_MAPS, MapFacts, MetricFacts, with_facts
from icebook.io.worker_pool import decode_isolated
from icebook.spec.manifest import EntryStatus, FileContent, ManifestFile, ManifestHeader


def available_decoders() -> tuple[str, ...]:
    """Names of the manifest decoders installed here, fastest first; always ends with fastavro."""
    return _importable_decoders()


def default_decoders() -> list[str]:
    """polars-avro, then fastavro when it fails. polars' own reader is left out of the default chain:
    on corrupt bytes it can return garbage where fastavro, the reference, reports the error."""
    return [name for name in available_decoders() if name != "polars"]


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
            flag = pc.and_(col.is_null(), pc.equal(out["content"], pa.scalar(int(FileContent.DATA), pa.int32())))
            counts = pc.if_else(flag, out["record_count"], pa.scalar(0, pa.int64()))
            # Checked sums: record counts past int64 are an error naming the manifest, never ids wrapped around.
            with decoded_values(manifest.manifest_path, "first_row_id", kind="manifest"):
                before = pc.subtract_checked(pc.cumulative_sum_checked(counts), counts)  # preceding null-id files
                assigned = pc.add_checked(before, pa.scalar(manifest.first_row_id, pa.int64()))
            out["first_row_id"] = pc.if_else(flag, assigned, col)
            out["first_row_id_inherited"] = flag
        else:
            out["first_row_id_inherited"] = pa.array([False] * n, pa.bool_())
    return out


# ----------------------------------------------------------------------------- public


@dataclass(frozen=True, slots=True, kw_only=True)
class FramedManifest:
    """A manifest's bytes, their framing checked against its manifest-list record, and what its header
    says about reading its entries: what both manifest readers (every entry, one entry) start from."""

    data: bytes
    framing: AvroFraming
    header: ManifestHeader
    layout: ManifestLayout
    version: int
    """The format version whose inheritance rules apply (``inheritance_version``)."""
    spec_id: int
    """The partition spec its files were written with: the header's, else the manifest list's."""


def read_framed_manifest(fileio: FileIO, manifest: ManifestFile) -> FramedManifest:
    """Read ``manifest`` and check its framing, length and (where the list records them) entry counts
    before any decoder sees it."""
    path = manifest.manifest_path
    data = read_bytes_for(fileio, path, "manifest")
    framing = check_framing(
        data, path, kind="manifest", expected_length=manifest.manifest_length, counts_recorded=manifest.counts_recorded
    )
    header = header_from_metadata(path, dict(framing.metadata))
    layout = manifest_layout(header)
    spec_id = header.partition_spec_id if header.partition_spec_id is not None else manifest.partition_spec_id
    version = inheritance_version(header, layout, manifest)
    return FramedManifest(data=data, framing=framing, header=header, layout=layout, version=version, spec_id=spec_id)


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
    first_row_id_inherited. ``columns`` selects a subset: only those columns are converted and
    sent back by the decoder; the facts of every metric map it decoded, sent or not, ride in the
    schema metadata (``icebook.io.metric_facts``). ``decoder`` forces one of ``available_decoders()``.

    The file's framing and length are checked here; the decoding itself runs in a worker
    process with a deadline (``icebook.io.worker_pool``), and must return exactly as many
    entries as the file's blocks declare.
    """
    path = manifest.manifest_path
    framed = read_framed_manifest(fileio, manifest)
    layout = framed.layout
    schema = entries_schema(layout.partition_type)
    needed = _needed(columns, schema)
    targets = {name: schema.field(name).type for name in needed if name not in INHERITED_FLAGS}
    if decoder is not None and decoder not in available_decoders():
        raise ValueError(f"unknown decoder {decoder!r}; available: {available_decoders()}")
    order = [decoder] if decoder is not None else default_decoders()
    wanted = {name: type_ for name, type_ in targets.items() if name not in COMPUTED}
    decoded, facts = _decode(framed.data, layout, wanted, order, path) if wanted else ({}, {})
    n = framed.framing.record_count
    for name, column in decoded.items():
        if len(column) != n:
            raise MetadataError(
                path,
                None,
                f"the Avro blocks declare {n} entries but {len(column)} were decoded ({name})",
                kind="manifest",
            )
    if "content" in targets and "content" not in decoded:  # v1: "all v1 files are data files"
        decoded["content"] = pa.array([int(FileContent.DATA)] * n, pa.int32())
    if "spec_id" in targets:
        decoded["spec_id"] = pa.array([framed.spec_id] * n, pa.int32())
    for name, type_ in targets.items():  # columns this file's schema does not have (older versions)
        if name not in decoded:
            decoded[name] = pa.nulls(n, type_)
    full = _inherit(decoded, n, manifest, framed.version)
    table = pa.Table.from_arrays([full[name] for name in needed], schema=pa.schema([schema.field(c) for c in needed]))
    # Every map's facts ride along, sent or not: the checks read them instead of computing them again.
    return with_facts(table, facts) if facts else table


def _decode(
    data: bytes, layout: ManifestLayout, targets: dict[str, pa.DataType], order: list[str], path: str
) -> tuple[Decoded, MetricFacts]:
    """The decoded columns of one manifest and the facts of its metric maps, from a worker process: each
    decoder in ``order`` in turn, each with its own deadline, until one succeeds."""
    failures: list[str] = []
    may_pass = True  # until a decoder fails on the content (not by its deadline or its death)
    for name in order:
        try:
            _, ipc, facts = decode_isolated(
                "manifest_columns",
                data,
                layout,
                targets,
                [name],
                data_size=len(data),
                path=path,
                kind="manifest",
                columnar=name != "fastavro",
            )
        except MetadataError as exc:
            failures.append(
                f"{name}: " + exc.problem.removeprefix("ValueError: cannot decode: ").removeprefix(f"{name}: ")
            )
            may_pass = may_pass and exc.may_pass
            continue
        return _columns(ipc, targets, path), _facts(facts, path)
    error = MetadataError(path, None, "cannot decode: " + "; ".join(failures), kind="manifest")
    error.may_pass = may_pass and bool(failures)
    raise error


def _facts(raw: object, path: str) -> MetricFacts:
    """The worker's facts, checked for shape: names of metric maps, three whole numbers or None each."""

    def valid(name: object, values: object) -> bool:
        return (
            name in METRIC_MAPS
            and isinstance(values, tuple)
            and len(values) == 3
            and all(v is None or type(v) is int for v in values)
        )

    if not (isinstance(raw, dict) and all(valid(name, values) for name, values in raw.items())):
        raise MetadataError(path, None, "unreadable decoder output (metric map facts)", kind="manifest")
    return {name: MapFacts(*values) for name, values in raw.items()}


def _columns(ipc: memoryview | bytes, targets: dict[str, pa.DataType], path: str) -> Decoded:
    try:
        table = pa.ipc.open_stream(pa.py_buffer(ipc)).read_all()
    except (pa.ArrowInvalid, OSError) as exc:
        raise MetadataError(path, None, f"unreadable decoder output: {exc}", kind="manifest") from None
    out: Decoded = {}
    for name in table.column_names:
        expected = targets.get(name)
        chunked = table.column(name)
        # One record batch arrives per manifest; combining a single chunk would copy nested columns.
        column = chunked.chunk(0) if chunked.num_chunks == 1 else chunked.combine_chunks()
        if expected is None or column.type != expected:
            raise MetadataError(path, None, f"decoder returned {name} as {column.type}", kind="manifest")
        out[name] = column
    return out


__all__ = ["available_decoders", "read_manifest_entries"]
