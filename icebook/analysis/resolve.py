"""Resolve ``at`` (a snapshot id, a branch or tag name, or a point in time) to a snapshot.

Spec ("Point in Time Reads (Time Travel)"): reading as of a time uses the snapshot-log:
the snapshot that was current on the main branch at that time, i.e. the last log entry
whose timestamp is at or before it.
"""

from __future__ import annotations

import datetime as _dt
from typing import TypeAlias

from icebook.errors import NotFound
from icebook.spec.metadata import TableMetadata
from icebook.spec.snapshots import Snapshot

At: TypeAlias = int | str | _dt.datetime | _dt.date | None


def to_epoch_ms(when: _dt.datetime | _dt.date | str) -> int:
    """A datetime, date or ISO-8601 string as ms since the epoch; naive values are UTC."""
    if isinstance(when, str):
        text = when.strip().replace("Z", "+00:00")
        try:
            when = _dt.datetime.fromisoformat(text)
        except ValueError:
            raise NotFound(f"{when!r} is not a snapshot id, branch, tag or ISO-8601 time") from None
    if not isinstance(when, _dt.datetime):
        when = _dt.datetime(when.year, when.month, when.day)
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.UTC)
    return int(when.timestamp() * 1000)


def snapshot_as_of_time(metadata: TableMetadata, timestamp_ms: int) -> Snapshot:
    """The snapshot current on main at ``timestamp_ms`` (the snapshot-log rule)."""
    chosen: int | None = None
    for entry in metadata.snapshot_log:
        if entry.timestamp_ms <= timestamp_ms:
            chosen = entry.snapshot_id
    if chosen is None:
        first = metadata.snapshot_log[0].timestamp_ms if metadata.snapshot_log else None
        stamp = _dt.datetime.fromtimestamp(timestamp_ms / 1000, _dt.UTC).isoformat()
        hint = f"; the oldest entry of the snapshot log is at {_iso(first)}" if first is not None else ""
        raise NotFound(f"no snapshot was current at {stamp}{hint}")
    return metadata.snapshot_by_id(chosen)


def _iso(ms: int) -> str:
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.UTC).isoformat()


def resolve_snapshot(metadata: TableMetadata, at: At) -> Snapshot | None:
    """The snapshot meant by ``at``; None means the current snapshot (None for an empty table)."""
    if at is None:
        return metadata.current_snapshot()
    if isinstance(at, bool):
        raise NotFound(f"{at!r} is not a snapshot id, branch, tag or time")
    if isinstance(at, int):
        return metadata.snapshot_by_id(at)
    if isinstance(at, (_dt.datetime, _dt.date)):
        return snapshot_as_of_time(metadata, to_epoch_ms(at))
    if isinstance(at, str):
        if at in metadata.refs:
            return metadata.snapshot_by_id(metadata.refs[at].snapshot_id)
        if at.lstrip("-").isdigit():
            return metadata.snapshot_by_id(int(at))
        try:
            ms = to_epoch_ms(at)
        except NotFound:
            raise NotFound(f"no branch, tag or snapshot named {at!r}", available=sorted(metadata.refs)) from None
        return snapshot_as_of_time(metadata, ms)
    raise NotFound(f"{at!r} is not a snapshot id, branch, tag or time")
