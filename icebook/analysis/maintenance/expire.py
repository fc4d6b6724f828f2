"""What ``expire_snapshots`` would do, computed from the metadata alone.

Which snapshots and refs expire: ``expiry_rules`` (spec: "Snapshot Retention Policy").

Which files go: every file an expired snapshot reaches (manifest list, manifests, live data and
delete files, statistics files) that no kept snapshot reaches (see ``reachable``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis._frames import attribute_frame, frame, utc_timestamp
from icebook.analysis.maintenance.expiry_rules import (
    GcDisabled,
    RefFate,
    Retention,
    SnapshotFate,
    expiry_fates,
    retention,
)
from icebook.analysis.store.manifests import ManifestStore
from icebook.analysis.store.reachable import (
    TableFile,
    listed_manifests,
    reach_tables,
    snapshots_by_id,
)
from icebook.analysis.store.table_like import TableLike
from icebook.analysis.string_lookup import StringLookup
from icebook.errors import IcebookError
from icebook.spec.manifest import FileKind, ManifestFile
from icebook.spec.metadata import TableMetadata


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
    _kept: dict[str, pd.DataFrame] = field(default_factory=dict, init=False, repr=False, compare=False)
    """``kept_files``' answer once computed (it reads every manifest): the text and the HTML of one preview
    show it, and a second call costs nothing. A cache: no answer changes with it."""

    def kept_files(self) -> pd.DataFrame:
        """Every file a snapshot reaches that this run keeps, and why: ``file_path``, ``kind``,
        ``kept_by`` (the kept snapshots reaching it and the rule keeping each) and ``removed_by`` (the
        ``expire_snapshots`` call that would delete it, or what must happen first)."""
        from icebook.analysis.maintenance.why_kept import kept_files

        if self.source is None:
            raise IcebookError("this expiry preview was made without its table: open the table, then expire_preview")
        if "kept" not in self._kept:
            self._kept["kept"] = kept_files(*self.source, self)
        return self._kept["kept"].copy()

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
        return attribute_frame(
            self.snapshots,
            ["snapshot_id", "committed_at", "operation", "expires", "reason"],
            ints=["snapshot_id"],
            derived={"committed_at": lambda s: utc_timestamp(s.timestamp_ms)},
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
            self._kept_manifests = frozenset(listed_manifests(store, kept_snapshots, keep=keep).paths())
            tables = reach_tables(
                metadata, store, expired, skip_entries=self._kept_manifests, progress=progress, keep=keep
            )
            self._candidates = _first_of_each(pa.concat_tables(t for _, t in tables))
            self._keys = StringLookup(_file_keys(self._candidates))
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
        _, found = self._keys.matches(_file_keys(reached))
        with self._lock:
            self._found[found] = True

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
