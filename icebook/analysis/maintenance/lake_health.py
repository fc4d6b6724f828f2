"""The health of a whole namespace: one row per table, ranked by maintenance debt.

Two passes, the cheap one first:

- **cheap** (the metadata file alone, no manifest read): each table's card (format version, current
  snapshot and its time, snapshots, refs, and records, files and bytes from the current snapshot's
  summary) and the debt that shows there: small files (the summary's data files average under
  compaction's minimum size, and there are at least ``min-input-files`` of them), delete debt (live
  delete files in the summary), snapshots past retention (``expiry_fates`` with the table's own
  settings) and refs past their max age;
- **deep** (on demand): the table's full ``health()`` report, which reads manifests and lists the
  location, and adds manifest count and orphan bytes. A deep row replaces the cheap one.

Tables are read in parallel threads (reading is I/O: catalog round trips and metadata files). A table
that cannot be read keeps its row, with its one-line error, ranked after the tables with debt.

Debt is ranked by how many kinds a table carries, then by the work the procedures would do, in
files touched (``Debt.weight``): the files compaction rewrites, the delete files applied, the
snapshots expired, the orphan files removed, the manifests rewritten.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

import pandas as pd

from icebook.analysis._frames import frame
from icebook.analysis.maintenance.compaction import compaction_options
from icebook.analysis.maintenance.expiry_rules import GcDisabled, clock_ms, expiry_fates
from icebook.analysis.maintenance.health import APPLY_DELETES, Area, HealthReport, ProcedureCall
from icebook.errors import IcebookError, one_line
from icebook.io.catalogs import CatalogTable, list_tables, resolve_table
from icebook.io.fileio import default_fileio
from icebook.io.locate import read_table_metadata
from icebook.spec.metadata import TableMetadata
from icebook.spec.snapshots import Snapshot
from icebook.text import byte_size, iso_utc

WORKERS = 8


@dataclass(frozen=True, slots=True, kw_only=True)
class TableCard:
    """What a table's metadata file says at a glance (no manifest read)."""

    identifier: str
    metadata_location: str
    location: str
    format_version: int
    current_snapshot_id: int | None
    current_snapshot_ms: int | None
    snapshots: int
    refs: int
    records: int | None
    """From the current snapshot's summary (``total-records``); None when the summary does not say."""
    data_files: int | None
    delete_files: int | None
    bytes: int | None
    """``total-files-size`` of the current snapshot's summary."""

    @property
    def current_snapshot_time(self) -> str | None:
        if self.current_snapshot_ms is None:
            return None
        return iso_utc(self.current_snapshot_ms)


@dataclass(frozen=True, slots=True, kw_only=True)
class Debt:
    """One kind of maintenance debt on one table, and the procedure that pays it off."""

    kind: Area
    title: str
    weight: int
    """Files (or snapshots) the procedure would touch: how this debt ranks."""
    procedure: ProcedureCall | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TableHealth:
    """One row of the namespace report."""

    identifier: str
    card: TableCard | None
    debts: tuple[Debt, ...] = ()
    deep: bool = False
    """Whether the table's full health report (manifests read, location listed) is behind these debts."""
    error: str | None = None

    @property
    def badge(self) -> str:
        """``error``, ``debt`` or ``ok``."""
        if self.error is not None:
            return "error"
        return "debt" if self.debts else "ok"

    @property
    def weight(self) -> int:
        return sum(d.weight for d in self.debts)

    @property
    def kinds(self) -> tuple[Area, ...]:
        """The kinds of debt the table carries, once each (areas the lake words alike, as "other", once)."""
        first: dict[str, Area] = {}
        for d in self.debts:
            first.setdefault(d.kind.debt, d.kind)
        return tuple(first.values())


@dataclass(frozen=True, slots=True, kw_only=True)
class LakeHealth:
    """``%ice health CATALOG.NAMESPACE``: every table's debt, the most indebted first."""

    namespace: str
    rows: tuple[TableHealth, ...]
    deep: bool
    seconds: float

    def to_pandas(self) -> pd.DataFrame:
        """One row per table and debt (a table without debt: one row with no debt), ranked."""
        records: list[dict[str, Any]] = []
        for rank, row in enumerate(self.rows, 1):
            base = {"rank": rank, "table": row.identifier, "badge": row.badge}
            if row.error is not None:
                records.append({**base, "debt": "error", "detail": row.error, "procedure": None})
            for d in row.debts:
                sql = d.procedure.sql(row.identifier) if d.procedure else None
                records.append({**base, "debt": d.kind.debt, "detail": d.title, "procedure": sql})
            if row.error is None and not row.debts:
                records.append({**base, "debt": None, "detail": None, "procedure": None})
        return frame(records, ["rank", "table", "badge", "debt", "detail", "procedure"])

    def summary(self) -> str:
        indebted = sum(1 for r in self.rows if r.debts)
        failed = sum(1 for r in self.rows if r.error is not None)
        depth = "full health" if self.deep else "metadata only"
        return (
            f"{self.namespace}: {len(self.rows)} tables, {indebted} with maintenance debt"
            + (f", {failed} unreadable" if failed else "")
            + f" ({depth}, {self.seconds:.1f} s)"
        )

    def __repr__(self) -> str:
        return f"<LakeHealth {self.summary()}>"


def _metric(snapshot: Snapshot | None, key: str) -> int | None:
    """A numeric field of the snapshot's summary (``Snapshot.metric``); None without a snapshot."""
    return None if snapshot is None else snapshot.metric(key)


def table_card(identifier: str, metadata: TableMetadata, metadata_location: str) -> TableCard:
    current = metadata.current_snapshot()
    return TableCard(
        identifier=identifier,
        metadata_location=metadata_location,
        location=metadata.location,
        format_version=metadata.format_version,
        current_snapshot_id=None if current is None else current.snapshot_id,
        current_snapshot_ms=None if current is None else current.timestamp_ms,
        snapshots=len(metadata.snapshots),
        refs=len(metadata.refs),
        records=_metric(current, "total-records"),
        data_files=_metric(current, "total-data-files"),
        delete_files=_metric(current, "total-delete-files"),
        bytes=_metric(current, "total-files-size"),
    )


def metadata_debts(metadata: TableMetadata, card: TableCard, now_ms: int) -> tuple[Debt, ...]:
    """The debt the metadata file shows: small files and delete debt from the current summary,
    snapshots and refs the table's own retention would expire."""
    out: list[Debt] = []
    options = compaction_options(metadata.properties)
    if card.data_files and card.bytes is not None and card.data_files >= options.min_input_files:
        mean = card.bytes // card.data_files
        if mean < options.min_file_size_bytes:
            out.append(
                Debt(
                    kind=Area.SMALL_FILES,
                    title=f"{card.data_files} data files of {byte_size(mean)} on average "
                    f"(compaction's minimum: {byte_size(options.min_file_size_bytes)})",
                    weight=card.data_files,
                    procedure=ProcedureCall.defaults("rewrite_data_files"),
                )
            )
    if card.delete_files:
        current = metadata.current_snapshot()
        positions = _metric(current, "total-position-deletes")
        equalities = _metric(current, "total-equality-deletes")
        out.append(
            Debt(
                kind=Area.DELETE_DEBT,
                title=f"{card.delete_files} live delete files ({positions or 0} position, {equalities or 0} "
                "equality deletes) every read merges",
                weight=card.delete_files,
                procedure=APPLY_DELETES,
            )
        )
    try:
        _retention, fates, ref_fates = expiry_fates(metadata, now_ms=now_ms)
    except GcDisabled:
        return tuple(out)  # expire_snapshots refuses to run: no debt it could pay
    expire = ProcedureCall.defaults("expire_snapshots")  # pays both debts below, weighted by what it removes
    expired = [f.snapshot_id for f in fates if f.expires]
    stale = sorted(r.name for r in ref_fates if r.removed)
    for kind, removed, title in (
        (Area.HISTORY, expired, f"{len(expired)} of {len(fates)} snapshots are past the table's retention"),
        (Area.REFS, stale, f"refs past their max age: {', '.join(stale)}"),
    ):
        if removed:
            out.append(Debt(kind=kind, title=title, weight=len(removed), procedure=expire))
    return tuple(out)


def report_debts(report: HealthReport) -> tuple[Debt, ...]:
    """A table's full health report as debts (orphan bytes and manifest counts included)."""
    out = []
    for finding in report.findings:
        kind = finding.area
        weight, title = 1, finding.title
        if kind == Area.ORPHANS and report.orphans is not None:
            stray = [*report.orphans.files, *report.orphans.too_recent]
            weight = max(len(stray), 1)
            title = f"{byte_size(sum(f.size_in_bytes for f in stray))} in orphan files: {finding.title}"
        elif kind == Area.SMALL_FILES and report.compaction is not None:
            weight = max(report.compaction.rewritten_file_count, 1)
        elif kind == Area.MANIFESTS:
            weight = report.manifests.manifests
        elif kind == Area.DELETE_DEBT:
            weight = max(report.files.delete_files, 1)
        elif kind == Area.HISTORY and report.history.expirable is not None:
            weight = max(len(report.history.expirable.expired_snapshot_ids), 1)
        out.append(Debt(kind=kind, title=title, weight=weight, procedure=finding.procedure))
    return tuple(out)


Resolver = Callable[[str, str], CatalogTable]
"""(catalog, ``namespace.table``) -> where the table's current metadata file is (default: PyIceberg's catalog)."""


def read_card(catalog: str, table: str, *, now_ms: int, resolve: Resolver | None = None) -> TableHealth:
    """One table's card and metadata debts; its one-line error in their place when it cannot be read."""
    identifier = f"{catalog}.{table}"
    try:
        found = (resolve or resolve_table)(catalog, table)
        io = default_fileio(found.properties)
        metadata = read_table_metadata(io, found.metadata_location)
        card = table_card(found.identifier, metadata, found.metadata_location)
        return TableHealth(identifier=found.identifier, card=card, debts=metadata_debts(metadata, card, now_ms))
    except IcebookError as exc:
        return TableHealth(identifier=identifier, card=None, error=one_line(exc))
    except Exception as exc:  # a catalog plugin's own exception: shown on the table's row, the rest go on
        return TableHealth(identifier=identifier, card=None, error=one_line(exc))


def read_cards(
    catalog: str,
    tables: Sequence[str],
    *,
    now_ms: int | None = None,
    progress: Callable[[int], None] | None = None,
    resolve: Resolver | None = None,
) -> list[TableHealth]:
    """Cards of ``tables`` (``namespace.table`` names of ``catalog``) in parallel, in their order."""
    now = clock_ms(now_ms)
    with ThreadPoolExecutor(max_workers=min(WORKERS, max(len(tables), 1))) as pool:
        out = []
        for row in pool.map(lambda t: read_card(catalog, t, now_ms=now, resolve=resolve), tables):
            out.append(row)
            if progress is not None:
                progress(1)
    return out


def rank(rows: Iterable[TableHealth]) -> tuple[TableHealth, ...]:
    """Most debt first: kinds of debt, then files touched; unreadable tables next, clean ones last."""
    return tuple(sorted(rows, key=lambda r: (-len(r.kinds), -r.weight, r.error is None and not r.debts, r.identifier)))


def lake_health(
    catalog: str,
    namespace: str,
    *,
    deep: Callable[[str], HealthReport] | None = None,
    progress: bool = True,
    now_ms: int | None = None,
) -> LakeHealth:
    """The namespace report: every table's metadata debts (cheap pass), then, when ``deep`` opens a
    table's full health report by identifier, that report's debts in their place."""
    started = time.monotonic()
    tables = list_tables(catalog, namespace)
    bar = _bar(len(tables) * (2 if deep else 1), progress, f"{catalog}.{namespace}: metadata")
    try:
        rows = read_cards(catalog, tables, now_ms=now_ms, progress=bar.update)
        if deep is not None:
            bar.set_description(f"{catalog}.{namespace}: full health")
            opener = deep

            def deeper(row: TableHealth) -> TableHealth:
                if row.error is not None:
                    return row
                try:
                    return replace(row, debts=report_debts(opener(row.identifier)), deep=True)
                except IcebookError as exc:
                    return replace(row, error=one_line(exc))

            with ThreadPoolExecutor(max_workers=min(WORKERS, max(len(rows), 1))) as pool:
                done = []
                for row in pool.map(deeper, rank(rows)):
                    done.append(row)
                    bar.update(1)
            rows = done
    finally:
        bar.close()
    return LakeHealth(
        namespace=f"{catalog}.{namespace}",
        rows=rank(rows),
        deep=deep is not None,
        seconds=round(time.monotonic() - started, 3),
    )


def _bar(total: int, enabled: bool, description: str) -> Any:
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="table", desc=description, leave=False, disable=not enabled)


__all__ = [
    "Debt",
    "LakeHealth",
    "Resolver",
    "TableCard",
    "TableHealth",
    "lake_health",
    "metadata_debts",
    "rank",
    "read_card",
    "read_cards",
    "report_debts",
    "table_card",
]
