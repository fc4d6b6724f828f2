"""What ``expire_snapshots`` would do, computed from the metadata alone.

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

Which files go: every file an expired snapshot reaches (manifest list, manifests, live data and
delete files, statistics files) that no kept snapshot reaches (see ``reachable``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis._frames import frame
from icebook.analysis.ancestry import ancestor_ids
from icebook.analysis.store.manifests import ManifestStore
from icebook.analysis.store.reachable import (
    TableFile,
    reach_tables,
    snapshots_by_id,
    unique_manifests,
)
from icebook.analysis.store.table_like import TableLike
from icebook.errors import IcebookError, OptionError
from icebook.spec import properties
from icebook.spec.manifest import FileKind, ManifestFile
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


def retention(
    metadata: TableMetadata, *, older_than_ms: int | None, retain_last: int | None, now_ms: int | None
) -> Retention:
    now = int(time.time() * 1000) if now_ms is None else int(now_ms)
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


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpirePreview:
    """What ``expire_snapshots`` with these settings would expire and delete."""

    retention: Retention
    snapshots: tuple[SnapshotFate, ...]
    refs: tuple[RefFate, ...]
    files: tuple[TableFile, ...]
    """Every file the run would delete: no kept snapshot reaches it any more."""
    source: tuple[TableMetadata, ManifestStore] | None = field(default=None, repr=False, compare=False)
    """The table previewed, for ``kept_files``."""

    def kept_files(self) -> pd.DataFrame:
        """Every file a snapshot reaches that this run keeps, and why: ``file_path``, ``kind``,
        ``kept_by`` (the kept snapshots reaching it and the rule keeping each) and ``removed_by`` (the
        ``expire_snapshots`` call that would delete it, or what must happen first)."""
        from icebook.analysis.maintenance.why_kept import kept_files

        if self.source is None:
            raise IcebookError("this expiry preview was made without its table: open the table, then expire_preview")
        return kept_files(*self.source, self)

    @property
    def expired_snapshot_ids(self) -> tuple[int, ...]:
        return tuple(s.snapshot_id for s in self.snapshots if s.expires)

    @property
    def kept_snapshot_ids(self) -> tuple[int, ...]:
        return tuple(s.snapshot_id for s in self.snapshots if not s.expires)

    @property
    def removed_refs(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.refs if r.removed)

    def counts(self) -> dict[str, int]:
        """Files to delete per kind, as the procedure reports them."""
        out = {
            k.value: 0
            for k in (
                FileKind.DATA,
                FileKind.POSITION_DELETES,
                FileKind.EQUALITY_DELETES,
                FileKind.MANIFEST,
                FileKind.MANIFEST_LIST,
                FileKind.STATISTICS,
            )
        }
        for f in self.files:
            out[f.kind.value] = out.get(f.kind.value, 0) + 1
        return out

    @property
    def bytes(self) -> int:
        """Bytes of the files whose size the metadata records (manifest lists are not counted)."""
        return sum(f.size_in_bytes or 0 for f in self.files)

    def procedure_args(self) -> dict[str, Any]:
        """The ``expire_snapshots`` arguments that reproduce this preview."""
        args: dict[str, Any] = {"older_than": self.retention.expire_older_than_ms}
        if self.retention.sources.get("min_snapshots_to_keep") == "retain_last argument":
            args["retain_last"] = self.retention.min_snapshots_to_keep
        return args

    def to_pandas(self) -> pd.DataFrame:
        """One row per file to delete: path, kind, size."""
        return frame(
            ({"file_path": f.path, "kind": f.kind.value, "file_size_in_bytes": f.size_in_bytes} for f in self.files),
            ["file_path", "kind", "file_size_in_bytes"],
            ints=["file_size_in_bytes"],
        )

    def snapshots_frame(self) -> pd.DataFrame:
        return frame(
            (
                {
                    "snapshot_id": s.snapshot_id,
                    "committed_at": pd.Timestamp(s.timestamp_ms, unit="ms", tz="UTC"),
                    "operation": s.operation,
                    "expires": s.expires,
                    "reason": s.reason,
                }
                for s in self.snapshots
            ),
            ["snapshot_id", "committed_at", "operation", "expires", "reason"],
            ints=["snapshot_id"],
        )

    def summary(self) -> str:
        expired = len(self.expired_snapshot_ids)
        counts = ", ".join(f"{n} {k}{'s' if n != 1 else ''}" for k, n in self.counts().items() if n)
        refs = f"; refs removed: {', '.join(self.removed_refs)}" if self.removed_refs else ""
        return (
            f"expire_snapshots would expire {expired} of {len(self.snapshots)} snapshots{refs} and delete "
            f"{len(self.files)} files ({counts or 'none'}; {self.bytes} bytes recorded)"
        )

    def __repr__(self) -> str:
        return f"<ExpirePreview: {self.summary()}>"


def _ref_age_limit(ref: Ref, r: Retention) -> int:
    return ref.max_ref_age_ms if ref.max_ref_age_ms is not None else r.max_ref_age_ms


def expire_preview(
    table: TableLike,
    *,
    older_than_ms: int | None = None,
    retain_last: int | None = None,
    snapshot_ids: Collection[int] = (),
    now_ms: int | None = None,
    progress: bool = True,
) -> ExpirePreview:
    """The snapshots and files ``expire_snapshots(older_than, retain_last, snapshot_ids)`` would remove."""
    metadata, store = table.metadata, table.store
    r, fates, ref_fates = expiry_fates(
        metadata, older_than_ms=older_than_ms, retain_last=retain_last, snapshot_ids=snapshot_ids, now_ms=now_ms
    )
    # The store keeps what the preview read: running the procedure next diffs the table before and after,
    # and the files it deletes can no longer be read.
    return PendingExpiry(r, fates, ref_fates, metadata, store, progress=progress, keep=True).preview()


class PendingExpiry:
    """An expiry preview whose freed files are being found: the files expired snapshots reach, read
    first (except the entries of manifests a kept snapshot also lists: everything live in those stays),
    then marked off by what kept snapshots reach, manifest by manifest, column-wise. ``visit`` takes a
    manifest's live files (``live_files``) read by someone else (the health report's pass), so that it
    is not read again. ``keep``: the store keeps the entries read."""

    def __init__(
        self,
        r: Retention,
        fates: tuple[SnapshotFate, ...],
        ref_fates: tuple[RefFate, ...],
        metadata: TableMetadata,
        store: ManifestStore,
        *,
        progress: bool,
        keep: bool = False,
    ) -> None:
        self.retention, self.fates, self.ref_fates = r, fates, ref_fates
        self._metadata, self._store, self._progress, self._keep = metadata, store, progress, keep
        expired = [f.snapshot_id for f in fates if f.expires]
        self._kept = [f.snapshot_id for f in fates if not f.expires]
        self._lock = threading.Lock()
        self._seen: set[str] = set()
        self._kept_manifests: frozenset[str] = frozenset()
        self._candidates: pa.Table | None = None
        if expired:
            kept_snapshots = snapshots_by_id(metadata, self._kept)
            self._kept_manifests = frozenset(m.manifest_path for m in unique_manifests(store, kept_snapshots))
            tables = reach_tables(
                metadata, store, expired, skip_entries=self._kept_manifests, progress=progress, keep=keep
            )
            self._candidates = _first_of_each(pa.concat_tables(t for _, t in tables))
            self._keys = _file_keys(self._candidates)
            self._found = np.zeros(self._candidates.num_rows, dtype=bool)

    def visit(self, manifest: ManifestFile, live: pa.Table) -> None:
        """Mark off what a kept snapshot's manifest keeps alive, from its live files."""
        if self._candidates is None or manifest.manifest_path not in self._kept_manifests:
            return
        with self._lock:
            if manifest.manifest_path in self._seen:
                return
            self._seen.add(manifest.manifest_path)
        self._mark(live)

    def _mark(self, reached: pa.Table) -> None:
        found = np.asarray(pc.is_in(self._keys, value_set=_file_keys(reached)).to_numpy(zero_copy_only=False))
        with self._lock:
            self._found |= found.astype(bool)

    def preview(self, also: Callable[[ManifestFile, pa.Table], None] | None = None) -> ExpirePreview:
        """The preview, once the kept snapshots' manifests not yet visited are read; ``also`` sees each
        of those manifests' live files."""
        files: list[TableFile] = []
        if self._candidates is not None:
            with self._lock:
                seen = set(self._seen)
            for manifest, reached in reach_tables(
                self._metadata, self._store, self._kept, skip_entries=seen, progress=self._progress, keep=self._keep
            ):
                self._mark(reached)
                if manifest is not None and also is not None:
                    also(manifest, reached)
            left = self._candidates.filter(pa.array(~self._found))
            order = list(FileKind)
            files = sorted(
                (
                    TableFile(path=path, kind=FileKind(kind), size_in_bytes=size)
                    for path, kind, size in zip(
                        *(left.column(c).to_pylist() for c in ("path", "kind", "size")), strict=True
                    )
                ),
                key=lambda f: (order.index(f.kind), f.path),
            )
        return ExpirePreview(
            retention=self.retention,
            snapshots=self.fates,
            refs=self.ref_fates,
            files=tuple(files),
            source=(self._metadata, self._store),
        )


def start_expiry(
    metadata: TableMetadata, store: ManifestStore, *, now_ms: int | None = None, progress: bool = False
) -> PendingExpiry:
    """``expire_preview`` with the table's own settings, its freed files still to be found (``visit``,
    then ``preview``)."""
    r, fates, ref_fates = expiry_fates(metadata, older_than_ms=None, retain_last=None, now_ms=now_ms)
    return PendingExpiry(r, fates, ref_fates, metadata, store, progress=progress)


def _file_keys(reached: pa.Table) -> pa.Array:
    """One string per (kind, path): the reference implementation keys reached files by both."""
    return pc.binary_join_element_wise(reached.column("kind"), reached.column("path"), "\n").combine_chunks()


def _first_of_each(reached: pa.Table) -> pa.Table:
    """The rows of the first reach of each (kind, path), in reach order."""
    if not reached.num_rows:
        return reached
    codes = pc.dictionary_encode(_file_keys(reached)).indices
    _, first = np.unique(np.asarray(codes.to_numpy(zero_copy_only=False)), return_index=True)
    return reached.take(pa.array(np.sort(first)))


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
    known = {s.snapshot_id: s for s in metadata.snapshots}
    ref_fates: list[RefFate] = []
    kept_refs: dict[str, Ref] = {}
    for name, ref in metadata.refs.items():
        limit = _ref_age_limit(ref, r)
        snap = known.get(ref.snapshot_id)
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
                elif known[sid].timestamp_ms >= cutoff:
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


__all__ = [
    "ExpirePreview",
    "GcDisabled",
    "PendingExpiry",
    "RefFate",
    "Retention",
    "SnapshotFate",
    "expire_preview",
    "expiry_fates",
    "retention",
    "start_expiry",
]
