"""Sorted row positions as closed ranges, and as text (``"0-4, 9, 12-20"``).

A deletion vector is a set of row positions (spec: "Deletion Vectors"); people read it as the runs it
holds. One rule here, used by the DV map and by views of what a commit's vector changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np


def position_ranges(positions: np.ndarray | Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Closed ranges ``(first, last)`` of consecutive values of sorted, distinct ``positions``."""
    values = np.asarray(positions, dtype=np.int64)
    if values.size == 0:
        return ()
    breaks = np.flatnonzero(np.diff(values) != 1)
    starts = np.concatenate([[0], breaks + 1])
    ends = np.concatenate([breaks, [values.size - 1]])
    return tuple((int(values[s]), int(values[e])) for s, e in zip(starts, ends, strict=True))


def ranges_text(ranges: Iterable[tuple[int, int]], *, limit: int | None = None) -> str:
    """``"0-4, 9, 12-20"``; with ``limit``, the first ``limit`` ranges and ``"... (N more ranges)"``."""
    items = list(ranges)
    shown = items if limit is None else items[:limit]
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in shown)
    hidden = len(items) - len(shown)
    return f"{text}, ... ({hidden} more ranges)" if hidden else text


def range_difference(
    before: Sequence[tuple[int, int]], after: Sequence[tuple[int, int]]
) -> tuple[tuple[int, int], ...]:
    """Closed ranges in ``after`` and not in ``before`` (e.g. the positions a replacing DV adds)."""
    out: list[tuple[int, int]] = []
    i = 0
    for lo, hi in after:
        start = lo
        while i < len(before) and before[i][1] < start:
            i += 1
        j = i
        while start <= hi:
            if j < len(before) and before[j][0] <= hi:
                b_lo, b_hi = before[j]
                if b_lo > start:
                    out.append((start, b_lo - 1))
                start = max(start, b_hi + 1)
                j += 1
            else:
                out.append((start, hi))
                break
    return tuple(out)


__all__ = ["position_ranges", "range_difference", "ranges_text"]
