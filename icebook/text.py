"""Pure text helpers every layer shares: byte sizes, durations, times (milliseconds since the epoch, UTC) and
Spark SQL's literals and procedure calls. Standard library only, importable from anywhere (like ``icebook.errors``)."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable

MISSING = "–"
"""What a value that is not known reads as."""

EPOCH = _dt.datetime(1970, 1, 1)
"""The epoch as a naive datetime (Iceberg's timestamps without a zone count from it, read as UTC)."""
EPOCH_UTC = EPOCH.replace(tzinfo=_dt.UTC)
"""The epoch as an aware UTC datetime."""
EPOCH_DATE = EPOCH.date()
"""The epoch as a date (Iceberg's dates count days from it)."""
DAY_MS = 86_400_000

BYTE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")
"""Binary units, each 1024 times the one before."""


def byte_size(n: int | float | None) -> str:
    """``1536`` -> ``'1.5 KiB'``, ``512`` -> ``'512 B'``: one decimal in the largest unit below 1024."""
    if n is None:
        return MISSING
    value = float(n)
    for unit in BYTE_UNITS:
        if abs(value) < 1024 or unit == BYTE_UNITS[-1]:
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError  # the loop returns at its last unit


def short_byte_size(n: float) -> str:
    """``1536`` -> ``'1.5 KiB'``, ``2048`` -> ``'2 KiB'``, ``20480`` -> ``'20 KiB'``: for chart labels,
    a decimal only below 10 and never ``.0``."""
    for power in range(len(BYTE_UNITS) - 1, 0, -1):
        size = 1 << (10 * power)
        if n >= size:
            value = n / size
            text = f"{value:.1f}".removesuffix(".0") if value < 10 else f"{value:.0f}"
            return f"{text} {BYTE_UNITS[power]}"
    return f"{n:.0f} B"


def duration(ms: int | None) -> str:
    """A span of milliseconds in its largest unit: ``'3.5 days'``, ``'2.0 hours'``, ``'12.0 seconds'``."""
    if ms is None:
        return MISSING
    seconds = ms / 1000
    for unit, size in (("days", 86_400), ("hours", 3600), ("minutes", 60)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.1f} seconds"


def utc_from_ms(ms: int) -> _dt.datetime:
    """Milliseconds since the epoch as an aware UTC datetime (exact: no float on the way)."""
    return EPOCH_UTC + _dt.timedelta(milliseconds=ms)


def utc_text(ms: int | None) -> str:
    """``'2024-01-05 10:00:00 UTC'``: a time as the views show it."""
    return MISSING if ms is None else utc_from_ms(ms).strftime("%Y-%m-%d %H:%M:%S UTC")


def iso_utc(ms: int) -> str:
    """``'2024-01-05T10:00:00.123+00:00'``: ISO 8601 to the millisecond, as ``at=`` reads it back."""
    return utc_from_ms(ms).isoformat(timespec="milliseconds")


def spark_timestamp(ms: int) -> str:
    """Spark SQL's ``TIMESTAMP '2024-01-05 10:00:00.123000'`` for ``ms`` since the epoch: UTC (icebook's
    Spark session runs in UTC), to the microsecond, so the literal names the same instant."""
    return f"TIMESTAMP '{utc_from_ms(ms).strftime('%Y-%m-%d %H:%M:%S.%f')}'"


def spark_string(text: str) -> str:
    """A Spark SQL string literal (backslash and quote escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def spark_call(identifier: str, procedure: str, args: Iterable[tuple[str, str]] = ()) -> str:
    """``CALL <catalog>.system.<procedure>(table => '<db.table>', name => value, ...)`` for the table
    ``identifier`` (``catalog.db.table``); ``args`` are (name, Spark SQL value) pairs."""
    catalog, _, table = identifier.partition(".")
    rendered = [f"table => {spark_string(table)}", *(f"{name} => {value}" for name, value in args)]
    return f"CALL {catalog}.system.{procedure}({', '.join(rendered)})"


__all__ = [
    "BYTE_UNITS",
    "EPOCH",
    "MISSING",
    "byte_size",
    "duration",
    "iso_utc",
    "short_byte_size",
    "spark_call",
    "spark_string",
    "spark_timestamp",
    "utc_from_ms",
    "utc_text",
]
