"""How the v3 inspector is shown: each section (deletion vectors, row lineage, defaults, variant shredding,
geo bounds) as text for the terminal and as static, escaped HTML, with small SVG drawings: a data file's
deleted positions as marks along its rows, and geo bounds as boxes."""

from __future__ import annotations

import textwrap
from typing import Any

from icebook.display._base import base_name, esc, frame, frame_table_html, grid
from icebook.display.terminal import terminal_width

_ROWS = 200  # rows each HTML table shows (the result holds them all)
_WIDTH, _HEIGHT = 360, 220  # the geo drawing
_STRIP = 160  # a deletion vector's strip


def _findings_text(findings: Any, location: str) -> list[str]:
    """Each finding, paths under the table's location written from there."""
    prefix = location.rstrip("/") + "/"
    return [line for f in findings for line in _wrap(str(f).replace(prefix, ""), "  ")] or ["  none"]


def _findings_html(findings: Any) -> str:
    if not findings:
        return '<div class="ib-muted">no findings</div>'
    items = "".join(f'<li class="{"ib-removed" if f.level == "error" else "ib-muted"}">{esc(f)}</li>' for f in findings)
    return f"<ul>{items}</ul>"


def _section(title: str, body: str, *, open_: bool = False) -> str:
    return (
        f'<details class="ib-health-section"{" open" if open_ else ""}><summary>{esc(title)}</summary>{body}</details>'
    )


# ------------------------------------------------------------------ deletion vectors


def _strip(record_count: int, ranges: Any) -> str:
    """The file's rows as a bar, deleted ranges marked (a range of one row still gets a pixel)."""
    if record_count <= 0:
        return ""
    scale = _STRIP / record_count
    marks = "".join(
        f'<rect x="{a * scale:.2f}" y="0" width="{max((b - a + 1) * scale, 1):.2f}" height="10" fill="#cf222e">'
        f"<title>{esc(f'{a}' if a == b else f'{a}-{b}')}</title></rect>"
        for a, b in ranges
    )
    return (
        f'<svg width="{_STRIP}" height="10" role="img" aria-label="deleted positions">'
        f'<rect x="0" y="0" width="{_STRIP}" height="10" fill="#e6ffec"/>{marks}</svg>'
    )


def _wrap(text: str, indent: str = "    ") -> list[str]:
    """``text`` in lines that fit the terminal (100 columns when the output is not one)."""
    width = max(terminal_width() or 100, 40)
    return textwrap.wrap(
        text,
        width,
        initial_indent=indent,
        subsequent_indent=indent + "  ",
        break_on_hyphens=False,
        break_long_words=False,
    ) or [indent]


def _dv_headline(result: Any) -> str:
    return (
        f"{len(result.files)} live data files, {len(result.vectors)} with a deletion vector, "
        f"{len(result.dangling)} dangling vectors"
    )


def _vector_lines(v: Any) -> list[str]:
    return [
        *_wrap(f"{v.cardinality} deleted: {v.ranges_text()}"),
        *_wrap(f"Puffin {base_name(v.puffin_path)}"),
        *_wrap(f"content_offset {v.content_offset}, content_size_in_bytes {v.content_size_in_bytes}"),
    ]


def _live(f: Any) -> str:
    """The rows left after the vector; with v2 position delete files applying too, what counts them."""
    if f.position_delete_files:
        return f", {len(f.position_delete_files)} position delete files (v2) apply too"
    return f", {f.live_rows} live"


def dv_text(result: Any) -> str:
    lines = _wrap(f"deletion vectors at snapshot {result.snapshot_id}: {_dv_headline(result)}", "")
    for f in result.files:
        lines += _wrap(f"{base_name(f.file_path)}  {f.record_count} rows{_live(f)}", "  ")
        lines += _vector_lines(f.vector) if f.vector else _wrap("no deletion vector")
    for d in result.dangling:
        lines += _wrap(f"dangling, for {base_name(d.referenced_data_file)}:", "  ") + _vector_lines(d)
    return "\n".join([*lines, "findings:", *_findings_text(result.findings, result.location)])


def dv_body(result: Any, *, findings: bool = True) -> str:
    rows = []
    for f in result.files[:_ROWS]:
        v = f.vector
        cells = (
            f'<td title="{esc(f.file_path)}"><code>{esc(base_name(f.file_path))}</code></td>'
            f"<td>{esc(f.partition)}</td><td>{esc(f.record_count)}</td>"
        )
        if v is None:
            cells += '<td colspan="5" class="ib-muted">no deletion vector</td>'
        else:
            cells += (
                f'<td title="{esc(v.puffin_path)}"><code>{esc(base_name(v.puffin_path))}</code></td>'
                f"<td>{esc(v.content_offset)}</td><td>{esc(v.content_size_in_bytes)}</td><td>{esc(v.cardinality)}</td>"
                f"<td>{_strip(f.record_count, v.ranges)}<br><code>{esc(v.ranges_text())}</code></td>"
            )
        rows.append(f"<tr>{cells}<td>{esc(_live(f).removeprefix(', ') or '')}</td></tr>")
    more = (
        f'<div class="ib-muted">and {len(result.files) - _ROWS:,} more data files</div>'
        if len(result.files) > _ROWS
        else ""
    )
    dangling = "".join(
        f'<li title="{esc(d.puffin_path)}"><code>{esc(base_name(d.puffin_path))}</code> at {esc(d.content_offset)}: '
        f"{esc(d.cardinality)} positions of <code>{esc(base_name(d.referenced_data_file))}</code></li>"
        for d in result.dangling
    )
    return (
        grid(
            (
                "data file",
                "partition",
                "records",
                "Puffin file",
                "content_offset",
                "content_size_in_bytes",
                "cardinality",
                "deleted positions",
                "live rows",
            ),
            rows,
        )
        + more
        + (f"<div>dangling deletion vectors:</div><ul>{dangling}</ul>" if dangling else "")
        + (_findings_html(result.findings) if findings else "")
    )


def dv_html(result: Any) -> str:
    return frame(f"<div>{esc(repr(result))}</div>{dv_body(result)}", cls="ib-result")


# ------------------------------------------------------------------ row lineage


def _ids(first: int | None, end: int | None) -> str:
    if first is None or end is None:
        return "no row ids (written before v3)"
    return f"ids {first}-{end - 1}" if end > first else f"no ids (first-row-id {first})"


def lineage_text(result: Any) -> str:
    lines = [
        *_wrap(f"row lineage at snapshot {result.snapshot_id}: table next-row-id {result.next_row_id}", ""),
        "  snapshots:",
    ]
    for s in result.snapshots:
        lines += _wrap(f"{s.snapshot_id} {s.operation or ''}: {_ids(s.first_row_id, s.end)}, added-rows {s.added_rows}")
    lines.append("  live data files:")
    for f in result.files:
        how = "inherited" if f.inherited else "in the manifest"
        own = "; rows carry their own _row_id" if f.row_ids_written else ""
        lines += _wrap(f"{base_name(f.file_path)}: {_ids(f.first_row_id, f.end)} ({how}{own})")
    return "\n".join([*lines, "findings:", *_findings_text(result.findings, result.location)])


def _lineage_svg(result: Any) -> str:
    """Row ids on one axis: each snapshot's claimed range on the top band, each live data file's below it
    (orange where the file's rows carry their own _row_id, red where two files' ranges overlap)."""
    snaps = [s for s in result.snapshots if s.first_row_id is not None and s.end is not None and s.end > s.first_row_id]
    files = [f for f in result.files if f.first_row_id is not None and f.end is not None][:_ROWS]
    ends = [s.end for s in snaps] + [f.end for f in files] + [result.next_row_id or 0]
    top = max(ends) if ends else 0
    if top <= 0:
        return ""
    overlapping = {x.subject for x in result.findings if x.level == "error" and x.field == "first_row_id"}
    scale, row = (_WIDTH - 20) / top, 14
    height = row * (len(files) + 2) + 16

    def bar(y: int, lo: int, hi: int, colour: str, title: str) -> str:
        width = max((hi - lo) * scale, 1)
        return (
            f'<rect x="{10 + lo * scale:.2f}" y="{y}" width="{width:.2f}" height="{row - 3}" fill="{colour}">'
            f"<title>{esc(title)}</title></rect>"
        )

    bars = [
        bar(4, s.first_row_id, s.end, "#8c959f", f"snapshot {s.snapshot_id}: [{s.first_row_id}, {s.end})")
        for s in snaps
    ]
    for i, f in enumerate(files):
        colour = "#cf222e" if f.file_path in overlapping else "#bc4c00" if f.row_ids_written else "#0969da"
        title = f"{base_name(f.file_path)}: [{f.first_row_id}, {f.end})"
        bars.append(bar(4 + row * (i + 1), f.first_row_id, f.end or 0, colour, title))
    axis = f'<text x="10" y="{height - 2}" font-size="10">0</text><text x="{_WIDTH - 10}" y="{height - 2}" font-size="10" text-anchor="end">{esc(top)}</text>'
    return (
        f'<svg width="{_WIDTH}" height="{height}" role="img" aria-label="row-id ranges">{"".join(bars)}{axis}</svg>'
        '<div class="ib-muted">grey: snapshots\' claimed ids; blue: data files; orange: rows carry their own _row_id; '
        "red: overlapping</div>"
    )


def lineage_body(result: Any, *, findings: bool = True) -> str:
    return (
        f"<div>table next-row-id: <code>{esc(result.next_row_id)}</code></div>"
        + _lineage_svg(result)
        + frame_table_html(result.snapshots_frame(), limit=_ROWS, caption="snapshots: [first_row_id, end_row_id)")
        + frame_table_html(result.to_pandas(), limit=_ROWS, caption="live data files: [first_row_id, end_row_id)")
        + (_findings_html(result.findings) if findings else "")
    )


def lineage_html(result: Any) -> str:
    return frame(f"<div>{esc(repr(result))}</div>{lineage_body(result)}", cls="ib-result")


# ------------------------------------------------------------------ defaults, variants


def _columns_frame(result: Any) -> Any:
    import pandas as pd

    return pd.DataFrame(
        [(c.name, c.field_id, c.type, c.initial_default_text, c.write_default_text) for c in result.columns],
        columns=["column", "field_id", "type", "initial-default", "write-default"],
    )


def defaults_text(result: Any) -> str:
    lines = [f"defaults at snapshot {result.snapshot_id}:"]
    for c in result.columns:
        lines += _wrap(
            f"{c.name} ({c.type}, field id {c.field_id}): initial-default {c.initial_default_text}, "
            f"write-default {c.write_default_text}",
            "  ",
        )
        for f in result.files:
            if f.field_id == c.field_id:
                lines += _wrap(f"{base_name(f.file_path)}: {f.source.value} {f.value_text}")
    return "\n".join(lines)


def defaults_body(result: Any) -> str:
    if not result.columns:
        return '<div class="ib-muted">no column has a default value</div>'
    return frame_table_html(_columns_frame(result), limit=_ROWS, caption="columns with defaults") + frame_table_html(
        result.to_pandas(), limit=_ROWS, caption="what a reader takes, per data file"
    )


def defaults_html(result: Any) -> str:
    return frame(f"<div>{esc(repr(result))}</div>{defaults_body(result)}", cls="ib-result")


def variants_text(result: Any) -> str:
    lines = [f"variant shredding at snapshot {result.snapshot_id}:"]
    for f in result.files:
        head = "not in the file" if f.parquet_path is None else ("shredded" if f.is_shredded else "not shredded")
        lines += _wrap(f"{base_name(f.file_path)} {f.column}: {head}", "  ")
        for p in f.shredded:
            lines += _wrap(f"{p.path} -> {p.column} ({p.physical_type} {p.logical_type}".rstrip() + ")")
    return "\n".join(lines)


def variants_body(result: Any) -> str:
    if not result.columns:
        return '<div class="ib-muted">no variant column</div>'
    return frame_table_html(result.to_pandas(), limit=_ROWS, caption="shredded paths per data file")


def variants_html(result: Any) -> str:
    return frame(f"<div>{esc(repr(result))}</div>{variants_body(result)}", cls="ib-result")


# ------------------------------------------------------------------ geo


def _geo_svg(boxes: Any) -> str:
    """Every box in one drawing, scaled to the boxes' extent (y up); a geography box crossing the
    antimeridian is drawn as its two parts."""
    parts: list[tuple[float, float, float, float, Any]] = []
    for b in boxes:
        if b.crosses_antimeridian:
            parts += [(b.xmin, b.ymin, 180.0, b.ymax, b), (-180.0, b.ymin, b.xmax, b.ymax, b)]
        else:
            parts.append((b.xmin, b.ymin, b.xmax, b.ymax, b))
    xs = [v for p in parts for v in (p[0], p[2])]
    ys = [v for p in parts for v in (p[1], p[3])]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    # A margin of a tenth of the extent around the boxes, and one scale for both axes (shapes keep their form).
    margin = max(x1 - x0, y1 - y0, 1e-9) / 10
    x0, x1, y0, y1 = x0 - margin, x1 + margin, y0 - margin, y1 + margin
    pad = 10
    sx = sy = min((_WIDTH - 2 * pad) / (x1 - x0), (_HEIGHT - 2 * pad) / (y1 - y0))
    rects = "".join(
        f'<rect x="{pad + (a - x0) * sx:.2f}" y="{_HEIGHT - pad - (d - y0) * sy:.2f}" '
        f'width="{max((c - a) * sx, 2):.2f}" height="{max((d - b_) * sy, 2):.2f}" '
        'fill="#0969da" fill-opacity="0.15" stroke="#0969da">'
        f"<title>{esc(f'{b.column}: {base_name(b.file_path)} [{b.xmin}, {b.ymin}] - [{b.xmax}, {b.ymax}]')}</title></rect>"
        for a, b_, c, d, b in parts
    )
    caption = f"x {min(xs)} to {max(xs)}, y {min(ys)} to {max(ys)}"
    return (
        f'<svg width="{_WIDTH}" height="{_HEIGHT}" role="img" aria-label="{esc("geo bounds: " + caption)}">'
        f'<rect x="0" y="0" width="{_WIDTH}" height="{_HEIGHT}" fill="none" stroke="#d0d7de"/>{rects}</svg>'
        f'<div class="ib-muted">{esc(caption)}</div>'
    )


def geo_text(result: Any) -> str:
    lines = [f"geo bounds at snapshot {result.snapshot_id}:"]
    for b in result.boxes:
        across = ", across the antimeridian" if b.crosses_antimeridian else ""
        lines += _wrap(
            f"{base_name(b.file_path)} {b.column}: [{b.xmin}, {b.ymin}] - [{b.xmax}, {b.ymax}]{across}", "  "
        )
    if result.without_bounds:
        lines += _wrap(f"{len(result.without_bounds)} (file, column) pairs have no bounds in their manifest", "  ")
    return "\n".join(lines)


def geo_body(result: Any) -> str:
    if not result.columns:
        return '<div class="ib-muted">no geometry or geography column</div>'
    drawing = _geo_svg(result.boxes) if result.boxes else ""
    missing = (
        f'<div class="ib-muted">{esc(len(result.without_bounds))} (file, column) pairs have no bounds in their '
        "manifest: writers need not record them (Spark records none)</div>"
        if result.without_bounds
        else ""
    )
    return drawing + frame_table_html(result.to_pandas(), limit=_ROWS, caption="boxes") + missing


def geo_html(result: Any) -> str:
    return frame(f"<div>{esc(repr(result))}</div>{geo_body(result)}", cls="ib-result")


# ------------------------------------------------------------------ the whole inspection


def v3_text(result: Any) -> str:
    sections = [
        *_wrap(f"v3 inspector: {result.location} (format v{result.format_version}), snapshot {result.snapshot_id}", ""),
        "findings:",
        *_findings_text(result.findings, result.location),
        "",
        dv_text(result.deletion_vectors),
        "",
        lineage_text(result.row_lineage),
        "",
        defaults_text(result.defaults) if result.defaults.columns else "defaults: no column has a default value",
        "",
        variants_text(result.variants) if result.variants.columns else "variant shredding: no variant column",
        "",
        geo_text(result.geo) if result.geo.columns else "geo bounds: no geometry or geography column",
    ]
    return "\n".join(sections)


def v3_html(result: Any) -> str:
    body = (
        f"<div><b>{esc(result.location)}</b> format v{esc(result.format_version)}, snapshot "
        f"<code>{esc(result.snapshot_id)}</code></div>"
        + _section("Findings", _findings_html(result.findings), open_=True)
        + _section(
            f"Deletion vectors ({len(result.deletion_vectors.vectors)})",
            dv_body(result.deletion_vectors, findings=False),
            open_=bool(result.deletion_vectors.vectors),
        )
        + _section("Row lineage", lineage_body(result.row_lineage, findings=False))
        + _section(f"Defaults ({len(result.defaults.columns)} columns)", defaults_body(result.defaults))
        + _section(f"Variant shredding ({len(result.variants.columns)} columns)", variants_body(result.variants))
        + _section(f"Geo bounds ({len(result.geo.boxes)} boxes)", geo_body(result.geo), open_=bool(result.geo.boxes))
    )
    return frame(body, cls="ib-result")


__all__ = [
    "defaults_html",
    "defaults_text",
    "dv_html",
    "dv_text",
    "geo_html",
    "geo_text",
    "lineage_html",
    "lineage_text",
    "v3_html",
    "v3_text",
    "variants_html",
    "variants_text",
]
