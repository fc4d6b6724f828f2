"""The file and entry listings of ``t.inspect``, each in three forms with one return type per method:
``t.inspect.files()`` is a pandas DataFrame, ``t.inspect.batches.files()`` a ``pyarrow.RecordBatchReader``
(one manifest at a time) and ``t.inspect.lazy.files()`` a ``polars.LazyFrame`` over that stream.

The listings are declared once, in ``Listings``, generic in the form; ``ListingSource`` builds each form from
the same request, so the three agree in rows, columns and types.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

import pyarrow as pa

from icebook.analysis.resolve import At, resolve_snapshot
from icebook.analysis.tables.inspect import (
    all_manifests_of,
    entries_arrow,
    files_arrow,
    files_listing_kind,
    manifest_entries_arrow,
    manifest_files_arrow,
    spark_shaped,
    to_pandas,
)
from icebook.analysis.tables.listing_size import ListingContent, ListingSize, listing_size, of_content, warn_if_large
from icebook.analysis.tables.streams import entries_batches, files_batches
from icebook.spec.manifest import ManifestFile
from icebook.spec.snapshots import Snapshot

if TYPE_CHECKING:
    import pandas as pd
    import polars as pl

    from icebook.analysis.store.table_like import TableLike

Form = TypeVar("Form")


@dataclass(frozen=True, slots=True)
class ListingRequest:
    """One listing asked for: its name (as ``t.inspect`` calls it), the snapshot and which rows."""

    method: str
    at: At
    content: ListingContent
    every_manifest: bool = False
    """The ``all_*`` listings: every manifest reachable from any valid snapshot, each once."""


class ListingSource:
    """Builds a listing in each form, from one table's metadata and manifest store."""

    def __init__(self, table: TableLike) -> None:
        self._metadata = table.metadata
        self._store = table.store

    def _chosen(self, request: ListingRequest) -> tuple[Snapshot | None, list[ManifestFile] | None]:
        """The snapshot of a snapshot's listing, or the manifests of an ``all_*`` one."""
        if request.every_manifest:
            return None, all_manifests_of(self._store)
        return resolve_snapshot(self._metadata, request.at), None

    def frame(self, request: ListingRequest) -> pd.DataFrame:
        """The listing as a DataFrame; one of more than ``listing_size.warn_rows()`` rows is announced first
        (``LargeListingWarning``)."""
        snapshot, manifests = self._chosen(request)
        content = request.content
        entries = content == ListingContent.ENTRIES
        if not entries and manifests is None and snapshot is not None:
            # A warm start: the whole listing from the disk cache, without decoding the manifest list.
            cached = self._store.cached_snapshot_table(files_listing_kind(content), snapshot)
            if cached is not None:
                warn_if_large(request.method, request.at, ListingSize(cached.num_rows, exact=True))
                return to_pandas(spark_shaped(self._metadata, cached))
        chosen = manifests if manifests is not None else self._store.manifest_list(snapshot) if snapshot else ()
        size = listing_size(chosen if entries else of_content(chosen, content), deleted=entries)
        warn_if_large(request.method, request.at, size)
        if manifests is not None:
            built = (
                manifest_entries_arrow(self._store, manifests)
                if entries
                else manifest_files_arrow(self._store, manifests, content=content)
            )
        else:
            built = (
                entries_arrow(self._store, snapshot) if entries else files_arrow(self._store, snapshot, content=content)
            )
        return to_pandas(spark_shaped(self._metadata, built))

    def batches(self, request: ListingRequest) -> pa.RecordBatchReader:
        """The listing as an Arrow stream: the DataFrame form's rows, columns and types, one manifest at a time."""
        return self._opener(request)(None)

    def lazy(self, request: ListingRequest) -> pl.LazyFrame:
        """The listing as a polars LazyFrame over its Arrow stream, read again at each collect."""
        from icebook.analysis.tables.lazy import lazy_frame

        open_reader = self._opener(request)
        return lazy_frame(request.method, open_reader(None).schema, open_reader)

    def _opener(self, request: ListingRequest) -> Callable[[Sequence[str] | None], pa.RecordBatchReader]:
        snapshot, manifests = self._chosen(request)

        def open_reader(columns: Sequence[str] | None) -> pa.RecordBatchReader:
            if request.content == ListingContent.ENTRIES:
                return entries_batches(self._store, snapshot, manifests=manifests)
            return files_batches(self._store, snapshot, content=request.content, manifests=manifests, columns=columns)

        return open_reader


class Listings(Generic[Form]):
    """The listings of one table in one form: ``t.inspect`` (DataFrames), ``t.inspect.batches`` (Arrow
    streams) or ``t.inspect.lazy`` (polars LazyFrames). ``at``: a snapshot id, branch or tag name, or a point
    in time (default: the current snapshot)."""

    def __init__(self, form: Callable[[ListingRequest], Form]) -> None:
        self._form = form

    def entries(self, at: At = None) -> Form:
        """Every manifest entry of a snapshot, with status, sequence numbers and the data_file struct."""
        return self._form(ListingRequest("entries", at, ListingContent.ENTRIES))

    def files(self, at: At = None) -> Form:
        """Live data and delete files of a snapshot."""
        return self._form(ListingRequest("files", at, ListingContent.FILES))

    def data_files(self, at: At = None) -> Form:
        """Live data files of a snapshot."""
        return self._form(ListingRequest("data_files", at, ListingContent.DATA))

    def delete_files(self, at: At = None) -> Form:
        """Live position and equality delete files (and deletion vectors) of a snapshot."""
        return self._form(ListingRequest("delete_files", at, ListingContent.DELETES))

    def all_entries(self) -> Form:
        """Every entry of every manifest reachable from any valid snapshot (once per manifest)."""
        return self._form(ListingRequest("all_entries", None, ListingContent.ENTRIES, every_manifest=True))

    def all_files(self) -> Form:
        """Live data and delete files of every manifest reachable from any valid snapshot."""
        return self._form(ListingRequest("all_files", None, ListingContent.FILES, every_manifest=True))

    def all_data_files(self) -> Form:
        """Live data files of every data manifest reachable from any valid snapshot."""
        return self._form(ListingRequest("all_data_files", None, ListingContent.DATA, every_manifest=True))

    def all_delete_files(self) -> Form:
        """Live delete files of every delete manifest reachable from any valid snapshot."""
        return self._form(ListingRequest("all_delete_files", None, ListingContent.DELETES, every_manifest=True))
