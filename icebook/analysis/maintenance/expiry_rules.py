"""Which snapshots and refs ``expire_snapshots`` keeps, from the metadata alone (its files: ``expire``).

Which snapshots expire (spec: "Snapshot Retention Policy"; the reference implementation's rules):

- A ref other than ``main`` is removed when its snapshot is older than its ``max-ref-age-ms``
  (else the table property ``history.expire.max-ref-age-ms``; default: forever), measured from now.
- Every kept branch keeps the newest ``min-snapshots-to-keep`` snapshots of its ancestry, and every
  ancestor committed at or after its expiry cutoff: ``now - max-snapshot-age-ms`` of the branch, else
  the procedure's ``older_than``, else ``now - history.expire.max-snapshot-age-ms`` (default 5 days).
  ``retain_last`` replaces ``history.expire.min-snapshots-to-keep`` (default 1), not a branch's own value.
- Every kept tag keeps its snapshot; a snapshot on no kept ref's ancestry is kept only while it is
  younger than the cutoff.
- Everything else expires.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field

from icebook.analysis.ancestry import ancestor_ids
from icebook.errors import IcebookError, OptionError
from icebook.spec import properties
from icebook.spec.metadata import MAIN_BRANCH, TableMetadata, commit_order
from icebook.spec.snapshots import Branch, Ref
from icebook.text import utc_text


class GcDisabled(IcebookError):
    """The table forbids deleting files (``gc.enabled=false``); Spark refuses to expire or remove orphans."""


def gc_enabled(metadata: TableMetadata) -> bool:
    return properties.GC_ENABLED.read(metadata.properties)


@dataclass(frozen=True, slots=True, kw_only=True)
class Retention:
    """The settings one expiry run uses, and where each came from."""

    now_ms: int
    expire_older_than_ms: int
    min_snapshots_to_keep: int
    max_ref_age_ms: int
    sources: Mapping[str, str] = field(default_factory=dict)
    """setting -> where it came from ("older_than argument", "table property ...", "default")."""


def clock_ms(now_ms: int | None) -> int:
    """The time retention and orphan rules measure from: ``now_ms`` when given (a reproducible preview),
    else the clock."""
    return int(time.time() * 1000) if now_ms is None else int(now_ms)


def retention(
    metadata: TableMetadata, *, older_than_ms: int | None, retain_last: int | None, now_ms: int | None
) -> Retention:
    now = clock_ms(now_ms)
    sources: dict[str, str] = {}
    if older_than_ms is not None:
        cutoff = int(older_than_ms)
        sources["older_than"] = "older_than argument"
    else:
        age_property = properties.MAX_SNAPSHOT_AGE_MS
        age = age_property.read(metadata.properties)
        cutoff = now - age
        sources["older_than"] = f"now - {age_property.name} ({age} ms)" + (
            "" if age_property.name in metadata.properties else ", the default"
        )
    if retain_last is not None:
        if retain_last < 1:
            raise OptionError(f"retain_last must be at least 1, not {retain_last}")
        keep = int(retain_last)
        sources["min_snapshots_to_keep"] = "retain_last argument"
    else:
        keep_property = properties.MIN_SNAPSHOTS_TO_KEEP
        keep = keep_property.read(metadata.properties)
        sources["min_snapshots_to_keep"] = keep_property.name + (
            "" if keep_property.name in metadata.properties else " (default)"
        )
    max_ref_age = properties.MAX_REF_AGE_MS.read(metadata.properties)
    return Retention(
        now_ms=now, expire_older_than_ms=cutoff, min_snapshots_to_keep=keep, max_ref_age_ms=max_ref_age, sources=sources
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class SnapshotFate:
    """One snapshot and whether an expiry run keeps it, with the rule that decided."""

    snapshot_id: int
    timestamp_ms: int
    operation: str | None
    expires: bool
    reason: str
    rule: str = ""
    """The setting behind ``reason``, with its name and value (e.g. ``history.expire.max-snapshot-age-ms=1000``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RefFate:
    name: str
    type: str
    snapshot_id: int
    age_ms: int | None
    max_ref_age_ms: int
    removed: bool
    reason: str


def _ref_age_limit(ref: Ref, r: Retention) -> int:
    return ref.max_ref_age_ms if ref.max_ref_age_ms is not None else r.max_ref_age_ms


def expiry_fates(
    metadata: TableMetadata,
    *,
    older_than_ms: int | None = None,
    retain_last: int | None = None,
    snapshot_ids: Collection[int] = (),
    now_ms: int | None = None,
) -> tuple[Retention, tuple[SnapshotFate, ...], tuple[RefFate, ...]]:
    """Which snapshots and refs ``expire_snapshots`` would remove, from the metadata file alone (no
    manifest is read: the files they free are ``expire_preview``'s)."""
    if not gc_enabled(metadata):
        raise GcDisabled(
            f"table {metadata.location} has {properties.GC_ENABLED.name}=false: expire_snapshots refuses to run "
            "(deleting files may corrupt other tables that share them)"
        )
    r = retention(metadata, older_than_ms=older_than_ms, retain_last=retain_last, now_ms=now_ms)
    ref_fates: list[RefFate] = []
    kept_refs: dict[str, Ref] = {}
    for name, ref in metadata.refs.items():
        limit = _ref_age_limit(ref, r)
        snap = metadata.find_snapshot(ref.snapshot_id)
        age = None if snap is None else r.now_ms - snap.timestamp_ms
        if name == MAIN_BRANCH:
            removed, reason = False, "main is never removed"
        elif snap is None:
            removed, reason = True, "its snapshot no longer exists"
        elif age is not None and age <= limit:
            removed, reason = False, "younger than its max ref age"
        else:
            removed, reason = True, "older than its max ref age"
        if not removed:
            kept_refs[name] = ref
        ref_fates.append(
            RefFate(
                name=name,
                type=ref.type,
                snapshot_id=ref.snapshot_id,
                age_ms=age,
                max_ref_age_ms=limit,
                removed=removed,
                reason=reason,
            )
        )
    explicit = set(snapshot_ids)
    for name, ref in kept_refs.items():
        if ref.snapshot_id in explicit:
            raise OptionError(f"cannot expire {ref.snapshot_id}: still referenced by ref {name!r}")

    why: dict[int, tuple[str, str]] = {}
    for name, ref in kept_refs.items():
        why.setdefault(ref.snapshot_id, (f"head of {ref.type} {name!r}", _ref_rule(name, ref, r)))
    referenced: set[int] = set()
    for name, ref in kept_refs.items():
        if isinstance(ref, Branch):
            chain = ancestor_ids(metadata, ref.snapshot_id)
            referenced.update(chain)
            cutoff = (
                r.now_ms - ref.max_snapshot_age_ms if ref.max_snapshot_age_ms is not None else r.expire_older_than_ms
            )
            keep = ref.min_snapshots_to_keep if ref.min_snapshots_to_keep is not None else r.min_snapshots_to_keep
            keep_rule = (
                f"branch {name!r} min-snapshots-to-keep={keep}"
                if ref.min_snapshots_to_keep is not None
                else f"{r.sources['min_snapshots_to_keep']}: {keep}"
            )
            age_rule = (
                f"branch {name!r} max-snapshot-age-ms={ref.max_snapshot_age_ms}"
                if ref.max_snapshot_age_ms is not None
                else _cutoff_rule(r)
            )
            kept: list[int] = []
            for sid in chain:
                if len(kept) < keep:
                    kept.append(sid)
                    why.setdefault(sid, (f"one of the newest {keep} of branch {name!r}", keep_rule))
                elif metadata.snapshot_by_id(sid).timestamp_ms >= cutoff:
                    kept.append(sid)
                    why.setdefault(sid, (f"on branch {name!r}, committed after its cutoff", age_rule))
                else:
                    break
        else:
            referenced.add(ref.snapshot_id)
    for s in metadata.snapshots:
        if s.snapshot_id not in referenced and s.timestamp_ms >= r.expire_older_than_ms:
            why.setdefault(s.snapshot_id, ("on no ref, but committed after the cutoff", _cutoff_rule(r)))

    fates = []
    for s in sorted(metadata.snapshots, key=commit_order):
        keep_reason = why.get(s.snapshot_id)
        rule = ""
        if s.snapshot_id in explicit:
            expires, reason = True, "named in snapshot_ids"
        elif keep_reason is not None:
            expires, (reason, rule) = False, keep_reason
        else:
            expires = True
            reason = "on no kept ref" if s.snapshot_id not in referenced else "older than its branch's retention"
        fates.append(
            SnapshotFate(
                snapshot_id=s.snapshot_id,
                timestamp_ms=s.timestamp_ms,
                operation=s.operation,
                expires=expires,
                reason=reason,
                rule=rule,
            )
        )
    return r, tuple(fates), tuple(ref_fates)


def _cutoff_rule(r: Retention) -> str:
    return f"{r.sources['older_than']}: committed at or after {utc_text(r.expire_older_than_ms)}"


def _ref_rule(name: str, ref: Ref, r: Retention) -> str:
    """Why a ref outlives expiry: main always does; another while younger than its max ref age."""
    if name == MAIN_BRANCH:
        return "main is never removed"
    if ref.max_ref_age_ms is not None:
        return f"{ref.type} {name!r} max-ref-age-ms={ref.max_ref_age_ms}"
    limit = properties.MAX_REF_AGE_MS
    shown = "forever" if r.max_ref_age_ms == properties.LONG_MAX else str(r.max_ref_age_ms)
    return f"{limit.name}={shown}"


__all__ = ["GcDisabled", "RefFate", "Retention", "SnapshotFate", "clock_ms", "expiry_fates", "gc_enabled", "retention"]
