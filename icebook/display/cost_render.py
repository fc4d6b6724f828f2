"""How a read's cost is shown: the totals and top reasons, then a map from the files read to their row groups
(text for the terminal and the command line, in ``TEXT_WIDTH`` columns unless the terminal says otherwise;
static, escaped HTML for notebooks; the live view in ``cost_view``). ``file_map`` is the one map all three
draw."""

from __future__ import annotations

from typing import Any

from icebook.display._base import base_name, esc, frame, frame_table_html, grid
from icebook.display.terminal import fit_lines, frame_text, shorten, terminal_width
from icebook.text import byte_size

TEXT_WIDTH = 100
"""Columns of the text map when the output is no terminal (a pipe, a notebook's text/plain)."""
_TEXT_FILES = 40  # files the text map lists (the frame holds them all)
_HTML_FILES = 200
_NAME_WIDTH = 36
_BYTES_WIDTH = 10


def file_map(cost: Any) -> list[dict[str, Any]]:
    """The files read, in the plan's order, each with its row groups (JSON-ready): ``path``, ``name``,
    ``format``, ``note`` (why a file has no row-group detail, else None), ``row_groups`` and ``skipped``
    (counts), ``bytes_read`` (None without detail) and its text, and ``groups``: each row group's
    ``row_group``, ``rows``, ``kept``, ``reason``, ``bytes_read``, ``total_bytes`` and a ``label``."""
    out: list[dict[str, Any]] = []
    for path, group in cost.row_groups.groupby("file_path", sort=False):
        base = {"path": str(path), "name": base_name(str(path)), "format": str(group["file_format"].iloc[0])}
        if group["row_group"].isna().all():
            note = str(group["reason"].iloc[0])
            out.append({**base, "note": note, "row_groups": 0, "skipped": 0, "bytes_read": None,
                        "bytes_read_text": byte_size(None), "groups": []})  # fmt: skip
            continue
        groups: list[dict[str, Any]] = [
            {
                "row_group": int(r.row_group),
                "rows": int(r.rows),
                "kept": bool(r.kept),
                "reason": str(r.reason),
                "bytes_read": int(r.bytes_read),
                "total_bytes": int(r.total_bytes),
                "label": f"row group {int(r.row_group)}: {int(r.rows):,} rows, "
                f"{'read' if r.kept else 'skipped'}: {r.reason}; "
                f"{byte_size(int(r.bytes_read))} read of {byte_size(int(r.total_bytes))}",
            }
            for r in group.itertuples()
        ]
        read = sum(g["bytes_read"] for g in groups)
        out.append({**base, "note": None, "row_groups": len(groups), "skipped": sum(not g["kept"] for g in groups),
                    "bytes_read": read, "bytes_read_text": byte_size(read), "groups": groups})  # fmt: skip
    return out


def _marks(groups: list[dict[str, Any]], width: int) -> str:
    """``R`` for each row group read, ``.`` for each skipped, in ``width`` characters (the rest counted)."""
    marks = "".join("R" if g["kept"] else "." for g in groups)
    if len(marks) <= width:
        return marks
    shown = max(width - len(f"…+{len(marks)}"), 0)
    return marks[:shown] + f"…+{len(marks) - shown}"


def cost_text(cost: Any, width: int | None = None) -> str:
    """The summary and the map in ``width`` columns (the terminal's, else ``TEXT_WIDTH``)."""
    width = width or terminal_width() or TEXT_WIDTH
    files = file_map(cost)
    lines = [fit_lines(cost.summary(), width), "", "files -> row groups (R read, . skipped; bytes read):"]
    name_width = min(_NAME_WIDTH, max([len(f["name"]) for f in files] or [1]))
    marks_width = max(width - name_width - _BYTES_WIDTH - 8, 8)  # "  name  [marks]  bytes"
    shown = files[:_TEXT_FILES]
    marks_width = min(marks_width, max([len(f["groups"]) for f in shown] or [1]))
    for f in shown:
        name = shorten(f["name"], name_width).ljust(name_width)
        if f["note"] is not None:
            lines.append(shorten(f"  {name}  {f['note']}", width))
            continue
        marks = f"[{_marks(f['groups'], marks_width)}]"
        lines.append(f"  {name}  {marks:<{marks_width + 2}}  {f['bytes_read_text']:>{_BYTES_WIDTH}}")
    if len(files) > _TEXT_FILES:
        lines.append(
            fit_lines(
                f"  ... and {len(files) - _TEXT_FILES:,} more files (QueryCost.row_groups holds every one)", width
            )
        )
    skipped = cost.row_groups[~cost.row_groups["kept"]]
    if len(skipped):
        lines += ["", frame_text(skipped[["file_path", "row_group", "rows", "reason"]].head(20), width=width)]
    return "\n".join(lines)


def cost_html(cost: Any) -> str:
    cells = []
    files = file_map(cost)
    for f in files[:_HTML_FILES]:
        if f["note"] is not None:
            boxes = f'<span class="ib-muted">{esc(f["note"])}</span>'
        else:
            boxes = "".join(
                f'<span class="ib-badge {"ib-added" if g["kept"] else "ib-removed"}" '
                f'title="{esc(g["label"])}">{esc(g["row_group"])}</span>'
                for g in f["groups"]
            )
        cells.append(
            f'<tr><td title="{esc(f["path"])}"><code>{esc(f["name"])}</code></td><td>{boxes}</td>'
            f"<td>{esc(f['bytes_read_text'])}</td></tr>"
        )
    more = (
        f'<div class="ib-muted">and {len(files) - _HTML_FILES:,} more files</div>' if len(files) > _HTML_FILES else ""
    )
    skipped = cost.row_groups[~cost.row_groups["kept"]]
    body = (
        f'<pre class="ib-explain">{esc(cost.summary())}</pre>'
        + grid(["file", "row groups (green read, red skipped)", "bytes read"], cells)
        + more
        + (frame_table_html(skipped, caption="row groups skipped") if len(skipped) else "")
    )
    return frame(body, cls="ib-result")


def storage_text(storage: Any) -> str:
    lines = [storage.summary()]
    if len(storage.by_partition):
        lines += ["", "by partition:", frame_text(storage.by_partition)]
    return "\n".join(lines)


def storage_html(storage: Any) -> str:
    total = max(storage.bytes, 1)
    bars = "".join(
        f"<tr><td>{esc(r.category)}</td><td>{esc(f'{r.files:,}')}</td><td>{esc(byte_size(r.bytes))}</td>"
        f'<td><div class="ib-bar" style="width:{100 * r.bytes / total:.1f}%;min-width:1px;height:0.8em;'
        f'background:currentColor;opacity:0.5"></div></td><td class="ib-muted">{esc(r.detail)}</td></tr>'
        for r in storage.categories.itertuples()
    )
    body = (
        f"<div><b>{esc(storage.location)}</b>: {esc(byte_size(storage.bytes))}</div>"
        + grid(["category", "files", "bytes", "share", "detail"], bars)
        + (frame_table_html(storage.by_partition, caption="by partition") if len(storage.by_partition) else "")
    )
    return frame(body, cls="ib-result")


def plans_text(comparison: Any) -> str:
    return comparison.summary()


def plans_html(comparison: Any) -> str:
    body = f'<pre class="ib-explain">{esc(comparison.summary())}</pre>' + frame_table_html(
        comparison.files, caption="data files by planner"
    )
    return frame(body, cls="ib-result")


__all__ = [
    "TEXT_WIDTH",
    "cost_html",
    "cost_text",
    "file_map",
    "plans_html",
    "plans_text",
    "storage_html",
    "storage_text",
]
