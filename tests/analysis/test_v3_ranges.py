"""Row positions as ranges and text (``analysis/v3/ranges.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from icebook.analysis.v3.ranges import position_ranges, range_difference, ranges_text


def test_runs_become_closed_ranges() -> None:
    positions = np.array([0, 1, 2, 3, 4, 9, 12, 13, 14, 15, 16, 17, 18, 19, 20], dtype=np.int64)
    ranges = position_ranges(positions)
    assert ranges == ((0, 4), (9, 9), (12, 20))
    assert ranges_text(ranges) == "0-4, 9, 12-20"


def test_empty_and_large_positions() -> None:
    assert position_ranges(np.zeros(0, np.int64)) == ()
    assert ranges_text(()) == ""
    big = [2**32 - 1, 2**32, 2**32 + 1, 2**40]
    assert position_ranges(big) == ((2**32 - 1, 2**32 + 1), (2**40, 2**40))


def test_limit_says_how_many_are_hidden() -> None:
    ranges = position_ranges(list(range(0, 20, 2)))
    assert ranges_text(ranges, limit=3) == "0, 2, 4, ... (7 more ranges)"


@pytest.mark.parametrize(
    ("before", "after", "added"),
    [
        ((), ((0, 4),), ((0, 4),)),
        (((0, 4),), ((0, 4),), ()),
        (((0, 4),), ((0, 9),), ((5, 9),)),
        (((2, 3), (6, 6)), ((0, 9),), ((0, 1), (4, 5), (7, 9))),
        (((0, 4), (10, 12)), ((0, 4), (8, 12), (20, 20)), ((8, 9), (20, 20))),
    ],
)
def test_difference_is_what_after_adds(
    before: tuple[tuple[int, int], ...], after: tuple[tuple[int, int], ...], added: tuple[tuple[int, int], ...]
) -> None:
    assert range_difference(before, after) == added
    # the same answer as sets of positions
    assert _expand(added) == _expand(after) - _expand(before)


def _expand(ranges: tuple[tuple[int, int], ...]) -> set[int]:
    return {p for a, b in ranges for p in range(a, b + 1)}
