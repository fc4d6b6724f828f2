"""Charts of a table with altair, rendered offline in JupyterLab 4.6.

Recipe (see tests/browser/test_lab_smoke.py): altair 6 writes Vega-Lite v6, which JupyterLab 4.6
cannot render, and altair's default renderer fetches vega from a CDN. So each chart is compiled
to Vega 5 with vl-convert (Vega-Lite 5.20) and shown as ``application/vnd.vega.v5+json``, which
JupyterLab's built-in renderer draws with no network; the output is saved in the notebook.
JupyterLab prefers ``image/svg+xml`` over the vega mimetype, so a static SVG (for viewers without
vega, e.g. GitHub) is only added when asked for (``VegaChart(..., svg=True)``, or ``chart.to_svg()``).
Data is aggregated first (file sizes and partitions manifest by manifest, never the whole listing), so a chart
of a 500,000-file table carries a few hundred rows.
"""

from __future__ import annotations

import math
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from icebook.analysis._frames import utc_timestamp
from icebook.analysis.ancestry import ancestor_ids
from icebook.analysis.history.evolution import Evolution
from icebook.analysis.resolve import resolve_snapshot
from icebook.analysis.tables.aggregates import CONTENT_KINDS, SizeCounts, bin_index, file_size_counts
from icebook.display._base import TableLike, cell_text, content_label
from icebook.spec.metadata import MAIN_BRANCH
from icebook.spec.snapshots import Operation
from icebook.text import BYTE_UNITS, byte_size, short_byte_size

VL_VERSION = "5.20"
_OP_COLOR = {
    Operation.APPEND: "#2da44e",
    Operation.OVERWRITE: "#fb8500",
    Operation.DELETE: "#cf222e",
    Operation.REPLACE: "#8c959f",
}
OP_COLORS = alt.Scale(domain=[op.value for op in _OP_COLOR], range=list(_OP_COLOR.values()))
MAX_HEATMAP_ROWS = 20
MAX_HEATMAP_COLUMNS = 24
MAX_STORAGE_PARTITIONS = 20
_STORAGE_COLOR = {
    "data": "#2da44e",
    "deletes": "#cf222e",
    "other refs": "#0969da",
    "history": "#fb8500",
    "metadata": "#8c959f",
    "orphans": "#8250df",
    "hidden files": "#d0d7de",
}
STORAGE_COLORS = alt.Scale(domain=list(_STORAGE_COLOR), range=list(_STORAGE_COLOR.values()))


class VegaChart:
    """An altair chart that displays as Vega 5 (offline) plus a static SVG."""

    def __init__(self, chart: alt.TopLevelMixin, *, title: str = "chart", svg: bool = False) -> None:
        self.chart = chart
        self.title = title
        self.svg = svg
        self._vega: dict[str, Any] | None = None

    @property
    def vega(self) -> dict[str, Any]:
        """The Vega 5 spec compiled by vl-convert."""
        if self._vega is None:
            import vl_convert as vlc

            self._vega = vlc.vegalite_to_vega(self.chart.to_dict(), vl_version=VL_VERSION)
        return self._vega

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
        bundle: dict[str, Any] = {"application/vnd.vega.v5+json": self.vega, "text/plain": f"<{self.title}>"}
        if self.svg:
            try:
                import vl_convert as vlc

                bundle["image/svg+xml"] = vlc.vega_to_svg(self.vega)
            except Exception:  # the SVG is a courtesy for kernel-less viewers; vega still renders
                pass
        # JupyterLab draws on a canvas by default; SVG keeps text crisp and lets tests read the labels.
        return bundle, {"application/vnd.vega.v5+json": {"embed_options": {"renderer": "svg"}}}

    def to_svg(self) -> str:
        """A static SVG rendering (vl-convert, no browser)."""
        import vl_convert as vlc

        svg: str = vlc.vega_to_svg(self.vega)
        return svg


# ---------------------------------------------------------------- data


def snapshot_metrics(table: TableLike) -> pd.DataFrame:
    """One row per snapshot and metric (records, data files, bytes) from snapshot summaries."""
    main = set(ancestor_ids(table.metadata, table.metadata.current_snapshot_id))
    rows = []
    for s in table.snapshots:
        base = {
            "committed_at": utc_timestamp(s.timestamp_ms),
            "snapshot_id": str(s.snapshot_id),
            "operation": s.operation or "?",
            "line": MAIN_BRANCH if s.snapshot_id in main else "other branch",
        }
        for key, metric in (
            ("total-records", "records"),
            ("total-data-files", "data files"),
            ("total-files-size", "bytes"),
        ):
            value = s.metric(key)
            if value is not None:
                rows.append({**base, "metric": metric, "value": value})
    return pd.DataFrame(rows, columns=["committed_at", "snapshot_id", "operation", "line", "metric", "value"])


MAX_SIZE_BINS = 16
_UNITS = tuple((1 << (10 * power), unit) for power, unit in enumerate(BYTE_UNITS))
# 1-2-5 steps within each binary unit: ..., 200 B, 500 B, 1 KiB, 2 KiB, 5 KiB, 10 KiB, ...
_LADDER = tuple(m * 10**e * size for size, _ in _UNITS for e in range(3) for m in (1, 2, 5))
_COARSE_LADDER = tuple(10**e * size for size, _ in _UNITS for e in range(3))


def _unit_for(n: float) -> tuple[int, str]:
    return next(((size, name) for size, name in reversed(_UNITS) if n >= size), _UNITS[0])


def _nice_width(raw: float) -> float:
    """The smallest 1, 2, 2.5 or 5 times a power of ten that is at least ``raw``."""
    exponent = math.floor(math.log10(raw)) if raw > 0 else 0
    for mantissa in (1.0, 2.0, 2.5, 5.0, 10.0):
        if mantissa * 10**exponent >= raw:
            return float(mantissa * 10**exponent)
    return float(10 ** (exponent + 1))


def size_edges(sizes: pd.Series, max_bins: int = MAX_SIZE_BINS) -> tuple[np.ndarray, tuple[int, str]]:
    """Bin edges for file sizes and the unit to label them in (``edges_between``)."""
    return edges_between(float(sizes.min()), float(sizes.max()), max_bins)


def edges_between(lo: float, hi: float, max_bins: int = MAX_SIZE_BINS) -> tuple[np.ndarray, tuple[int, str]]:
    """Bin edges for file sizes from ``lo`` to ``hi`` and the unit to label them in.

    Sizes within a factor of ten get equal bins of a round width in one unit (0.2 KiB steps, say);
    wider spreads get the 1-2-5 ladder (1 KiB, 2 KiB, 5 KiB, 10 KiB, ...). No bin is hair-thin and
    every edge reads as a round number.
    """
    unit = _unit_for(hi)
    if hi < 10 * max(lo, 1.0):
        spread = max(hi - lo, hi * 0.1, 1.0)  # one size only: a bin a tenth of it wide
        width = _nice_width(spread / unit[0] / (max_bins - 2)) * unit[0]
        start = math.floor(lo / width) * width
        count = max(1, math.floor((hi - start) / width) + 1)
        return np.array([start + i * width for i in range(count + 1)]), unit
    for ladder in (_LADDER, _COARSE_LADDER):  # the coarse one when 1-2-5 steps make too many bins
        first = max(i for i, edge in enumerate(ladder) if edge <= max(lo, 1.0))
        last = next((i for i, edge in enumerate(ladder) if edge > hi), len(ladder) - 1)
        edges = list(ladder[first : last + 1])
        if len(edges) <= max_bins + 1:
            break
    return np.array(edges, dtype="float64"), unit


def _in_unit(n: float, unit: tuple[int, str]) -> str:
    value = n / unit[0]
    return f"{value:.0f}" if abs(value - round(value)) < 1e-9 else f"{value:.2f}".rstrip("0").rstrip(".")


def bin_label(lo: float, hi: float, unit: tuple[int, str] | None = None) -> str:
    """'0.8–1 KiB' for an equal-width bin; '1 KiB–2 KiB' across the ladder."""
    if unit is not None:
        return f"{_in_unit(lo, unit)}–{_in_unit(hi, unit)} {unit[1]}"
    return f"{short_byte_size(lo)}–{short_byte_size(hi)}"


def size_bins(sizes: pd.Series, content: pd.Series, max_bins: int = MAX_SIZE_BINS) -> pd.DataFrame:
    """Histogram of file sizes per content type, pre-aggregated for the chart: one row per (bin,
    content), empty bins included so the shape of the distribution is faithful."""
    if not len(sizes):
        return _bins_frame(SizeCounts(edges=np.zeros(0), counts=np.zeros((0, 0)), files=0, smallest=None, largest=None))
    edges, unit = size_edges(sizes.astype("float64"), max_bins)
    counts = np.zeros((CONTENT_KINDS, len(edges) - 1), dtype=np.int64)
    codes = content.astype(int).to_numpy()
    np.add.at(counts, (np.clip(codes, 0, CONTENT_KINDS - 1), bin_index(sizes.astype("float64").to_numpy(), edges)), 1)
    return _bins_frame(
        SizeCounts(edges=edges, counts=counts, files=len(sizes), smallest=int(sizes.min()), largest=int(sizes.max())),
        unit,
    )


def streamed_size_bins(table: TableLike, at: Any = None, max_bins: int = MAX_SIZE_BINS) -> tuple[pd.DataFrame, int]:
    """(``size_bins`` of the live files at ``at``, number of files), counted manifest by manifest: one pass
    counts sizes on the 1-2-5 ladder (exact whenever the chosen edges are ladder steps), a second counts
    into equal-width edges when sizes lie within a factor of ten."""
    store, snapshot = table.store, resolve_snapshot(table.metadata, at)
    ladder = file_size_counts(store, snapshot, np.array(_LADDER, dtype="float64"))
    if ladder.smallest is None or ladder.largest is None:
        return _bins_frame(ladder), 0
    edges, unit = edges_between(float(ladder.smallest), float(ladder.largest), max_bins)
    if set(edges) <= set(_LADDER):
        # every ladder bin lies inside one of the chosen bins: sum the ladder's counts into them
        into = bin_index(np.array(_LADDER[:-1], dtype="float64"), edges)
        counts = np.zeros((CONTENT_KINDS, len(edges) - 1), dtype=np.int64)
        np.add.at(counts.T, into, ladder.counts.T)
        chosen = SizeCounts(
            edges=edges, counts=counts, files=ladder.files, smallest=ladder.smallest, largest=ladder.largest
        )
    else:
        chosen = file_size_counts(store, snapshot, edges)
    return _bins_frame(chosen, unit), chosen.files


def _bins_frame(sizes: SizeCounts, unit: tuple[int, str] | None = None) -> pd.DataFrame:
    columns = ["content", "bin", "order", "lo", "hi", "files"]
    edges = sizes.edges
    if not sizes.files:
        return pd.DataFrame(columns=columns)
    equal_width = len(edges) > 2 and math.isclose(edges[1] - edges[0], edges[-1] - edges[-2])
    rows = []
    for i in range(len(edges) - 1):
        label = bin_label(edges[i], edges[i + 1], unit if equal_width or len(edges) == 2 else None)
        present = sorted(content_label(code) for code in range(CONTENT_KINDS) if sizes.counts[code, i]) or ["data"]
        for kind in present:
            n = sum(int(sizes.counts[code, i]) for code in range(CONTENT_KINDS) if content_label(code) == kind)
            rows.append({"content": kind, "bin": label, "order": i, "lo": edges[i], "hi": edges[i + 1], "files": n})
    return pd.DataFrame(rows, columns=columns)


# ---------------------------------------------------------------- axes

# (largest span in seconds, Vega time interval, tick steps to choose from, label format)
_TIME_SCALES: tuple[tuple[float, str, tuple[int, ...], str], ...] = (
    (90, "second", (1, 2, 5, 10, 15, 30), "%H:%M:%S"),
    (90 * 60, "minute", (1, 2, 5, 10, 15, 30), "%H:%M"),
    (2 * 86_400, "hour", (1, 2, 3, 6, 12), "%b %d %H:%M"),
    (120 * 86_400, "day", (1, 2, 7, 14), "%b %d"),
    (3 * 365 * 86_400, "month", (1, 2, 3, 6), "%b %Y"),
    (math.inf, "year", (1, 2, 5, 10, 20, 50), "%Y"),
)
_UNIT_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86_400, "month": 30 * 86_400, "year": 365 * 86_400}
MAX_TIME_TICKS = 8


def time_axis(times: pd.Series, title: str = "committed at (UTC)") -> tuple[alt.Axis, alt.Scale]:
    """An axis (and scale) for commit times that labels whole seconds, minutes, hours, days, months
    or years, whichever fits the span, with at most ``MAX_TIME_TICKS`` ticks.

    Vega's default picks millisecond ticks (".500") for commits a few seconds apart; here the tick
    interval never goes below one second, and a single instant gets a minute of room either side.
    """
    stamps = pd.to_datetime(times, utc=True).dropna()
    if stamps.empty:
        return alt.Axis(title=title), alt.Scale(type="utc")
    start, end = stamps.min(), stamps.max()
    span = (end - start).total_seconds()
    if span < 1:
        start, end = start - pd.Timedelta(seconds=30), end + pd.Timedelta(seconds=30)
        span = 60.0
    _, unit, steps, fmt = next(scale for scale in _TIME_SCALES if span <= scale[0])
    step = next((n for n in steps if span / (_UNIT_SECONDS[unit] * n) <= MAX_TIME_TICKS), steps[-1])
    if unit in ("second", "minute") and start.normalize() == end.normalize():
        title = f"{title}, {start:%Y-%m-%d}"
    pad = pd.Timedelta(seconds=max(span * 0.04, 1))
    lo, hi = start - pad, end + pad
    # Explicit tick values: Vega would otherwise choose millisecond ticks for a span of seconds.
    ticks = [int(t.value // 1_000_000) for t in _ticks(lo, hi, unit, step)]
    axis = alt.Axis(title=title, format=fmt, values=ticks, labelOverlap=True, labelFlush=True)
    return axis, alt.Scale(type="utc", domain=[_vega_time(lo), _vega_time(hi)])


def _ticks(lo: pd.Timestamp, hi: pd.Timestamp, unit: str, step: int) -> pd.DatetimeIndex:
    """Round instants every ``step`` ``unit``s between ``lo`` and ``hi`` (UTC)."""
    if unit == "month":
        first = pd.Timestamp(year=lo.year, month=lo.month, day=1, tz="UTC")
        months = pd.date_range(first, hi, freq="MS")
        return months[(months >= lo) & ((months.month - 1 + 12 * months.year) % step == 0)]
    if unit == "year":
        years = pd.date_range(pd.Timestamp(year=lo.year, month=1, day=1, tz="UTC"), hi, freq="YS")
        return years[(years >= lo) & (years.year % step == 0)]
    width = pd.Timedelta(seconds=step * _UNIT_SECONDS[unit])
    first = lo.ceil(width) if unit != "day" else lo.ceil("D")
    return pd.date_range(first, hi, freq=width)


def _vega_time(t: pd.Timestamp) -> alt.DateTime:
    t = t.tz_convert("UTC")
    return alt.DateTime(
        year=t.year,
        month=t.month,
        date=t.day,
        hours=t.hour,
        minutes=t.minute,
        seconds=t.second,
        milliseconds=t.microsecond // 1000,
        utc=True,
    )


# ---------------------------------------------------------------- charts


def snapshot_timeline_chart(table: TableLike) -> VegaChart:
    """Records, data files and bytes over time (from snapshot summaries), points coloured by operation."""
    df = snapshot_metrics(table)
    axis, scale = time_axis(df["committed_at"])
    base = alt.Chart(df).encode(x=alt.X("committed_at:T", axis=axis, scale=scale))
    line = base.mark_line(color="#8c959f").encode(
        y=alt.Y("value:Q", title=None), detail="line:N", strokeDash=alt.StrokeDash("line:N", title="line")
    )
    points = base.mark_circle(size=70, opacity=1).encode(
        y="value:Q",
        color=alt.Color("operation:N", scale=OP_COLORS, title="operation"),
        tooltip=[
            "snapshot_id:N",
            "operation:N",
            "metric:N",
            alt.Tooltip("value:Q", format=","),
            alt.Tooltip("committed_at:T", format="%Y-%m-%d %H:%M:%S.%L", title="committed at (UTC)"),
        ],
    )
    chart = (
        alt.layer(line, points, data=df)
        .properties(width=560, height=110)
        .facet(row=alt.Row("metric:N", title=None, sort=["records", "data files", "bytes"]))
        .resolve_scale(y="independent")
        .properties(title="Snapshot timeline")
    )
    return VegaChart(chart, title="snapshot timeline")


_BYTES_LABEL = (
    "datum.value >= 1099511627776 ? format(datum.value / 1099511627776, '~g') + ' TiB'"
    " : datum.value >= 1073741824 ? format(datum.value / 1073741824, '~g') + ' GiB'"
    " : datum.value >= 1048576 ? format(datum.value / 1048576, '~g') + ' MiB'"
    " : datum.value >= 1024 ? format(datum.value / 1024, '~g') + ' KiB' : format(datum.value, '~g') + ' B'"
)
MAX_SIZE_LABELS = 8


def _thin(edges: list[float], limit: int) -> list[float]:
    """Every k-th edge (the first and last always), so at most ``limit`` labels share the axis."""
    step = max(1, math.ceil(len(edges) / limit))
    kept = edges[::step]
    return kept if kept[-1] == edges[-1] or len(kept) >= limit else [*kept, edges[-1]]


def file_size_histogram(table: TableLike, at: Any = None) -> VegaChart:
    """Sizes of the live data and delete files at ``at``: round bins drawn edge to edge, at most eight
    labels in KiB/MiB/GiB, a log scale when sizes span decades."""
    bins, files = streamed_size_bins(table, at)
    edges = sorted(set(bins["lo"]) | set(bins["hi"])) if len(bins) else [0.0, 1.0]
    widths = np.diff(edges)
    log = len(widths) > 1 and not np.allclose(widths, widths[0])
    tallest = int(bins.groupby("order")["files"].sum().max()) if len(bins) else 1
    # Whole numbers of files only: Vega would put ticks at 0.5 for small counts.
    counts = (
        alt.Axis(values=list(range(tallest + 1)), format="d") if tallest <= 10 else alt.Axis(tickMinStep=1, format="d")
    )
    chart = (
        alt.Chart(bins)
        .mark_rect(stroke="white", strokeWidth=1)
        .encode(
            x=alt.X(
                "lo:Q",
                title="file size",
                scale=alt.Scale(type="log" if log else "linear", domain=[edges[0], edges[-1]], nice=False, zero=False),
                axis=alt.Axis(values=_thin(edges, MAX_SIZE_LABELS), labelExpr=_BYTES_LABEL, labelOverlap=True),
            ),
            x2="hi:Q",
            y=alt.Y("files:Q", title="files", stack=True, axis=counts),
            color=alt.Color(
                "content:N",
                scale=alt.Scale(
                    domain=["data", "position deletes", "equality deletes"], range=["#2da44e", "#cf222e", "#bc4c00"]
                ),
            ),
            tooltip=["content:N", alt.Tooltip("bin:N", title="size"), "files:Q"],
        )
        .properties(width=560, height=200, title=f"File sizes ({files:,} live files)")
    )
    return VegaChart(chart, title="file size histogram")


def _partition_labels(partition: Any, spec_id: int) -> tuple[str, str]:
    """(row, column) of one partition: the first field down, the second (or the spec) across;
    partitions differing only in later fields share a cell."""
    values = [(k, v) for k, v in partition.items() if v is not None] if isinstance(partition, dict) else []
    if not values:
        return "unpartitioned", f"spec {spec_id}"
    row = f"{values[0][0]}={cell_text(values[0][1], 40)}"
    if len(values) == 1:
        return row, f"spec {spec_id}"
    return row, f"{values[1][0]}={cell_text(values[1][1], 40)}"


def _top(labels: pd.Series, weights: pd.Series, limit: int, other: str) -> tuple[pd.Series, int]:
    """Keep the ``limit`` labels with the most weight; the rest become ``other`` (with their count)."""
    totals = weights.groupby(labels).sum().sort_values(ascending=False, kind="stable")
    if len(totals) <= limit:
        return labels, 0
    kept = set(totals.index[: limit - 1])
    rest = len(totals) - len(kept)
    return labels.where(labels.isin(kept), other.format(n=rest)), rest


def partition_frame(
    table: TableLike, at: Any = None, max_rows: int = MAX_HEATMAP_ROWS, max_columns: int = MAX_HEATMAP_COLUMNS
) -> tuple[pd.DataFrame, int]:
    """(heatmap cells, number of partitions). Rows are the first partition field's values, columns
    the second field's (or the spec's, for one-field partitions); partitions that differ only in
    later fields are summed into one cell. Past ``max_rows`` rows or ``max_columns`` columns, the
    values with the fewest records are summed into one "other" row or column, so every record is
    counted and a table with hundreds of partitions stays legible."""
    parts = table.inspect.partitions(at)
    total = len(parts)
    columns = ["row", "column", "records", "files", "bytes", "partitions"]
    if not total:
        return pd.DataFrame(columns=columns), 0
    if "partition" not in parts.columns:  # an unpartitioned table: one row, no partition column
        parts = parts.assign(partition=[{}] * total, spec_id=0)
    labels = [_partition_labels(p, int(spec)) for p, spec in zip(parts["partition"], parts["spec_id"], strict=True)]
    df = pd.DataFrame(
        {
            "row": [r for r, _ in labels],
            "column": [c for _, c in labels],
            "records": parts["record_count"].astype("int64").to_numpy(),
            "files": parts["file_count"].astype("int64").to_numpy(),
            "bytes": parts["total_data_file_size_in_bytes"].astype("int64").to_numpy(),
            "partitions": 1,
        }
    )
    df["row"], _ = _top(df["row"], df["records"], max_rows, "({n} other values)")
    df["column"], _ = _top(df["column"], df["records"], max_columns, "({n} others)")
    cells = df.groupby(["row", "column"], as_index=False, sort=False)[["records", "files", "bytes", "partitions"]].sum()
    return cells[columns], total


def partition_heatmap(table: TableLike, at: Any = None) -> VegaChart:
    """Records per partition: the first partition field down, the second (or the spec) across;
    later fields are summed, and beyond 20 rows or 24 columns the smallest are summed into "other"."""
    df, total = partition_frame(table, at)
    shown = f"{total:,} partitions" + (f" in {len(df)} cells" if total > len(df) else "")
    row_order = sorted(df["row"].unique(), key=lambda r: (r.startswith("("), r)) if len(df) else []
    column_order = sorted(df["column"].unique(), key=lambda c: (c.startswith("("), c)) if len(df) else []
    chart = (
        alt.Chart(df)
        .mark_rect(stroke="white", strokeWidth=1)
        .encode(
            x=alt.X("column:N", title=None, sort=column_order, axis=alt.Axis(labelAngle=-40, labelLimit=180)),
            y=alt.Y("row:N", title=None, sort=row_order, axis=alt.Axis(labelLimit=220)),
            color=alt.Color("records:Q", scale=alt.Scale(scheme="blues"), title="records"),
            tooltip=[
                "row:N",
                "column:N",
                alt.Tooltip("records:Q", format=","),
                "files:Q",
                alt.Tooltip("bytes:Q", format=","),
                alt.Tooltip("partitions:Q", title="partitions in this cell"),
            ],
        )
        .properties(width=alt.Step(22), height=alt.Step(20), title=f"Partitions ({shown})")
    )
    return VegaChart(chart, title="partition heatmap")


def files_per_spec_chart(ev: Evolution) -> VegaChart:
    """Live data files per partition spec at each snapshot: how spec evolution spreads over time."""
    df = ev.files_per_spec.copy()
    df["spec"] = "spec " + df["spec_id"].astype(str)
    df["snapshot"] = df["snapshot_id"].astype(str)
    axis, scale = time_axis(df["committed_at"])
    chart = (
        alt.Chart(df[["committed_at", "spec", "snapshot", "data_files", "delete_files"]])
        .mark_area(opacity=0.8, interpolate="step-after")
        .encode(
            x=alt.X("committed_at:T", axis=axis, scale=scale),
            y=alt.Y("data_files:Q", title="live data files", stack=True),
            color=alt.Color("spec:N", title="partition spec"),
            tooltip=["snapshot:N", "spec:N", "data_files:Q", "delete_files:Q"],
        )
        .properties(width=560, height=160, title="Live data files per partition spec")
    )
    return VegaChart(chart, title="files per spec")


def storage_frame(storage: Any) -> tuple[pd.DataFrame, tuple[int, str]]:
    """``t.storage()``'s categories as the chart draws them: each with its ``kind`` (the part before a colon:
    data, deletes, other refs, history, metadata, orphans, hidden files), ``size`` in words and ``amount``
    in the one unit of the axis (returned beside)."""
    cats = storage.categories
    unit = _unit_for(float(cats["bytes"].max()) if len(cats) else 0.0)
    df = cats.assign(
        kind=cats["category"].str.split(":", n=1).str[0].str.strip(),
        size=[byte_size(int(b)) for b in cats["bytes"]],
        amount=cats["bytes"].astype("float64") / unit[0],
    )
    return df, unit


def storage_chart(storage: Any) -> VegaChart:
    """Where a table's bytes are (``t.storage()``): one bar per category, in the report's order, coloured by
    kind; below, the content files of the partitions with the most bytes (the rest summed into one bar),
    stacked by category in the same colours."""
    df, unit = storage_frame(storage)
    total = int(df["bytes"].sum())
    bars = (
        alt.Chart(df[["category", "kind", "files", "bytes", "size", "amount", "detail"]])
        .mark_bar()
        .encode(
            y=alt.Y("category:N", sort=list(df["category"]), title=None, axis=alt.Axis(labelLimit=240)),
            x=alt.X("amount:Q", title=unit[1]),
            color=alt.Color("kind:N", scale=STORAGE_COLORS, legend=None),
            tooltip=[
                "category:N",
                alt.Tooltip("files:Q", format=","),
                alt.Tooltip("bytes:Q", format=","),
                "size:N",
                "detail:N",
            ],
        )
    )
    labels = bars.mark_text(align="left", dx=3).encode(text="size:N", color=alt.value("#59636e"))
    files = int(df["files"].sum())
    chart: Any = (bars + labels).properties(
        width=420, height=alt.Step(20), title=f"Bytes under the table's location: {byte_size(total)} in {files:,} files"
    )
    parts = storage.by_partition
    if len(parts):
        label, rest = _top(
            parts["partition"].astype(str), parts["bytes"], MAX_STORAGE_PARTITIONS, "({n} other partitions)"
        )
        grouped = (
            parts.assign(partition=label)
            .groupby(["partition", "category"], as_index=False, sort=False)[["files", "bytes"]]
            .sum()
        )
        grouped = grouped.assign(
            kind=grouped["category"].str.split(":", n=1).str[0].str.strip(),
            size=[byte_size(int(b)) for b in grouped["bytes"]],
            amount=grouped["bytes"] / unit[0],
        )
        shown = f"{grouped['partition'].nunique():,} partitions" + (f", {rest:,} of them summed" if rest else "")
        by_partition = (
            alt.Chart(grouped)
            .mark_bar()
            .encode(
                y=alt.Y("partition:N", sort="-x", title=None, axis=alt.Axis(labelLimit=240)),
                x=alt.X("sum(amount):Q", title=unit[1]),
                color=alt.Color("kind:N", scale=STORAGE_COLORS, title="kind"),
                tooltip=[
                    "partition:N",
                    "category:N",
                    alt.Tooltip("files:Q", format=","),
                    alt.Tooltip("bytes:Q", format=","),
                    "size:N",
                ],
            )
            .properties(width=420, height=alt.Step(16), title=f"Content files by partition ({shown})")
        )
        chart = alt.vconcat(chart, by_partition)
    return VegaChart(chart, title="storage")
