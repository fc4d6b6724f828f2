"""Listings as polars lazy frames: ``t.inspect.files(lazy=True)`` and the other listings.

A ``polars.LazyFrame`` over the listing's Arrow stream (``icebook.analysis.tables.streams``), registered as
a polars IO source: each collect reads the manifests again, one batch per manifest, a few decoded ahead.
Polars hands the source the columns and the row filter a query needs and how many rows it wants: only those
columns of each batch are converted, rows are filtered batch by batch, and reading stops once enough rows
were produced. The columns and types are those of the Arrow stream as polars reads Arrow (``pl.from_arrow``:
a long stays Int64, nulls and all; a map becomes a list of key-value structs).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
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
        needed = None if with_columns is None else list(with_columns)
        if needed is not None and predicate is not None:  # the filter reads its own columns too
            needed += [c for c in predicate.meta.root_names() if c not in needed]
        if needed == []:
            needed = schema.names[:1]  # no column asked for (a count): one, for the number of rows
        reader = open_reader(needed)
        try:
            for batch in reader:
                if left is not None and left <= 0:
                    return
                table = pa.Table.from_batches([batch])
                frame = _polars_frame(table if needed is None else table.select(needed))  # only what is read
                if predicate is not None:
                    frame = frame.filter(predicate)
                if with_columns is not None:
                    frame = frame.select(with_columns)
                if left is not None:
                    frame = frame.head(left)
                    left -= frame.height
                yield frame
        finally:
            reader.close()

    return register_io_source(source, schema=polars_schema, explain_name=f"icebook {name}")


def _polars_frame(table: pa.Table) -> pl.DataFrame:
    import polars as pl

    frame = pl.from_arrow(table, rechunk=False)
    assert isinstance(frame, pl.DataFrame)
    return frame
