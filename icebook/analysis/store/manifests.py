"""Reading a snapshot's manifests once: manifest lists and manifests are immutable, so a table
object caches them by path, and reads many of them in parallel with progress shown.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Collection, Iterator, Sequence
from typing import TYPE_CHECKING, TypeVar

import pyarrow as pa

from icebook.analysis.arrow_types import arrow_type
from icebook.analysis.store.consistency import (
    CHECKED_COLUMNS,
    ManifestCounts,
    check_entry_values,
    check_manifest_counts,
    check_summary_totals,
    manifest_counts,
)
from icebook.errors import MetadataError, UnsupportedFeature
from icebook.io.arrow_columns import single_array
from icebook.io.entry_columns import ENTRY_TABLE_COLUMNS
from icebook.io.fileio import ArrowFileIO, FileIO
from icebook.io.manifest_cache import ManifestCache, decoder_fingerprint, local_mtime_ns, shared_cache
from icebook.spec.manifest import ManifestFile
from icebook.spec.metadata import TableMetadata
from icebook.spec.partitioning import PartitionSpec, partition_type
from icebook.spec.schema import Schema
from icebook.spec.snapshots import Snapshot, snapshot_sequence_number
from icebook.spec.types import NestedField, StructType

if TYPE_CHECKING:
    from concurrent.futures import Future

T = TypeVar("T")
R = TypeVar("R")
_PROGRESS_THRESHOLD = 16  # manifests; below this a bar is noise


class _LRU(OrderedDict[str, T]):
    def __init__(self, capacity: int) -> None:
        super().__init__()
        self.capacity = capacity

    def put(self, key: str, value: T) -> None:
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.capacity:
            self.popitem(last=False)


def _memory_key(manifest: ManifestFile) -> str:
    """A decoded manifest's key in memory: its path, and the first_row_id its files inherit, which (unlike
    the sequence numbers) one manifest can take differently in two lists: null before a v3 upgrade, then
    assigned by the first list written after it (spec: "Row Lineage for Upgraded Tables")."""
    path = manifest.manifest_path
    return path if manifest.first_row_id is None else f"{path}\x00first_row_id={manifest.first_row_id}"


class ManifestStore:
    """Reads (and caches) the manifest lists and manifests of one table."""

    def __init__(
        self,
        fileio: FileIO,
        metadata: TableMetadata,
        *,
        capacity: int = 1024,
        disk_cache: ManifestCache | bool | None = True,
    ) -> None:
        self.fileio = fileio
        self.metadata = metadata
        # By default only for the plain FileIO, which reads a path's own bytes: a FileIO of one's own may
        # serve other bytes under a path (a test double, a rewriting proxy), which a key by path cannot see.
        if disk_cache is True:
            disk_cache = shared_cache() if type(fileio) is ArrowFileIO else None
        self.disk_cache = disk_cache or None
        """Decoded manifests kept across processes (``icebook.io.manifest_cache``); None: off."""
        self._lists: _LRU[tuple[ManifestFile, ...]] = _LRU(capacity)
        self._entries: _LRU[pa.Table] = _LRU(capacity)
        self._lock = threading.Lock()
        self._partition_types: dict[int, tuple[StructType, StructType]] = {}
        self._counts: dict[str, ManifestCounts] = {}  # small, kept for every manifest ever decoded
        self._verified: set[int] = set()
        # A file whose content failed to decode or check fails the same way every time (it is immutable): the
        # error is kept, so each later view raises it at once instead of decoding the file again. Storage errors
        # and a decoder's missed deadline are not kept (they may pass). For manifests, the columns asked for: a
        # wider request fails as well.
        self._failed_lists: dict[str, MetadataError] = {}
        self._failed_entries: dict[str, list[tuple[frozenset[str], MetadataError]]] = {}
        self.reads = 0  # manifests decoded (not served from cache): lets tests prove laziness

    def manifest_list(self, snapshot: Snapshot) -> tuple[ManifestFile, ...]:
        if snapshot.manifest_list is None:
            raise UnsupportedFeature(
                f"snapshot {snapshot.snapshot_id} lists its manifests inline (v1 'manifests' field), "
                "which icebook does not read yet"
            )
        with self._lock:
            cached = self._lists.get(snapshot.manifest_list)
            failed = self._failed_lists.get(snapshot.manifest_list)
        if cached is not None:
            return cached
        if failed is not None:
            raise failed.with_traceback(None)
        from icebook.io.avro import read_manifest_list  # only here: a warm listing imports no decoder

        try:
            manifests = read_manifest_list(
                self.fileio,
                snapshot.manifest_list,
                format_version=self.metadata.format_version,
                snapshot_sequence_number=snapshot_sequence_number(snapshot),
                snapshot_id=snapshot.snapshot_id,
            )
        except MetadataError as exc:
            if not exc.may_pass:
                with self._lock:
                    self._failed_lists[snapshot.manifest_list] = exc
            raise
        with self._lock:
            self._lists.put(snapshot.manifest_list, manifests)
        return manifests

    def held_manifest_list(self, snapshot: Snapshot) -> tuple[ManifestFile, ...] | None:
        """The snapshot's manifests when this store holds its list already (nothing is read), else None."""
        if snapshot.manifest_list is None:
            return None
        with self._lock:
            return self._lists.get(snapshot.manifest_list)

    def entries(self, manifest: ManifestFile, columns: Collection[str] | None = None, *, keep: bool = True) -> pa.Table:
        """The entries of one manifest, inheritance applied: every column, or at least ``columns``
        (a table holding more may be returned). Asking for fewer columns sends fewer back from the
        decoder; the checks cover the columns left out all the same (``check_entry_values``).
        ``keep=False``: not kept in memory afterwards (a streamed listing holds a few manifests at a time)."""
        wanted = frozenset(ENTRY_TABLE_COLUMNS if columns is None else (*columns, *CHECKED_COLUMNS))
        memory_key = _memory_key(manifest)
        with self._lock:
            cached = self._entries.get(memory_key)
        if cached is not None and wanted <= set(cached.column_names):
            return cached
        if cached is not None:  # the cached table grows: what was asked before is asked again
            wanted |= set(cached.column_names)
        with self._lock:
            failed = [e for asked, e in self._failed_entries.get(manifest.manifest_path, ()) if asked <= wanted]
        if failed:
            raise failed[0].with_traceback(None)
        try:
            table = self._decode(manifest, None if wanted >= set(ENTRY_TABLE_COLUMNS) else wanted)
            # Checked on every load, from the disk cache or not: they compare the file with the manifest list
            # and the table metadata, which the cached decode knows nothing of.
            counts = manifest_counts(table)
            check_manifest_counts(manifest, counts)
            check_entry_values(manifest, table, last_column_id=self.metadata.last_column_id)
        except MetadataError as exc:
            if not exc.may_pass:
                with self._lock:
                    self._failed_entries.setdefault(manifest.manifest_path, []).append((wanted, exc))
            raise
        with self._lock:
            self.reads += 1
            if keep:
                self._entries.put(memory_key, table)
            self._counts[manifest.manifest_path] = counts
        return table

    def _decode(self, manifest: ManifestFile, columns: Collection[str] | None) -> pa.Table:
        """The decoder's output for ``manifest`` (every column, or at least ``columns``): the whole decode
        from the disk cache when it holds it, else decoded. Only whole decodes are stored there (a listing's,
        not a plan's), so a hit skips no check and serves any request."""
        cache = self.disk_cache
        if cache is None or not cache.enabled:
            return self._read(manifest, columns)
        key = _disk_key(manifest)
        table = cache.get(key)
        if table is None:
            table = self._read(manifest, columns)
            if columns is None:
                cache.put(key, table)
        return table

    def prestart_decoders(self, manifests: Sequence[ManifestFile]) -> None:
        """Start, in the background, as many decoder workers as ``manifests`` can keep busy (those in neither
        the memory nor the disk cache: the rest need none), so that their imports overlap the caller's work
        before the first decode instead of the pool growing one start at a time."""
        with self._lock:
            missing = [m for m in manifests if _memory_key(m) not in self._entries]
        cache = self.disk_cache
        if cache is not None and cache.enabled:
            missing = [m for m in missing if not cache.holds(_disk_key(m))]
        if missing:
            from icebook.io.worker_pool import POOL

            POOL.prestart(len(missing))

    def _read(self, manifest: ManifestFile, columns: Collection[str] | None) -> pa.Table:
        from icebook.io.avro import read_manifest_entries

        return read_manifest_entries(self.fileio, manifest, columns=None if columns is None else sorted(columns))

    def snapshot_table(
        self, kind: str, snapshot: Snapshot, build: Callable[[tuple[ManifestFile, ...]], pa.Table]
    ) -> pa.Table:
        """``build(manifests)`` for a table computed from every manifest of ``snapshot`` (its file listing),
        kept in the disk cache across processes (``cached_snapshot_table``). ``build`` runs every check of a
        cold read, and only a table that passed them is stored, so a hit repeats no check's work and skips none.
        """
        cached = self.cached_snapshot_table(kind, snapshot)
        if cached is not None:
            return cached
        manifests = self.manifest_list(snapshot)
        table = build(manifests)
        key = self._snapshot_key(kind, snapshot)
        if key is not None and self.disk_cache is not None:
            self.disk_cache.put(key, _with_manifests(table, manifests))
        return table

    def cached_snapshot_table(self, kind: str, snapshot: Snapshot) -> pa.Table | None:
        """What ``snapshot_table(kind, snapshot, ...)`` stored, when the disk cache holds it and the files
        it was computed from are unchanged; else None. Neither the manifest list nor a manifest is decoded.

        The key holds everything the result is computed from but the manifests: the manifest list (path and,
        locally, modification time: it is immutable, and so is the list of manifests it names), the
        snapshot's summary (whose totals the build checks), the table metadata that shapes the columns
        (schemas, partition specs, last column id), and the code of the ``io``, ``spec`` and ``analysis``
        packages. The manifests' paths and local modification times are stored in the entry and compared
        with the files' before the entry is served: a manifest rewritten in place is a miss.
        """
        key = self._snapshot_key(kind, snapshot)
        if key is None or self.disk_cache is None:
            return None
        table = self.disk_cache.get(key)
        return None if table is None else _unless_manifests_changed(table)

    def _snapshot_key(self, kind: str, snapshot: Snapshot) -> str | None:
        cache = self.disk_cache
        if cache is None or not cache.enabled or snapshot.manifest_list is None:
            return None
        metadata = self.metadata
        return ManifestCache.key(
            snapshot.manifest_list,
            None,  # a manifest list's length is recorded nowhere; its modification time stands in locally
            kind,
            snapshot.snapshot_id,
            sorted(snapshot.summary.items()) if snapshot.summary else None,
            metadata.format_version,
            metadata.last_column_id,
            metadata.current_schema_id,
            sorted(metadata.schemas.items()),
            sorted(metadata.partition_specs.items()),
            decoder_fingerprint(("io", "spec", "analysis")),
            mtime_ns=local_mtime_ns(snapshot.manifest_list),
        )

    def verify_snapshot(self, snapshot: Snapshot) -> None:
        """Check the snapshot summary's totals once all of the snapshot's manifests have been read.

        Called after reading a whole snapshot (files, entries, an unfiltered scan); when some of
        its manifests were skipped (pruned by a filter) there is nothing whole to compare yet.
        """
        manifests = self.manifest_list(snapshot)
        with self._lock:
            if snapshot.snapshot_id in self._verified:
                return
            counts = [self._counts.get(m.manifest_path) for m in manifests]
        if any(c is None for c in counts):
            return
        check_summary_totals(snapshot, [c for c in counts if c is not None])
        with self._lock:
            self._verified.add(snapshot.snapshot_id)

    def partition_types(self, spec_id: int) -> tuple[StructType, StructType]:
        """(the spec's own partition type, the table-wide one), computed once per store: they are
        needed for every manifest read, and the metadata they come from never changes here."""
        with self._lock:
            cached = self._partition_types.get(spec_id)
        if cached is None:
            cached = (spec_partition_type(self.metadata, spec_id), table_partition_type(self.metadata))
            with self._lock:
                self._partition_types[spec_id] = cached
        return cached

    def many_entries(self, manifests: Sequence[ManifestFile], *, progress: bool = True) -> list[pa.Table]:
        """Entries of several manifests, read in parallel (the decoders release the GIL)."""
        return parallel_map(self.entries, manifests, progress=progress, label="manifests")


_MANIFESTS_KEY = b"icebook.cache.manifests"


def _disk_key(manifest: ManifestFile) -> str:
    """A decoded manifest's key in the disk cache (``ManifestCache.key``)."""
    return ManifestCache.key(
        manifest.manifest_path,
        manifest.manifest_length,
        # what the decoder takes from the manifest list (inheritance) and how it decodes
        manifest.added_snapshot_id,
        manifest.sequence_number,
        manifest.min_sequence_number,
        manifest.partition_spec_id,
        manifest.content,
        manifest.first_row_id,
        decoder_fingerprint(),
        mtime_ns=local_mtime_ns(manifest.manifest_path),
    )


def _with_manifests(table: pa.Table, manifests: Sequence[ManifestFile]) -> pa.Table:
    """``table`` carrying, in its schema's metadata, each manifest's path and local modification time."""
    files = [[m.manifest_path, local_mtime_ns(m.manifest_path)] for m in manifests]
    return table.replace_schema_metadata({**(table.schema.metadata or {}), _MANIFESTS_KEY: json.dumps(files)})


def _unless_manifests_changed(table: pa.Table) -> pa.Table | None:
    """The table stored by ``_with_manifests``, as it was built (without the manifests' record), when every
    manifest still has its recorded modification time; else None."""
    stored = dict(table.schema.metadata or {})
    recorded = stored.pop(_MANIFESTS_KEY, None)
    if recorded is None:
        return None
    try:
        if any(local_mtime_ns(path) != mtime_ns for path, mtime_ns in json.loads(recorded)):
            return None
    except (ValueError, TypeError):
        return None
    return table.replace_schema_metadata(stored or None)


def parallel_map(
    fn: Callable[[ManifestFile], T], items: Sequence[ManifestFile], *, progress: bool, label: str
) -> list[T]:
    # Imported when manifests are read: a warm listing, served from the disk cache, does without (and logging)
    from concurrent.futures import ThreadPoolExecutor

    if len(items) <= 1:
        return [fn(item) for item in items]
    bar = None
    if progress and len(items) >= _PROGRESS_THRESHOLD:
        from icebook.io.progress import progress_bar

        bar = progress_bar(len(items), unit=label[:-1], desc=f"reading {label}", leave=False)
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            results = []
            for result in pool.map(fn, items):
                results.append(result)
                if bar is not None:
                    bar.update(1)
            return results
    finally:
        if bar is not None:
            bar.close()


def read_ahead(fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
    """``fn`` over ``items`` (manifests) in order, two per decoder worker in flight: each worker has the next
    manifest waiting while the reader's consumer works, and memory holds only that many manifests."""
    from concurrent.futures import ThreadPoolExecutor

    from icebook.io.worker_pool import SETTINGS

    depth = 2 * max(1, SETTINGS.workers)
    pending: deque[Future[R]] = deque()
    remaining = iter(items)
    with ThreadPoolExecutor(max_workers=depth) as pool:
        try:
            for item in remaining:
                pending.append(pool.submit(fn, item))
                if len(pending) >= depth:
                    break
            while pending:
                table = pending.popleft().result()
                nxt = next(remaining, None)
                if nxt is not None:
                    pending.append(pool.submit(fn, nxt))
                yield table
        finally:
            for future in pending:  # the consumer stopped early: nothing more is decoded
                future.cancel()


def source_schema_for(metadata: TableMetadata, spec: PartitionSpec) -> Schema:
    """A schema holding every source column of ``spec``: the current one when it does,
    else the newest schema that does (a source column may have been dropped since)."""
    needed = {sid for pf in spec.fields for sid in pf.source_ids if not pf.transform.is_void}
    ordered = [metadata.current_schema(), *sorted(metadata.schemas.values(), key=lambda s: -s.schema_id)]
    for schema in ordered:
        if all(schema.find_field(sid) is not None for sid in needed):
            return schema
    return metadata.current_schema()


def spec_partition_type(metadata: TableMetadata, spec_id: int) -> StructType:
    spec = metadata.spec_by_id(spec_id)
    return partition_type(spec, source_schema_for(metadata, spec))


def table_partition_type(metadata: TableMetadata) -> StructType:
    """The union of every spec's partition fields, by field id (Spark's ``partition`` column type).

    A field id kept across specs appears once, named as in the newest spec that has it.
    """
    by_id: dict[int, NestedField] = {}
    for spec_id in sorted(metadata.partition_specs):
        for f in spec_partition_type(metadata, spec_id).fields:
            by_id[f.field_id] = f
    return StructType(tuple(by_id[i] for i in sorted(by_id)))


def unify_partition(column: pa.ChunkedArray | pa.Array, spec_type: StructType, unified: StructType) -> pa.Array:
    """Re-shape one manifest's partition struct (its own spec) into the table-wide type."""
    arr = single_array(column)
    n = len(arr)
    position = {f.field_id: i for i, f in enumerate(spec_type.fields)}
    children: list[pa.Array] = []
    for f in unified.fields:
        target = arrow_type(f.type)
        if f.field_id in position and arr.type.num_fields > position[f.field_id]:
            child = arr.field(position[f.field_id])
            children.append(child if child.type == target else child.cast(target))
        else:
            children.append(pa.nulls(n, target))
    fields = [pa.field(f.name, arrow_type(f.type)) for f in unified.fields]
    if not fields:
        return pa.array([{}] * n, pa.struct([]))
    return pa.StructArray.from_arrays(children, fields=fields)
