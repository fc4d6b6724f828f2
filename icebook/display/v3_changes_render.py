"""Format version 3's part of a change (``V3Changes``): deletion vectors replaced, added and dropped, and the
row ids assigned, as text lines and as static HTML (every value escaped). Diffs and time-lapses show it."""

from __future__ import annotations

from icebook.analysis.history.v3_changes import DeleteFileRef, DvChangeKind, V3Changes
from icebook.display._base import base_name, esc, grid, human_count, short_path

ROWS = 50


def v3_lines(v3: V3Changes) -> list[str]:
    """The change as sentences, data files by their file names."""
    return v3.lines(base_name)


def _vector(ref: DeleteFileRef | None, location: str) -> str:
    if ref is None:
        return '<span class="ib-muted">–</span>'
    where = f" @ {ref.offset}" if ref.is_vector else " (position delete file)"
    return f"<code>{esc(short_path(ref.path, location))}</code>{esc(where)}: {esc(human_count(ref.deleted_rows))} rows"


def v3_html(v3: V3Changes, location: str = "") -> str:
    """The deletion vectors that changed, one row per data file, then the row ids assigned; empty when the
    change has none (a table before v3)."""
    if v3.empty:
        return ""
    parts = ['<div class="ib-h">Format version 3: deletion vectors and row ids</div>']
    if v3.dv_changes:
        rows = []
        for c in v3.dv_changes[:ROWS]:
            cls = {DvChangeKind.NEW: "ib-row-added", DvChangeKind.DROPPED: "ib-row-removed"}.get(c.kind, "")
            rows.append(
                f'<tr class="{cls}"><td>{esc(c.kind.value)}</td><td><code>{esc(short_path(c.data_file, location))}</code></td>'
                f"<td>{_vector(c.before, location)}</td>"
                f"<td>{_vector(c.after, location)}</td>"
                f"<td>{esc(c.text(base_name(c.data_file)))}</td></tr>"
            )
        more = len(v3.dv_changes) - ROWS
        parts.append(
            grid(("DV", "data file", "before", "after", ""), rows, cls="ib-v3-dvs", scroll=True)
            + (f'<div class="ib-muted">… {more:,} more (v3.dv_frame())</div>' if more > 0 else "")
        )
    lines = v3.row_id_lines()
    if lines:
        parts.append('<ul class="ib-v3-row-ids">' + "".join(f"<li>{esc(line)}</li>" for line in lines) + "</ul>")
    return "".join(parts)


__all__ = ["v3_html", "v3_lines"]
