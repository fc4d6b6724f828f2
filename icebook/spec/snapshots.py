"""Snapshots, snapshot references, history logs and statistics files.

Spec sections: "Snapshots", "Snapshot References", "Table Metadata Fields" (snapshot-log,
metadata-log), "Table Statistics", "Partition Statistics", "Encryption Keys", Appendix C.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, ClassVar

from icebook.spec._json import EMPTY_MAP, Wire, empty_map


class Operation(StrEnum):
    """The snapshot summary's ``operation`` values defined by the spec ("Snapshots")."""

    APPEND = "append"
    REPLACE = "replace"
    OVERWRITE = "overwrite"
    DELETE = "delete"


OPERATION_DOCS: Mapping[str, str] = MappingProxyType(
    {
        "append": "Only data files were added and no files were removed.",
        "replace": "Data and delete files were added and removed without changing table data "
        "(compaction, changing the data file format, relocating data files).",
        "overwrite": "Data and delete files were added and removed in a logical overwrite operation.",
        "delete": "Data files were removed and their contents logically deleted and/or delete files "
        "were added to delete rows.",
    }
)

SUMMARY_METRICS = frozenset(
    {
        "added-data-files",
        "deleted-data-files",
        "total-data-files",
        "added-delete-files",
        "added-equality-delete-files",
        "removed-equality-delete-files",
        "added-position-delete-files",
        "removed-position-delete-files",
        "added-dvs",
        "removed-dvs",
        "removed-delete-files",
        "total-delete-files",
        "added-records",
        "deleted-records",
        "total-records",
        "added-files-size",
        "removed-files-size",
        "total-files-size",
        "added-position-deletes",
        "removed-position-deletes",
        "total-position-deletes",
        "added-equality-deletes",
        "removed-equality-deletes",
        "total-equality-deletes",
        "deleted-duplicate-files",
        "changed-partition-count",
        "manifests-created",
        "manifests-kept",
        "manifests-replaced",
        "entries-processed",
    }
)
"""The numeric summary fields (spec: "Optional Snapshot Summary Fields", Metrics): each value is the
text of a count, e.g. ``"120"``."""

_SNAPSHOT_KEYS = (
    "snapshot-id",
    "parent-snapshot-id",
    "sequence-number",
    "timestamp-ms",
    "manifest-list",
    "manifests",
    "summary",
    "schema-id",
    "first-row-id",
    "added-rows",
    "key-id",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot:
    """The state of a table at some time: the manifests of all its files (spec: "Snapshots")."""

    FIELD_DOCS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "snapshot_id": "snapshot-id: a unique long id.",
            "parent_snapshot_id": "parent-snapshot-id: the id of this snapshot's parent; omitted for a snapshot "
            "with no parent.",
            "sequence_number": "sequence-number: monotonically increasing long tracking the order of changes "
            "(v2+). None when absent; v1 metadata reads as 0 (Appendix E, see snapshot_sequence_number).",
            "timestamp_ms": "timestamp-ms: when the snapshot was created, in ms from the epoch.",
            "manifest_list": "manifest-list: location of the manifest list file tracking this snapshot's manifests.",
            "manifests": "manifests: (v1 only) inline list of manifest locations, used when there is no manifest list.",
            "summary": "summary: string map summarising the changes, including the required 'operation'.",
            "schema_id": "schema-id: id of the table's current schema when the snapshot was created.",
            "first_row_id": "first-row-id: (v3) first _row_id assigned to rows added by this snapshot (Row Lineage).",
            "added_rows": "added-rows: (v3) upper bound of the number of rows with assigned row ids in this snapshot.",
            "key_id": "key-id: (v3) id of the encryption key that encrypts the manifest list key metadata.",
            "extras": "Keys of the snapshot JSON that icebook does not model, kept as written.",
        }
    )

    snapshot_id: int
    parent_snapshot_id: int | None = None
    sequence_number: int | None = None
    timestamp_ms: int
    manifest_list: str | None = None
    manifests: tuple[str, ...] | None = None
    summary: Mapping[str, str] | None = None
    schema_id: int | None = None
    first_row_id: int | None = None
    added_rows: int | None = None
    key_id: str | None = None
    extras: Mapping[str, Any] = field(default_factory=empty_map)

    @property
    def operation(self) -> str | None:
        """The summary's ``operation`` (append, replace, overwrite, delete, or as written)."""
        return self.summary.get("operation") if self.summary is not None else None

    def metric(self, key: str) -> int | None:
        """A numeric summary field (``SUMMARY_METRICS``, e.g. ``total-records``) as an int; None when the
        summary lacks it or holds no integer text there."""
        text = (self.summary or {}).get(key)
        return int(text) if text is not None and _COUNT.fullmatch(text) else None


def snapshot_sequence_number(snapshot: Snapshot) -> int:
    """The snapshot's sequence number with the v1 default applied.

    Spec (Appendix E, "Reading v1 metadata for v2"): snapshot field ``sequence-number`` must
    default to 0 when it is absent.
    """
    return 0 if snapshot.sequence_number is None else snapshot.sequence_number


def parse_snapshot(raw: Any, *, file: str, where: str, format_version: int) -> Snapshot:
    """Parse one snapshot object (Appendix C).

    Required everywhere: ``snapshot-id``, ``timestamp-ms``, and a ``manifest-list`` (or, in
    metadata of tables written as v1, the inline ``manifests`` list). From v2 on ``summary``
    with an ``operation`` is required. ``sequence-number``, ``first-row-id`` and ``added-rows``
    are read when present and never required: snapshots committed before a table was upgraded
    (v1 -> v2, v2 -> v3) legitimately lack them.
    """
    w = Wire.of(raw, file=file, where=where)
    snapshot_id = w.req_int("snapshot-id")
    timestamp_ms = w.req_int("timestamp-ms")
    manifest_list = w.opt_str("manifest-list")
    manifests: tuple[str, ...] | None = None
    if w.has("manifests"):
        items = w.req_list("manifests")
        for i, m in enumerate(items):
            if not isinstance(m, str):
                raise w.error(f"manifests[{i}]", "expected a string")
        manifests = tuple(items)
    if manifest_list is None and manifests is None:
        raise w.error("manifest-list", "missing")
    summary = w.str_map("summary")
    if summary is not None:
        _check_metrics(summary, w)
    if format_version >= 2:
        if summary is None:
            raise w.error("summary", "missing")
        if "operation" not in summary:
            raise w.error("summary.operation", "missing")
    return Snapshot(
        snapshot_id=snapshot_id,
        parent_snapshot_id=w.opt_int("parent-snapshot-id"),
        sequence_number=w.opt_int("sequence-number"),
        timestamp_ms=timestamp_ms,
        manifest_list=manifest_list,
        manifests=manifests,
        summary=summary,
        schema_id=w.opt_int("schema-id"),
        first_row_id=w.opt_int("first-row-id"),
        added_rows=w.opt_int("added-rows"),
        key_id=w.opt_str("key-id"),
        extras=w.extras(_SNAPSHOT_KEYS),
    )


_COUNT = re.compile(r"-?[0-9]{1,19}")


def _check_metrics(summary: Mapping[str, str], w: Wire) -> None:
    """Every metric in the summary must be the text of a count that fits a long."""
    for key in SUMMARY_METRICS & summary.keys():
        text = summary[key]
        value = int(text) if _COUNT.fullmatch(text) else None
        if value is None or not -(2**63) <= value < 2**63:
            shown = text if len(text) <= 40 else text[:37] + "..."
            raise w.error(f"summary.{key}", f"expected the text of an integer count, found {shown!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ParentCycle:
    """Snapshots whose ``parent-snapshot-id`` links loop back to themselves: a damaged table.

    Spec ("Snapshots"): a parent is an earlier snapshot, so following parents must end; a loop
    would make every walk through history endless.
    """

    snapshot_ids: tuple[int, ...]
    """The snapshots of the loop, each followed by its parent (the last one's parent is the first)."""
    file: str
    where: str
    """The JSON path of the first snapshot's ``parent-snapshot-id``."""

    def describe(self) -> str:
        ids = [str(i) for i in (*self.snapshot_ids, self.snapshot_ids[0])]
        return "parent-snapshot-id links form a cycle: " + " -> ".join(ids)


def find_parent_cycles(snapshots: tuple[Snapshot, ...], *, file: str) -> tuple[ParentCycle, ...]:
    """Every loop of parent links among ``snapshots`` (each snapshot has one parent, so each
    snapshot is on at most one loop and one pass over the snapshots finds them all)."""
    parent = {s.snapshot_id: s.parent_snapshot_id for s in snapshots}
    position = {s.snapshot_id: i for i, s in enumerate(snapshots)}
    done: set[int] = set()
    cycles: list[ParentCycle] = []
    for snapshot in snapshots:
        chain: list[int] = []
        index: dict[int, int] = {}
        node: int | None = snapshot.snapshot_id
        while node is not None and node in parent and node not in done:
            if node in index:
                loop = chain[index[node] :]
                first = min(loop, key=lambda sid: position[sid])  # start where the file lists it first
                start = loop.index(first)
                ordered = tuple(loop[start:] + loop[:start])
                where = f"snapshots[{position[first]}].parent-snapshot-id"
                cycles.append(ParentCycle(snapshot_ids=ordered, file=file, where=where))
                break
            index[node] = len(chain)
            chain.append(node)
            node = parent[node]
        done.update(chain)
    return tuple(cycles)


# ---------------------------------------------------------------- references

_BRANCH_KEYS = ("snapshot-id", "type", "min-snapshots-to-keep", "max-snapshot-age-ms", "max-ref-age-ms")
_TAG_KEYS = ("snapshot-id", "type", "max-ref-age-ms")

_REF_DOCS = {
    "snapshot_id": "snapshot-id: the tagged snapshot, or the latest snapshot of a branch.",
    "min_snapshots_to_keep": "min-snapshots-to-keep: minimum number of snapshots to keep in the branch when "
    "expiring; None means the table property history.expire.min-snapshots-to-keep applies.",
    "max_snapshot_age_ms": "max-snapshot-age-ms: max age of snapshots to keep in the branch when expiring; "
    "None means the table property history.expire.max-snapshot-age-ms applies.",
    "max_ref_age_ms": "max-ref-age-ms: max age of this reference before it expires (main never expires); "
    "None means the table property history.expire.max-ref-age-ms applies.",
    "implied": "True when this ref was not written in 'refs' but implied by the spec "
    "(the main branch always points to current-snapshot-id).",
    "extras": "Keys of the reference JSON that icebook does not model, kept as written.",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Branch:
    """A branch: a mutable named reference to its latest snapshot (spec: "Snapshot References")."""

    FIELD_DOCS: ClassVar[Mapping[str, str]] = MappingProxyType(_REF_DOCS)

    snapshot_id: int
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None
    max_ref_age_ms: int | None = None
    implied: bool = False
    extras: Mapping[str, Any] = field(default_factory=empty_map)

    @property
    def type(self) -> str:
        return "branch"


@dataclass(frozen=True, slots=True, kw_only=True)
class Tag:
    """A tag: a label for one snapshot (spec: "Snapshot References")."""

    FIELD_DOCS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {k: v for k, v in _REF_DOCS.items() if k not in ("min_snapshots_to_keep", "max_snapshot_age_ms", "implied")}
    )

    snapshot_id: int
    max_ref_age_ms: int | None = None
    extras: Mapping[str, Any] = field(default_factory=empty_map)

    @property
    def type(self) -> str:
        return "tag"


Ref = Branch | Tag


def parse_ref(raw: Any, *, file: str, where: str) -> Ref:
    """Parse a snapshot reference object; ``type`` must be ``branch`` or ``tag``.

    Branch-only retention keys found on a tag are kept in ``extras`` rather than dropped.
    """
    w = Wire.of(raw, file=file, where=where)
    kind = w.req_str("type").lower()
    if kind == "branch":
        return Branch(
            snapshot_id=w.req_int("snapshot-id"),
            min_snapshots_to_keep=w.opt_int("min-snapshots-to-keep"),
            max_snapshot_age_ms=w.opt_int("max-snapshot-age-ms"),
            max_ref_age_ms=w.opt_int("max-ref-age-ms"),
            extras=w.extras(_BRANCH_KEYS),
        )
    if kind == "tag":
        return Tag(
            snapshot_id=w.req_int("snapshot-id"),
            max_ref_age_ms=w.opt_int("max-ref-age-ms"),
            extras=w.extras(_TAG_KEYS),
        )
    raise w.error("type", f"expected 'branch' or 'tag', found {w.obj['type']!r}")


# ---------------------------------------------------------------- logs


@dataclass(frozen=True, slots=True, kw_only=True)
class SnapshotLogEntry:
    """An entry of ``snapshot-log``: the current snapshot changed to ``snapshot_id`` at ``timestamp_ms``."""

    FIELD_DOCS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "snapshot_id": "snapshot-id: the snapshot that became current.",
            "timestamp_ms": "timestamp-ms: when it became current (the table's last-updated-ms at that commit).",
        }
    )

    snapshot_id: int
    timestamp_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataLogEntry:
    """An entry of ``metadata-log``: a previous metadata file and when it was replaced."""

    FIELD_DOCS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "metadata_file": "metadata-file: location of a previous metadata file of the table.",
            "timestamp_ms": "timestamp-ms: that metadata file's last-updated-ms.",
        }
    )

    metadata_file: str
    timestamp_ms: int


def parse_snapshot_log_entry(raw: Any, *, file: str, where: str) -> SnapshotLogEntry:
    w = Wire.of(raw, file=file, where=where)
    return SnapshotLogEntry(snapshot_id=w.req_int("snapshot-id"), timestamp_ms=w.req_int("timestamp-ms"))


def parse_metadata_log_entry(raw: Any, *, file: str, where: str) -> MetadataLogEntry:
    w = Wire.of(raw, file=file, where=where)
    return MetadataLogEntry(metadata_file=w.req_str("metadata-file"), timestamp_ms=w.req_int("timestamp-ms"))


# ---------------------------------------------------------------- statistics and keys


@dataclass(frozen=True, slots=True, kw_only=True)
class BlobMetadata:
    """Metadata of one statistics blob in a Puffin statistics file (spec: "Table Statistics")."""

    FIELD_DOCS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "type": "type: blob type, matching the Puffin blob type (e.g. apache-datasketches-theta-v1).",
            "snapshot_id": "snapshot-id: snapshot the blob was computed from.",
            "sequence_number": "sequence-number: sequence number of that snapshot.",
            "fields": "fields: ids of the fields the statistic was computed on, in order.",
            "properties": "properties: additional properties of the statistic.",
        }
    )

    type: str
    snapshot_id: int
    sequence_number: int
    fields: tuple[int, ...]
    properties: Mapping[str, str] = field(default_factory=empty_map)
    extras: Mapping[str, Any] = field(default_factory=empty_map)


@dataclass(frozen=True, slots=True, kw_only=True)
class StatisticsFile:
    """A Puffin table statistics file registered for a snapshot (spec: "Table Statistics")."""

    FIELD_DOCS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "snapshot_id": "snapshot-id: snapshot the statistics file is associated with.",
            "statistics_path": "statistics-path: path of the Puffin statistics file.",
            "file_size_in_bytes": "file-size-in-bytes: size of the statistics file.",
            "file_footer_size_in_bytes": "file-footer-size-in-bytes: total size of the Puffin footer.",
            "key_metadata": "key-metadata: base64 implementation-specific key metadata for encryption.",
            "blob_metadata": "blob-metadata: the statistics blobs contained in the file.",
        }
    )

    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int
    file_footer_size_in_bytes: int
    key_metadata: str | None = None
    blob_metadata: tuple[BlobMetadata, ...] = ()
    extras: Mapping[str, Any] = field(default_factory=empty_map)


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionStatisticsFile:
    """A partition statistics file registered for a snapshot (spec: "Partition Statistics")."""

    FIELD_DOCS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "snapshot_id": "snapshot-id: snapshot the partition statistics file is associated with.",
            "statistics_path": "statistics-path: path of the partition statistics file.",
            "file_size_in_bytes": "file-size-in-bytes: size of the partition statistics file.",
        }
    )

    snapshot_id: int
    statistics_path: str
    file_size_in_bytes: int
    extras: Mapping[str, Any] = field(default_factory=empty_map)


@dataclass(frozen=True, slots=True, kw_only=True)
class EncryptedKey:
    """A table encryption key (v3, spec: "Encryption Keys")."""

    FIELD_DOCS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "key_id": "key-id: id of the encryption key.",
            "encrypted_key_metadata": "encrypted-key-metadata: encrypted key and metadata, base64 encoded.",
            "encrypted_by_id": "encrypted-by-id: id of the key used to encrypt or wrap the key metadata.",
            "properties": "properties: additional metadata used by the table's encryption scheme.",
        }
    )

    key_id: str
    encrypted_key_metadata: str
    encrypted_by_id: str | None = None
    properties: Mapping[str, str] = field(default_factory=empty_map)
    extras: Mapping[str, Any] = field(default_factory=empty_map)


def parse_statistics_file(raw: Any, *, file: str, where: str) -> StatisticsFile:
    w = Wire.of(raw, file=file, where=where)
    blobs: list[BlobMetadata] = []
    for i, b in enumerate(w.req_list("blob-metadata")):
        bw = Wire.of(b, file=file, where=f"{w.path('blob-metadata')}[{i}]")
        blobs.append(
            BlobMetadata(
                type=bw.req_str("type"),
                snapshot_id=bw.req_int("snapshot-id"),
                sequence_number=bw.req_int("sequence-number"),
                fields=bw.int_list("fields"),
                properties=bw.str_map("properties") or EMPTY_MAP,
                extras=bw.extras(("type", "snapshot-id", "sequence-number", "fields", "properties")),
            )
        )
    return StatisticsFile(
        snapshot_id=w.req_int("snapshot-id"),
        statistics_path=w.req_str("statistics-path"),
        file_size_in_bytes=w.req_int("file-size-in-bytes"),
        file_footer_size_in_bytes=w.req_int("file-footer-size-in-bytes"),
        key_metadata=w.opt_str("key-metadata"),
        blob_metadata=tuple(blobs),
        extras=w.extras(
            (
                "snapshot-id",
                "statistics-path",
                "file-size-in-bytes",
                "file-footer-size-in-bytes",
                "key-metadata",
                "blob-metadata",
            )
        ),
    )


def parse_partition_statistics_file(raw: Any, *, file: str, where: str) -> PartitionStatisticsFile:
    w = Wire.of(raw, file=file, where=where)
    return PartitionStatisticsFile(
        snapshot_id=w.req_int("snapshot-id"),
        statistics_path=w.req_str("statistics-path"),
        file_size_in_bytes=w.req_int("file-size-in-bytes"),
        extras=w.extras(("snapshot-id", "statistics-path", "file-size-in-bytes")),
    )


def parse_encrypted_key(raw: Any, *, file: str, where: str) -> EncryptedKey:
    """Parse an encryption key. The field table names the key ``encrypted-key-metadata``;
    Appendix C's example writes ``key-metadata``, so that spelling is accepted as well."""
    w = Wire.of(raw, file=file, where=where)
    key = "encrypted-key-metadata" if w.has("encrypted-key-metadata") or not w.has("key-metadata") else "key-metadata"
    return EncryptedKey(
        key_id=w.req_str("key-id"),
        encrypted_key_metadata=w.req_str(key),
        encrypted_by_id=w.opt_str("encrypted-by-id"),
        properties=w.str_map("properties") or EMPTY_MAP,
        extras=w.extras(("key-id", key, "encrypted-by-id", "properties")),
    )


__all__ = [
    "OPERATION_DOCS",
    "SUMMARY_METRICS",
    "BlobMetadata",
    "Branch",
    "EncryptedKey",
    "MetadataLogEntry",
    "Operation",
    "ParentCycle",
    "PartitionStatisticsFile",
    "Ref",
    "Snapshot",
    "SnapshotLogEntry",
    "StatisticsFile",
    "Tag",
    "find_parent_cycles",
    "parse_encrypted_key",
    "parse_metadata_log_entry",
    "parse_partition_statistics_file",
    "parse_ref",
    "parse_snapshot",
    "parse_snapshot_log_entry",
    "parse_statistics_file",
    "snapshot_sequence_number",
]
