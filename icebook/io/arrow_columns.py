"""One rule for a column read whole: ``single_array``, shared by the decoders (in the workers) and the kernel."""

from __future__ import annotations

import pyarrow as pa


def single_array(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A column as one array: its only chunk as it is (``combine_chunks`` copies even one chunk, every nested
    child included), several chunks combined."""
    if isinstance(column, pa.ChunkedArray):
        return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    return column


def single_chunks(table: pa.Table) -> pa.Table:
    """``table`` with one chunk per column: as it is when it has that already (``combine_chunks`` copies)."""
    return table if all(c.num_chunks == 1 for c in table.columns) else table.combine_chunks()


__all__ = ["single_array", "single_chunks"]
