"""The shared text helpers: byte sizes, durations, times and Spark's TIMESTAMP literal."""

from __future__ import annotations

import datetime as dt

from icebook.analysis.resolve import AtTime, parse_at
from icebook.text import byte_size, duration, iso_utc, short_byte_size, spark_timestamp, utc_from_ms, utc_text

MS = 1_704_449_130_123  # 2024-01-05 10:05:30.123 UTC


def test_times_from_milliseconds_are_exact_utc() -> None:
    assert utc_from_ms(MS) == dt.datetime(2024, 1, 5, 10, 5, 30, 123_000, tzinfo=dt.UTC)
    assert utc_from_ms(-1) == dt.datetime(1969, 12, 31, 23, 59, 59, 999_000, tzinfo=dt.UTC)
    assert utc_text(MS) == "2024-01-05 10:05:30 UTC"
    assert utc_text(None) == "–"
    assert iso_utc(MS) == "2024-01-05T10:05:30.123+00:00"
    assert iso_utc(0) == "1970-01-01T00:00:00.000+00:00"


def test_iso_text_reads_back_as_the_same_time() -> None:
    assert parse_at(iso_utc(MS), refs=()) == AtTime(MS)


def test_spark_timestamp_keeps_microseconds() -> None:
    assert spark_timestamp(MS) == "TIMESTAMP '2024-01-05 10:05:30.123000'"
    assert spark_timestamp(0) == "TIMESTAMP '1970-01-01 00:00:00.000000'"


def test_durations_in_their_largest_unit() -> None:
    day, hour, minute = 86_400_000, 3_600_000, 60_000
    assert [duration(ms) for ms in (3 * day + day // 2, 2 * hour, 90 * minute, 12_000, 0)] == [
        "3.5 days",
        "2.0 hours",
        "1.5 hours",
        "12.0 seconds",
        "0.0 seconds",
    ]
    assert duration(None) == "–"


def test_byte_sizes() -> None:
    assert [byte_size(n) for n in (0, 512, 1536, 3 * 1024**2, 2 * 1024**5)] == [
        "0 B",
        "512 B",
        "1.5 KiB",
        "3.0 MiB",
        "2048.0 TiB",
    ]
    assert [short_byte_size(n) for n in (0, 2048, 20 * 1024, 1536)] == ["0 B", "2 KiB", "20 KiB", "1.5 KiB"]
