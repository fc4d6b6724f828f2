"""Manifest lists (spec: "Manifest Lists"): small Avro files, decoded with fastavro.

Records are read by field name, never by position; v1 defaults are applied by
``icebook.spec.manifest.apply_manifest_list_defaults`` so the UI can explain them.
"""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping
from typing import Any

import fastavro

from icebook.errors import IcebookError, MetadataError, NotFound
from icebook.io.fileio import FileIO
from icebook.spec.manifest import (
    ManifestContent,
    ManifestFile,
    PartitionFieldSummary,
    apply_manifest_list_defaults,
)


def read_bytes_for(fileio: FileIO, path: str, kind: str) -> bytes:
    try:
        return fileio.read_bytes(path)
    except NotFound:
        raise NotFound(f"{kind} {path}: file not found") from None
    except IcebookError as exc:
        raise MetadataError(path, None, str(exc), kind=kind) from None


def iter_avro_records(data: bytes, path: str, kind: str) -> Iterator[dict[str, Any]]:
    """fastavro records of an in-memory Avro file; decoding errors name the file."""
    try:
        reader = fastavro.reader(io.BytesIO(data), return_record_name=False)
        yield from reader  # type: ignore[misc]
    except (EOFError, ValueError, TypeError, KeyError, IndexError, OSError, StopIteration) as exc:
        raise MetadataError(path, None, f"corrupt or truncated Avro: {type(exc).__name__}: {exc}", kind=kind) from None
    except Exception as exc:  # fastavro raises assorted internal errors on garbage input
        if isinstance(exc, IcebookError):
            raise
        raise MetadataError(path, None, f"corrupt Avro: {type(exc).__name__}: {exc}", kind=kind) from None


def _opt_int(rec: Mapping[str, Any], name: str) -> int | None:
    value = rec.get(name)
    return None if value is None else int(value)


def _summary(raw: Mapping[str, Any]) -> PartitionFieldSummary:
    lower = raw.get("lower_bound")
    upper = raw.get("upper_bound")
    nan = raw.get("contains_nan")
    return PartitionFieldSummary(
        contains_null=bool(raw.get("contains_null")),
        contains_nan=None if nan is None else bool(nan),
        lower_bound=None if lower is None else bytes(lower),
        upper_bound=None if upper is None else bytes(upper),
    )


def manifest_file_from_record(rec: Mapping[str, Any], *, path: str, format_version: int) -> ManifestFile:
    """A ManifestFile from one manifest_file record, by field name, before any defaults."""
    for required in ("manifest_path", "manifest_length", "partition_spec_id"):
        if rec.get(required) is None:
            raise MetadataError(path, required, "missing (required)", kind="manifest list")
    content = rec.get("content")
    partitions = rec.get("partitions")
    key_metadata = rec.get("key_metadata")
    try:
        content_enum = None if content is None else ManifestContent(int(content))
    except ValueError:
        raise MetadataError(path, "content", f"expected 0 or 1, found {content!r}", kind="manifest list") from None
    return ManifestFile(
        manifest_path=str(rec["manifest_path"]),
        manifest_length=int(rec["manifest_length"]),
        partition_spec_id=int(rec["partition_spec_id"]),
        content=content_enum,
        sequence_number=_opt_int(rec, "sequence_number"),
        min_sequence_number=_opt_int(rec, "min_sequence_number"),
        added_snapshot_id=_opt_int(rec, "added_snapshot_id"),
        added_files_count=_opt_int(rec, "added_files_count"),
        existing_files_count=_opt_int(rec, "existing_files_count"),
        deleted_files_count=_opt_int(rec, "deleted_files_count"),
        added_rows_count=_opt_int(rec, "added_rows_count"),
        existing_rows_count=_opt_int(rec, "existing_rows_count"),
        deleted_rows_count=_opt_int(rec, "deleted_rows_count"),
        partitions=None if partitions is None else tuple(_summary(p) for p in partitions),
        key_metadata=None if key_metadata is None else bytes(key_metadata),
        first_row_id=_opt_int(rec, "first_row_id"),
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
    for i, rec in enumerate(iter_avro_records(data, path, "manifest list")):
        mf = manifest_file_from_record(rec, path=path, format_version=format_version)
        mf = apply_manifest_list_defaults(mf, format_version)
        if (
            snapshot_sequence_number is not None
            and mf.sequence_number is not None
            and mf.sequence_number > snapshot_sequence_number
        ):
            raise MetadataError(
                path,
                f"manifests[{i}].sequence_number",
                f"{mf.sequence_number} is greater than the sequence number {snapshot_sequence_number} "
                f"of snapshot {snapshot_id if snapshot_id is not None else '?'}",
                kind="manifest list",
            )
        out.append(mf)
    return tuple(out)


__all__ = ["iter_avro_records", "manifest_file_from_record", "read_bytes_for", "read_manifest_list"]
