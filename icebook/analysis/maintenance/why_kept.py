"""Why a file of a table is still there, and the call that would delete it.

A file a snapshot reaches (manifest list, manifest, live data or delete file, statistics file: what
``reachable`` counts) stays while any snapshot reaching it survives ``expire_snapshots``. Its keepers
are those snapshots, each with the rule that keeps it (``expire.expiry_fates``, the one retention rule).
The call that deletes it is the gentlest ``expire_snapshots(older_than, retain_last)`` under which every
keeper expires: ``older_than`` just after the newest keeper (an earlier cutoff keeps it), and
``retain_last`` lowered only as far as needed (expiry only grows as either tightens). When no arguments
can, what keeps it is a ref: another branch or tag must be dropped first, or main must stop listing the
file (a commit that deletes, overwrites or compacts it).

A file no snapshot reaches is either a metadata file (the current one, one of its log, the version
hint: commits and ``write.metadata.*`` remove those) or an orphan, found as ``remove_orphan_files`` finds
it (``orphans.find_orphans``): that procedure deletes it with ``older_than`` past its modification time.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis._frames import frame, utc_timestamp
from icebook.analysis.ancestry import ancestor_ids
from icebook.analysis.maintenance.expiry_rules import SnapshotFate, clock_ms, expiry_fates, gc_enabled
from icebook.analysis.maintenance.orphans import VERSION_HINT, find_orphans, path_keys
from icebook.analysis.store.manifests import ManifestStore
from icebook.analysis.store.reachable import reach_tables
from icebook.errors import NotFound
from icebook.spec import properties
from icebook.spec.manifest import FileKind
from icebook.spec.metadata import MAIN_BRANCH, TableMetadata
from icebook.spec.snapshots import Branch, PartitionStatisticsFile, StatisticsFile
from icebook.text import DAY_MS, spark_call, spark_string, spark_timestamp, utc_text

if TYPE_CHECKING:
    from icebook.analysis.maintenance.expire import ExpirePreview
    from icebook.analysis.store.table_like import TableLike

KEEPER_COLUMNS = ["snapshot_id", "refs", "committed_at", "retained_by"]
KEPT_COLUMNS = ["file_path", "kind", "kept_by", "removed_by", "removal"]
"""``removal``: the ``Removal`` itself (``removed_by`` is its text)."""
ORPHAN_MIN_AGE_MS = DAY_MS
"""Spark's ``remove_orphan_files`` refuses an ``older_than`` less than a day ago."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Removal:
    """The call that would delete a file, or what must happen before one can."""

    procedure: str | None
    """``expire_snapshots`` or ``remove_orphan_files``; None when no call can (``first`` says why)."""
    args: Mapping[str, Any] = field(default_factory=dict)
    """The procedure's arguments: ``older_than`` (ms since the epoch), ``retain_last``, ``location``."""
    first: tuple[str, ...] = ()
    """What must happen before the call (drop a ref, a commit, wait), in order."""
    drop_refs: tuple[str, ...] = ()
    """The refs ``first`` drops, by name."""

    def call(self, identifier: str | None = None) -> str:
        """The Spark SQL ``CALL`` (``identifier``: catalog.db.table; else a placeholder), or ''."""
        if self.procedure is None:
            return ""
        shown = []
        for name, value in self.args.items():
            shown.append((name, spark_timestamp(value) if name == "older_than" else spark_string(str(value))))
            if name == "retain_last":
                shown[-1] = (name, str(int(value)))
        return spark_call(identifier or "catalog.db.table", self.procedure, shown)

    def text(self) -> str:
        steps = [*self.first]
        if self.procedure is not None:
            shown = ", ".join(f"{k}={utc_text(v)}" if k == "older_than" else f"{k}={v}" for k, v in self.args.items())
            steps.append(f"{self.procedure}({shown})")
        return "; then ".join(steps) if steps else "nothing can delete it"

    def __str__(self) -> str:
        return self.text()


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class WhyKept:
    """What keeps one file of a table, and what would delete it."""

    path: str
    kind: str
    status: str
    """One line: who references it (or that nothing does)."""
    keepers: pd.DataFrame
    """``snapshot_id``, ``refs``, ``committed_at``, ``retained_by``: the snapshots reaching the file."""
    removed_by: Removal
    deleted_now: bool | None = None
    """``expire_snapshots`` with the arguments asked (default: the table's retention) deletes it; None for a
    file no snapshot reaches (expiry never deletes it)."""

    def verdict(self) -> str:
        if self.deleted_now is None:
            return ""
        return "expire_snapshots with these settings deletes it" if self.deleted_now else "expire_snapshots keeps it"

    def to_pandas(self) -> pd.DataFrame:
        return self.keepers

    def summary(self) -> str:
        verdict = f"; {self.verdict()}" if self.verdict() else ""
        return f"{self.kind} {self.path}: {self.status}{verdict}. Removed by: {self.removed_by.text()}"

    def __repr__(self) -> str:
        return f"<WhyKept {self.summary()}>"


@dataclass(frozen=True, slots=True)
class _Reached:
    path: str
    kind: str
    snapshots: frozenset[int]


def _key(path: str) -> str:
    return path_keys(pa.array([path], pa.string()))[2][0].as_py()


def reached_by(metadata: TableMetadata, store: ManifestStore, only: str | None = None) -> dict[str, _Reached]:
    """Every file snapshots reach (keyed by path without scheme), with the snapshots reaching it; ``only``:
    just that path key."""
    manifest_snapshots: dict[str, set[int]] = defaultdict(set)
    found: dict[str, tuple[str, str, set[int]]] = {}

    def add(path: str, kind: str, sids: Iterable[int]) -> None:
        key = _key(path)
        if only is not None and key != only:
            return
        entry = found.setdefault(key, (path, kind, set()))
        entry[2].update(sids)

    for s in metadata.snapshots:
        if s.manifest_list is None:
            continue
        add(s.manifest_list, FileKind.MANIFEST_LIST, (s.snapshot_id,))
        for m in store.manifest_list(s):
            manifest_snapshots[m.manifest_path].add(s.snapshot_id)
    for path, sids in manifest_snapshots.items():
        add(path, FileKind.MANIFEST, sids)
    registered: list[StatisticsFile | PartitionStatisticsFile] = [*metadata.statistics, *metadata.partition_statistics]
    valid = {s.snapshot_id for s in metadata.snapshots}
    for f in registered:  # a statistics file of a snapshot the table no longer has is reached by none
        add(f.statistics_path, FileKind.STATISTICS, (f.snapshot_id,) if f.snapshot_id in valid else ())
    for manifest, live in reach_tables(metadata, store, None):
        if manifest is None or not live.num_rows:
            continue
        keys = path_keys(live.column("path").combine_chunks())[2]
        rows = pc.indices_nonzero(pc.equal(keys, only)).to_pylist() if only is not None else range(live.num_rows)
        paths, kinds = live.column("path"), live.column("kind")
        sids = manifest_snapshots[manifest.manifest_path]
        for i in rows:
            key = keys[i].as_py()
            entry = found.setdefault(key, (paths[i].as_py(), kinds[i].as_py(), set()))
            entry[2].update(sids)
    return {k: _Reached(path=p, kind=kind, snapshots=frozenset(s)) for k, (p, kind, s) in found.items()}


def _expired(metadata: TableMetadata, older_than_ms: int, retain_last: int | None, now_ms: int) -> set[int]:
    _, fates, _ = expiry_fates(metadata, older_than_ms=older_than_ms, retain_last=retain_last, now_ms=now_ms)
    return {f.snapshot_id for f in fates if f.expires}


def _after_newest(metadata: TableMetadata, keepers: frozenset[int]) -> int:
    """The earliest ``older_than`` under which every keeper is old enough to expire: just after the newest."""
    return max(metadata.snapshot_by_id(sid).timestamp_ms for sid in keepers) + 1


def _gentlest(metadata: TableMetadata, keepers: frozenset[int], now_ms: int) -> dict[str, int] | None:
    """The mildest ``expire_snapshots`` arguments under which every keeper expires, or None."""
    cutoff = _after_newest(metadata, keepers)
    if keepers <= _expired(metadata, cutoff, None, now_ms):
        return {"older_than": cutoff}
    if not keepers <= _expired(metadata, cutoff, 1, now_ms):
        return None
    low, high = 1, properties.MIN_SNAPSHOTS_TO_KEEP.read(metadata.properties) - 1  # low works; find the largest
    while low < high:
        middle = (low + high + 1) // 2
        if keepers <= _expired(metadata, cutoff, middle, now_ms):
            low = middle
        else:
            high = middle - 1
    return {"older_than": cutoff, "retain_last": low}


def _refs_reaching(metadata: TableMetadata, sid: int) -> list[tuple[str, str, bool]]:
    """(name, type, is head) of each ref whose history holds snapshot ``sid`` (a tag: its own snapshot)."""
    out = []
    for name, ref in sorted(metadata.refs.items(), key=lambda item: (item[0] != MAIN_BRANCH, item[0])):
        if ref.snapshot_id == sid:
            out.append((name, ref.type, True))
        elif isinstance(ref, Branch) and sid in ancestor_ids(metadata, ref.snapshot_id):
            out.append((name, ref.type, False))
    return out


def removal(metadata: TableMetadata, keepers: frozenset[int], now_ms: int) -> Removal:
    """What deletes a file reached by exactly ``keepers``: the gentlest expiry, or what must happen first."""
    if not gc_enabled(metadata):
        return Removal(
            procedure=None, first=(f"set {properties.GC_ENABLED.name}=true (no procedure deletes files before)",)
        )
    args = _gentlest(metadata, keepers, now_ms)
    if args is not None:
        return Removal(procedure="expire_snapshots", args=args)
    # Refs keep it: drop every other ref expiry keeps whose history holds a keeper it keeps; main can only move on.
    cutoff = _after_newest(metadata, keepers)
    _, fates, ref_fates = expiry_fates(metadata, older_than_ms=cutoff, retain_last=1, now_ms=now_ms)
    staying = {f.snapshot_id for f in fates if not f.expires} & keepers
    kept_refs = {r.name for r in ref_fates if not r.removed}
    blocking = sorted(
        {
            (name, kind)
            for sid in staying
            for name, kind, _ in _refs_reaching(metadata, sid)
            if name != MAIN_BRANCH and name in kept_refs
        }
    )
    first = [f"drop {kind} {name!r}" for name, kind in blocking]
    dropped = {name for name, _ in blocking}
    without = dataclasses.replace(metadata, refs={k: v for k, v in metadata.refs.items() if k not in dropped})
    args = _gentlest(without, keepers, now_ms) if dropped else None
    if args is None:
        main = metadata.refs.get(MAIN_BRANCH)
        if main is not None and main.snapshot_id in keepers:
            first.append(
                "a commit on main after which its current snapshot no longer reaches it "
                "(for a live data or delete file: a DELETE, overwrite or compaction)"
            )
        else:
            first.append("newer commits on main, past main's own retention (min-snapshots-to-keep, max-snapshot-age)")
        return Removal(procedure=None, first=tuple(first), drop_refs=tuple(sorted(dropped)))
    return Removal(procedure="expire_snapshots", args=args, first=tuple(first), drop_refs=tuple(sorted(dropped)))


def _refs_text(metadata: TableMetadata, sid: int) -> str:
    return ", ".join(
        f"{kind} {name}" + (" (head)" if head else "") for name, kind, head in _refs_reaching(metadata, sid)
    )


def _fate_text(fate: SnapshotFate) -> str:
    if fate.expires:
        return f"expires ({fate.reason})"
    return f"{fate.reason} ({fate.rule})" if fate.rule else fate.reason


def keepers_frame(metadata: TableMetadata, sids: Iterable[int], fates: Mapping[int, SnapshotFate]) -> pd.DataFrame:
    committed = {sid: metadata.snapshot_by_id(sid).timestamp_ms for sid in sids}
    rows = (
        {
            "snapshot_id": sid,
            "refs": _refs_text(metadata, sid),
            "committed_at": utc_timestamp(committed[sid]),
            "retained_by": _fate_text(fates[sid]) if sid in fates else "",
        }
        for sid in sorted(committed, key=lambda i: (committed[i], i))
    )
    return frame(rows, KEEPER_COLUMNS, ints=["snapshot_id"])


def why_kept(
    table: TableLike,
    path: str,
    *,
    older_than_ms: int | None = None,
    retain_last: int | None = None,
    now_ms: int | None = None,
) -> WhyKept:
    """What keeps ``path`` (a file of ``table``) and the call that would delete it; ``older_than_ms`` and
    ``retain_last`` are the expiry the keepers are judged by (default: the table's retention)."""
    metadata, store = table.metadata, table.store
    now = clock_ms(now_ms)
    key = _key(path)
    reached = reached_by(metadata, store, only=key).get(key)
    if reached is not None and not reached.snapshots:
        return WhyKept(
            path=reached.path,
            kind=reached.kind,
            status="registered in the table metadata for a snapshot the table no longer has",
            keepers=keepers_frame(metadata, (), {}),
            removed_by=Removal(
                procedure=None, first=("remove its statistics entry from the table (no procedure deletes it)",)
            ),
        )
    if reached is not None:
        fates: dict[int, SnapshotFate] = {}
        deleted_now = False
        if gc_enabled(metadata):
            _, all_fates, _ = expiry_fates(metadata, older_than_ms=older_than_ms, retain_last=retain_last, now_ms=now)
            fates = {f.snapshot_id: f for f in all_fates}
            deleted_now = all(fates[sid].expires for sid in reached.snapshots)
        n = len(reached.snapshots)
        return WhyKept(
            path=reached.path,
            kind=reached.kind,
            status=f"reached by {n} snapshot{'s' if n != 1 else ''}",
            keepers=keepers_frame(metadata, reached.snapshots, fates),
            removed_by=removal(metadata, reached.snapshots, now),
            deleted_now=deleted_now,
        )
    return _unreached(table, path, key, now_ms=now)


def _unreached(table: TableLike, path: str, key: str, *, now_ms: int) -> WhyKept:
    metadata, metadata_location, fileio = table.metadata, table.metadata_location, table.fileio
    empty = keepers_frame(metadata, (), {})
    log = [e.metadata_file for e in metadata.metadata_log]
    versions = properties.PREVIOUS_VERSIONS_MAX.read(metadata.properties)
    deletes = properties.DELETE_AFTER_COMMIT.read(metadata.properties)
    cleanup = (
        f"with {properties.DELETE_AFTER_COMMIT.name}=true the commit deletes it"
        if deletes
        else f"{properties.DELETE_AFTER_COMMIT.name}=false: it is then an orphan for remove_orphan_files"
    )
    logged = [_key(p) for p in log]
    if key == _key(metadata_location) or key in logged:
        # Newest first: the current file is -1, the newest previous 0; the log keeps `versions` of them.
        newest_first = -1 if key not in logged else len(logged) - 1 - logged.index(key)
        commits = max(1, versions - newest_first)
        status = (
            "the table's current metadata file"
            if newest_first < 0
            else f"a previous metadata file, {newest_first + 1} of {len(log)} in the metadata log (newest first)"
        )
        pushed = (
            f"{commits} more commit{'s' if commits != 1 else ''} push it out of the metadata log "
            f"({properties.PREVIOUS_VERSIONS_MAX.name}={versions}); {cleanup}"
        )
        return _unkept(path, FileKind.METADATA, status, empty, first=pushed)
    if key == _key(metadata.location.rstrip("/") + "/metadata/" + VERSION_HINT):
        status = "the version hint names the current metadata file"
        return _unkept(path, FileKind.VERSION_HINT, status, empty, first="dropping the table (no procedure deletes it)")
    orphans = find_orphans(table, now_ms=now_ms, progress=False)
    for orphan in (*orphans.files, *orphans.too_recent):
        if _key(orphan.path) != key:
            continue
        return _orphan(metadata, orphan.path, orphan.modified_ms, now_ms, empty)
    under = key.startswith(_key(metadata.location.rstrip("/")) + "/")
    if under and fileio.exists(path):
        status = "referenced by nothing, under a name starting with _ or . that remove_orphan_files never lists"
        return _unkept(path, "hidden file", status, empty, first="delete it by hand, once sure no writer uses it")
    raise NotFound(f"{path}: no file of table {metadata.location} (not referenced by any snapshot, nor found there)")


def _unkept(path: str, kind: str, status: str, empty: pd.DataFrame, *, first: str) -> WhyKept:
    """A file no snapshot keeps and no procedure deletes; ``first``: what would remove it."""
    return WhyKept(
        path=path, kind=kind, status=status, keepers=empty, removed_by=Removal(procedure=None, first=(first,))
    )


def _orphan(metadata: TableMetadata, path: str, modified_ms: int | None, now_ms: int, empty: pd.DataFrame) -> WhyKept:
    if not gc_enabled(metadata):
        removed = Removal(
            procedure=None, first=(f"set {properties.GC_ENABLED.name}=true (remove_orphan_files refuses before)",)
        )
    elif modified_ms is None:
        removed = Removal(procedure="remove_orphan_files", first=("its modification time is unknown",))
    else:
        older_than = modified_ms + 1
        wait = (
            (f"wait until {utc_text(older_than + ORPHAN_MIN_AGE_MS)} (Spark refuses an older_than under a day ago)",)
            if older_than > now_ms - ORPHAN_MIN_AGE_MS
            else ()
        )
        removed = Removal(procedure="remove_orphan_files", args={"older_than": older_than}, first=wait)
    return WhyKept(
        path=path,
        kind="orphan",
        status=f"referenced by no snapshot nor metadata file: an orphan, modified {utc_text(modified_ms)}",
        keepers=empty,
        removed_by=removed,
    )


def kept_files(metadata: TableMetadata, store: ManifestStore, preview: ExpirePreview) -> pd.DataFrame:
    """``KEPT_COLUMNS`` for every file a snapshot reaches that ``preview`` keeps."""
    gone = {_key(f.path) for f in preview.files}
    fates = {f.snapshot_id: f for f in preview.snapshots}
    now = preview.retention.now_ms
    removals: dict[frozenset[int], Removal] = {}
    rows = []
    for key, reached in sorted(reached_by(metadata, store).items(), key=lambda item: (item[1].kind, item[0])):
        if key in gone or not reached.snapshots:
            continue
        keeping = sorted(
            (sid for sid in reached.snapshots if not fates[sid].expires), key=lambda i: (-fates[i].timestamp_ms, i)
        )
        if reached.snapshots not in removals:
            removals[reached.snapshots] = removal(metadata, reached.snapshots, now)
        newest = keeping[0] if keeping else None
        kept_by = "" if newest is None else f"{len(keeping)} kept snapshot{'s' if len(keeping) != 1 else ''}; "
        kept_by += "" if newest is None else f"newest {newest}: {_fate_text(fates[newest])}"
        rows.append(
            {
                "file_path": reached.path,
                "kind": reached.kind,
                "kept_by": kept_by,
                "removed_by": removals[reached.snapshots].text(),
                "removal": removals[reached.snapshots],
            }
        )
    return frame(rows, KEPT_COLUMNS)


__all__ = ["KEEPER_COLUMNS", "KEPT_COLUMNS", "Removal", "WhyKept", "kept_files", "reached_by", "removal", "why_kept"]
