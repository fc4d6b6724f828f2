"""Listings as polars lazy frames: ``t.inspect.lazy.files()`` and the other listings.

A ``polars.LazyFrame`` over the listing's Arrow stream (``icebook.analysis.tables.streams``), registered as
a polars IO source: each collect reads the manifests again, one batch per manifest, a few decoded ahead.
Polars hands the source the columns and the row filter a query needs and how many rows it wants: only those
columns of each batch are converted, rows are filtered batch by batch, and reading stops once enough rows
were produced. The columns and types are those of the Arrow stream as polars reads Arrow (``pl.from_arrow``:
a long stays Int64, nulls and all; a map becomes a list of key-value structs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    import polars as pl


def lazy_frame(
    name: str, schema: pa.Schema, open_reader: Callable[[list[str] | None], pa.RecordBatchReader]
) -> pl.LazyFrame:
    """A lazy frame over the batches ``open_reader(columns)`` yields (called once per collect, with the columns
    the query reads, or None for all; a reader may give more columns than asked)."""
    from polars.io.plugins import register_io_source

    polars_schema = _polars_frame(schema.empty_table()).schema

    def source(
        with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None, batch_size: int | None
    ) -> Iterator[pl.DataFrame]:
        del batch_size  # one batch per manifest: the stream's own unit
        left = n_rows
        needed = source_columns(with_columns, predicate, schema.names)
        reader = open_reader(needed)
        try:
            for batch in reader:
                if left is not None and left <= 0:
                    return
                table = pa.Table.from_batches([batch])
                frame = _polars_frame(table if needed is None else table.select(needed))  # only what is read
                frame = source_rows(frame, with_columns, predicate, left)
                if left is not None:
                    left -= frame.height
                yield frame
        finally:
            reader.close()

    return register_io_source(source, schema=polars_schema, explain_name=f"icebook {name}")


def source_columns(with_columns: list[str] | None, predicate: pl.Expr | None, names: Sequence[str]) -> list[str] | None:
    """The columns a polars IO source reads for a query (None: all of ``names``): those the query selects and
    those its filter reads; a query that selects none (a count) reads the first, for the number of rows."""
    needed = None if with_columns is None else list(with_columns)
    if needed is not None and predicate is not None:  # polars filters after the source: on these too
        needed += [c for c in predicate.meta.root_names() if c not in needed]
    if needed == []:
        needed = list(names[:1])
    return needed


def source_rows(
    frame: pl.DataFrame, with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None
) -> pl.DataFrame:
    """What a polars IO source owes its query of a frame read with ``source_columns``: the rows the filter
    keeps, the columns selected, and at most ``n_rows`` of them."""
    if predicate is not None:
        frame = frame.filter(predicate)
    if with_columns is not None:
        frame = frame.select(with_columns)
    if n_rows is not None:
        frame = frame.head(n_rows)
    return frame


def _polars_frame(table: pa.Table) -> pl.DataFrame:
    import polars as pl

    frame = pl.from_arrow(table, rechunk=False)
    assert isinstance(frame, pl.DataFrame)
    return frame
