"""One manifest entry as frozen models, for detail views (fastavro in a worker process; small and exact)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from icebook.errors import MetadataError, NotFound, one_line
from icebook.io.avro_entries import read_framed_manifest
from icebook.io.avro_schema import ManifestLayout
from icebook.io.fileio import FileIO
from icebook.io.worker_pool import decode_isolated
from icebook.spec.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    ManifestEntry,
    ManifestFile,
    first_row_id_note,
    inherit_first_row_ids,
    inherit_sequence_numbers,
    inherit_snapshot_id,
)


def _int_map(raw: Any) -> dict[int, Any] | None:
    if raw is None:
        return None
    if isinstance(raw, Mapping):  # an Avro map (string keys): not used by Iceberg for metrics, kept readable
        return {int(k): v for k, v in raw.items()}
    return {int(kv["key"]): kv["value"] for kv in raw}


def _data_file(df: Mapping[str, Any], layout: ManifestLayout, spec_id: int, path: str) -> DataFile:
    names = layout.data_file_names

    def get(name: str) -> Any:
        avro_name = names.get(name)
        return None if avro_name is None else df.get(avro_name)

    content = get("content")
    try:
        content_enum = FileContent(0 if content is None else int(content))
    except ValueError:
        raise MetadataError(
            path, "data_file.content", f"expected 0, 1 or 2, found {content!r}", kind="manifest"
        ) from None
    partition_raw = get("partition") or {}
    partition = {p.name: partition_raw.get(p.name) for p in layout.partition_fields}
    ids = {p.name: p.field_id for p in layout.partition_fields if p.field_id is not None}
    split = get("split_offsets")
    eq = get("equality_ids")
    bounds_lo = _int_map(get("lower_bounds"))
    bounds_hi = _int_map(get("upper_bounds"))
    key_md = get("key_metadata")
    return DataFile(
        content=content_enum,
        file_path=str(get("file_path")),
        file_format=str(get("file_format")),
        spec_id=spec_id,
        partition=partition,
        partition_field_ids=ids,
        record_count=int(get("record_count")),
        file_size_in_bytes=int(get("file_size_in_bytes")),
        block_size_in_bytes=get("block_size_in_bytes"),
        column_sizes=_int_map(get("column_sizes")),
        value_counts=_int_map(get("value_counts")),
        null_value_counts=_int_map(get("null_value_counts")),
        nan_value_counts=_int_map(get("nan_value_counts")),
        distinct_counts=_int_map(get("distinct_counts")),
        lower_bounds=None if bounds_lo is None else {k: bytes(v) for k, v in bounds_lo.items()},
        upper_bounds=None if bounds_hi is None else {k: bytes(v) for k, v in bounds_hi.items()},
        key_metadata=None if key_md is None else bytes(key_md),
        split_offsets=None if split is None else tuple(int(x) for x in split),
        equality_ids=None if eq is None else tuple(int(x) for x in eq),
        sort_order_id=get("sort_order_id"),
        first_row_id=get("first_row_id"),
        referenced_data_file=get("referenced_data_file"),
        content_offset=get("content_offset"),
        content_size_in_bytes=get("content_size_in_bytes"),
    )


def read_manifest_entry(fileio: FileIO, manifest: ManifestFile, index: int) -> ManifestEntry:
    """Entry number ``index`` (0-based, file order) of ``manifest``, inheritance applied and explained.

    The file's framing and length are checked here; the records are decoded in a worker process
    (``icebook.io.worker_pool``).
    """
    path = manifest.manifest_path
    if index < 0:
        raise NotFound(f"manifest {path}: entry {index} (negative index)")
    framed = read_framed_manifest(fileio, manifest)
    data, framing, layout = framed.data, framed.framing, framed.layout
    if index >= framing.record_count:
        raise NotFound(f"manifest {path}: entry {index} (the manifest has {framing.record_count} entries)")
    # First row ids depend on every earlier entry (spec: "First Row ID Inheritance"): the worker
    # returns what the rule reads up to this entry, and the named rule is applied to the whole prefix.
    rec, contents, record_counts, first_row_ids = decode_isolated(
        "manifest_entry_record", data, layout, index, data_size=len(data), path=path, kind="manifest"
    )
    if not isinstance(rec, dict) or not isinstance(rec.get(layout.entry_names["data_file"]), dict):
        raise MetadataError(
            path,
            None,
            f"the Avro blocks declare {framing.record_count} entries but {len(contents)} were decoded",
            kind="manifest",
        )
    try:
        prefix = (contents, record_counts, first_row_ids)
        return _entry(rec, layout, manifest, framed.spec_id, framed.version, prefix, path)
    except (TypeError, ValueError, KeyError) as exc:
        raise MetadataError(path, f"entry {index}", f"malformed: {one_line(exc)}", kind="manifest") from None


def _entry(
    rec: dict[str, Any],
    layout: ManifestLayout,
    manifest: ManifestFile,
    spec_id: int,
    version: int,
    prefix: tuple[list[int], list[int], list[int | None]],
    path: str,
) -> ManifestEntry:
    names = layout.entry_names
    data_file = _data_file(rec[names["data_file"]], layout, spec_id, path)
    notes = []
    values, inherited = inherit_first_row_ids(*prefix, manifest)
    if inherited[-1] and (value := values[-1]) is not None:
        data_file = replace(data_file, first_row_id=value)
        notes.append(first_row_id_note(value, manifest))
    snapshot_id, note = inherit_snapshot_id(rec.get(names.get("snapshot_id", "")), manifest)
    if note is not None:
        notes.append(note)
    try:
        status = EntryStatus(int(rec[names["status"]]))
    except ValueError:
        raise MetadataError(
            path, "status", f"expected 0, 1 or 2, found {rec[names['status']]!r}", kind="manifest"
        ) from None
    seq, file_seq, seq_notes = inherit_sequence_numbers(
        status,
        rec.get(names.get("sequence_number", "")),
        rec.get(names.get("file_sequence_number", "")),
        manifest,
        format_version=version,
    )
    return ManifestEntry(
        status=status,
        snapshot_id=snapshot_id,
        sequence_number=seq,
        file_sequence_number=file_seq,
        data_file=data_file,
        inherited=tuple(notes) + seq_notes,
    )


__all__ = ["read_manifest_entry"]
