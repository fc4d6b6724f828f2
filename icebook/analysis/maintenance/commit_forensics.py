"""Commit forensics: which commits were retried after losing a race, and what the losers left behind.

Spec ("Optimistic Concurrency"): a writer commits by swapping the table's pointer from the metadata it
read to its new metadata; when another writer swapped first, it retries on the new version or fails.
Only the winner of each swap is in the metadata. The rest of the story is in file names (the reference
implementation's conventions, informative only) and in files nothing references:

- Iceberg's Java client keeps a commit's snapshot id and commit UUID across attempts and names each
  attempt's manifest list ``snap-<snapshot id>-<attempt>-<commit uuid>.avro``: attempt 2 or more in the
  committed list means earlier attempts lost (their lists are deleted once one attempt wins).
- PyIceberg names every manifest list attempt 0, but draws a new commit UUID for each attempt while its
  data files keep the name of the first (``00000-<task>-<write uuid>.parquet``, the write UUID being the
  commit UUID at the time): a commit adding files written under another UUID was retried.
- A writer whose retry fails (the operation's validation refuses the new base) or who stops before its
  swap leaves the files it wrote: data files (both clients delete the manifests and manifest lists of a
  failed commit, not its data), or all of them when it stopped. They are orphans (``find_orphans``); a
  leftover's name may still tell whose it was (the commit UUID of a manifest or manifest list, the write
  UUID of a PyIceberg data file).
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter

import pandas as pd

from icebook.analysis._frames import attribute_frame
from icebook.analysis.maintenance.orphans import OrphanReport
from icebook.analysis.store.entries import added_entries
from icebook.analysis.store.table_like import TableLike
from icebook.spec.filenames import (
    ManifestListName,
    ManifestName,
    MetadataFileName,
    parse_file_name,
    parse_manifest_list_name,
)
from icebook.spec.metadata import commit_order
from icebook.spec.writer_names import parse_written_file_name


@dataclass(frozen=True, slots=True, kw_only=True)
class CommitEvidence:
    """What one committed snapshot's files say about how its commit went."""

    snapshot_id: int
    parent_snapshot_id: int | None
    operation: str | None
    manifest_list: str | None
    commit_uuid: str | None
    """The commit UUID in the manifest list's name (None when the name follows no convention)."""
    attempt: int | None
    """The attempt in the manifest list's name (Java counts from 1; PyIceberg always writes 0)."""
    first_commit_uuids: tuple[str, ...]
    """Write UUIDs in the names of the data files this commit added that differ from its commit UUID: the
    commit UUIDs of earlier attempts (PyIceberg names files by the attempt that wrote them)."""

    @property
    def retried(self) -> bool:
        """True when the names show that earlier attempts of this commit lost."""
        return (self.attempt is not None and self.attempt > 1) or bool(self.first_commit_uuids)

    @property
    def lost_attempts(self) -> int | None:
        """How many attempts lost before this one, when the name counts them (Java's), else None."""
        if self.attempt is not None and self.attempt >= 1:
            return self.attempt - 1
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Leftover:
    """A file nothing references (an orphan), with whose it was when its name says so."""

    path: str
    size_in_bytes: int
    kind: str
    """``data`` (or delete) file, ``manifest``, ``manifest list`` or ``metadata``."""
    commit_uuid: str | None
    """The commit UUID its name carries (a manifest's or manifest list's, a PyIceberg data file's write UUID)."""
    snapshot_id: int | None
    """The snapshot a leftover manifest list was written for."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CommitForensics:
    """Every snapshot's commit evidence, oldest first, and the files the table's writers left behind."""

    location: str
    commits: tuple[CommitEvidence, ...]
    leftovers: tuple[Leftover, ...]
    orphans: OrphanReport

    @property
    def retried(self) -> tuple[CommitEvidence, ...]:
        return tuple(c for c in self.commits if c.retried)

    def leftovers_of(self, commit_uuid: str) -> tuple[Leftover, ...]:
        """The leftover files whose names carry ``commit_uuid``."""
        return tuple(f for f in self.leftovers if f.commit_uuid == commit_uuid.lower())

    def summary(self) -> str:
        owned = sum(f.commit_uuid is not None for f in self.leftovers)
        return (
            f"{len(self.commits)} commits, {len(self.retried)} retried after losing the swap; "
            f"{len(self.leftovers)} leftover files ({owned} named by their commit)"
        )

    def __repr__(self) -> str:
        return f"<CommitForensics: {self.summary()}>"

    def to_pandas(self) -> pd.DataFrame:
        """One row per commit: its attempt, whether it was retried and the earlier attempts' UUIDs."""
        return attribute_frame(
            self.commits,
            [
                "snapshot_id",
                "parent_snapshot_id",
                "operation",
                "commit_uuid",
                "attempt",
                "retried",
                "earlier_commit_uuids",
            ],
            ints=["snapshot_id", "parent_snapshot_id", "attempt"],
            derived={"earlier_commit_uuids": lambda c: list(c.first_commit_uuids)},
        )

    def leftovers_frame(self) -> pd.DataFrame:
        return attribute_frame(
            self.leftovers,
            ["path", "kind", "commit_uuid", "snapshot_id", "file_size_in_bytes"],
            ints=["snapshot_id", "file_size_in_bytes"],
            derived={"file_size_in_bytes": attrgetter("size_in_bytes")},
        )


def _evidence(table: TableLike) -> tuple[CommitEvidence, ...]:
    out: list[CommitEvidence] = []
    for snapshot in sorted(table.metadata.snapshots, key=commit_order):
        listed = parse_manifest_list_name(snapshot.manifest_list) if snapshot.manifest_list else None
        earlier: dict[str, None] = {}
        if listed is not None and snapshot.manifest_list is not None:
            for _, added in added_entries(table.store, snapshot, ("file_path",)):
                for path in added.column("file_path").to_pylist():
                    written = parse_written_file_name(path).write_uuid
                    if written is not None and written != listed.commit_uuid:
                        earlier[written] = None
        out.append(
            CommitEvidence(
                snapshot_id=snapshot.snapshot_id,
                parent_snapshot_id=snapshot.parent_snapshot_id,
                operation=snapshot.operation,
                manifest_list=snapshot.manifest_list,
                commit_uuid=listed.commit_uuid if listed else None,
                attempt=listed.attempt if listed else None,
                first_commit_uuids=tuple(earlier),
            )
        )
    return tuple(out)


def _leftover(path: str, size: int) -> Leftover:
    named = parse_file_name(path)
    if isinstance(named, ManifestListName):
        return Leftover(
            path=path,
            size_in_bytes=size,
            kind="manifest list",
            commit_uuid=named.commit_uuid,
            snapshot_id=named.snapshot_id,
        )
    if isinstance(named, ManifestName):
        return Leftover(path=path, size_in_bytes=size, kind="manifest", commit_uuid=named.commit_uuid, snapshot_id=None)
    if isinstance(named, MetadataFileName):
        return Leftover(path=path, size_in_bytes=size, kind="metadata", commit_uuid=None, snapshot_id=None)
    written = parse_written_file_name(path)
    return Leftover(path=path, size_in_bytes=size, kind="data", commit_uuid=written.write_uuid, snapshot_id=None)


def commit_forensics(table: TableLike, orphans: OrphanReport) -> CommitForensics:
    """The commit evidence of every snapshot of ``table``, and its orphans (as ``find_orphans`` found them,
    with the age cutoff the caller chose) read as the leftovers of commits that never landed."""
    leftovers = tuple(_leftover(f.path, f.size_in_bytes) for f in orphans.files)
    return CommitForensics(
        location=table.metadata.location, commits=_evidence(table), leftovers=leftovers, orphans=orphans
    )


__all__ = ["CommitEvidence", "CommitForensics", "Leftover", "commit_forensics"]
