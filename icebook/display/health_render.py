"""A ``HealthReport`` as text and as static HTML: findings first (each with the procedure call that
addresses it), then the measurements behind them. Every table string is escaped."""

from __future__ import annotations

from icebook.analysis.maintenance.health import Finding, HealthReport
from icebook.analysis.maintenance.health_v3 import MANY_DV_REPLACEMENTS
from icebook.display._base import badge, esc, frame, frame_table_html, grid, human_count, kv_table
from icebook.display.frames import frame_text
from icebook.spec import properties
from icebook.text import byte_size, duration, utc_text

ROWS = 50


def _history_rows(r: HealthReport) -> list[tuple[str, str, str]]:
    h = r.history
    expirable = h.expirable
    return [
        ("snapshots", human_count(h.snapshots), f"oldest {utc_text(h.oldest_ms)}, newest {utc_text(h.newest_ms)}"),
        (
            properties.MAX_SNAPSHOT_AGE_MS.name,
            duration(h.max_snapshot_age_ms),
            f"{h.past_retention} snapshots are older than this",
        ),
        (
            properties.MIN_SNAPSHOTS_TO_KEEP.name,
            str(h.min_snapshots_to_keep),
            "kept on every branch whatever their age",
        ),
        (
            "expirable now",
            "–" if expirable is None else human_count(len(expirable.expired_snapshot_ids)),
            f"{properties.GC_ENABLED.name} is false"
            if expirable is None
            else f"{len(expirable.files)} files ({byte_size(expirable.bytes)}) would be deleted",
        ),
        (
            "metadata log",
            f"{h.metadata_log_entries} of {h.previous_versions_max}",
            f"{properties.PREVIOUS_VERSIONS_MAX.name}; older files "
            + ("are deleted on commit" if h.delete_after_commit else "stay on storage (delete-after-commit is off)"),
        ),
        ("metadata file", byte_size(h.metadata_file_bytes), "rewritten by every commit"),
    ]


def _finding_text(f: Finding, identifier: str) -> list[str]:
    lines = [f"- [{f.area}] {f.title}", f"    {f.detail}"]
    if f.procedure is not None:
        lines.append(f"    fix: {f.procedure.sql(identifier)}")
        if f.procedure.icebook:
            lines.append(f"         {f.procedure.icebook}")
    return lines


def health_text(r: HealthReport) -> str:
    lines = [f"Health of {r.location} at snapshot {r.snapshot_id}: {r.summary()}"]
    lines += [f"  note: {n}" for n in r.notes]
    for f in r.findings:
        lines += _finding_text(f, r.identifier)
    files = r.files
    lines += [
        "",
        f"Files: {files.data_files} data files ({files.small_files} under {byte_size(files.min_file_size_bytes)}, "
        f"target {byte_size(files.target_file_size_bytes)}), {files.delete_files} delete files, "
        f"{files.files_with_deletes} data files with deletes, {files.dangling_deletes} dangling deletes",
        "Size of data files against the target: "
        + ", ".join(f"{name} {count}" for name, count in files.size_histogram),
        frame_text(r.partitions().head(ROWS)),
        "",
        f"Manifests: {r.manifests.data_manifests} data, {r.manifests.delete_manifests} delete, "
        f"{byte_size(r.manifests.total_bytes)}; a one-partition filter opens {r.manifests.mean_opened:.1f} on average",
        "",
        "History:",
        *(f"  {k}: {v} ({d})" for k, v, d in _history_rows(r)),
        "",
        "Refs:",
        *(
            f"  {ref.type} {ref.name} -> {ref.snapshot_id}, {duration(ref.age_ms)} old, max age {duration(ref.max_ref_age_ms)}"
            + (" (expires)" if ref.expires else "")
            for ref in r.refs
        ),
    ]
    if r.orphans is not None:
        o = r.orphans
        lines += ["", f"Orphans: {o.summary()}", *(f"  {f.path}" for f in (*o.files, *o.too_recent)[:ROWS])]
    return "\n".join([*lines, "", *v3_text(r)])


def v3_text(r: HealthReport) -> list[str]:
    """The format version 3 section: deletion vectors at v3, what an upgrade changes at v2."""
    v3 = r.v3
    if v3.upgrade is not None:
        return [
            f"Format version {v3.format_version}; upgrading to 3 ({v3.upgrade.sql(r.identifier)}) would change:",
            *(f"  - {change}" for change in v3.upgrade.changes),
        ]
    if v3.format_version < 3:
        return [f"Format version {v3.format_version}"]
    return [
        f"Format version {v3.format_version}: {v3.deletion_vectors} live deletion vectors, "
        f"{len(v3.dangling)} dangling, {len(v3.churn)} data files whose vector was replaced "
        f"({len(v3.many_replacements)} of them {MANY_DV_REPLACEMENTS} times or more)",
        *(f"  dangling: {d.path} @ {d.offset} names {d.data_file} ({d.deleted_rows} rows)" for d in v3.dangling[:ROWS]),
        *(
            f"  replaced {c.replacements}x: {c.data_file} ({c.vectors} vectors, {c.deleted_rows} rows deleted now"
            + ("" if c.live else "; the data file is no longer live")
            + ")"
            for c in v3.churn[:ROWS]
        ),
    ]


def v3_html(r: HealthReport) -> str:
    """The format version 3 section as escaped HTML."""
    v3 = r.v3
    if v3.upgrade is not None:
        items = "".join(f"<li>{esc(change)}</li>" for change in v3.upgrade.changes)
        return (
            f'<div class="ib-muted">Format version {esc(v3.format_version)}. Upgrading to 3 '
            f"(<code>{esc(v3.upgrade.sql(r.identifier))}</code>) would change:</div>"
            f'<ul class="ib-health-upgrade">{items}</ul>'
        )
    if v3.format_version < 3:
        return f'<div class="ib-muted">Format version {esc(v3.format_version)}.</div>'
    dangling = "".join(
        f"<tr><td><code>{esc(d.path)}</code></td><td>{esc(d.offset)}</td><td><code>{esc(d.data_file)}</code></td>"
        f"<td>{esc(human_count(d.deleted_rows))}</td></tr>"
        for d in v3.dangling[:ROWS]
    )
    churn = "".join(
        f"<tr><td><code>{esc(c.data_file)}</code></td><td>{esc(c.vectors)}</td><td>{esc(c.replacements)}</td>"
        f"<td>{esc(human_count(c.deleted_rows))}</td><td>{'yes' if c.live else 'no'}</td></tr>"
        for c in v3.churn[:ROWS]
    )
    return (
        f'<div class="ib-muted">Format version {esc(v3.format_version)}: {esc(v3.deletion_vectors)} live deletion '
        f"vectors; a data file whose vector was replaced {esc(MANY_DV_REPLACEMENTS)} times or more is a finding.</div>"
        + (
            grid(
                ("Puffin file", "offset", "data file (not live)", "rows"),
                dangling,
                cls="ib-health-dangling",
                caption="dangling deletion vectors",
            )
            if dangling
            else ""
        )
        + (
            grid(
                ("data file", "vectors", "replacements", "rows deleted now", "live"),
                churn,
                cls="ib-health-churn",
                caption="deletion vectors replaced, per data file",
            )
            if churn
            else ""
        )
    )


def _finding_html(f: Finding, identifier: str) -> str:
    fix = ""
    if f.procedure is not None:
        call = f"<code>{esc(f.procedure.sql(identifier))}</code>"
        ours = f' · <code class="ib-muted">{esc(f.procedure.icebook)}</code>' if f.procedure.icebook else ""
        fix = f'<div class="ib-health-fix">fix: {call}{ours}</div>'
    return (
        f'<li class="ib-health-finding" data-area="{esc(f.area)}">{badge(f.area, "ib-health-area")} '
        f'<b class="ib-health-title">{esc(f.title)}</b><div class="ib-muted">{esc(f.detail)}</div>{fix}</li>'
    )


def findings_html(r: HealthReport) -> str:
    if r.healthy:
        return '<div class="ib-health-ok">No maintenance debt found.</div>'
    items = "".join(_finding_html(f, r.identifier) for f in r.findings)
    return f'<ul class="ib-health-findings">{items}</ul>'


def histogram_html(r: HealthReport) -> str:
    """Data files per size bucket (relative to the target size) as plain HTML bars."""
    buckets = r.files.size_histogram
    top = max((n for _, n in buckets), default=0) or 1
    rows = "".join(
        f'<tr><td>{esc(name)}</td><td><div class="ib-health-bar" style="width:{int(200 * n / top)}px"></div></td>'
        f"<td>{esc(human_count(n))}</td></tr>"
        for name, n in buckets
    )
    return grid((), rows, cls="ib-health-sizes")


def sections_html(r: HealthReport) -> dict[str, str]:
    """Each section of the report as escaped HTML, by title (the widget shows them as tabs)."""
    files = r.files
    m = r.manifests
    refs = "".join(
        f"<tr><td>{esc(ref.type)}</td><td>{esc(ref.name)}</td><td>{esc(ref.snapshot_id)}</td>"
        f"<td>{esc(duration(ref.age_ms))}</td><td>{esc(duration(ref.max_ref_age_ms))}</td>"
        f"<td>{'expires' if ref.expires else ''}</td></tr>"
        for ref in r.refs
    )
    orphans = '<div class="ib-muted">The table location was not listed (list_files=False).</div>'
    if r.orphans is not None:
        o = r.orphans
        listed = [*o.files, *o.too_recent]
        rows = "".join(
            f"<tr><td><code>{esc(f.path)}</code></td><td>{esc(byte_size(f.size_in_bytes))}</td>"
            f"<td>{esc(utc_text(f.modified_ms))}</td><td>{'yes' if f in o.files else 'not yet'}</td></tr>"
            for f in listed[:ROWS]
        )
        orphans = f'<div class="ib-muted">{esc(o.summary())}</div>' + (
            grid(("file", "size", "modified", "older than the cutoff"), rows) if rows else ""
        )
    return {
        "Findings": findings_html(r),
        "Files & deletes": (
            f'<div class="ib-muted">{esc(human_count(files.data_files))} data files, target size '
            f"{esc(byte_size(files.target_file_size_bytes))}, small under "
            f"{esc(byte_size(files.min_file_size_bytes))}; {esc(human_count(files.delete_files))} delete files</div>"
            + histogram_html(r)
            + frame_table_html(r.partitions(), limit=ROWS, caption="per partition")
        ),
        "Manifests": (
            f'<div class="ib-muted">{esc(m.data_manifests)} data and {esc(m.delete_manifests)} delete manifests, '
            f"{esc(byte_size(m.total_bytes))} ({esc(byte_size(m.smallest_bytes))} to "
            f"{esc(byte_size(m.largest_bytes))}), {m.mean_entries:.1f} live entries each, target "
            f"{esc(byte_size(m.target_size_bytes))}</div>"
            + frame_table_html(m.to_pandas(), limit=ROWS, caption="manifests a one-partition filter opens")
        ),
        "History & refs": (
            kv_table(_history_rows(r), headers=("measure", "value", "meaning"))
            + grid(("type", "ref", "snapshot", "age", "max ref age", ""), refs)
        ),
        "Orphans": orphans,
        "Format v3": v3_html(r),
    }


def header_html(r: HealthReport) -> str:
    state = badge("healthy", "ib-health-good") if r.healthy else badge(f"{len(r.findings)} findings", "ib-health-bad")
    notes = "".join(f'<div class="ib-muted">{esc(n)}</div>' for n in r.notes)
    return (
        f'<div class="ib-health-head"><b>Health</b> of <code>{esc(r.location)}</code> at snapshot '
        f"<code>{esc(r.snapshot_id)}</code> {state}</div>{notes}"
    )


def health_html(r: HealthReport) -> str:
    parts = [header_html(r)]
    for title, body in sections_html(r).items():
        parts.append(f'<details class="ib-health-section"{" open" if title == "Findings" else ""}>')
        parts.append(f"<summary>{esc(title)}</summary>{body}</details>")
    return frame("".join(parts), cls="ib-health")


__all__ = ["findings_html", "header_html", "health_html", "health_text", "sections_html"]
