"""The rows of a fixed string column that hold each of many values, found in time proportional to the values.

pyarrow's ``is_in`` and ``index_in`` hash their whole value set on every call. A pass that asks about one
manifest's few thousand paths at a time against a column built once (every file under a table's location,
every file an expiry could free) then costs the whole column per manifest: quadratic in the table's size,
hours at millions of files. ``StringLookup`` indexes the column once. A long column's rows are found through
their 64-bit hashes, sorted once: a question hashes only what it asks and finds it by binary search, and
each candidate row is compared as text, so a hash collision never makes a match (the hash is keyed afresh
for each lookup, so a table cannot be written to collide). A short column's rows are grouped by value, and
``index_in`` hashes its few values on each question, which costs less there than hashing the question.
"""

from __future__ import annotations

import secrets

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icebook.io.arrow_columns import single_array

HASHED_FROM = 16_384
"""Rows from which a column's hashes are sorted once. Below it, ``index_in`` hashing the column's values on
each question is cheaper (at 8,400 paths, 0.35 ms a question of 2,500, against 0.7 ms through the hashes)."""
_SLICE = 1 << 16


def _hashes(values: pa.Array, key: str) -> np.ndarray:
    """SipHash-2-4 of each string under ``key`` (16 characters), a slice at a time so that a long column is
    never held as Python strings all at once."""
    import pandas as pd  # its vectorised SipHash (pyarrow has imported pandas by the time a lookup is made)

    parts = [
        pd.util.hash_array(values.slice(start, _SLICE).to_numpy(zero_copy_only=False), hash_key=key, categorize=False)
        for start in range(0, len(values), _SLICE)
    ]
    return np.concatenate([np.zeros(0, dtype=np.uint64), *parts])


def _numpy(array: pa.Array) -> np.ndarray:
    return np.asarray(array.to_numpy(zero_copy_only=False))


def expand_runs(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For runs ``[starts[i], starts[i] + counts[i])``: (the run of each element, the elements), in order."""
    which = np.repeat(np.arange(len(counts)), counts)
    return which, np.repeat(starts - (np.cumsum(counts) - counts), counts) + np.arange(len(which))


class StringLookup:
    """A string column (nulls hold no value), indexed once for many ``matches`` against it."""

    def __init__(self, column: pa.Array | pa.ChunkedArray, *, hashed_from: int = HASHED_FROM) -> None:
        self._column = single_array(column)
        self._key = secrets.token_hex(8)
        valid = np.flatnonzero(_numpy(self._column.is_valid()))
        self._sorted: np.ndarray | None = None
        if len(self._column) >= hashed_from:
            # Each valid row's hash, sorted: a row is a candidate for every value of its hash.
            hashes = _hashes(
                self._column.take(pa.array(valid)) if len(valid) < len(self._column) else self._column, self._key
            )
            order = np.argsort(hashes, kind="stable")
            self._rows, self._sorted = valid[order], hashes[order]
            return
        # A few values: the rows grouped by value, each group in row order, for ``index_in`` to find.
        encoded = pc.dictionary_encode(self._column)
        self._values: pa.Array = encoded.dictionary
        codes = _numpy(pc.fill_null(encoded.indices, -1))[valid].astype(np.int64)
        self._rows = valid[np.argsort(codes, kind="stable")]
        self._starts = np.concatenate([[0], np.cumsum(np.bincount(codes, minlength=len(self._values)))])

    def _pairs(self, asked: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """(positions in ``asked``, indexes into ``self._rows``) of every pair holding equal text."""
        if self._sorted is None:
            found = pc.index_in(asked, value_set=self._values, skip_nulls=True)
            positions = np.flatnonzero(_numpy(found.is_valid()))
            codes = _numpy(found)[positions].astype(np.int64)
            low = self._starts[codes]
            which, at = expand_runs(low, self._starts[codes + 1] - low)
            return positions[which], at
        positions = np.flatnonzero(_numpy(asked.is_valid()))
        if len(positions) < len(asked):
            asked = asked.take(pa.array(positions))
        hashes = _hashes(asked, self._key)
        low = np.searchsorted(self._sorted, hashes, "left")
        which, at = expand_runs(low, np.searchsorted(self._sorted, hashes, "right") - low)
        same = pc.equal(self._column.take(pa.array(self._rows[at])), asked.take(pa.array(which)))
        kept = _numpy(pc.fill_null(same, False)).astype(bool)
        return positions[which[kept]], at[kept]

    def matches(self, values: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
        """(positions in ``values``, rows of the column) of every pair holding equal text, in the order of
        ``values``, then of the column's rows; a null matches nothing."""
        if isinstance(values, pa.ChunkedArray) and values.num_chunks > 1:
            # Chunk by chunk: a plan's millions of paths in one array would pass Arrow's 2 GiB of offsets.
            found = [self.matches(chunk) for chunk in values.chunks]
            starts = np.cumsum([0, *(len(chunk) for chunk in values.chunks)])
            return (
                np.concatenate([p + start for (p, _), start in zip(found, starts, strict=False)]),
                np.concatenate([rows for _, rows in found]),
            )
        asked = single_array(values)
        if asked.type != self._column.type:
            asked = asked.cast(self._column.type)
        if not len(asked) or not len(self._rows):
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty
        positions, at = self._pairs(asked)
        return positions.astype(np.int64), self._rows[at].astype(np.int64)

    def contains(self, values: pa.Array | pa.ChunkedArray) -> np.ndarray:
        """Whether each of ``values`` is in the column (a null is not)."""
        found = np.zeros(len(values), dtype=bool)
        found[self.matches(values)[0]] = True
        return found


__all__ = ["HASHED_FROM", "StringLookup", "expand_runs"]
