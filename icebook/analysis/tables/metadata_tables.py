"""The metadata tables read from the table metadata and manifest lists alone (no manifest is decoded), named
and shaped like Spark's: ``snapshots``, ``history``, ``refs``, ``metadata_log_entries`` and ``manifests``
(``all_manifests`` is built from it by ``Inspector``)."""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

from icebook.analysis.ancestry import ancestor_ids
from icebook.analysis.tables.partition_summaries import partition_summaries_arrow
from icebook.spec.manifest import ManifestContent, ManifestFile
from icebook.spec.metadata import TableMetadata
from icebook.spec.snapshots import Branch, Snapshot, snapshot_sequence_number

TS = pa.timestamp("ms", tz="UTC")


# ------------------------------------------------------------------ snapshot-level tables


def snapshots_arrow(metadata: TableMetadata) -> pa.Table:
    snaps = metadata.snapshots
    return pa.table(
        {
            "committed_at": pa.array([s.timestamp_ms for s in snaps], pa.int64()).cast(TS),
            "snapshot_id": pa.array([s.snapshot_id for s in snaps], pa.int64()),
            "parent_id": pa.array([s.parent_snapshot_id for s in snaps], pa.int64()),
            "operation": pa.array([s.operation for s in snaps], pa.string()),
            "manifest_list": pa.array([s.manifest_list for s in snaps], pa.string()),
            "summary": pa.array(
                # Spark shows ``operation`` as its own column, not inside the summary map.
                [[kv for kv in (s.summary or {}).items() if kv[0] != "operation"] for s in snaps],
                pa.map_(pa.string(), pa.string()),
            ),
        }
    )


def history_arrow(metadata: TableMetadata) -> pa.Table:
    ancestors = set(ancestor_ids(metadata, metadata.current_snapshot_id))
    known = {s.snapshot_id: s for s in metadata.snapshots}
    log = metadata.snapshot_log
    return pa.table(
        {
            "made_current_at": pa.array([e.timestamp_ms for e in log], pa.int64()).cast(TS),
            "snapshot_id": pa.array([e.snapshot_id for e in log], pa.int64()),
            "parent_id": pa.array(
                [known[e.snapshot_id].parent_snapshot_id if e.snapshot_id in known else None for e in log], pa.int64()
            ),
            "is_current_ancestor": pa.array([e.snapshot_id in ancestors for e in log], pa.bool_()),
        }
    )


def refs_arrow(metadata: TableMetadata) -> pa.Table:
    refs = list(metadata.refs.items())
    return pa.table(
        {
            "name": pa.array([n for n, _ in refs], pa.string()),
            "type": pa.array([r.type.upper() for _, r in refs], pa.string()),
            "snapshot_id": pa.array([r.snapshot_id for _, r in refs], pa.int64()),
            "max_reference_age_in_ms": pa.array([r.max_ref_age_ms for _, r in refs], pa.int64()),
            "min_snapshots_to_keep": pa.array(
                [r.min_snapshots_to_keep if isinstance(r, Branch) else None for _, r in refs], pa.int32()
            ),
            "max_snapshot_age_in_ms": pa.array(
                [r.max_snapshot_age_ms if isinstance(r, Branch) else None for _, r in refs], pa.int64()
            ),
        }
    )


def metadata_log_entries_arrow(metadata: TableMetadata, metadata_location: str) -> pa.Table:
    """Previous metadata files plus the current one; ``latest_*`` describe the snapshot that was
    current on main when each file was written (the snapshot-log rule)."""
    entries = [(e.timestamp_ms, e.metadata_file) for e in metadata.metadata_log]
    entries.append((metadata.last_updated_ms, metadata_location))
    snap_ids, schema_ids, seqs = [], [], []
    for ts, _ in entries:
        chosen = None
        for log_entry in metadata.snapshot_log:
            if log_entry.timestamp_ms <= ts:
                chosen = log_entry.snapshot_id
        snap = _maybe_snapshot(metadata, chosen)
        snap_ids.append(chosen)
        schema_ids.append(snap.schema_id if snap else None)
        seqs.append(snapshot_sequence_number(snap) if snap else None)
    return pa.table(
        {
            "timestamp": pa.array([t for t, _ in entries], pa.int64()).cast(TS),
            "file": pa.array([f for _, f in entries], pa.string()),
            "latest_snapshot_id": pa.array(snap_ids, pa.int64()),
            "latest_schema_id": pa.array(schema_ids, pa.int32()),
            "latest_sequence_number": pa.array(seqs, pa.int64()),
        }
    )


def _maybe_snapshot(metadata: TableMetadata, snapshot_id: int | None) -> Snapshot | None:
    if snapshot_id is None:
        return None
    return next((s for s in metadata.snapshots if s.snapshot_id == snapshot_id), None)


# ------------------------------------------------------------------ manifest-level tables


def manifests_arrow(metadata: TableMetadata, manifests: Iterable[ManifestFile]) -> pa.Table:
    ms = list(manifests)

    def count(m: ManifestFile, state: str, content: ManifestContent) -> int:
        # Spark reports a data manifest's counts as data-file counts and zero delete-file counts.
        value: int | None = getattr(m, f"{state}_files_count")
        return (value or 0) if m.effective_content == content else 0

    return pa.table(
        {
            "content": pa.array([int(m.effective_content) for m in ms], pa.int32()),
            "path": pa.array([m.manifest_path for m in ms], pa.string()),
            "length": pa.array([m.manifest_length for m in ms], pa.int64()),
            "partition_spec_id": pa.array([m.partition_spec_id for m in ms], pa.int32()),
            "added_snapshot_id": pa.array([m.added_snapshot_id for m in ms], pa.int64()),
            **{
                f"{state}_{kind}_files_count": pa.array([count(m, state, content) for m in ms], pa.int32())
                for kind, content in (("data", ManifestContent.DATA), ("delete", ManifestContent.DELETES))
                for state in ("added", "existing", "deleted")
            },
            "partition_summaries": partition_summaries_arrow(metadata, ms),
        }
    )
