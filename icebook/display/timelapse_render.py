"""A time-lapse as text, as static HTML (small multiples of the partition heatmap at chosen frames, and the
growth chart, as inline SVG) and as the plain JSON the live ``TimelapseView`` draws (``timelapse_payload``).

One layout serves both: ``timelapse_payload`` puts each partition in a heatmap cell (the first partition
field down, the others across) and each frame's sums in sparse cells; the static form draws that payload
at a few frames, the widget at the scrubber's position. Operations take the lineage graph's colours
(``lineage_render.operation_class``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icebook.analysis.history.timelapse import Timelapse
from icebook.display._base import cell_text, esc, frame, human_count
from icebook.display.lineage_render import operation_class
from icebook.display.v3_changes_render import v3_lines
from icebook.spec.snapshots import Operation
from icebook.text import byte_size, utc_text

METRICS = ("files", "records", "bytes")
"""What a heatmap cell can show: live data files, their records, or their bytes."""
SERIES = (
    ("records", "records", "ib-tl-records"),
    ("data_files", "data files", "ib-tl-files"),
    ("bytes", "bytes", "ib-tl-bytes"),
    ("delete_files", "delete files (debt)", "ib-tl-debt"),
)
"""The growth chart's lines: frame column, label, CSS class."""
MAX_ROWS = 40
MAX_COLUMNS = 40
SMALL_MULTIPLES = 6


# ---------------------------------------------------------------------- the payload


def _label(name: str, value: Any) -> str:
    return f"{name}={cell_text(value, 60)}"


def timelapse_payload(lapse: Timelapse) -> dict[str, Any]:
    """Everything a view of ``lapse`` needs, as plain JSON: frames, heatmap axes, sparse cells per frame,
    the schemas and specs the frames name, and what was left out of the heatmap."""
    frames = lapse.frames.to_pylist()
    part = lapse.partitions
    rows_of: list[str] = []
    columns_of: list[str] = []
    if part.num_rows:
        partition = part.column("partition").combine_chunks()
        names = [partition.type.field(i).name for i in range(partition.type.num_fields)]
        values = [partition.field(i).to_pylist() for i in range(len(names))]
        for i in range(part.num_rows):
            if not names:
                rows_of.append("(unpartitioned)")
                columns_of.append("")
                continue
            rows_of.append(_label(names[0], values[0][i]))
            columns_of.append(", ".join(_label(n, values[k][i]) for k, n in enumerate(names) if k) or "")
    records = part.column("record_count").to_numpy() if part.num_rows else np.zeros(0, np.int64)
    row_axis = _axis(rows_of, records, MAX_ROWS)
    column_axis = _axis(columns_of, records, MAX_COLUMNS)
    row_at = {r: i for i, r in enumerate(row_axis)}
    column_at = {c: i for i, c in enumerate(column_axis)}
    cells: list[list[list[int]]] = [[] for _ in frames]
    hidden = 0
    maxima = dict.fromkeys(METRICS, 0)
    if part.num_rows:
        frame_ids = part.column("frame").to_numpy()
        files = part.column("file_count").to_numpy()
        size = part.column("total_data_file_size_in_bytes").to_numpy()
        deletes = (
            part.column("position_delete_file_count").to_numpy() + part.column("equality_delete_file_count").to_numpy()
        )
        for i in range(part.num_rows):
            r, c = row_at.get(rows_of[i]), column_at.get(columns_of[i])
            if r is None or c is None:
                hidden += 1
                continue
            cell = [r, c, int(files[i]), int(records[i]), int(size[i]), int(deletes[i])]
            cells[int(frame_ids[i])].append(cell)
            for k, metric in enumerate(METRICS):
                maxima[metric] = max(maxima[metric], cell[2 + k])
    out_frames = []
    for i, f in enumerate(frames):
        out_frames.append(
            {
                **{k: v for k, v in f.items() if k not in _IDS},
                "first_row_id": None if f["first_row_id"] is None else str(f["first_row_id"]),  # 64 bits
                "v3": v3_lines(lapse.v3[i]) if lapse.v3 else [],
                "id": str(f["snapshot_id"]),
                "parent": None if f["parent_id"] is None else str(f["parent_id"]),
                "base": None if f["base_snapshot_id"] is None else str(f["base_snapshot_id"]),
                "when": utc_text(_ms(f["committed_at"])),
                "op": f["operation"] or "?",
                "op_class": operation_class(f["operation"]),
            }
        )
    return {
        "frames": out_frames,
        "rows": row_axis,
        "columns": column_axis,
        "cells": cells,
        "max": maxima,
        "schemas": {str(k): v for k, v in lapse.schemas.items()},
        "specs": {str(k): v for k, v in lapse.specs.items()},
        "hidden": hidden,
        "partitioned": lapse.partitioned,
    }


_IDS = ("committed_at", "snapshot_id", "parent_id", "base_snapshot_id")  # ids go to JSON as text (64 bits)


def _ms(value: Any) -> int | None:
    if value is None:
        return None
    return int(value.timestamp() * 1000)


def _axis(labels: list[str], records: np.ndarray, limit: int) -> list[str]:
    """The distinct labels in order (nulls first), at most ``limit``: those that ever held the most records."""
    best: dict[str, int] = {}
    for label, n in zip(labels, records.tolist(), strict=True):
        best[label] = max(best.get(label, 0), n)
    kept = sorted(best, key=lambda k: -best[k])[:limit] if len(best) > limit else list(best)
    return sorted(kept, key=lambda k: (not k.endswith("=null"), k))


def chosen_frames(payload: dict[str, Any], limit: int = SMALL_MULTIPLES) -> list[int]:
    """Frames worth a picture: the first and the last, every change of schema or partition spec, every
    compaction (``replace``), then evenly spaced ones, at most ``limit`` in all, in commit order."""
    frames = payload["frames"]
    if not frames:
        return []
    wanted = [0, len(frames) - 1]
    for i in range(1, len(frames)):
        before, now = frames[i - 1], frames[i]
        if (
            now["spec_id"] != before["spec_id"]
            or now["schema_id"] != before["schema_id"]
            or now["op"] == Operation.REPLACE
        ):
            wanted.append(i)
    chosen = list(dict.fromkeys(wanted))[:limit]
    for i in np.linspace(0, len(frames) - 1, num=limit).round().astype(int).tolist():
        if len(chosen) >= limit:
            break
        if i not in chosen:
            chosen.append(i)
    return sorted(set(chosen))


# ---------------------------------------------------------------------- text


def timelapse_text(lapse: Timelapse) -> str:
    """A heading, then one line per frame: totals and what the commit changed."""
    lines = [repr(lapse)]
    for i, f in enumerate(lapse.frames.to_pylist()):
        change = (
            f"+{f['added_data_files']}/-{f['removed_data_files']} files, "
            f"+{f['added_records']}/-{f['removed_records']} records, "
            f"+{f['added_delete_files']}/-{f['removed_delete_files']} delete files"
            if f["added_data_files"] is not None
            else "changes known from manifests only"
        )
        line = (
            f"{f['frame']:>4} {f['snapshot_id']} {f['operation'] or '?':<9} {utc_text(_ms(f['committed_at']))}  "
            f"records {human_count(f['records'])}, data files {human_count(f['data_files'])}, "
            f"{byte_size(f['bytes'])}, delete files {human_count(f['delete_files'])}, "
            f"partitions {human_count(f['partitions'])}, schema {f['schema_id']}, spec {f['spec_id']} | {change}"
        )
        if f["afresh"]:
            line += f" [afresh: {f['afresh_reason']}]"
        lines.append(line)
        if lapse.v3:
            lines.extend(f"       v3: {text}" for text in v3_lines(lapse.v3[i]))
    return "\n".join(lines)


# ---------------------------------------------------------------------- static HTML

CELL = 14
GROWTH_WIDTH = 640
GROWTH_HEIGHT = 180


def heatmap_svg(payload: dict[str, Any], index: int, metric: str = "records") -> str:
    """The partition heatmap at one frame: one square per cell, darker for more (of ``metric``)."""
    rows, columns = payload["rows"], payload["columns"]
    top = payload["max"][metric] or 1
    k = METRICS.index(metric)
    width, height = max(len(columns), 1) * CELL + 2, max(len(rows), 1) * CELL + 2
    parts = [
        f'<rect class="ib-heat-empty" x="{c * CELL + 1}" y="{r * CELL + 1}" width="{CELL - 2}" height="{CELL - 2}"/>'
        for r in range(len(rows))
        for c in range(len(columns))
    ]
    for r, c, *values in payload["cells"][index]:
        value = values[k]
        if value <= 0 and values[3] <= 0:
            continue
        shade = 0.15 + 0.85 * (value / top)
        tip = f"{rows[r]} {columns[c]}: {values[0]} files, {values[1]} records, {values[2]} bytes, {values[3]} delete files"
        debt = " ib-heat-debt" if values[3] else ""
        parts.append(
            f'<rect class="ib-heat{debt}" x="{c * CELL + 1}" y="{r * CELL + 1}" width="{CELL - 2}" '
            f'height="{CELL - 2}" fill-opacity="{shade:.3f}"><title>{esc(tip)}</title></rect>'
        )
    return (
        f'<svg class="ib-tl-heatmap" width="{width}" height="{height}" viewBox="0 0 {width} {height}">'
        f"{''.join(parts)}</svg>"
    )


def growth_svg(payload: dict[str, Any], position: int | None = None) -> str:
    """Records, data files, bytes and delete files over the frames (each line scaled to its own maximum),
    a dot per commit in its operation's colour, and the position marked."""
    frames = payload["frames"]
    n = len(frames)
    w, h, pad = GROWTH_WIDTH, GROWTH_HEIGHT, 8

    def x(i: int) -> float:
        return pad + (w - 2 * pad) * (i / (n - 1) if n > 1 else 0.5)

    parts = []
    for column, label, cls in _known_series(frames):
        values = [f[column] or 0 for f in frames]
        top = max(values, default=0) or 1
        points = " ".join(f"{x(i):.1f},{h - pad - (h - 2 * pad) * v / top:.1f}" for i, v in enumerate(values))
        parts.append(f'<polyline class="ib-tl-line {cls}" points="{points}"><title>{esc(label)}</title></polyline>')
    top_records = max((f["records"] for f in frames), default=0) or 1
    for i, f in enumerate(frames):
        y = h - pad - (h - 2 * pad) * f["records"] / top_records
        tip = f"frame {i}: snapshot {f['id']} ({f['op']})"
        parts.append(
            f'<circle class="ib-dot ib-op-{esc(f["op_class"])}" cx="{x(i):.1f}" cy="{y:.1f}" r="4">'
            f"<title>{esc(tip)}</title></circle>"
        )
    if position is not None and n:
        parts.append(f'<line class="ib-tl-marker" x1="{x(position):.1f}" x2="{x(position):.1f}" y1="0" y2="{h}"/>')
    return f'<svg class="ib-tl-growth" width="{w}" height="{h}" viewBox="0 0 {w} {h}">{"".join(parts)}</svg>'


def _known_series(frames: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """The growth chart's lines that the frames know (bytes are unknown in a time-lapse from lists only)."""
    return [series for series in SERIES if any(f[series[0]] is not None for f in frames)]


def _legend(payload: dict[str, Any]) -> str:
    frames = payload["frames"]
    items = []
    for column, label, cls in _known_series(frames):
        top = max((f[column] or 0 for f in frames), default=0)
        shown = byte_size(top) if column == "bytes" else human_count(top)
        items.append(f'<span class="ib-tl-key {cls}">{esc(label)} (max {esc(shown)})</span>')
    return f'<div class="ib-tl-legend">{"".join(items)}</div>'


def _frame_caption(f: dict[str, Any], payload: dict[str, Any]) -> str:
    spec = payload["specs"].get(str(f["spec_id"]), "")
    afresh = f'<span class="ib-badge">afresh: {esc(f["afresh_reason"])}</span>' if f["afresh"] else ""
    return (
        f'<div class="ib-tl-caption"><b>frame {esc(f["frame"])}</b> '
        f'<span class="ib-op ib-op-{esc(f["op_class"])}">{esc(f["op"])}</span> <code>{esc(f["id"])}</code>{afresh}'
        f'<br><span class="ib-muted">{esc(f["when"])}</span><br>'
        f"{esc(human_count(f['records']))} records · {esc(human_count(f['data_files']))} files · "
        f"{esc(human_count(f['delete_files']))} delete files<br>"
        + "".join(f'<span class="ib-tl-v3">{esc(line)}</span><br>' for line in f["v3"])
        + f'<span class="ib-muted">schema {esc(f["schema_id"])} · spec {esc(f["spec_id"])} {esc(spec)}</span></div>'
    )


def _v3_html(frames: list[dict[str, Any]]) -> str:
    """Every commit's deletion vectors and row ids (v3), one list item per sentence."""
    items = [
        f"<li><b>frame {esc(f['frame'])}</b> <code>{esc(f['id'])}</code> {esc(f['op'])}: "
        + "; ".join(esc(line) for line in f["v3"])
        + "</li>"
        for f in frames
        if f["v3"]
    ]
    if not items:
        return ""
    return (
        '<div class="ib-h">Format version 3: deletion vectors and row ids by commit</div><ul class="ib-tl-v3-list">'
        + "".join(items)
        + "</ul>"
    )


def timelapse_html(lapse: Timelapse, metric: str = "records") -> str:
    """Small multiples of the partition heatmap at chosen frames, and the growth chart, as inline SVG."""
    payload = timelapse_payload(lapse)
    frames = payload["frames"]
    if not frames:
        return frame('<div class="ib-h">Time-lapse: no snapshots</div>', cls="ib-timelapse-static")
    picks = chosen_frames(payload)
    multiples = "".join(
        f'<div class="ib-tl-multiple">{_frame_caption(frames[i], payload)}{heatmap_svg(payload, i, metric)}</div>'
        for i in picks
    )
    axes = (
        f"heatmap: {esc(metric)} per partition · down: {esc(', '.join(payload['rows'][:3]))}"
        f"{'…' if len(payload['rows']) > 3 else ''} · across: {esc(len(payload['columns']))} column(s)"
    )
    if payload["hidden"]:
        axes += f" · {esc(payload['hidden'])} partition states outside the {MAX_ROWS}×{MAX_COLUMNS} shown"
    body = (
        f'<div class="ib-h">{esc(repr(lapse))}</div>'
        f"{_legend(payload)}{growth_svg(payload, None)}"
        f'<div class="ib-muted ib-caption">{axes}</div>'
        f'<div class="ib-tl-multiples">{multiples}</div>'
        f"{_v3_html(frames)}"
    )
    return frame(body, cls="ib-timelapse-static")


__all__ = [
    "METRICS",
    "chosen_frames",
    "growth_svg",
    "heatmap_svg",
    "timelapse_html",
    "timelapse_payload",
    "timelapse_text",
]
