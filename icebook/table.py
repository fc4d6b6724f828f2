"""The Table facade: binds a table's metadata to a FileIO and delegates to analyses and engines."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property

from icebook.analysis.inspect import Inspector
from icebook.analysis.manifests import ManifestStore
from icebook.analysis.resolve import At, resolve_snapshot
from icebook.errors import NotFound
from icebook.io.fileio import FileIO, default_fileio
from icebook.io.locate import locate_metadata, read_table_metadata
from icebook.spec.metadata import TableMetadata
from icebook.spec.snapshots import Ref, Snapshot


class Table:
    """One Iceberg table as of one metadata file. Read-only: nothing here writes to the table."""

    def __init__(self, metadata: TableMetadata, metadata_location: str, fileio: FileIO) -> None:
        self.metadata = metadata
        self.metadata_location = metadata_location
        self.fileio = fileio
        self.store = ManifestStore(fileio, metadata)
        """Reads and caches this table's manifest lists and manifests (immutable, so cached by path)."""

    @property
    def location(self) -> str:
        return self.metadata.location

    @property
    def format_version(self) -> int:
        return self.metadata.format_version

    @property
    def snapshots(self) -> tuple[Snapshot, ...]:
        """Every valid snapshot, in commit order."""
        return tuple(sorted(self.metadata.snapshots, key=lambda s: (s.timestamp_ms, s.sequence_number or 0)))

    @property
    def current_snapshot(self) -> Snapshot | None:
        return self.metadata.current_snapshot()

    @property
    def refs(self) -> Mapping[str, Ref]:
        return self.metadata.refs

    def snapshot(self, at: At) -> Snapshot:
        """The snapshot for a snapshot id, branch or tag name, or a point in time (as of, on main)."""
        snapshot = resolve_snapshot(self.metadata, at)
        if snapshot is None:
            raise NotFound(f"table {self.location} has no snapshot yet")
        return snapshot

    @cached_property
    def inspect(self) -> Inspector:
        """Spark-shaped metadata tables: ``t.inspect.files()``, ``t.inspect.snapshots()``, ..."""
        return Inspector(self.metadata, self.metadata_location, self.store)

    def __repr__(self) -> str:
        current = self.metadata.current_snapshot_id
        return (
            f"<icebook.Table {self.location} v{self.format_version}, {len(self.metadata.snapshots)} snapshots, "
            f"current {current}, refs {sorted(self.refs)}>"
        )


def open_table(location: str, *, fileio: FileIO | None = None) -> Table:
    """Open a table directory or metadata file (local path or URI)."""
    io = fileio or default_fileio()
    metadata_location = locate_metadata(io, str(location))
    return Table(read_table_metadata(io, metadata_location), metadata_location, io)
