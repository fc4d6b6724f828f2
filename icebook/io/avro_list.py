"""Manifest lists (spec: "Manifest Lists"): small Avro files, decoded with fastavro after their framing
is checked: in the kernel's own process when ``icebook.io.avro_inline`` proves that bounded, else in a
worker process (``icebook.io.worker_pool``).

Records are read by field name, never by position; v1 defaults are applied by
``icebook.spec.manifest.apply_manifest_list_defaults`` so the UI can explain them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from icebook.errors import MetadataError
from icebook.io.avro_header import check_framing
from icebook.io.avro_inline import InlineDecodeFailed, decode_records_inline
from icebook.io.fileio import FileIO, read_errors
from icebook.io.worker_pool import decode_isolated
from icebook.spec.manifest import (
    ManifestContent,
    ManifestFile,
    PartitionFieldSummary,
    apply_manifest_list_defaults,
)


def read_bytes_for(fileio: FileIO, path: str, kind: str) -> bytes:
    with read_errors(path, kind):
        return fileio.read_bytes(path)


def avro_records(data: bytes, path: str, kind: str) -> list[dict[str, Any]]:
    """Every record of an in-memory Avro file, decoded after its framing is checked (in this process
    when that is provably bounded, else in a worker); exactly as many records as its blocks declare,
    or a MetadataError naming the file."""
    framing = check_framing(data, path, kind=kind)
    if framing.record_count == 0:
        return []
    try:
        records: Any = decode_records_inline(data, framing)
    except InlineDecodeFailed as exc:
        raise MetadataError(path, None, str(exc), kind=kind) from None
    if records is None:
        records = decode_isolated("avro_records", data, data_size=len(data), path=path, kind=kind)
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise MetadataError(path, None, "the decoder returned something other than records", kind=kind)
    if len(records) != framing.record_count:
        raise MetadataError(
            path,
            None,
            f"the Avro blocks declare {framing.record_count} records but {len(records)} were decoded",
            kind=kind,
        )
    return records


_COUNTS = (
    "added_files_count",
    "existing_files_count",
    "deleted_files_count",
    "added_rows_count",
    "existing_rows_count",
    "deleted_rows_count",
)
_INT_FIELDS = (
    "manifest_length",
    "partition_spec_id",
    "content",
    "sequence_number",
    "min_sequence_number",
    "added_snapshot_id",
    *_COUNTS,
    "first_row_id",
)

NON_NEGATIVE = ("partition_spec_id", *_COUNTS)
"""manifest_file fields that are never negative (an id, counts): the one check for every reader of lists."""


def negative_field(name: str, value: int, path: str) -> MetadataError:
    """The error of a ``NON_NEGATIVE`` field holding ``value`` < 0 in the list at ``path``."""
    return MetadataError(path, name, f"negative value {value}", kind="manifest list")


def missing_field(name: str, path: str) -> MetadataError:
    """The error of a required manifest_file field that is absent or null in the list at ``path``."""
    return MetadataError(path, name, "missing (required)", kind="manifest list")


def negative_length(value: int, path: str) -> MetadataError:
    """The error of a ``manifest_length`` below zero in the list at ``path``."""
    return MetadataError(path, "manifest_length", f"negative length {value}", kind="manifest list")


def path_field(rec: Mapping[str, Any], path: str) -> str | None:
    """A manifest_file record's ``manifest_path``: a string, or None when absent (required: callers that
    build a manifest raise ``missing_field``)."""
    manifest_path = rec.get("manifest_path")
    if manifest_path is not None and not isinstance(manifest_path, str):
        raise MetadataError(path, "manifest_path", "expected a string", kind="manifest list")
    return manifest_path


def int_fields(rec: Mapping[str, Any], path: str) -> dict[str, int | None]:
    """Every integer field of a manifest_file record (None when absent or null), each checked to be an
    integer: the record's types come from the file's own Avro schema. One pass, since a table with a
    long history has hundreds of thousands of these records."""
    out: dict[str, int | None] = {}
    for name in _INT_FIELDS:
        value = rec.get(name)
        if value is not None and type(value) is not int:  # bool is an int subclass, and not a count
            raise MetadataError(path, name, f"expected an integer, found {type(value).__name__}", kind="manifest list")
        out[name] = value
    for name in NON_NEGATIVE:
        value = out[name]
        if value is not None and value < 0:
            raise negative_field(name, value, path)
    return out


def _opt_bytes(raw: Mapping[str, Any], name: str, path: str) -> bytes | None:
    value = raw.get(name)
    if value is None:
        return None
    if not isinstance(value, (bytes, bytearray)):
        raise MetadataError(path, name, f"expected bytes, found {type(value).__name__}", kind="manifest list")
    return bytes(value)


def _summary(raw: Any, path: str, where: str) -> PartitionFieldSummary:
    if not isinstance(raw, Mapping):
        raise MetadataError(path, where, "expected a field_summary record", kind="manifest list")
    nan = raw.get("contains_nan")
    return PartitionFieldSummary(
        contains_null=bool(raw.get("contains_null")),
        contains_nan=None if nan is None else bool(nan),
        lower_bound=_opt_bytes(raw, "lower_bound", path),
        upper_bound=_opt_bytes(raw, "upper_bound", path),
    )


def manifest_file_from_record(rec: Mapping[str, Any], *, path: str, format_version: int) -> ManifestFile:
    """A ManifestFile from one manifest_file record, by field name, before any defaults.

    The record's types come from the file's own Avro schema, so each is checked here.
    """
    manifest_path = path_field(rec, path)
    if manifest_path is None:
        raise missing_field("manifest_path", path)
    ints = int_fields(rec, path)
    length = ints["manifest_length"]
    if length is None:
        raise missing_field("manifest_length", path)
    if length < 0:
        raise negative_length(length, path)
    if ints["partition_spec_id"] is None:
        raise missing_field("partition_spec_id", path)
    content = ints["content"]
    partitions = rec.get("partitions")
    if partitions is not None and not isinstance(partitions, list):
        raise MetadataError(path, "partitions", "expected a list of field summaries", kind="manifest list")
    try:
        content_enum = None if content is None else ManifestContent(content)
    except ValueError:
        raise MetadataError(path, "content", f"expected 0 or 1, found {content!r}", kind="manifest list") from None
    return ManifestFile(
        manifest_path=manifest_path,
        manifest_length=length,
        partition_spec_id=ints["partition_spec_id"],
        content=content_enum,
        sequence_number=ints["sequence_number"],
        min_sequence_number=ints["min_sequence_number"],
        added_snapshot_id=ints["added_snapshot_id"],
        added_files_count=ints["added_files_count"],
        existing_files_count=ints["existing_files_count"],
        deleted_files_count=ints["deleted_files_count"],
        added_rows_count=ints["added_rows_count"],
        existing_rows_count=ints["existing_rows_count"],
        deleted_rows_count=ints["deleted_rows_count"],
        partitions=None
        if partitions is None
        else tuple(_summary(p, path, f"partitions[{i}]") for i, p in enumerate(partitions)),
        key_metadata=_opt_bytes(rec, "key_metadata", path),
        first_row_id=ints["first_row_id"],
        format_version=format_version,
    )


def read_manifest_list(
    fileio: FileIO,
    path: str,
    *,
    format_version: int,
    snapshot_sequence_number: int | None = None,
    snapshot_id: int | None = None,
) -> tuple[ManifestFile, ...]:
    """Every manifest_file record of the manifest list at ``path``, in file order.

    v1 lists get ``content`` 0 and ``sequence_number``/``min_sequence_number`` 0 (spec:
    "Manifest Lists"); each supplied value is recorded in ``ManifestFile.inherited``.
    ``added_snapshot_id`` is required by every version and is never invented: a null stays
    null. ``snapshot_id`` (the snapshot owning the list) only names the list in errors;
    ``snapshot_sequence_number`` is a consistency check: no manifest of a list can have been
    added after the snapshot that wrote the list.
    """
    data = read_bytes_for(fileio, path, "manifest list")
    out: list[ManifestFile] = []
    for i, rec in enumerate(avro_records(data, path, "manifest list")):
        mf = manifest_file_from_record(rec, path=path, format_version=format_version)
        mf = apply_manifest_list_defaults(mf, format_version)
        if (
            snapshot_sequence_number is not None
            and mf.sequence_number is not None
            and mf.sequence_number > snapshot_sequence_number
        ):
            raise manifest_after_snapshot(path, i, mf.sequence_number, snapshot_sequence_number, snapshot_id)
        out.append(mf)
    return tuple(out)


def manifest_after_snapshot(
    path: str, row: int, sequence_number: int, snapshot_sequence_number: int, snapshot_id: int | None
) -> MetadataError:
    """The error for a list's manifest added after the list's snapshot (its sequence number is greater),
    whether the list is read record by record or column-wise."""
    return MetadataError(
        path,
        f"manifests[{row}].sequence_number",
        f"{sequence_number} is greater than the sequence number {snapshot_sequence_number} "
        f"of snapshot {snapshot_id if snapshot_id is not None else '?'}",
        kind="manifest list",
    )


__all__ = [
    "NON_NEGATIVE",
    "avro_records",
    "int_fields",
    "manifest_after_snapshot",
    "manifest_file_from_record",
    "missing_field",
    "negative_field",
    "negative_length",
    "path_field",
    "read_bytes_for",
    "read_manifest_list",
]
