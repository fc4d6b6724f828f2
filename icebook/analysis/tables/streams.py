"""Listings as Arrow streams: ``t.inspect.batches.files()``, ``t.inspect.batches.entries()`` and the ``all_*``
listings; ``t.inspect.lazy`` wraps the same stream in a ``polars.LazyFrame`` (``icebook.analysis.tables.lazy``).

A ``pyarrow.RecordBatchReader`` yields the rows of one manifest at a time, in the listing's order and with
the DataFrame form's columns and types, so that a listing of millions of files is read (or written out)
holding only the few manifests being decoded. The decoded manifests are not kept by the store; the
snapshot's summary totals are checked once the last manifest is read, so a stream whose files disagree
with the summary ends with the error rather than looking whole.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence

import pyarrow as pa

from icebook.analysis.store.manifests import ManifestStore, read_ahead
from icebook.analysis.tables.inspect import (
    entries_shaped,
    files_listing_kind,
    manifest_entries_arrow,
    manifest_entries_table,
    manifest_live_files,
    spark_shaped,
)
from icebook.analysis.tables.listing_size import ListingContent, of_content
from icebook.io.arrow_columns import single_chunks
from icebook.spec.manifest import ManifestFile
from icebook.spec.snapshots import Snapshot


def files_batches(
    store: ManifestStore,
    snapshot: Snapshot | None,
    *,
    content: ListingContent = ListingContent.FILES,
    manifests: Sequence[ManifestFile] | None = None,
    columns: Collection[str] | None = None,
) -> pa.RecordBatchReader:
    """The files table of ``snapshot`` (``content``: which files), one batch per manifest; or of
    ``manifests`` when given (the ``all_*`` tables: no snapshot whose totals to check). ``columns``: only
    those columns, in the table's order, and only those decoded (``readable_metrics`` is computed only when
    asked for)."""
    from icebook.analysis.tables.inspect import empty_files_table

    metadata = store.metadata
    schema = spark_shaped(metadata, empty_files_table(store)).schema
    wanted = None if columns is None else [name for name in schema.names if name in columns]
    if wanted is not None:
        schema = pa.schema([schema.field(name) for name in wanted])
    if manifests is None and snapshot is not None:
        cached = store.cached_snapshot_table(files_listing_kind(content), snapshot)
        if cached is not None:
            # The whole listing is in the disk cache (checked against the snapshot's summary when built):
            # its chunks, one per manifest, are the batches, memory-mapped, and no manifest is read.
            listing = spark_shaped(metadata, cached).select(schema.names)
            listing = listing if listing.schema == schema else listing.cast(schema)
            return pa.RecordBatchReader.from_batches(schema, (b for b in listing.to_batches() if b.num_rows))
    if manifests is None:
        manifests = store.manifest_list(snapshot) if snapshot is not None else ()
    chosen = of_content(manifests, content)

    def one(manifest: ManifestFile) -> pa.Table:
        if wanted is None:
            return spark_shaped(metadata, manifest_live_files(store, manifest, keep=False))
        if "readable_metrics" in wanted:
            return manifest_live_files(store, manifest, keep=False).select(wanted)
        return manifest_entries_table(store, manifest, live_only=True, keep=False, columns=wanted).select(wanted)

    return _reader(schema, chosen, one, store, snapshot)


def entries_batches(
    store: ManifestStore, snapshot: Snapshot | None, *, manifests: Sequence[ManifestFile] | None = None
) -> pa.RecordBatchReader:
    """The entries table of ``snapshot`` (or of ``manifests``), one batch per manifest."""
    metadata = store.metadata
    schema = spark_shaped(metadata, manifest_entries_arrow(store, (), progress=False)).schema
    if manifests is None:
        manifests = store.manifest_list(snapshot) if snapshot is not None else ()

    def one(manifest: ManifestFile) -> pa.Table:
        return spark_shaped(
            metadata,
            entries_shaped(
                metadata,
                manifest_entries_table(store, manifest, live_only=False, keep=False),
                origin=manifest.manifest_path,
            ),
        )

    return _reader(schema, manifests, one, store, snapshot)


def _reader(
    schema: pa.Schema,
    manifests: Sequence[ManifestFile],
    one: Callable[[ManifestFile], pa.Table],
    store: ManifestStore,
    snapshot: Snapshot | None,
) -> pa.RecordBatchReader:
    def batches() -> Iterator[pa.RecordBatch]:
        store.prestart_decoders(manifests)
        for table in read_ahead(one, manifests):
            if table.num_rows:
                yield from single_chunks(table if table.schema == schema else table.cast(schema)).to_batches()
        if snapshot is not None:
            store.verify_snapshot(snapshot)

    return pa.RecordBatchReader.from_batches(schema, batches())
