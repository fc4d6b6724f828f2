"""Charts of a table with altair, rendered offline in JupyterLab 4.6.

Recipe (see tests/browser/test_lab_smoke.py): altair 6 writes Vega-Lite v6, which JupyterLab 4.6
cannot render, and altair's default renderer fetches vega from a CDN. So each chart is compiled
to Vega 5 with vl-convert (Vega-Lite 5.20) and shown as ``application/vnd.vega.v5+json``, which
JupyterLab's built-in renderer draws with no network; the output is saved in the notebook.
JupyterLab prefers ``image/svg+xml`` over the vega mimetype, so a static SVG (for viewers without
vega, e.g. GitHub) is only added when asked for (``VegaChart(..., svg=True)``, or ``chart.to_svg()``).
Data is aggregated in pandas first, so a chart of a 500,000-file table carries a few hundred rows.
"""

from __future__ import annotations

import math
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from icebook.analysis.ancestry import ancestor_ids
from icebook.analysis.evolution import Evolution
from icebook.display._base import TableLike, cell_text, content_label

VL_VERSION = "5.20"
OP_COLORS = alt.Scale(
    domain=["append", "overwrite", "delete", "replace"], range=["#2da44e", "#fb8500", "#cf222e", "#8c959f"]
)
MAX_PARTITIONS = 60


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

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle: dict[str, Any] = {"application/vnd.vega.v5+json": self.vega, "text/plain": f"<{self.title}>"}
        if self.svg:
            try:
                import vl_convert as vlc

                bundle["image/svg+xml"] = vlc.vega_to_svg(self.vega)
            except Exception:  # the SVG is a courtesy for kernel-less viewers; vega still renders
                pass
        return bundle

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
        summary = s.summary or {}
        base = {
            "committed_at": pd.Timestamp(s.timestamp_ms, unit="ms", tz="UTC"),
            "snapshot_id": str(s.snapshot_id),
            "operation": s.operation or "?",
            "line": "main" if s.snapshot_id in main else "other branch",
        }
        for key, metric in (
            ("total-records", "records"),
            ("total-data-files", "data files"),
            ("total-files-size", "bytes"),
        ):
            value = _int(summary.get(key))
            if value is not None:
                rows.append({**base, "metric": metric, "value": value})
    return pd.DataFrame(rows, columns=["committed_at", "snapshot_id", "operation", "line", "metric", "value"])


def _int(value: Any) -> int | None:
    try:
        return None if value is None else int(value)
    except ValueError:
        return None


def size_bins(sizes: pd.Series, content: pd.Series, bins: int = 30) -> pd.DataFrame:
    """Log-spaced histogram of file sizes per content type (pre-aggregated for the chart)."""
    sizes = sizes.astype("float64").clip(lower=1)
    if not len(sizes):
        return pd.DataFrame(columns=["content", "lo", "hi", "files"])
    lo, hi = math.log10(sizes.min()), math.log10(sizes.max())
    if hi - lo < 1e-9:
        lo, hi = lo - 0.05, hi + 0.05
    edges = np.logspace(lo, hi, bins + 1)
    # 10 ** log10(x) can land just below x: pin the outer edges so the extremes are counted.
    edges[0], edges[-1] = min(edges[0], sizes.min()), max(edges[-1], sizes.max())
    rows = []
    for code, group in sizes.groupby(content.astype(int)):
        counts, _ = np.histogram(group.to_numpy(), bins=edges)
        for i, n in enumerate(counts):
            if n:
                rows.append({"content": content_label(code), "lo": edges[i], "hi": edges[i + 1], "files": int(n)})
    return pd.DataFrame(rows, columns=["content", "lo", "hi", "files"])


# ---------------------------------------------------------------- charts


def snapshot_timeline_chart(table: TableLike) -> VegaChart:
    """Records, data files and bytes over time (from snapshot summaries), points coloured by operation."""
    df = snapshot_metrics(table)
    base = alt.Chart(df).encode(x=alt.X("committed_at:T", title="committed at"))
    line = base.mark_line(color="#8c959f").encode(
        y=alt.Y("value:Q", title=None), detail="line:N", strokeDash=alt.StrokeDash("line:N", title="line")
    )
    points = base.mark_circle(size=70, opacity=1).encode(
        y="value:Q",
        color=alt.Color("operation:N", scale=OP_COLORS, title="operation"),
        tooltip=["snapshot_id:N", "operation:N", "metric:N", alt.Tooltip("value:Q", format=","), "committed_at:T"],
    )
    chart = (
        alt.layer(line, points, data=df)
        .properties(width=560, height=110)
        .facet(row=alt.Row("metric:N", title=None, sort=["records", "data files", "bytes"]))
        .resolve_scale(y="independent")
        .properties(title="Snapshot timeline")
    )
    return VegaChart(chart, title="snapshot timeline")


def file_size_histogram(table: TableLike, at: Any = None) -> VegaChart:
    """Sizes of the live data and delete files at ``at`` (log-spaced bins)."""
    files = table.inspect.files(at)
    bins = size_bins(
        files.get("file_size_in_bytes", pd.Series(dtype="int64")), files.get("content", pd.Series(dtype="int64"))
    )
    chart = (
        alt.Chart(bins)
        .mark_bar()
        .encode(
            x=alt.X("lo:Q", scale=alt.Scale(type="log"), title="file size (bytes, log scale)"),
            x2="hi:Q",
            y=alt.Y("files:Q", title="files", stack=True),
            color=alt.Color("content:N", scale=alt.Scale(range=["#2da44e", "#cf222e", "#bc4c00"])),
            tooltip=["content:N", alt.Tooltip("lo:Q", format=",.0f"), alt.Tooltip("hi:Q", format=",.0f"), "files:Q"],
        )
        .properties(width=560, height=200, title=f"File sizes ({len(files):,} live files)")
    )
    return VegaChart(chart, title="file size histogram")


def partition_frame(table: TableLike, at: Any = None, limit: int = MAX_PARTITIONS) -> tuple[pd.DataFrame, int]:
    """(heatmap cells, number of partitions): rows = first partition field, columns = second (or spec)."""
    parts = table.inspect.partitions(at)
    total = len(parts)
    if not total:
        return pd.DataFrame(columns=["row", "column", "records", "files", "bytes"]), 0
    parts = parts.sort_values("record_count", ascending=False).head(limit)
    rows = []
    for r in parts.itertuples(index=False):
        values = (
            [(k, v) for k, v in (r.partition or {}).items() if v is not None] if isinstance(r.partition, dict) else []
        )
        if not values:
            row_label, col_label = "unpartitioned", f"spec {r.spec_id}"
        elif len(values) == 1:
            row_label, col_label = f"{values[0][0]}={cell_text(values[0][1], 40)}", f"spec {r.spec_id}"
        else:
            row_label = f"{values[0][0]}={cell_text(values[0][1], 40)}"
            col_label = ", ".join(f"{k}={cell_text(v, 30)}" for k, v in values[1:])
        rows.append(
            {
                "row": row_label,
                "column": col_label,
                "records": int(r.record_count),
                "files": int(r.file_count),
                "bytes": int(r.total_data_file_size_in_bytes),
            }
        )
    return pd.DataFrame(rows), total


def partition_heatmap(table: TableLike, at: Any = None) -> VegaChart:
    """Records per partition: the first partition field down, the others (or the spec) across."""
    df, total = partition_frame(table, at)
    shown = f"top {len(df)} of {total:,} partitions by records" if total > len(df) else f"{total} partitions"
    chart = (
        alt.Chart(df)
        .mark_rect()
        .encode(
            x=alt.X("column:N", title=None, axis=alt.Axis(labelAngle=-40, labelLimit=160)),
            y=alt.Y("row:N", title=None, axis=alt.Axis(labelLimit=200)),
            color=alt.Color("records:Q", scale=alt.Scale(scheme="blues"), title="records"),
            tooltip=[
                "row:N",
                "column:N",
                alt.Tooltip("records:Q", format=","),
                "files:Q",
                alt.Tooltip("bytes:Q", format=","),
            ],
        )
        .properties(title=f"Partitions ({shown})")
    )
    return VegaChart(chart, title="partition heatmap")


def files_per_spec_chart(ev: Evolution) -> VegaChart:
    """Live data files per partition spec at each snapshot: how spec evolution spreads over time."""
    df = ev.files_per_spec.copy()
    df["spec"] = "spec " + df["spec_id"].astype(str)
    df["snapshot"] = df["snapshot_id"].astype(str)
    chart = (
        alt.Chart(df[["committed_at", "spec", "snapshot", "data_files", "delete_files"]])
        .mark_area(opacity=0.8, interpolate="step-after")
        .encode(
            x=alt.X("committed_at:T", title="committed at"),
            y=alt.Y("data_files:Q", title="live data files", stack=True),
            color=alt.Color("spec:N", title="partition spec"),
            tooltip=["snapshot:N", "spec:N", "data_files:Q", "delete_files:Q"],
        )
        .properties(width=560, height=160, title="Live data files per partition spec")
    )
    return VegaChart(chart, title="files per spec")
