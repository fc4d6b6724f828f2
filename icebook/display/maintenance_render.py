"""Maintenance previews and before/after diffs as text and static HTML (every table string escaped)."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Callable
from typing import Any

import pandas as pd

from icebook.analysis.maintenance.before_after import MaintenanceDiff
from icebook.analysis.maintenance.compaction import CompactionPreview
from icebook.analysis.maintenance.expire import ExpirePreview
from icebook.analysis.maintenance.orphans import OrphanReport
from icebook.analysis.maintenance.rewrite_previews import DeleteRewritePreview, ManifestRewritePreview
from icebook.analysis.maintenance.why_kept import WhyKept
from icebook.display._base import esc, frame, frame_table_html
from icebook.display.frames import frame_text

ROWS = 50


def _text(summary: str, *tables: tuple[str, pd.DataFrame]) -> str:
    lines = [summary]
    for title, df in tables:
        lines += ["", f"{title} ({len(df)}):", frame_text(df.head(ROWS))]
        if len(df) > ROWS:
            lines.append(f"... {len(df) - ROWS} more rows (to_pandas())")
    return "\n".join(lines)


def _html(summary: str, *tables: tuple[str, pd.DataFrame], cls: str) -> str:
    body = f'<div class="ib-maint-summary"><b>{esc(summary)}</b></div>'
    for title, df in tables:
        body += frame_table_html(df, limit=ROWS, caption=title)
    return frame(body, cls=f"ib-maint {cls}")


def _expire_tables(p: ExpirePreview) -> tuple[tuple[str, pd.DataFrame], ...]:
    tables = [("snapshots", p.snapshots_frame()), ("files to delete", p.to_pandas())]
    if p.source is not None:
        kept = p.kept_files().drop(columns=["removal"])
        tables.append(("files that stay, and why", kept))
    return tuple(tables)


def _orphan_tables(p: OrphanReport) -> tuple[tuple[str, pd.DataFrame], ...]:
    return (("orphan files", p.to_pandas()),)


def _compaction_tables(p: CompactionPreview) -> tuple[tuple[str, pd.DataFrame], ...]:
    return (("candidate files by group", p.to_pandas()),)


def _manifest_tables(p: ManifestRewritePreview) -> tuple[tuple[str, pd.DataFrame], ...]:
    return (("manifests", p.to_pandas()),)


def _delete_tables(p: DeleteRewritePreview) -> tuple[tuple[str, pd.DataFrame], ...]:
    return (("position delete files by group", p.to_pandas()),)


def _diff_tables(d: MaintenanceDiff) -> tuple[tuple[str, pd.DataFrame], ...]:
    files = pd.DataFrame(
        [{"file_path": f.path, "kind": f.kind.value, "size": f.size_in_bytes} for f in d.unreferenced_files]
    )
    out: list[tuple[str, pd.DataFrame]] = [("before and after", d.to_pandas())]
    if len(files):
        out.append(("no longer referenced", files))
    if d.deleted_files:
        out.append(("deleted unreferenced files", pd.DataFrame({"file_path": list(d.deleted_files)})))
    return tuple(out)


def _pair(tables: Callable[[Any], tuple[tuple[str, pd.DataFrame], ...]], cls: str) -> tuple[Any, Any]:
    def text(p: Any) -> str:
        return _text(p.summary(), *tables(p))

    def html(p: Any) -> str:
        return _html(p.summary(), *tables(p), cls=cls)

    return text, html


expire_text, expire_html = _pair(_expire_tables, "ib-expire")
orphans_text, orphans_html = _pair(_orphan_tables, "ib-orphans")
compaction_text, compaction_html = _pair(_compaction_tables, "ib-compaction")
manifest_rewrite_text, manifest_rewrite_html = _pair(_manifest_tables, "ib-manifest-rewrite")
delete_rewrite_text, delete_rewrite_html = _pair(_delete_tables, "ib-delete-rewrite")
maintenance_diff_text, maintenance_diff_html = _pair(_diff_tables, "ib-maint-diff")


def _why_lines(w: WhyKept) -> list[str]:
    width = max(60, shutil.get_terminal_size((100, 20)).columns)
    verdict = f"; {w.verdict()}" if w.verdict() else ""
    lines = textwrap.wrap(f"{w.kind} {w.path}", width, break_long_words=True)
    lines += textwrap.wrap(f"{w.status}{verdict}.", width)
    lines += textwrap.wrap(f"removed by: {w.removed_by.text()}", width, subsequent_indent="  ")
    return lines


def why_text(w: WhyKept) -> str:
    lines = _why_lines(w)
    if len(w.keepers):
        lines += ["", f"kept by ({len(w.keepers)} snapshots):", frame_text(w.keepers.head(ROWS))]
        if len(w.keepers) > ROWS:
            lines.append(f"... {len(w.keepers) - ROWS} more rows (keepers)")
    return "\n".join(lines)


def why_html(w: WhyKept) -> str:
    verdict = f"; {w.verdict()}" if w.verdict() else ""
    body = (
        f'<div class="ib-maint-summary"><b>{esc(w.kind)}</b> <code>{esc(w.path)}</code><br>'
        f"{esc(w.status)}{esc(verdict)}.<br><b>removed by:</b> {esc(w.removed_by.text())}</div>"
    )
    if len(w.keepers):
        body += frame_table_html(w.keepers, limit=ROWS, caption="kept by")
    return frame(body, cls="ib-maint ib-why")


def result_text(diff: MaintenanceDiff, output: Any) -> str:
    """A procedure's outcome: its own output, then the before/after diff."""
    shown = output if not isinstance(output, list) else f"{len(output)} files"
    return f"Spark returned: {shown}\n{maintenance_diff_text(diff)}"


def result_html(diff: MaintenanceDiff, output: Any) -> str:
    shown = output if not isinstance(output, list) else f"{len(output)} files"
    return f'<div class="icebook ib-muted">Spark returned: {esc(shown)}</div>' + maintenance_diff_html(diff)


__all__ = [
    "compaction_html",
    "compaction_text",
    "delete_rewrite_html",
    "delete_rewrite_text",
    "expire_html",
    "expire_text",
    "maintenance_diff_html",
    "maintenance_diff_text",
    "manifest_rewrite_html",
    "manifest_rewrite_text",
    "orphans_html",
    "orphans_text",
    "result_html",
    "result_text",
    "why_html",
    "why_text",
]
