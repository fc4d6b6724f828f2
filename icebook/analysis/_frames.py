"""Building pandas frames from rows without losing 64-bit ids.

A column of ints with a None in it would become float64 in ``pd.DataFrame(rows)`` and round
19-digit snapshot ids; nullable integer columns are therefore built directly as ``Int64``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import attrgetter
from typing import Any, Literal

import pandas as pd

from icebook.errors import NotFound


def frame(rows: Iterable[Mapping[str, Any]], columns: Sequence[str], *, ints: Iterable[str] = ()) -> pd.DataFrame:
    """A DataFrame with ``columns`` in order; ``ints`` become nullable Int64, the rest keep their values."""
    materialized = list(rows)
    int_columns = set(ints)
    data: dict[str, Any] = {}
    for c in columns:
        values = [r.get(c) for r in materialized]
        if c in int_columns:
            data[c] = pd.array(values, dtype=pd.Int64Dtype())
        elif all(v is None or isinstance(v, str) for v in values):
            data[c] = pd.Series(values, dtype=object)  # keep None, not NaN
        else:
            data[c] = values
    return pd.DataFrame(data, columns=list(columns))


def attribute_frame(
    items: Iterable[Any],
    columns: Sequence[str],
    *,
    ints: Iterable[str] = (),
    derived: Mapping[str, Callable[[Any], Any]] | None = None,
) -> pd.DataFrame:
    """``frame`` of one row per item: each column is the item's attribute of that name, or what
    ``derived[column]`` makes of the item (a column named otherwise, or a value shown another way)."""
    getters = [(c, (derived or {}).get(c) or attrgetter(c)) for c in columns]
    return frame(({c: get(item) for c, get in getters} for item in items), columns, ints=ints)


def utc_timestamp(ms: int | None) -> pd.Timestamp | None:
    """An instant in milliseconds since the epoch as a frame shows it: a UTC ``pd.Timestamp`` (None stays None)."""
    return None if ms is None else pd.Timestamp(ms, unit="ms", tz="UTC")


def exact_frame(rows: Any) -> pd.DataFrame:
    """Arrow rows as pandas that keep every value's type: each column a ``pd.ArrowDtype`` (a nullable
    long stays a 64-bit integer, a date a date, a map a map), never numpy's float64 or datetime64."""
    from icebook.analysis.variant_text import mark_variant_columns

    frame: pd.DataFrame = rows.to_pandas(types_mapper=pd.ArrowDtype)
    return mark_variant_columns(frame, rows.schema)  # shown as JSON text (frame_variants_as_json)


Output = Literal["pandas", "arrow", "polars"]


def query_result(rows: Any, output: Output) -> Any:
    """A query's Arrow result as the caller asked for it: ``exact_frame`` pandas, Arrow or polars."""
    if output == "pandas":
        return exact_frame(rows)
    if output == "arrow":
        return rows
    if output == "polars":
        import polars as pl

        return pl.from_arrow(rows)
    raise NotFound(f"output {output!r}", available=["pandas", "arrow", "polars"])
