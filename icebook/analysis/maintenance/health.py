"""A table's health: the maintenance debt it carries and the Spark procedure that pays each off.

Findings, each naming the procedure (with its arguments) that addresses it:

- small files: bin-pack compaction with default options would rewrite some files
  (``compaction_preview``) -> ``rewrite_data_files``;
- delete debt: data files that delete files apply to, so every read merges them (equality deletes
  that still apply included) -> ``rewrite_data_files`` with ``delete-file-threshold`` 1;
- dangling deletes: position delete files that apply to no live data file -> ``rewrite_position_delete_files``;
- dangling deletion vectors (v3): vectors whose data file is not live -> ``rewrite_data_files`` with
  ``remove-dangling-deletes``;
- deletion vector churn (v3): data files whose vector was replaced at least ``MANY_DV_REPLACEMENTS`` times in
  the kept snapshots -> ``rewrite_data_files`` with ``delete-file-threshold`` 1, which applies the deletes;
- manifests: at least ``MANY_MANIFESTS`` manifests, at least twice what ``rewrite_manifests`` would
  write -> ``rewrite_manifests``;
- history: snapshots the table's own retention would expire now (``expire_preview`` with the
  table's settings) -> ``expire_snapshots``;
- stale refs: refs older than their max-ref-age, which ``expire_snapshots`` removes;
- metadata: a metadata file over ``LARGE_METADATA_BYTES``;
- orphans: files under the location that nothing references -> ``remove_orphan_files``;
- properties: a table property icebook reads whose value cannot be used (``spec/properties.py``).
  The report still answers: measurements use the property's default, and the preview that needs it
  (compaction, manifest rewrite, expiry) is left out, as the procedure would fail or misread it.

A v2 table's report also says what upgrading it to v3 would change (``HealthReport.v3.upgrade``, not a
finding: a v2 table is not in debt for being v2).

The thresholds are conventions of this report, named here; the procedures' own rules decide what
they do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis._frames import frame
from icebook.analysis.ancestry import ancestor_ids
from icebook.analysis.maintenance.binpack import CompactionOptions, compaction_options
from icebook.analysis.maintenance.compaction import CompactionCounts, CompactionPreview
from icebook.analysis.maintenance.expire import ExpirePreview, GcDisabled, PendingExpiry, retention, start_expiry
from icebook.analysis.maintenance.expiry_rules import clock_ms
from icebook.analysis.maintenance.health_sections import (
    FilesHealth,
    HistoryHealth,
    ManifestsHealth,
    RefHealth,
    history_health,
)
from icebook.analysis.maintenance.health_stream import measure_snapshot
from icebook.analysis.maintenance.health_v3 import (
    MANY_DV_REPLACEMENTS,
    DeleteCollector,
    V3Health,
    v3_health,
    vector_history,
)
from icebook.analysis.maintenance.orphans import DEFAULT_AGE_MS, OrphanReport, PendingOrphans
from icebook.analysis.maintenance.rewrite_previews import ManifestRewritePreview, manifest_rewrite_preview
from icebook.analysis.store.metrics import invalid_bounds
from icebook.analysis.store.reachable import live_files
from icebook.analysis.store.table_like import TableLike
from icebook.errors import IcebookError, PropertyError
from icebook.spec import properties
from icebook.spec.manifest import ManifestFile
from icebook.spec.metadata import TableMetadata
from icebook.spec.snapshots import Snapshot
from icebook.text import DAY_MS, byte_size, duration, spark_call, spark_timestamp

MANY_MANIFESTS = 8
LARGE_METADATA_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcedureCall:
    """A Spark procedure call that addresses a finding, and the icebook call that runs it."""

    name: str
    args: tuple[tuple[str, str], ...] = ()
    """(argument, Spark SQL value) after ``table``."""
    icebook: str = ""
    """The same through icebook, e.g. ``t.maintenance.rewrite_data_files()``."""

    @classmethod
    def defaults(cls, name: str, *, args: tuple[tuple[str, str], ...] = ()) -> ProcedureCall:
        """The procedure ``name`` as icebook runs it with its defaults, ``t.maintenance.<name>()``; ``args``
        are what the Spark call spells out."""
        return cls(name=name, args=args, icebook=f"t.maintenance.{name}()")

    def sql(self, identifier: str) -> str:
        return spark_call(identifier, self.name, self.args)


APPLY_DELETES = ProcedureCall(
    name="rewrite_data_files",
    args=(("options", "map('delete-file-threshold', '1')"),),
    icebook="t.maintenance.rewrite_data_files(options={'delete-file-threshold': 1})",
)
"""Rewrite every data file a delete file applies to: the deletes are applied and drop out."""


class Area(StrEnum):
    """What a finding is about."""

    SMALL_FILES = "small files"
    DELETE_DEBT = "delete debt"
    MANIFESTS = "manifests"
    HISTORY = "history"
    REFS = "refs"
    METADATA = "metadata"
    ORPHANS = "orphans"
    PROPERTIES = "properties"

    @property
    def debt(self) -> str:
        """The area as a kind of maintenance debt, in the words of the lake's report."""
        return _DEBT_WORDS.get(self, "other")


_DEBT_WORDS = {
    Area.SMALL_FILES: "small files",
    Area.DELETE_DEBT: "delete debt",
    Area.HISTORY: "snapshots past retention",
    Area.ORPHANS: "orphan bytes",
    Area.MANIFESTS: "manifests",
    Area.REFS: "stale refs",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    area: Area
    title: str
    detail: str
    procedure: ProcedureCall | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HealthReport:
    """``t.maintenance.health(at)``: measurements at one snapshot, table-wide history, and findings."""

    location: str
    identifier: str
    """The catalog name the procedures are shown against (``<catalog>.<db>.<table>`` when unknown)."""
    snapshot_id: int | None
    is_current: bool
    now_ms: int
    files: FilesHealth
    compaction: CompactionCounts | CompactionPreview | None
    """What bin-pack compaction would rewrite in the current snapshot (counted; a report made elsewhere
    may hold the whole preview). None when ``write.target-file-size-bytes`` is invalid (see
    ``invalid_properties``)."""
    manifests: ManifestsHealth
    history: HistoryHealth
    refs: tuple[RefHealth, ...]
    orphans: OrphanReport | None
    """None when listing was not asked for (``list_files=False``)."""
    findings: tuple[Finding, ...]
    notes: tuple[str, ...] = ()
    invalid_properties: tuple[PropertyError, ...] = ()
    """Table properties icebook reads whose values cannot be used; each is also a finding."""
    v3: V3Health
    """Format version 3: dangling deletion vectors and vector churn, or, for a v2 table, what upgrading it
    would change (``icebook.analysis.maintenance.health_v3``)."""

    @property
    def healthy(self) -> bool:
        return not self.findings

    def to_pandas(self) -> pd.DataFrame:
        """One row per finding, with the procedure call that addresses it."""
        return frame(
            (
                {
                    "area": f.area.value,
                    "finding": f.title,
                    "detail": f.detail,
                    "procedure": f.procedure.sql(self.identifier) if f.procedure else None,
                    "icebook": f.procedure.icebook if f.procedure else None,
                }
                for f in self.findings
            ),
            ["area", "finding", "detail", "procedure", "icebook"],
        )

    def partitions(self) -> pd.DataFrame:
        """File sizes and delete debt per partition."""
        return self.files.to_pandas()

    def summary(self) -> str:
        if self.healthy:
            return f"healthy: no maintenance debt found in snapshot {self.snapshot_id}"
        return f"{len(self.findings)} findings: " + "; ".join(f.title for f in self.findings)

    def __repr__(self) -> str:
        return f"<HealthReport {self.location} @ {self.snapshot_id}: {self.summary()}>"


def health(
    table: TableLike,
    snapshot: Snapshot | None,
    *,
    identifier: str | None = None,
    list_files: bool = True,
    now_ms: int | None = None,
) -> HealthReport:
    """The health report of ``table`` at ``snapshot`` (files, deletes, manifests) and now (history,
    refs, orphans). Reads the snapshot's manifests, every manifest of the table (for what expiring
    would free) and, with ``list_files``, lists the table location."""
    metadata, store, metadata_location, fileio = table.metadata, table.store, table.metadata_location, table.fileio
    now = clock_ms(now_ms)
    name = identifier or _path_identifier(metadata.location)
    current = metadata.current_snapshot()
    is_current = snapshot is None or (current is not None and snapshot.snapshot_id == current.snapshot_id)
    notes: list[str] = []
    if not is_current:
        notes.append("procedures act on the current snapshot, not on the one this report measures")
    metadata, invalid = _usable(metadata)
    bad = {e.name for e in invalid}
    # Expiry first reads what only expired snapshots reach, and the orphan search lists the location; the
    # pass over the snapshot's manifests then marks off what they reference, so each is read once.
    pending: PendingExpiry | None = None
    retention_names = {p.name for p in _RETENTION}
    if bad & retention_names:
        notes.append("expiry is not previewed: " + ", ".join(sorted(bad & retention_names)) + " is invalid")
    else:
        try:
            pending = start_expiry(metadata, store, now_ms=now)
        except GcDisabled as exc:
            notes.append(str(exc))
    searching = PendingOrphans(metadata, metadata_location, store, fileio, now_ms=now) if list_files else None
    visitors = [v.visit for v in (pending, searching) if v is not None]
    schema = metadata.current_schema()
    vectors = vector_history(table) if metadata.format_version >= 3 else {}
    deletes = DeleteCollector(watch=set(vectors))
    bad_bounds: list[IcebookError] = []  # appended from the pass's worker threads (list.extend is atomic)

    def visit(manifest: ManifestFile, entries: pa.Table) -> None:
        deleted = pc.equal(entries.column("status"), 2)  # a deleted entry is history
        # Filtering copies every column (the bounds maps too): only when there is something to drop.
        live_entries = entries.filter(pc.invert(deleted)) if pc.any(deleted).as_py() else entries
        bad_bounds.extend(invalid_bounds(live_entries, schema, manifest.manifest_path))
        deletes.visit(manifest, entries)
        live = live_files(entries)
        for one in visitors:
            one(manifest, live)

    # One pass over the snapshot's manifests, one at a time: files, deletes, manifests, compaction, bounds.
    options, target = _measure_settings(metadata)
    measured = measure_snapshot(table, snapshot, options, target, visit=visit, bounds=True)
    files, manifests = measured.files, measured.manifests
    compaction: CompactionCounts | None = None
    if properties.TARGET_FILE_SIZE_BYTES.name not in bad:
        # The procedure acts on the current snapshot.
        compaction = measured.compaction if is_current else measure_snapshot(table, current, options, target).compaction
    rewrite = None
    if properties.MANIFEST_TARGET_SIZE_BYTES.name not in bad:
        rewrite = manifest_rewrite_preview(table, current)
    expirable = pending.preview(also=searching.visit if searching else None) if pending is not None else None
    try:
        metadata_bytes: int | None = fileio.size(metadata_location)
    except (IcebookError, OSError):
        metadata_bytes = None
    history = history_health(metadata, expirable, metadata_bytes, now)
    refs = _refs(metadata, expirable, now)
    orphans = searching.report() if searching is not None else None
    v3 = v3_health(table, deletes, vectors)
    findings = [
        *_findings(metadata, files, compaction, manifests, rewrite, history, refs, orphans, v3),
        *(_property_finding(e) for e in invalid),
        *_bounds_finding(bad_bounds),
    ]
    return HealthReport(
        location=metadata.location,
        identifier=name,
        snapshot_id=None if snapshot is None else snapshot.snapshot_id,
        is_current=is_current,
        now_ms=now,
        files=files,
        compaction=compaction,
        manifests=manifests,
        history=history,
        refs=refs,
        orphans=orphans,
        findings=tuple(findings),
        notes=tuple(notes),
        invalid_properties=invalid,
        v3=v3,
    )


def file_measures(table: TableLike, snapshot: Snapshot | None) -> FilesHealth:
    """The report's files section at ``snapshot`` alone: one pass over its manifests, without the history,
    refs, expiry and orphans the whole report reads."""
    options, target = _measure_settings(_usable(table.metadata)[0])
    return measure_snapshot(table, snapshot, options, target).files


def _usable(metadata: TableMetadata) -> tuple[TableMetadata, tuple[PropertyError, ...]]:
    """``metadata`` without its invalid properties, so that measures use their defaults (the previews that
    need one are left out by the caller), and the errors."""
    invalid = properties.invalid_properties(metadata.properties)
    bad = {e.name for e in invalid}
    if not bad:
        return metadata, invalid
    return replace(metadata, properties={k: v for k, v in metadata.properties.items() if k not in bad}), invalid


def _measure_settings(metadata: TableMetadata) -> tuple[CompactionOptions, int]:
    """What the pass over a snapshot's manifests reads of the properties: compaction options, manifest target."""
    return compaction_options(metadata.properties), properties.MANIFEST_TARGET_SIZE_BYTES.read(metadata.properties)


# The properties an expiry preview reads: with one of them invalid, the report leaves it out.
_RETENTION = (
    properties.GC_ENABLED,
    properties.MAX_SNAPSHOT_AGE_MS,
    properties.MIN_SNAPSHOTS_TO_KEEP,
    properties.MAX_REF_AGE_MS,
)


def _property_finding(error: PropertyError) -> Finding:
    return Finding(
        area=Area.PROPERTIES,
        title=f"table property {error.name} is invalid: {error.value!r}",
        detail=(
            f"{error.problem}. This report measures with its default where it needs it and leaves out "
            "the preview that reads it; what reads it (Spark's procedures and readers included) fails "
            "or misreads it. Set it to a valid value or unset it."
        ),
    )


def _bounds_finding(errors: Sequence[IcebookError]) -> tuple[Finding, ...]:
    """One finding for the live data files' column bounds that are not valid for their columns' types."""
    if not errors:
        return ()
    shown = "; ".join(str(e) for e in errors[:5])
    more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
    return (
        Finding(
            area=Area.METADATA,
            title=f"{len(errors)} column bounds in the manifests are not valid for their columns' types",
            detail=(
                f"{shown}{more}. Engines prune files with these bounds, so a query may skip a file it needs or "
                "fail; inspect.files() and entries() refuse them. The manifest is damaged: restore it, or "
                "rewrite the data files it lists so that fresh statistics are written."
            ),
        ),
    )


def _v3_findings(v3: V3Health) -> list[Finding]:
    out: list[Finding] = []
    if v3.dangling:
        shown = "; ".join(f"{d.path} @ {d.offset} names {d.data_file}" for d in v3.dangling[:5])
        more = f" (and {len(v3.dangling) - 5} more)" if len(v3.dangling) > 5 else ""
        out.append(
            Finding(
                area=Area.DELETE_DEBT,
                title=f"{len(v3.dangling)} deletion vectors name a data file that is not live",
                detail=(
                    f"{shown}{more}. They delete nothing, yet every scan plan reads them and their Puffin files stay "
                    "referenced. Removing dangling deletes drops them."
                ),
                procedure=ProcedureCall(
                    name="rewrite_data_files",
                    args=(("options", "map('remove-dangling-deletes', 'true')"),),
                    icebook="t.maintenance.rewrite_data_files(options={'remove-dangling-deletes': 'true'})",
                ),
            )
        )
    many = v3.many_replacements
    if many:
        worst = many[0]
        out.append(
            Finding(
                area=Area.DELETE_DEBT,
                title=f"{len(many)} data files had their deletion vector replaced {MANY_DV_REPLACEMENTS} times or more",
                detail=(
                    f"most: {worst.data_file}, {worst.vectors} vectors ({worst.replacements} replacements), "
                    f"{worst.deleted_rows} rows deleted now. Each delete on such a file writes all of its deleted "
                    "positions again, and every old vector's Puffin file stays until its snapshots expire. "
                    "Rewriting the data files applies the deletes; expiring snapshots then frees the old vectors."
                ),
                procedure=APPLY_DELETES,
            )
        )
    return out


def _path_identifier(location: str) -> str:
    parts = location.rstrip("/").split("/")
    return f"<catalog>.{parts[-2]}.{parts[-1]}" if len(parts) >= 2 else "<catalog>.<db>.<table>"


def _refs(metadata: TableMetadata, expirable: ExpirePreview | None, now: int) -> tuple[RefHealth, ...]:
    main = set(ancestor_ids(metadata, metadata.current_snapshot_id))
    fates = {r.name: r for r in expirable.refs} if expirable else {}
    out = []
    for name, ref in metadata.refs.items():
        snap = metadata.find_snapshot(ref.snapshot_id)
        fate = fates.get(name)
        limit = fate.max_ref_age_ms if fate else ref.max_ref_age_ms
        out.append(
            RefHealth(
                name=name,
                type=ref.type,
                snapshot_id=ref.snapshot_id,
                age_ms=None if snap is None else now - snap.timestamp_ms,
                max_ref_age_ms=None if limit is None or limit >= properties.LONG_MAX else limit,
                expires=bool(fate and fate.removed),
                on_main=ref.snapshot_id in main,
            )
        )
    return tuple(out)


def _findings(
    metadata: TableMetadata,
    files: FilesHealth,
    compaction: CompactionCounts | CompactionPreview | None,
    manifests: ManifestsHealth,
    rewrite: ManifestRewritePreview | None,
    history: HistoryHealth,
    refs: tuple[RefHealth, ...],
    orphans: OrphanReport | None,
    v3: V3Health,
) -> list[Finding]:
    out: list[Finding] = []
    if compaction is not None and compaction.groups:
        worst = max(files.partitions, key=lambda p: p.small_files, default=None)
        out.append(
            Finding(
                area=Area.SMALL_FILES,
                title=f"{compaction.rewritten_file_count} small files could be {compaction.expected_output_files}",
                detail=(
                    f"{files.small_files} of {files.data_files} data files are under the minimum size "
                    f"({byte_size(files.min_file_size_bytes)}, 75% of the {byte_size(files.target_file_size_bytes)} target)"
                    + (f"; most in {worst.partition} ({worst.small_files})" if worst and worst.small_files else "")
                    + f". Bin-pack compaction would rewrite {compaction.rewritten_file_count} files "
                    f"({byte_size(compaction.rewritten_bytes)}) in {len(compaction.groups)} groups."
                ),
                procedure=ProcedureCall.defaults("rewrite_data_files"),
            )
        )
    if files.files_with_deletes:
        eq = sum(p.equality_deletes_applying for p in files.partitions)
        debt = max(files.partitions, key=lambda p: p.delete_ratio)
        out.append(
            Finding(
                area=Area.DELETE_DEBT,
                title=f"{files.files_with_deletes} data files carry deletes every read must merge",
                detail=(
                    f"{files.delete_files} delete files ({eq} equality delete files still apply); worst partition "
                    f"{debt.partition}: {debt.delete_records} delete records against {debt.records} rows. "
                    "Rewriting those data files applies the deletes."
                ),
                procedure=APPLY_DELETES,
            )
        )
    out.extend(_v3_findings(v3))
    dangling = files.dangling_deletes - len(v3.dangling)  # vectors have their own finding
    if dangling > 0:
        out.append(
            Finding(
                area=Area.DELETE_DEBT,
                title=f"{dangling} delete files apply to no live data file",
                detail="Their data files were rewritten or removed; readers still open them while planning. "
                "Rewriting position delete files drops them.",
                procedure=ProcedureCall.defaults("rewrite_position_delete_files"),
            )
        )
    if (
        rewrite is not None
        and manifests.manifests >= MANY_MANIFESTS
        and manifests.manifests >= 2 * max(rewrite.added_manifests_at_most, 1)
    ):
        widest = manifests.worst_reach
        reach = (
            f"; a filter on one partition opens up to {widest.manifests_opened} manifests "
            f"({widest.partition}: its files are in {widest.manifests_holding})"
            if widest
            else ""
        )
        out.append(
            Finding(
                area=Area.MANIFESTS,
                title=f"{manifests.manifests} manifests where {max(rewrite.added_manifests_at_most, 1)} would do",
                detail=(
                    f"{manifests.data_manifests} data and {manifests.delete_manifests} delete manifests, "
                    f"{byte_size(manifests.total_bytes)} in all (target {byte_size(manifests.target_size_bytes)} each), "
                    f"{manifests.mean_entries:.1f} live entries per manifest{reach}."
                ),
                procedure=ProcedureCall.defaults("rewrite_manifests"),
            )
        )
    expirable = history.expirable
    if expirable is not None and expirable.expired_snapshot_ids:
        r = retention(metadata, older_than_ms=None, retain_last=None, now_ms=expirable.retention.now_ms)
        out.append(
            Finding(
                area=Area.HISTORY,
                title=f"{len(expirable.expired_snapshot_ids)} snapshots are past retention but still kept",
                detail=(
                    f"{history.snapshots} snapshots; {properties.MAX_SNAPSHOT_AGE_MS.name} is "
                    f"{duration(history.max_snapshot_age_ms)}, min-snapshots-to-keep {history.min_snapshots_to_keep}. "
                    f"Expiring them frees {len(expirable.files)} files ({byte_size(expirable.bytes)})."
                ),
                procedure=ProcedureCall.defaults(
                    "expire_snapshots",
                    args=(("older_than", spark_timestamp(r.expire_older_than_ms)),),
                ),
            )
        )
    for ref in refs:
        if ref.expires:
            out.append(
                Finding(
                    area=Area.REFS,
                    title=f"{ref.type} {ref.name!r} is past its max ref age",
                    detail=(
                        f"it points at snapshot {ref.snapshot_id}, "
                        f"{duration(ref.age_ms or 0)} old; max ref age {duration(ref.max_ref_age_ms or 0)}. "
                        "expire_snapshots removes the ref, and the snapshots only it kept."
                    ),
                    procedure=ProcedureCall.defaults("expire_snapshots"),
                )
            )
    if history.metadata_file_bytes is not None and history.metadata_file_bytes > LARGE_METADATA_BYTES:
        out.append(
            Finding(
                area=Area.METADATA,
                title=f"the metadata file is {byte_size(history.metadata_file_bytes)}",
                detail=f"every commit rewrites it; {history.snapshots} snapshots and their logs are in it.",
                procedure=ProcedureCall.defaults("expire_snapshots"),
            )
        )
    if orphans is not None and (orphans.files or orphans.too_recent):
        stray = [*orphans.files, *orphans.too_recent]
        old_metadata = sum(f.path.endswith(".metadata.json") for f in stray)
        note = (
            f"; {old_metadata} are metadata files dropped from the metadata log "
            f"({len(metadata.metadata_log)} of at most {history.previous_versions_max} kept"
            + ("" if history.delete_after_commit else f", {properties.DELETE_AFTER_COMMIT.name} is false")
            + ")"
            if old_metadata
            else ""
        )
        out.append(
            Finding(
                area=Area.ORPHANS,
                title=f"{len(stray)} files under the table location are referenced by nothing",
                detail=(
                    f"{byte_size(sum(f.size_in_bytes for f in stray))} in all{note}. remove_orphan_files deletes those "
                    f"older than its cutoff ({DEFAULT_AGE_MS // DAY_MS} days by default; {len(orphans.files)} now); younger ones may "
                    "belong to a write in progress."
                ),
                procedure=ProcedureCall.defaults("remove_orphan_files"),
            )
        )
    return out


__all__ = ["Area", "Finding", "HealthReport", "ProcedureCall", "file_measures", "health"]
