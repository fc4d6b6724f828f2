"""A health report's format version 3 section: dangling deletion vectors, data files whose vector was
replaced many times, and, for a v2 table, what upgrading it to v3 would change.

- Dangling: spec ("Deletion Vectors", "Scan Planning"): a vector applies to the data file its
  ``referenced_data_file`` names; when that file is not live at the snapshot, the vector deletes nothing,
  yet every plan still reads its entry (and the Puffin file stays referenced). Writers must remove a data
  file's vector with the file; one that did not leaves it dangling. Spark's ``rewrite_data_files`` with
  ``remove-dangling-deletes`` removes it.
- Churn: a vector is replaced by a new one holding all of the data file's deleted positions at every
  delete that touches the file (at most one vector per data file), so a file deleted from often has its
  positions written again and again, and each old vector's Puffin file stays until its snapshots expire.
  Counted over the snapshots the table keeps, from the delete manifests each one wrote: a vector is ADDED
  once, by the commit that wrote it.
- Upgrade: spec, Appendix E "Version 3" and "Row Lineage for Upgraded Tables".

The threshold is a convention of this report, named here.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.history.v3_changes import file_deletes, one_data_file, vector_mask
from icebook.analysis.store.entries import Entries
from icebook.analysis.store.manifests import parallel_map
from icebook.analysis.store.table_like import TableLike
from icebook.spec.manifest import EntryStatus, FileContent, ManifestContent, ManifestFile
from icebook.text import spark_string

MANY_DV_REPLACEMENTS = 3
"""A data file whose deletion vector was replaced at least this many times in the kept snapshots is
reported: its deleted positions were written that many times over."""

_COLUMNS = ("status", "snapshot_id", "content", "file_path", "file_format", "record_count",
            "referenced_data_file", "content_offset")  # fmt: skip


@dataclass(frozen=True, slots=True)
class DanglingVector:
    """A live deletion vector whose data file is not live."""

    path: str
    offset: int | None
    data_file: str
    deleted_rows: int


@dataclass(frozen=True, slots=True)
class VectorChurn:
    """A data file and the deletion vectors written for it in the kept snapshots."""

    data_file: str
    vectors: int
    """Distinct vectors written for it (Puffin file and offset)."""
    live: bool
    """The data file is live at the report's snapshot."""
    deleted_rows: int
    """The newest vector's cardinality."""

    @property
    def replacements(self) -> int:
        return self.vectors - 1


@dataclass(frozen=True, slots=True, kw_only=True)
class UpgradeAdvice:
    """What ``ALTER TABLE ... SET TBLPROPERTIES ('format-version' = '3')`` would change for a v2 table."""

    position_delete_files: int
    position_delete_records: int
    file_scoped_position_deletes: int
    """Position delete files for one data file (``referenced_data_file``, or equal ``file_path`` bounds)."""
    equality_delete_files: int
    live_records: int
    changes: tuple[str, ...]

    @staticmethod
    def sql(identifier: str) -> str:
        return f"ALTER TABLE {identifier} SET TBLPROPERTIES ({spark_string('format-version')} = {spark_string('3')})"


@dataclass(frozen=True, slots=True, kw_only=True)
class V3Health:
    format_version: int
    deletion_vectors: int = 0
    """Live deletion vectors at the report's snapshot."""
    dangling: tuple[DanglingVector, ...] = ()
    churn: tuple[VectorChurn, ...] = ()
    """Data files whose vector was replaced at least once, most replaced first."""
    upgrade: UpgradeAdvice | None = None
    """For a v2 table: what upgrading it to v3 changes."""

    @property
    def many_replacements(self) -> tuple[VectorChurn, ...]:
        return tuple(c for c in self.churn if c.replacements >= MANY_DV_REPLACEMENTS)


class DeleteCollector:
    """Sees each manifest of the report's snapshot (``visit``, from worker threads) and keeps the live
    deletion vectors, the counts of the other delete files and of live rows, and which of the data files
    it watches are live: those in ``watch`` and those the live vectors name. The health pass visits a
    snapshot's delete manifests before its data manifests, so the vectors are known by then; memory
    follows the vectors, not the data files."""

    def __init__(self, watch: set[str] | None = None) -> None:
        self._lock = threading.Lock()
        self.watch = set(watch or ())
        self.data_files: set[str] = set()
        """The watched data files found live."""
        self.records = 0
        self.vectors: list[tuple[str, tuple[str, int | None, int]]] = []
        self.position_files = self.position_records = self.scoped = self.equality_files = 0

    def visit(self, manifest: ManifestFile, entries: pa.Table) -> None:
        live = Entries(entries).alive()
        content = live.content()
        if manifest.content != ManifestContent.DELETES:
            is_data = content == int(FileContent.DATA)
            records = int(live.records()[is_data].sum())
            with self._lock:
                wanted = self.watch | {data_file for data_file, _ in self.vectors}
            found: list[str] = []
            if wanted:  # a table without vectors has no data file to watch
                paths = live.column("file_path").filter(pa.array(is_data))
                found = paths.filter(pc.is_in(paths, value_set=pa.array(sorted(wanted), pa.string()))).to_pylist()
            with self._lock:
                self.data_files.update(found)
                self.records += records
            return
        table = live.table
        vectors = [(data, (ref.path, ref.offset, ref.deleted_rows)) for data, ref in file_deletes(table)]
        position = (content == int(FileContent.POSITION_DELETES)) & ~vector_mask(table)
        scoped = position & np.asarray(pc.is_valid(one_data_file(table)).to_numpy(zero_copy_only=False), bool)
        with self._lock:
            self.vectors.extend(vectors)
            self.position_files += int(position.sum())
            self.position_records += int(live.records()[position].sum())
            self.scoped += int(scoped.sum())
            self.equality_files += int((content == int(FileContent.EQUALITY_DELETES)).sum())

    def dangling(self) -> tuple[DanglingVector, ...]:
        found = [
            DanglingVector(path=path, offset=offset, data_file=data_file, deleted_rows=rows)
            for data_file, (path, offset, rows) in self.vectors
            if data_file not in self.data_files
        ]
        return tuple(sorted(found, key=lambda d: (d.data_file, d.path)))


VectorHistory = dict[str, dict[tuple[str, int | None], tuple[int, int]]]
"""Data file -> (Puffin file, offset) of each vector written for it -> (sequence number, cardinality)."""


def vector_history(table: TableLike) -> VectorHistory:
    """Every deletion vector the kept snapshots wrote, by data file."""
    metadata, store = table.metadata, table.store
    written: dict[str, tuple[ManifestFile, int | None]] = {}
    for snapshot in metadata.snapshots:
        for m in store.manifest_list(snapshot):
            if m.content == ManifestContent.DELETES and m.added_snapshot_id == snapshot.snapshot_id:
                written.setdefault(m.manifest_path, (m, snapshot.sequence_number))
    manifests = [m for m, _ in written.values()]
    tables = parallel_map(
        lambda m: store.entries(m, _COLUMNS, keep=False), manifests, progress=False, label="manifests"
    )
    seen: VectorHistory = defaultdict(dict)
    for (m, sequence), entries in zip(written.values(), tables, strict=True):
        view = Entries(entries)
        own = pc.equal(entries.column("snapshot_id"), m.added_snapshot_id).fill_null(False)
        mask = view.status_is(EntryStatus.ADDED) & np.asarray(own.to_numpy(zero_copy_only=False), bool)
        for data_file, ref in file_deletes(entries.filter(pa.array(mask))):
            seen[data_file][(ref.path, ref.offset)] = (sequence or 0, ref.deleted_rows)
    return dict(seen)


def vector_churn(history: VectorHistory, live_data_files: set[str]) -> tuple[VectorChurn, ...]:
    """The data files with at least two vectors in ``history``, most first."""
    out = [
        VectorChurn(
            data_file=data_file,
            vectors=len(vectors),
            live=data_file in live_data_files,
            deleted_rows=max(vectors.values())[1],
        )
        for data_file, vectors in history.items()
        if len(vectors) > 1
    ]
    return tuple(sorted(out, key=lambda c: (-c.vectors, c.data_file)))


def upgrade_advice(collected: DeleteCollector) -> UpgradeAdvice:
    """What upgrading a v2 table to v3 changes, with its own numbers."""
    position, scoped = collected.position_files, collected.scoped
    changes = (
        f"Position deletes stay until rewritten: the {position} live position delete files "
        f"({collected.position_records} rows) stay valid and readers keep merging them. The first delete on a "
        "data file after the upgrade writes a deletion vector holding that file's earlier position deletes too, "
        f"and readers then ignore the position deletes for that file. The {scoped} files for one data file each "
        f"are removed then; the other {position - scoped} (they may cover several data files) stay in the "
        "metadata until every file they cover has a vector or is rewritten (rewrite_position_delete_files, "
        "rewrite_data_files).",
        "New deletes become deletion vectors: merge-on-read DELETE, UPDATE and MERGE write one vector per data file "
        "(a Puffin blob), merged with the file's earlier deletes; writers may no longer add position delete files. "
        f"Equality deletes are unchanged ({collected.equality_files} live).",
        "Row lineage starts at next-row-id 0: snapshots committed before the upgrade keep no row ids (_row_id and "
        "_last_updated_sequence_number read as null there), and the first commit after it sets first-row-id and "
        f"assigns row ids to the existing data files as well as the new ones ({collected.records} live rows now).",
        "The new types (variant, geometry, geography, timestamp_ns, unknown) and column default values become "
        "available.",
        "Every engine that reads or writes the table must support format version 3; the format version can only "
        "go up, so the upgrade cannot be undone.",
    )
    return UpgradeAdvice(
        position_delete_files=position,
        position_delete_records=collected.position_records,
        file_scoped_position_deletes=scoped,
        equality_delete_files=collected.equality_files,
        live_records=collected.records,
        changes=changes,
    )


def v3_health(table: TableLike, collected: DeleteCollector, history: VectorHistory) -> V3Health:
    """The section for ``table``, from what ``collected`` saw of the report's snapshot and the vectors'
    ``history`` (``vector_history``, read before so that ``collected`` watches their data files)."""
    version = table.metadata.format_version
    if version == 2:
        return V3Health(format_version=version, upgrade=upgrade_advice(collected))
    if version < 3:
        return V3Health(format_version=version)
    return V3Health(
        format_version=version,
        deletion_vectors=len(collected.vectors),
        dangling=collected.dangling(),
        churn=vector_churn(history, collected.data_files),
    )


__all__ = [
    "MANY_DV_REPLACEMENTS",
    "DanglingVector",
    "DeleteCollector",
    "UpgradeAdvice",
    "V3Health",
    "VectorChurn",
    "VectorHistory",
    "upgrade_advice",
    "v3_health",
    "vector_churn",
    "vector_history",
]
