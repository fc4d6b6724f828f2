"""How a read's cost is shown: the totals and top reasons, then a map from the files read to their row groups
(text for the terminal and the command line; static, escaped HTML for notebooks)."""

from __future__ import annotations

from typing import Any

from icebook.display._base import base_name, esc, frame, frame_table_html
from icebook.display.terminal import frame_text
from icebook.text import byte_size

_TEXT_FILES = 40  # files the text map lists (the frame holds them all)
_HTML_FILES = 200


def _by_file(cost: Any) -> list[tuple[str, Any]]:
    return list(cost.row_groups.groupby("file_path", sort=False))


def cost_text(cost: Any) -> str:
    lines = [cost.summary(), "", "files -> row groups (R read, . skipped; bytes read):"]
    files = _by_file(cost)
    for path, group in files[:_TEXT_FILES]:
        if group["row_group"].isna().all():
            lines.append(f"  {base_name(path)}  {group['reason'].iloc[0]}")
            continue
        marks = "".join("R" if k else "." for k in group["kept"])
        lines.append(f"  {base_name(path)}  [{marks}]  {byte_size(int(group['bytes_read'].sum()))}")
    if len(files) > _TEXT_FILES:
        lines.append(f"  ... and {len(files) - _TEXT_FILES:,} more files (QueryCost.row_groups holds every one)")
    skipped = cost.row_groups[~cost.row_groups["kept"]]
    if len(skipped):
        lines += ["", frame_text(skipped[["file_path", "row_group", "rows", "reason"]].head(20))]
    return "\n".join(lines)


def cost_html(cost: Any) -> str:
    cells = []
    files = _by_file(cost)
    for path, group in files[:_HTML_FILES]:
        if group["row_group"].isna().all():
            boxes = f'<span class="ib-muted">{esc(group["reason"].iloc[0])}</span>'
        else:
            boxes = "".join(
                f'<span class="ib-badge {"ib-added" if r.kept else "ib-removed"}" '
                f'title="{esc(f"row group {r.row_group}, {r.rows} rows: {r.reason}")}">{esc(r.row_group)}</span>'
                for r in group.itertuples()
            )
        read = group["bytes_read"].sum() if group["bytes_read"].notna().any() else None
        cells.append(
            f'<tr><td title="{esc(path)}"><code>{esc(base_name(path))}</code></td><td>{boxes}</td>'
            f"<td>{esc(byte_size(None if read is None else int(read)))}</td></tr>"
        )
    more = (
        f'<div class="ib-muted">and {len(files) - _HTML_FILES:,} more files</div>' if len(files) > _HTML_FILES else ""
    )
    skipped = cost.row_groups[~cost.row_groups["kept"]]
    body = (
        f'<pre class="ib-explain">{esc(cost.summary())}</pre>'
        '<table class="ib-grid"><thead><tr><th>file</th><th>row groups (green read, red skipped)</th>'
        f"<th>bytes read</th></tr></thead><tbody>{''.join(cells)}</tbody></table>{more}"
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
        '<table class="ib-grid"><thead><tr><th>category</th><th>files</th><th>bytes</th><th>share</th>'
        f"<th>detail</th></tr></thead><tbody>{bars}</tbody></table>"
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


__all__ = ["cost_html", "cost_text", "plans_html", "plans_text", "storage_html", "storage_text"]
