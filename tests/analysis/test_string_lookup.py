"""``StringLookup`` finds what pyarrow's ``index_in``/``is_in`` find, pair by pair, with the column indexed once:
through sorted hashes (``hashed_from=0``) and through ``index_in`` (a column of few values) alike."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from icebook.analysis import string_lookup
from icebook.analysis.string_lookup import StringLookup


def _expected_pairs(column: list[str | None], values: list[str | None]) -> list[tuple[int, int]]:
    return [(i, r) for i, v in enumerate(values) for r, c in enumerate(column) if v is not None and c == v]


def _pairs(lookup: StringLookup, values: pa.Array) -> list[tuple[int, int]]:
    positions, rows = lookup.matches(values)
    return list(zip(positions.tolist(), rows.tolist(), strict=True))


BOTH = pytest.mark.parametrize("hashed_from", [0, string_lookup.HASHED_FROM], ids=["hashed", "index_in"])


@BOTH
@pytest.mark.parametrize("seed", range(4))
def test_every_equal_pair_is_found_in_order_with_duplicates_and_nulls_on_both_sides(
    seed: int, hashed_from: int
) -> None:
    rng = random.Random(seed)
    words = [f"s3://bucket/data/part-{n}.parquet" for n in range(40)] + ["", "é/ü", "a\nb"]
    column = [rng.choice([*words, None]) for _ in range(300)]
    values = [rng.choice([*words, None, "not/listed"]) for _ in range(120)]
    lookup = StringLookup(pa.array(column, pa.string()), hashed_from=hashed_from)

    assert _pairs(lookup, pa.array(values, pa.string())) == _expected_pairs(column, values)
    contained = lookup.contains(pa.array(values, pa.string()))
    assert contained.tolist() == [v is not None and v in column for v in values]
    # pyarrow's own answer, hashing the value set on each call, agrees
    assert contained.tolist() == pc.is_in(pa.array(values), value_set=pa.array(column), skip_nulls=True).to_pylist()


def test_a_hash_collision_never_makes_a_match(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every string hashes alike: each question sees every row as a candidate, and only equal text matches.
    monkeypatch.setattr(string_lookup, "_hashes", lambda values, key: np.zeros(len(values), dtype=np.uint64))
    column = ["a", "b", "a", "c"]
    lookup = StringLookup(pa.array(column), hashed_from=0)

    assert _pairs(lookup, pa.array(["c", "a", "z"])) == [(0, 3), (1, 0), (1, 2)]


@BOTH
def test_empty_sides_chunked_and_large_strings(hashed_from: int) -> None:
    empty = StringLookup(pa.array([], pa.string()), hashed_from=hashed_from)
    assert _pairs(empty, pa.array(["a"])) == []
    assert empty.contains(pa.array(["a", None])).tolist() == [False, False]

    lookup = StringLookup(pa.chunked_array([["x", "y"], ["z"]], pa.large_string()), hashed_from=hashed_from)
    assert _pairs(lookup, pa.chunked_array([["z"], [None, "x"]], pa.string())) == [(0, 2), (2, 0)]
    assert _pairs(lookup, pa.chunked_array([["y"], [], ["x", "y"]], pa.string())) == [(0, 1), (1, 0), (2, 1)]
    assert _pairs(lookup, pa.array([], pa.string())) == []
    assert (
        _pairs(StringLookup(pa.array([None, None], pa.string()), hashed_from=hashed_from), pa.array([None, "a"])) == []
    )
