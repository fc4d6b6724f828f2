"""Cross-checks between what a table's files say about each other.

A manifest cut at a block boundary, a manifest list cut right after its header, or a manifest
replaced by another one all decode without a single framing error, and a reader that trusted
them would answer with fewer rows than the table has. Every manifest list records, per
manifest, how many entries it holds by status and how many rows they count (spec: "Manifest
Lists", ``added_files_count`` ... ``deleted_rows_count``); every snapshot summary written by the
reference implementation records the live totals of the snapshot (spec: "Optional Snapshot
Summary Fields", Metrics). What is read is compared with both, and a difference is a
MetadataError naming the file and the field, never a silently smaller answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields

import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.store.entries import Entries
from icebook.errors import MetadataError
from icebook.io.metric_facts import facts_of
from icebook.spec.manifest import EntryStatus, FileContent, ManifestFile
from icebook.spec.schema import LAST_TABLE_FIELD_ID
from icebook.spec.snapshots import Snapshot


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestCounts:
    """What one manifest holds: entries and rows by status, and the live totals a summary adds up."""

    added_files: int
    existing_files: int
    deleted_files: int
    added_rows: int
    existing_rows: int
    deleted_rows: int
    live_data_files: int
    live_delete_files: int
    live_records: int
    """Rows in live data files (``total-records``)."""
    live_position_deletes: int
    """Rows of live position delete files and deletion vectors (``total-position-deletes``)."""
    live_equality_deletes: int
    live_files_size: int
    """Bytes of live files; a deletion vector counts its blob, not the Puffin file it shares."""

    def __add__(self, other: ManifestCounts) -> ManifestCounts:
        return ManifestCounts(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})


ZERO = ManifestCounts(**{f.name: 0 for f in fields(ManifestCounts)})


CHECKED_COLUMNS = (
    "status",
    "snapshot_id",
    "content",
    "record_count",
    "file_size_in_bytes",
    "content_size_in_bytes",
    "sequence_number",
    "file_sequence_number",
)
"""The entry columns every read of a manifest decodes, whatever else it asks for: the checks need them."""


def manifest_counts(entries: pa.Table) -> ManifestCounts:
    """Count one manifest's entries (a ``read_manifest_entries`` table with at least ``CHECKED_COLUMNS``)."""
    view = Entries(entries)
    added, existing = view.status_is(EntryStatus.ADDED), view.status_is(EntryStatus.EXISTING)
    deleted = view.status_is(EntryStatus.DELETED)
    live, data = view.alive_mask(), view.content_is(FileContent.DATA)
    records, size = view.records(), view.size_values()
    return ManifestCounts(
        added_files=int(added.sum()),
        existing_files=int(existing.sum()),
        deleted_files=int(deleted.sum()),
        added_rows=int(records[added].sum()),
        existing_rows=int(records[existing].sum()),
        deleted_rows=int(records[deleted].sum()),
        live_data_files=int((live & data).sum()),
        live_delete_files=int((live & ~data).sum()),
        live_records=int(records[live & data].sum()),
        live_position_deletes=int(records[live & view.content_is(FileContent.POSITION_DELETES)].sum()),
        live_equality_deletes=int(records[live & view.content_is(FileContent.EQUALITY_DELETES)].sum()),
        live_files_size=int(size[live].sum()),
    )


def check_manifest_counts(manifest: ManifestFile, counts: ManifestCounts) -> None:
    """The manifest list's counts for ``manifest`` against the entries decoded from it.

    A null count is skipped: the spec reads it as "assumed to be non-zero" (v1 lists may omit them).
    """
    pairs = (
        ("added_files_count", manifest.added_files_count, counts.added_files, "ADDED entries"),
        ("existing_files_count", manifest.existing_files_count, counts.existing_files, "EXISTING entries"),
        ("deleted_files_count", manifest.deleted_files_count, counts.deleted_files, "DELETED entries"),
        ("added_rows_count", manifest.added_rows_count, counts.added_rows, "rows in ADDED entries"),
        ("existing_rows_count", manifest.existing_rows_count, counts.existing_rows, "rows in EXISTING entries"),
        ("deleted_rows_count", manifest.deleted_rows_count, counts.deleted_rows, "rows in DELETED entries"),
    )
    for field, recorded, found, what in pairs:
        if recorded is not None and recorded != found:
            raise MetadataError(
                manifest.manifest_path,
                field,
                f"the manifest list records {recorded} but the manifest holds {found} {what}",
                kind="manifest",
            )


def check_entry_values(manifest: ManifestFile, entries: pa.Table, *, last_column_id: int) -> None:
    """Values no valid manifest can hold (spec: "Manifest Entry Fields", "Data File Fields").

    Counts and sizes are never negative; metrics are keyed by field ids the table has assigned
    (at most ``last-column-id``) or reserved for metadata columns; and no entry of a manifest was committed
    after the manifest itself (its data and file sequence numbers are at most the manifest's ``sequence_number``);
    an ADDED or DELETED entry was written by the snapshot that wrote its manifest (its ``snapshot_id`` is the
    list's ``added_snapshot_id``: a damaged varint there decodes to another id without a framing error).
    ``entries`` may hold only some columns (a scan plan's): the metric maps are checked through the facts
    their decode reported (``icebook.io.metric_facts``), sent or not.
    """
    path = manifest.manifest_path

    def fail(field: str, problem: str) -> MetadataError:
        return MetadataError(path, field, problem, kind="manifest")

    for name in ("record_count", "file_size_in_bytes"):
        if name not in entries.column_names:
            continue
        low = pc.min(entries.column(name)).as_py()
        if low is not None and low < 0:
            raise fail(f"data_file.{name}", f"negative value {low}")
    for name, facts in facts_of(entries).items():
        for key in (facts.lowest_key, facts.highest_table_key):
            if key is not None and (key < 0 or last_column_id < key <= LAST_TABLE_FIELD_ID):
                raise fail(
                    f"data_file.{name}", f"field id {key} was never assigned (last-column-id is {last_column_id})"
                )
        if facts.lowest_count is not None and facts.lowest_count < 0:
            raise fail(f"data_file.{name}", f"negative count {facts.lowest_count}")
    writer = manifest.added_snapshot_id
    if writer is not None and "snapshot_id" in entries.column_names and "status" in entries.column_names:
        view = Entries(entries)
        written = view.status_is(EntryStatus.ADDED) | view.status_is(EntryStatus.DELETED)
        ids = pc.filter(entries.column("snapshot_id"), pa.array(written))
        other = pc.filter(ids, pc.fill_null(pc.not_equal(ids, writer), False))
        if len(other):
            raise fail(
                "snapshot_id",
                f"an ADDED or DELETED entry names snapshot {other[0].as_py()}, but the manifest list says "
                f"snapshot {writer} wrote this manifest",
            )
    if manifest.sequence_number is not None:
        for name in ("sequence_number", "file_sequence_number"):
            if name not in entries.column_names:
                continue
            high = pc.max(entries.column(name)).as_py()
            if high is not None and high > manifest.sequence_number:
                raise fail(
                    name,
                    f"{high} is after the manifest's own sequence number {manifest.sequence_number} "
                    "(an entry cannot be committed after the manifest listing it)",
                )


SUMMARY_TOTALS = (
    ("total-data-files", "live_data_files", "live data files"),
    ("total-delete-files", "live_delete_files", "live delete files"),
    ("total-records", "live_records", "records in live data files"),
    ("total-position-deletes", "live_position_deletes", "position delete records"),
    ("total-equality-deletes", "live_equality_deletes", "equality delete records"),
)
"""Summary keys (spec: "Optional Snapshot Summary Fields") and what each must equal.

The reference implementation writes each total as its parent's total plus what the commit added
minus what it removed, and leaves it out when it cannot (the parent had none), so a total that is
present is exact. Except ``total-files-size``, left out: a merge-on-read UPDATE that replaces a data
file's position delete files (Spark 3.5, Iceberg 1.10) leaves it below the bytes its manifests keep
live, on a table the reference implementation reads without complaint."""


def check_summary_totals(snapshot: Snapshot, counts: Iterable[ManifestCounts]) -> None:
    """The snapshot summary's totals against the sum over all of the snapshot's manifests."""
    summary = snapshot.summary or {}
    total = sum(counts, ZERO)
    for key, attribute, what in SUMMARY_TOTALS:
        text = summary.get(key)
        if text is None:
            continue
        try:
            recorded = int(text)
        except ValueError:
            continue  # parse_snapshot rejects non-integer totals; nothing to compare here
        found = getattr(total, attribute)
        if recorded != found:
            raise MetadataError(
                snapshot.manifest_list or f"snapshot {snapshot.snapshot_id}",
                f"summary.{key}",
                f"snapshot {snapshot.snapshot_id}'s summary records {recorded} but its manifests hold {found} {what}",
                kind="manifest list",
            )


__all__ = [
    "CHECKED_COLUMNS",
    "SUMMARY_TOTALS",
    "ZERO",
    "ManifestCounts",
    "check_entry_values",
    "check_manifest_counts",
    "check_summary_totals",
    "manifest_counts",
]
