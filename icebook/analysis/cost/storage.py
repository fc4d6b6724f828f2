"""Where a table's bytes are: every file under its location, once, by what keeps it there.

A listed file falls in the first category that claims it:

1. ``data`` / ``deletes``: live in the state read (main's current snapshot by default);
2. ``other refs``: live in the head of another branch or tag, not in that state (named);
3. ``history``: reached only by snapshots no ref points at (older ones), split into what
   ``expire_snapshots`` with the table's retention deletes now (``expire.expire_preview``) and what it
   still retains, with until when (``history.expire.*`` properties);
4. ``metadata``: metadata files (current and logged), the version hint, manifest lists, manifests,
   statistics and partition statistics files (Puffin);
5. ``orphans``: referenced by nothing, found as ``remove_orphan_files`` finds them (``orphans``);
6. ``hidden``: names a listing of ``remove_orphan_files`` skips (``_`` or ``.`` first, as ``.crc`` files).

Paths compare as the orphan search compares them (without scheme and authority); sizes are the
listing's, so the categories sum to the bytes under the location.
"""

from __future__ import annotations

import datetime as _dt
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis._frames import frame
from icebook.analysis.maintenance.expire import expire_preview
from icebook.analysis.maintenance.expiry_rules import gc_enabled
from icebook.analysis.maintenance.orphans import VERSION_HINT, find_orphans, path_keys, walk
from icebook.analysis.scan.columns import FileBuilder, physical
from icebook.analysis.store.table_like import TableLike
from icebook.spec import properties
from icebook.spec.manifest import EntryStatus, FileKind, ManifestFile
from icebook.spec.metadata import MAIN_BRANCH
from icebook.spec.snapshots import PartitionStatisticsFile, Snapshot, StatisticsFile
from icebook.text import byte_size

COLUMNS = ["category", "files", "bytes", "detail"]
PARTITION_COLUMNS = ["partition", "category", "files", "bytes"]
FILE_COLUMNS = ["file_path", "category", "bytes"]
_ENTRY_COLUMNS = ("status", "content", "file_path", "file_size_in_bytes", "partition")


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Storage:
    """The bytes under a table's location by what keeps them."""

    location: str
    snapshot_id: int | None
    categories: pd.DataFrame
    """``category``, ``files``, ``bytes``, ``detail``: every listed file in exactly one row."""
    by_partition: pd.DataFrame
    """Content files (data and deletes, wherever kept) by ``partition`` and ``category``."""
    files: pd.DataFrame
    """Every listed file: ``file_path``, ``category``, ``bytes``."""
    referenced_elsewhere: pd.DataFrame
    """Files the table references that are not under its location (or are missing there): ``file_path``,
    ``category``, ``bytes`` as the metadata records them (not counted above)."""

    @property
    def bytes(self) -> int:
        return int(self.categories["bytes"].sum())

    def to_pandas(self) -> pd.DataFrame:
        return self.categories

    def summary(self) -> str:
        lines = [
            f"storage of {self.location}: {byte_size(self.bytes)} in {int(self.categories['files'].sum()):,} files"
        ]
        for category, files, size, detail in self.categories[COLUMNS].itertuples(index=False):
            lines.append(f"  {category:<28} {files:>8,} files {byte_size(int(size)):>10}  {detail}")
        if len(self.referenced_elsewhere):
            lines.append(f"  (and {len(self.referenced_elsewhere):,} referenced files not under the location)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Storage {self.location}: {byte_size(self.bytes)}>"


@dataclass(frozen=True, slots=True)
class _Content:
    path: str
    kind: str
    size: int
    partition: str


def _keys(paths: Iterable[str]) -> list[str]:
    listed = list(paths)
    if not listed:
        return []
    return path_keys(pa.array(listed, pa.string()))[2].to_pylist()


def _hidden(path: str, location: str) -> bool:
    rest = path[len(location.rstrip("/")) :] if path.startswith(location.rstrip("/")) else path
    return any(part.startswith(("_", ".")) and "=" not in part for part in rest.split("/") if part)


class _LiveContent:
    """Each manifest's live content files, read once."""

    def __init__(self, table: TableLike) -> None:
        self.table = table
        self._live: dict[str, list[_Content]] = {}
        self._builder = FileBuilder(table.metadata)  # the planner's partition text, each partition's once

    def live(self, m: ManifestFile) -> list[_Content]:
        found = self._live.get(m.manifest_path)
        if found is None:
            entries = self.table.store.entries(m, _ENTRY_COLUMNS, keep=False)
            entries = entries.filter(pc.not_equal(entries.column("status"), int(EntryStatus.DELETED)))
            part = entries.column("partition").combine_chunks()
            names = [pf.name for pf in self.table.metadata.spec_by_id(m.partition_spec_id).fields]
            names = names[: part.type.num_fields]
            values = [physical(part.field(i)) for i in range(len(names))]
            columns = {c: entries.column(c).to_pylist() for c in ("content", "file_path", "file_size_in_bytes")}
            found = self._live[m.manifest_path] = []
            for i, path in enumerate(columns["file_path"]):
                partition = tuple((name, values[j][i]) for j, name in enumerate(names))
                text = self._builder.partition_text(m.partition_spec_id, partition) if names else "(unpartitioned)"
                found.append(
                    _Content(
                        path=path,
                        kind=FileKind.of_content(columns["content"][i] or 0).value,
                        size=int(columns["file_size_in_bytes"][i]),
                        partition=text,
                    )
                )
        return found

    def of(self, snapshot: Snapshot) -> dict[str, _Content]:
        out: dict[str, _Content] = {}
        for m in self.table.store.manifest_list(snapshot):
            for c in self.live(m):
                out.setdefault(c.path, c)
        return out


def _when(ms: int) -> str:
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def storage(table: TableLike, snapshot: Snapshot | None, *, now_ms: int | None = None) -> Storage:
    """Every file under ``table``'s location by what keeps it, ``snapshot`` standing for main's state."""
    metadata, store = table.metadata, table.store
    reader = _LiveContent(table)
    main = reader.of(snapshot) if snapshot is not None else {}
    # Who keeps each content file: the state read, other refs' heads, then every snapshot (history).
    ref_keepers: dict[str, list[str]] = defaultdict(list)
    contents: dict[str, _Content] = dict(main)
    for name, ref in sorted(metadata.refs.items()):
        head = metadata.find_snapshot(ref.snapshot_id)
        if head is None or (name == MAIN_BRANCH and snapshot is not None and head.snapshot_id == snapshot.snapshot_id):
            continue
        for path, found in reader.of(head).items():
            contents.setdefault(path, found)
            if path not in main:
                ref_keepers[path].append(f"{ref.type} {name!r}")
    history: dict[str, list[Snapshot]] = defaultdict(list)
    for s in metadata.snapshots:
        for path, found in reader.of(s).items():
            contents.setdefault(path, found)
            if path not in main and path not in ref_keepers:
                history[path].append(s)

    # Expiry with the table's own retention: what it frees now, and when each kept snapshot ages out.
    freed: set[str] = set()
    fates: dict[int, str] = {}
    r = None
    if gc_enabled(metadata):
        preview = expire_preview(table, now_ms=now_ms, progress=False)
        freed = {f.path for f in preview.files}
        r = preview.retention
        fates = {f.snapshot_id: f.reason for f in preview.snapshots if not f.expires}
    max_age = properties.MAX_SNAPSHOT_AGE_MS.read(metadata.properties)

    def history_detail(snaps: list[Snapshot], expires_now: bool) -> str:
        ids = sorted({s.snapshot_id for s in snaps})
        span = (
            f"{len(ids)} snapshot{'s' if len(ids) != 1 else ''} committed {_when(min(s.timestamp_ms for s in snaps))} to "
            + _when(max(s.timestamp_ms for s in snaps))
        )
        if not gc_enabled(metadata):
            return f"{span}; gc.enabled=false: expire_snapshots deletes no file"
        if expires_now:
            assert r is not None
            return f"{span}; expire_snapshots deletes them now ({r.sources.get('older_than', '')})"
        reasons = sorted({fates[i] for i in ids if i in fates})
        until = max(s.timestamp_ms for s in snaps) + max_age
        return (
            f"{span}; retained ({'; '.join(reasons)}) until at least {_when(until)} "
            f"({properties.MAX_SNAPSHOT_AGE_MS.name}={max_age})"
        )

    # Metadata: what the orphan search counts as valid beside content files.
    snapshots = list(metadata.snapshots)
    manifests: dict[str, ManifestFile] = {}
    for s in snapshots:
        for m in store.manifest_list(s):
            manifests.setdefault(m.manifest_path, m)
    metadata_kinds: dict[str, str] = {}
    hint = metadata.location.rstrip("/") + "/metadata/" + VERSION_HINT
    for path in (table.metadata_location, *(e.metadata_file for e in metadata.metadata_log)):
        metadata_kinds[path] = "metadata files"
    metadata_kinds[hint] = "metadata files"
    for s in snapshots:
        if s.manifest_list is not None:
            metadata_kinds[s.manifest_list] = "manifest lists"
    for path in manifests:
        metadata_kinds[path] = "manifests"
    registered: list[StatisticsFile | PartitionStatisticsFile] = [*metadata.statistics, *metadata.partition_statistics]
    for f in registered:
        metadata_kinds[f.statistics_path] = "statistics files"

    orphans = find_orphans(table, now_ms=now_ms, progress=False)
    orphan_paths = {f.path for f in (*orphans.files, *orphans.too_recent)}

    listing = list(walk(table.fileio, metadata.location, hidden=True))
    listed_keys = _keys(info.path for info in listing)
    content_by_key = dict(zip(_keys(contents), contents.values(), strict=True))
    metadata_by_key = dict(zip(_keys(metadata_kinds), metadata_kinds.values(), strict=True))
    orphan_keys = set(_keys(orphan_paths))
    ref_by_key = dict(zip(_keys(ref_keepers), ref_keepers.values(), strict=True))
    history_by_key = dict(zip(_keys(history), history.values(), strict=True))
    freed_keys = set(_keys(freed))

    rows: list[dict[str, Any]] = []
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    history_groups: dict[str, list[Snapshot]] = defaultdict(list)
    partition_rows: dict[tuple[str, str], list[int]] = defaultdict(list)
    seen_keys: set[str] = set()
    for info, key in zip(listing, listed_keys, strict=True):
        seen_keys.add(key)
        c = content_by_key.get(key)
        detail = ""
        if c is not None and c.path in main:
            category = "data" if c.kind == FileKind.DATA.value else "deletes"
            detail = "live in " + (f"snapshot {snapshot.snapshot_id}" if snapshot is not None else "main")
        elif c is not None and key in ref_by_key:
            category, detail = "other refs", "kept only by " + ", ".join(ref_by_key[key])
        elif c is not None and key in history_by_key:
            now = key in freed_keys
            category = "history: expires now" if now else "history: retained"
            history_groups[category].extend(history_by_key[key])
        elif key in metadata_by_key:
            category = "metadata: " + metadata_by_key[key]
        elif key in orphan_keys:
            category = "orphans"
        elif _hidden(info.path, metadata.location):
            category = "hidden files"
        else:
            category = "unclassified"
        groups[(category, detail)].append(info.size)
        rows.append({"file_path": info.path, "category": category, "bytes": info.size})
        if c is not None:
            partition_rows[(c.partition, category)].append(info.size)

    details = {
        "metadata: metadata files": "the current metadata file, its log and the version hint",
        "metadata: manifest lists": f"one per snapshot ({len(snapshots)} snapshots)",
        "metadata: manifests": "the manifests of every snapshot",
        "metadata: statistics files": "table and partition statistics (Puffin) files",
        "orphans": (
            f"{len(orphans.files):,} older than {_when(orphans.older_than_ms)} (remove_orphan_files deletes them), "
            f"{len(orphans.too_recent):,} newer (left alone by default)"
        ),
        "hidden files": "names starting with _ or . (checksums, markers): remove_orphan_files skips them",
        "unclassified": "under the location, yet neither referenced nor found by the orphan search",
    }
    summary_rows: list[dict[str, Any]] = []
    for (category, detail), sizes in groups.items():
        if category.startswith("history"):
            detail = history_detail(history_groups[category], category == "history: expires now")
        summary_rows.append(
            {"category": category, "files": len(sizes), "bytes": sum(sizes), "detail": detail or details[category]}
        )
    order = ["data", "deletes", "other refs", "history: expires now", "history: retained", "metadata", "orphans"]
    summary_rows.sort(key=lambda row: (_rank(row["category"], order), row["category"], row["detail"]))

    elsewhere = [
        {"file_path": c.path, "category": c.kind, "bytes": c.size}
        for key, c in content_by_key.items()
        if key not in seen_keys
    ]
    return Storage(
        location=metadata.location,
        snapshot_id=None if snapshot is None else snapshot.snapshot_id,
        categories=_frame(summary_rows, COLUMNS),
        by_partition=_frame(
            (
                {"partition": p, "category": cat, "files": len(sizes), "bytes": sum(sizes)}
                for (p, cat), sizes in sorted(partition_rows.items())
            ),
            PARTITION_COLUMNS,
        ),
        files=_frame(rows, FILE_COLUMNS),
        referenced_elsewhere=_frame(elsewhere, FILE_COLUMNS),
    )


def _rank(category: str, order: list[str]) -> int:
    for i, prefix in enumerate(order):
        if category.startswith(prefix):
            return i
    return len(order)


def _frame(rows: Iterable[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    out = pd.DataFrame(list(rows), columns=columns)
    for c in ("files", "bytes"):
        if c in out.columns:
            out[c] = out[c].astype("int64")
    return out


def namespace_storage(reports: Iterable[tuple[str, Storage | str]]) -> pd.DataFrame:
    """One row per table, most bytes first: ``table``, ``files``, ``bytes``, the bytes of each category (the
    history categories as one ``history``, the metadata ones as one ``metadata``), and ``error`` (a table
    that could not be read, in one line, its bytes unknown: null)."""
    rows = []
    for name, report in reports:
        if isinstance(report, str):
            rows.append({"table": name, "error": report})
            continue
        row: dict[str, Any] = {"table": name, "files": int(report.categories["files"].sum()), "bytes": report.bytes}
        row |= dict.fromkeys(ROLLUP, 0)
        for category, size in zip(report.categories["category"], report.categories["bytes"], strict=True):
            column = category.split(":", 1)[0]
            row[column] += int(size)
        rows.append(row)
    columns = ["table", "files", "bytes", *ROLLUP, "error"]
    return frame(rows, columns, ints=columns[1:-1]).sort_values(
        ["bytes", "table"], ascending=[False, True], ignore_index=True, na_position="last"
    )


ROLLUP = ["data", "deletes", "other refs", "history", "metadata", "orphans", "hidden files", "unclassified"]


__all__ = ["COLUMNS", "ROLLUP", "Storage", "namespace_storage", "storage"]
