"""What analyses, engines and views need of a table: the one structural type ``icebook.Table`` satisfies.

Layers below ``table`` cannot import ``icebook.table``; they name this protocol instead. Members
are read-only properties, so a plain attribute or a property both satisfy them. It is how an analysis
that reads a table's files is called, always the same way: the table first, then the snapshot and
options (``health(t, snapshot)``, ``expire_preview(t, older_than_ms=...)``, ``diff(t, a, b)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from icebook.io.fileio import FileIO
from icebook.spec.metadata import TableMetadata
from icebook.spec.snapshots import Ref, Snapshot

if TYPE_CHECKING:  # a table's first view uses this protocol and needs no decoder
    import pyarrow as pa

    from icebook.analysis.store.manifests import ManifestStore


class TableLike(Protocol):
    """A table bound to its metadata file and FileIO (``icebook.Table``)."""

    @property
    def metadata(self) -> TableMetadata: ...

    @property
    def metadata_location(self) -> str: ...

    @property
    def fileio(self) -> FileIO: ...

    @property
    def store(self) -> ManifestStore:
        """Reads and caches the table's manifest lists and manifests."""

    @property
    def location(self) -> str: ...

    @property
    def snapshots(self) -> tuple[Snapshot, ...]: ...

    @property
    def refs(self) -> Mapping[str, Ref]: ...

    @property
    def inspect(self) -> Any:
        """Spark-shaped metadata tables (``files(at)``, ``partitions(at)``, ...)."""

    def snapshot(self, at: Any) -> Snapshot: ...

    def read(
        self, at: Any = None, filter: str | None = None, columns: list[str] | None = None, engine: Any = "arrow"
    ) -> pa.Table: ...

    def sql(self, query: str, at: Any = None, *, as_spark: bool = False) -> Any: ...


__all__ = ["TableLike"]
