"""Chart fixes: time axes that read well at any span, file-size bins with round edges, and a
partition heatmap that stays small (and still counts every record) with hundreds of partitions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import icebook
from icebook import display as D
from icebook.display.charts import (
    MAX_HEATMAP_COLUMNS,
    MAX_HEATMAP_ROWS,
    MAX_TIME_TICKS,
    partition_frame,
    size_bins,
    size_edges,
    time_axis,
)
from icebook.text import short_byte_size


def _ticks(times: list[str]) -> tuple[list[pd.Timestamp], str]:
    axis, _ = time_axis(pd.Series(pd.to_datetime(times, utc=True)))
    spec = axis.to_dict()
    return [pd.Timestamp(v, unit="ms", tz="UTC") for v in spec["values"]], spec["format"]


@pytest.mark.parametrize(
    ("times", "fmt", "step"),
    [
        (["2024-01-01 10:00:00.100", "2024-01-01 10:00:02.600", "2024-01-01 10:00:07.300"], "%H:%M:%S", "1s"),
        (["2024-01-01 10:00:00", "2024-01-01 10:40:00"], "%H:%M", "1min"),
        (["2024-01-01 10:00:00", "2024-01-02 08:00:00"], "%b %d %H:%M", "1h"),
        (["2024-01-01", "2024-02-20"], "%b %d", "1D"),
        (["2022-01-01", "2024-06-01"], "%b %Y", None),
        (["2001-01-01", "2024-06-01"], "%Y", None),
    ],
)
def test_time_axis_ticks_are_whole_units(times: list[str], fmt: str, step: str | None) -> None:
    ticks, got = _ticks(times)
    assert got == fmt
    assert 2 <= len(ticks) <= MAX_TIME_TICKS + 1
    assert all(t.microsecond == 0 and t.nanosecond == 0 for t in ticks)  # never ".500"
    if step:
        assert all((t - ticks[0]) % pd.Timedelta(step) == pd.Timedelta(0) for t in ticks)
    labels = [t.strftime(fmt) for t in ticks]
    assert len(set(labels)) == len(labels)


def test_a_single_commit_gets_a_readable_axis() -> None:
    ticks, fmt = _ticks(["2024-01-01 10:00:00.250"])
    assert fmt == "%H:%M:%S" and len(ticks) >= 2


@pytest.mark.parametrize(
    ("sizes", "bins"),
    [([800, 1200, 3000], (8, 16)), ([1500, 1520, 1700], (8, 16)), ([100, 5_000, 2_000_000, 50_000_000], (4, 16))],
)
def test_size_bins_are_round_and_count_every_file(sizes: list[int], bins: tuple[int, int]) -> None:
    series = pd.Series(sizes)
    table = size_bins(series, pd.Series([0] * len(sizes)))
    assert table["files"].sum() == len(sizes)
    assert bins[0] <= table["order"].nunique() <= bins[1]
    edges, _ = size_edges(series)
    widths = pd.Series(edges).diff().dropna()
    assert (widths > 0).all() and edges[0] <= min(sizes) and edges[-1] > max(sizes)
    assert all(len(label) <= 24 for label in table["bin"])
    assert table["bin"].nunique() == table["order"].nunique()


def test_short_byte_size() -> None:
    assert [short_byte_size(n) for n in (512, 1024, 1536, 10 * 1024 * 1024, 3 * 1024**4)] == [
        "512 B",
        "1 KiB",
        "1.5 KiB",
        "10 MiB",
        "3 TiB",
    ]


class _Partitions:
    """Enough of a table for the heatmap: ``inspect.partitions()`` with ``n`` hourly partitions."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.inspect = self

    def partitions(self, at: Any = None) -> pd.DataFrame:
        hours = pd.date_range("2024-03-01", periods=self.n, freq="h")
        return pd.DataFrame(
            {
                "partition": [
                    {"ts_hour": h.strftime("%Y-%m-%d-%H"), "region": f"r{i % 7}"} for i, h in enumerate(hours)
                ],
                "spec_id": 0,
                "record_count": [1 + (i * 37) % 101 for i in range(self.n)],
                "file_count": 1,
                "total_data_file_size_in_bytes": 1000,
            }
        )


def test_heatmap_of_hundreds_of_partitions_keeps_the_top_and_sums_the_rest() -> None:
    fake = _Partitions(400)
    cells, total = partition_frame(fake)  # type: ignore[arg-type]
    assert total == 400
    assert cells["row"].nunique() <= MAX_HEATMAP_ROWS and cells["column"].nunique() <= MAX_HEATMAP_COLUMNS
    assert cells["records"].sum() == fake.partitions()["record_count"].sum()
    assert cells["partitions"].sum() == 400
    assert any(r.startswith("(") and "other values" in r for r in cells["row"])
    spec = D.partition_heatmap(fake).vega  # type: ignore[arg-type]
    assert "vega/v5" in spec["$schema"]


@pytest.mark.spark
def test_charts_of_the_teaching_tables(scenario_locations: dict[str, Path]) -> None:
    sales = icebook.open(str(scenario_locations["transforms"]))
    cells, total = partition_frame(sales)
    assert total > 200 and len(cells) <= MAX_HEATMAP_ROWS * MAX_HEATMAP_COLUMNS
    assert cells["records"].sum() == sales.read().num_rows
    histogram = size_bins(sales.inspect.files()["file_size_in_bytes"], sales.inspect.files()["content"])
    assert histogram["files"].sum() == len(sales.inspect.files())
    for chart in (D.snapshot_timeline_chart(sales), D.file_size_histogram(sales), D.partition_heatmap(sales)):
        assert "<svg" in chart.to_svg()
