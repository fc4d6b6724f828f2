"""The table's earlier metadata files, read through the metadata log when they still exist.

Spec ("Table Metadata Fields"): ``metadata-log`` lists previous metadata files with their
``timestamp-ms`` (each file's ``last-updated-ms``). The current metadata file only says what the
table looks like *now*: its ``properties``, ``default-spec-id`` and ``default-sort-order-id``
have no history of their own. The previous files do; writers delete the oldest ones
(``write.metadata.previous-versions-max``, default 100) or all of them after each commit
(``write.metadata.delete-after-commit.enabled``), so any of them may be gone. A missing file
is reported as unknown, never guessed.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from icebook.errors import IcebookError, one_line
from icebook.io.fileio import FileIO
from icebook.io.locate import read_table_metadata
from icebook.io.metadata_state import read_table_state
from icebook.spec.metadata import TableMetadata, TableState, table_state
from icebook.spec.snapshots import Snapshot


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataVersion:
    """One metadata file of the log (or the current one): when it was written and what it said."""

    file: str | None
    """The file's location; None for the current metadata when its location is not known here."""
    timestamp_ms: int
    state: TableState | None
    """What the file says is current; None when it could not be read (deleted, unreadable)."""
    metadata: TableMetadata | None = None
    """The whole parsed file, when the history reads files in full (and always for the current one)."""
    error: str | None = None
    """Why it could not be read, in one line (``errors.one_line``)."""


class MetadataHistory:
    """Reads earlier metadata files lazily, once each, in log order: in full, or (``full=False``) only what
    each says is current (``TableState``), which is all a timeline needs."""

    def __init__(self, metadata: TableMetadata, fileio: FileIO | None, *, full: bool = True) -> None:
        self.metadata = metadata
        self.fileio = fileio
        self.full = full
        self._entries: list[tuple[int, str | None]] = [(e.timestamp_ms, e.metadata_file) for e in metadata.metadata_log]
        self._entries.append((metadata.last_updated_ms, None))  # the current file, already parsed
        self._timestamps = [ts for ts, _ in self._entries]
        self._cache: dict[int, MetadataVersion] = {}
        self.reads = 0

    def __len__(self) -> int:
        return len(self._entries)

    def version(self, index: int) -> MetadataVersion:
        """The ``index``-th file of the log (the last one is the current metadata)."""
        if index in self._cache:
            return self._cache[index]
        ts, file = self._entries[index]
        if file is None:
            found = MetadataVersion(
                file=None, timestamp_ms=ts, state=table_state(self.metadata), metadata=self.metadata
            )
        elif self.fileio is None:
            found = MetadataVersion(file=file, timestamp_ms=ts, state=None, error="no FileIO to read it")
        else:
            try:
                self.reads += 1
                if self.full:
                    metadata = read_table_metadata(self.fileio, file)
                    found = MetadataVersion(
                        file=file, timestamp_ms=ts, state=table_state(metadata, file), metadata=metadata
                    )
                else:
                    found = MetadataVersion(file=file, timestamp_ms=ts, state=read_table_state(self.fileio, file))
            except (IcebookError, OSError) as exc:
                found = MetadataVersion(file=file, timestamp_ms=ts, state=None, error=one_line(exc))
        self._cache[index] = found
        return found

    def all(self) -> Sequence[MetadataVersion]:
        return [self.version(i) for i in range(len(self._entries))]

    def committing(self, snapshot: Snapshot) -> MetadataVersion | None:
        """The metadata file that committed ``snapshot``: the first one (in log order) listing it.

        A file written by the commit has ``last-updated-ms`` at or after the snapshot's
        ``timestamp-ms``, so the search starts there. A file that cannot be read from there on may
        have been the committing one: the answer is then that file's version (``state`` None, with
        its ``error``), so the caller can say which file and why. None: no file lists the snapshot.
        """
        start = bisect.bisect_left(self._timestamps, snapshot.timestamp_ms)
        # Clocks of different writers may disagree a little: look one file back too.
        for index in range(max(0, start - 1), len(self._entries)):
            version = self.version(index)
            if version.state is None:
                if index < start:
                    continue
                return version  # unknown: the unreadable file may have been the committing one
            if version.state.knows(snapshot.snapshot_id):
                return version
        return None
