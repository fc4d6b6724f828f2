"""``at``: what a user means by a point in a table's history, and the snapshot it names.

``parse_at`` is the one place that reads ``at`` (an int, a datetime or date, a string, or an
already typed point) into a typed point: a snapshot id, a ref (branch or tag) name, or a time.
Text is read as the reference implementation reads ``VERSION AS OF``: text that is a whole
number (ASCII digits) is a snapshot id; otherwise a branch or tag of the table; otherwise an
ISO-8601 time. Times resolve by the spec's rule ("Point in Time Reads (Time Travel)"): the
snapshot that was current on main then, i.e. the last snapshot-log entry at or before it.

``read_schema`` is the one home of the schema a read at ``at`` returns, by the reference
implementation's rule (the spec leaves it open): a branch reads with the table's current schema, a
snapshot id, a tag or a time with the snapshot's own schema.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import TypeAlias

from icebook.errors import IcebookError, NotFound
from icebook.spec.metadata import TableMetadata
from icebook.spec.schema import Schema
from icebook.spec.snapshots import Branch, Snapshot
from icebook.text import EPOCH_UTC, iso_utc


class AtError(IcebookError):
    """An ``at`` that is neither a snapshot id, a branch or tag name, nor a time (e.g. ``True``, ``""``, 1.5)."""


class TimeOutOfRange(AtError):
    """A time that is valid ISO-8601 but not a year 1-9999 in UTC (e.g. 0001-01-01T00:00+14:00)."""


@dataclass(frozen=True, slots=True)
class AtSnapshot:
    """A snapshot by id."""

    snapshot_id: int


@dataclass(frozen=True, slots=True)
class AtRef:
    """A branch or tag by name: its snapshot now."""

    name: str


@dataclass(frozen=True, slots=True)
class AtTime:
    """The snapshot current on main at this time (ms from the epoch, UTC)."""

    timestamp_ms: int


Point: TypeAlias = AtSnapshot | AtRef | AtTime
At: TypeAlias = int | str | _dt.datetime | _dt.date | Point | None
"""What every ``at`` parameter accepts; None means the current snapshot."""

_LONG = re.compile(r"[+-]?[0-9]{1,19}")  # ASCII only: str.isdigit() also accepts '²' and '٣'
_LONG_RANGE = range(-(2**63), 2**63)
_WHAT = "a snapshot id, branch, tag or ISO-8601 time"


def snapshot_id_from_text(text: str) -> int | None:
    """The snapshot id a text spells (a 64-bit whole number in ASCII digits), else None."""
    text = text.strip()
    if not _LONG.fullmatch(text):
        return None
    value = int(text)
    return value if value in _LONG_RANGE else None


def to_epoch_ms(when: _dt.datetime | _dt.date | str) -> int:
    """A datetime, date or ISO-8601 string as ms since the epoch; naive values are UTC."""
    if isinstance(when, str):
        text = when.strip().replace("Z", "+00:00")
        try:
            when = _dt.datetime.fromisoformat(text)
        except ValueError:
            raise AtError(f"{when!r} is not {_WHAT}") from None
    if not isinstance(when, _dt.datetime):
        when = _dt.datetime(when.year, when.month, when.day)
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.UTC)
    try:
        # Only times that are also years 1-9999 in UTC can be compared, shown and passed to Spark.
        utc = when.astimezone(_dt.UTC)
    except (OverflowError, ValueError):
        raise TimeOutOfRange(
            f"{when.isoformat()} is outside the times icebook can show (years 1 to 9999 in UTC)"
        ) from None
    return (utc - EPOCH_UTC) // _dt.timedelta(milliseconds=1)


def parse_at(at: At, refs: Collection[str]) -> Point | None:
    """``at`` as a typed point of a table whose ref names are ``refs`` (None stays None: current).

    Text: a whole number is a snapshot id (as Spark's ``VERSION AS OF``), then a name in ``refs``
    is that ref, then an ISO-8601 time; anything else raises NotFound listing the refs. Values
    of other types raise AtError. Nothing is looked up beyond ``refs``.
    """
    if at is None or isinstance(at, (AtSnapshot, AtRef, AtTime)):
        return at
    if isinstance(at, bool):  # bool is an int subclass; True is no snapshot id
        raise AtError(f"{at!r} is not {_WHAT}")
    if isinstance(at, int):
        return AtSnapshot(at)
    if isinstance(at, (_dt.datetime, _dt.date)):
        return AtTime(to_epoch_ms(at))
    if not isinstance(at, str):
        raise AtError(f"{at!r} ({type(at).__name__}) is not {_WHAT}")
    if not at.strip():
        raise AtError(f"an empty text is not {_WHAT}")
    snapshot_id = snapshot_id_from_text(at)
    if snapshot_id is not None:
        return AtSnapshot(snapshot_id)
    if at in refs:
        return AtRef(at)
    try:
        return AtTime(to_epoch_ms(at))
    except TimeOutOfRange:
        raise
    except AtError:
        raise NotFound(f"no branch, tag or snapshot named {at!r}", available=sorted(refs)) from None


def snapshot_as_of_time(metadata: TableMetadata, timestamp_ms: int) -> Snapshot:
    """The snapshot current on main at ``timestamp_ms`` (the snapshot-log rule)."""
    chosen: int | None = None
    for entry in metadata.snapshot_log:
        if entry.timestamp_ms <= timestamp_ms:
            chosen = entry.snapshot_id
    if chosen is None:
        first = metadata.snapshot_log[0].timestamp_ms if metadata.snapshot_log else None
        hint = f"; the oldest entry of the snapshot log is at {iso_utc(first)}" if first is not None else ""
        raise NotFound(f"no snapshot was current at {iso_utc(timestamp_ms)}{hint}")
    return metadata.snapshot_by_id(chosen)


def resolve_snapshot(metadata: TableMetadata, at: At) -> Snapshot | None:
    """The snapshot meant by ``at``; None means the current snapshot (None for an empty table)."""
    point = parse_at(at, metadata.refs)
    if point is None:
        return metadata.current_snapshot()
    if isinstance(point, AtSnapshot):
        return metadata.snapshot_by_id(point.snapshot_id)
    if isinstance(point, AtRef):
        ref = metadata.refs.get(point.name)
        if ref is None:
            raise NotFound(f"no branch or tag named {point.name!r}", available=sorted(metadata.refs))
        return metadata.snapshot_by_id(ref.snapshot_id)
    return snapshot_as_of_time(metadata, point.timestamp_ms)


def snapshot_schema(metadata: TableMetadata, snapshot: Snapshot) -> Schema:
    """The snapshot's own schema (what a read by snapshot id, tag or time returns); the current
    schema when the snapshot records none (v1) or one the table no longer lists."""
    if snapshot.schema_id is not None and snapshot.schema_id in metadata.schemas:
        return metadata.schemas[snapshot.schema_id]
    return metadata.current_schema()


def read_schema(metadata: TableMetadata, at: At) -> Schema:
    """The schema a read at ``at`` returns, as Spark reads it: the current schema for the current
    state and for a branch (main included: a branch's head may predate the newest schema, and its
    next write would use that schema), the snapshot's own schema for a snapshot id, a tag or a time."""
    point = parse_at(at, metadata.refs)
    if point is None or (isinstance(point, AtRef) and isinstance(metadata.refs.get(point.name), Branch)):
        return metadata.current_schema()
    snapshot = resolve_snapshot(metadata, point)
    return metadata.current_schema() if snapshot is None else snapshot_schema(metadata, snapshot)


__all__ = [
    "At",
    "AtError",
    "AtRef",
    "AtSnapshot",
    "AtTime",
    "Point",
    "TimeOutOfRange",
    "parse_at",
    "read_schema",
    "resolve_snapshot",
    "snapshot_as_of_time",
    "snapshot_id_from_text",
    "snapshot_schema",
    "to_epoch_ms",
]
