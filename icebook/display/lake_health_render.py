"""A namespace's ``LakeHealth`` as text and as static HTML: one row per table and debt, the most
indebted tables first, each debt with the procedure that pays it off. Every string is escaped."""

from __future__ import annotations

from icebook.analysis.maintenance.lake_health import LakeHealth
from icebook.display._base import badge, esc, frame, frame_table_html
from icebook.display.frames import frame_text

ROWS = 200


def lake_health_text(report: LakeHealth) -> str:
    return f"{report.summary()}\n\n{frame_text(report.to_pandas())}"


def lake_health_html(report: LakeHealth) -> str:
    cls = "ib-removed" if any(r.debts for r in report.rows) else "ib-added"
    head = f"<h4>{badge('namespace health', cls)} {esc(report.summary())}</h4>"
    return frame(head + frame_table_html(report.to_pandas(), limit=ROWS, caption="ranked by maintenance debt"))


__all__ = ["lake_health_html", "lake_health_text"]
