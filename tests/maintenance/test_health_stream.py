"""The health report's streamed measures equal the same measures computed plainly from the materialised
plan: per-partition file rows, the size histogram, the manifests section and the compaction counts, at
every snapshot of every scenario table.

The oracle here reads the snapshot whole (``plan_scan(equality_stats=True).reference_tasks``, every
manifest's entries as Python values, ``compaction_preview``'s file lists) and counts file by file."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

import icebook
from icebook.analysis.maintenance.binpack import CandidateReason, CompactionOptions, compaction_options
from icebook.analysis.maintenance.compaction import compaction_preview
from icebook.analysis.maintenance.health_sections import SIZE_BUCKETS, PartitionHealth
from icebook.analysis.maintenance.health_stream import measure_snapshot
from icebook.analysis.scan.plan_items import Level, ScanFile, ScanTask
from icebook.analysis.scan.planner import plan_scan
from icebook.errors import PropertyError
from icebook.scenarios import SCENARIOS
from icebook.spec import properties
from icebook.spec.manifest import FileContent, ManifestContent
from icebook.spec.snapshots import Snapshot
from icebook.table import Table

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def tables(scenario_locations: dict[str, Path]) -> dict[str, Table]:
    return {name: icebook.open(str(path)) for name, path in scenario_locations.items()}


def _options(table: Table) -> CompactionOptions:
    try:
        return compaction_options(table.metadata.properties)
    except PropertyError:  # a scenario with an invalid target size: the report measures with the default
        return compaction_options({})


def _partitions(tasks: tuple[ScanTask, ...], deletes: list[ScanFile], o: CompactionOptions) -> list[PartitionHealth]:
    """Per (spec, partition text): file by file, as the report defines each column."""
    data: dict[tuple[int, str], list[ScanTask]] = defaultdict(list)
    own: dict[tuple[int, str], dict[str, ScanFile]] = defaultdict(dict)
    for task in tasks:
        data[(task.file.spec_id, task.file.partition_text)].append(task)
    for d in deletes:
        own[(d.spec_id, d.partition_text)][f"{d.file_path}#{d.content_offset}"] = d
    attached = {d.file_path for t in tasks for d in t.deletes}
    rows = []
    for key in sorted(set(data) | set(own), key=lambda k: (k[1], k[0])):
        files = [t.file for t in data.get(key, [])]
        mine = list(own.get(key, {}).values())
        rows.append(
            PartitionHealth(
                partition=key[1],
                spec_id=key[0],
                data_files=len(files),
                data_bytes=sum(f.file_size_in_bytes for f in files),
                records=sum(f.record_count for f in files),
                small_files=sum(o.size_reasons(f.file_size_in_bytes) == (CandidateReason.TOO_SMALL,) for f in files),
                large_files=sum(o.size_reasons(f.file_size_in_bytes) == (CandidateReason.TOO_LARGE,) for f in files),
                position_delete_files=sum(
                    d.content == FileContent.POSITION_DELETES and not d.is_deletion_vector for d in mine
                ),
                deletion_vectors=sum(d.is_deletion_vector for d in mine),
                equality_delete_files=sum(d.content == FileContent.EQUALITY_DELETES for d in mine),
                delete_records=sum(d.record_count for d in mine if d.file_path in attached),
                files_with_deletes=sum(bool(t.deletes) for t in data.get(key, [])),
                equality_deletes_applying=len(
                    {
                        d.file_path
                        for t in data.get(key, [])
                        for d in t.deletes
                        if d.content == FileContent.EQUALITY_DELETES
                    }
                ),
                dangling_deletes=sum(
                    d.content == FileContent.POSITION_DELETES and d.file_path not in attached for d in mine
                ),
            )
        )
    return rows


def _histogram(tasks: tuple[ScanTask, ...], o: CompactionOptions) -> list[tuple[str, int]]:
    counts = dict.fromkeys((name for name, _, _ in SIZE_BUCKETS), 0)
    for t in tasks:
        ratio = t.file.file_size_in_bytes / o.target_file_size_bytes
        counts[next(name for name, low, high in SIZE_BUCKETS if low <= ratio < high)] += 1
    return list(counts.items())


def _reach(table: Table, snapshot: Snapshot) -> tuple[int, list[tuple[str, int, int]]]:
    """(live entries, partition reach) entry by entry: each manifest's range per partition field over
    every entry, and a partition's manifests opened and holding it, in Python values."""
    live_entries = 0
    manifests = []
    for m in table.store.manifest_list(snapshot):
        entries = table.store.entries(m)
        status = entries.column("status").to_pylist()
        names = [f.name for f in table.metadata.spec_by_id(m.partition_spec_id).fields]
        # field by field in spec order (a struct's own field names may be sanitized Avro names)
        fields = entries.column("partition").combine_chunks().flatten()
        tuples = list(zip(*(f.to_pylist() for f in fields), strict=True)) if names else [()] * len(status)
        live = {t for t, s in zip(tuples, status, strict=True) if s != 2}
        live_entries += sum(s != 2 for s in status)
        ranges = []
        for i in range(len(names)):
            values = [t[i] for t in tuples if t[i] is not None]
            ranges.append((min(values, default=None), max(values, default=None), any(t[i] is None for t in tuples)))
        manifests.append((m, names, ranges, live))
    labels = {}
    for m, names, _, live in manifests:
        if (m.content or ManifestContent.DATA) == ManifestContent.DATA:
            for t in live:
                labels[(m.partition_spec_id, t)] = "/".join(f"{n}={v}" for n, v in zip(names, t, strict=True))
    out = []
    for (spec_id, key), label in labels.items():
        mine = [x for x in manifests if x[0].partition_spec_id == spec_id and x[0].content != ManifestContent.DELETES]
        opened = sum(
            bool(live)
            and all(
                (v is None and has_null) or (v is not None and low is not None and low <= v <= high)
                for v, (low, high, has_null) in zip(key, ranges, strict=True)
            )
            for _, _, ranges, live in mine
        )
        holding = sum(key in live for _, _, _, live in mine)
        out.append((spec_id, (label or "unpartitioned", opened, holding)))
    return live_entries, [r for _, r in sorted(out, key=lambda x: (x[1][0], x[0]))]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_streamed_health_measures_equal_the_plain_counts(name: str, tables: dict[str, Table]) -> None:
    table = tables[name]
    o = _options(table)
    target = properties.MANIFEST_TARGET_SIZE_BYTES.default
    compared = 0
    for snapshot in table.snapshots:
        if snapshot.manifest_list is None:
            continue
        where = f"{name}@{snapshot.snapshot_id}"
        measured = measure_snapshot(table, snapshot, o, target)
        plan = plan_scan(table, snapshot, equality_stats=True)
        tasks = plan.reference_tasks
        deletes = [d.file for d in plan.decisions if d.level == Level.DELETE_FILE and d.file is not None]

        assert list(measured.files.partitions) == _partitions(tasks, deletes, o), where
        assert list(measured.files.size_histogram) == _histogram(tasks, o), where
        assert measured.files.data_files == len(tasks), where

        manifests = table.store.manifest_list(snapshot)
        live_entries, reach = _reach(table, snapshot)
        m = measured.manifests
        assert (m.data_manifests, m.delete_manifests) == (
            sum(x.content != ManifestContent.DELETES for x in manifests),
            sum(x.content == ManifestContent.DELETES for x in manifests),
        ), where
        assert (m.total_bytes, m.smallest_bytes, m.largest_bytes) == (
            sum(x.manifest_length for x in manifests),
            min((x.manifest_length for x in manifests), default=0),
            max((x.manifest_length for x in manifests), default=0),
        ), where
        assert m.live_entries == live_entries, where
        assert list(m.partition_reach) == reach, where

        preview = compaction_preview(table, snapshot, plan=plan) if _valid(table) else None
        if preview is not None:
            counts = measured.compaction
            groups: list[tuple[Any, ...]] = [
                (g.partition, len(g.files), g.input_size, g.rewritten, g.reasons, g.expected_output_files)
                for g in (*preview.groups, *preview.skipped_groups)
            ]
            assert [
                (g.partition, g.file_count, g.input_size, g.rewritten, g.reasons, g.expected_output_files)
                for g in (*counts.groups, *counts.skipped_groups)
            ] == groups, where
            assert (counts.files_planned, counts.partitions) == (preview.files_planned, preview.partitions), where
            assert (counts.rewritten_file_count, counts.rewritten_bytes, counts.expected_output_files) == (
                len(preview.rewritten_files),
                preview.rewritten_bytes,
                preview.expected_output_files,
            ), where
        compared += len(tasks)
    assert compared > 0 or not table.snapshots, name


def _valid(table: Table) -> bool:
    """``compaction_preview`` reads the target file size from the table: it must be usable."""
    invalid = properties.invalid_properties(table.metadata.properties)
    return all(e.name != properties.TARGET_FILE_SIZE_BYTES.name for e in invalid)


def test_the_oracle_sees_deletes_and_compaction(tables: dict[str, Table]) -> None:
    """The scenarios exercise what the comparison covers: delete debt, equality deletes that still apply,
    rewritten compaction groups."""
    seen: dict[str, int] = defaultdict(int)
    for table in tables.values():
        if table.current_snapshot is None:
            continue
        measured = measure_snapshot(
            table, table.current_snapshot, _options(table), properties.MANIFEST_TARGET_SIZE_BYTES.default
        )
        seen["with deletes"] += measured.files.files_with_deletes
        seen["equality applying"] += sum(p.equality_deletes_applying for p in measured.files.partitions)
        seen["rewritten groups"] += len(measured.compaction.groups)
    assert all(seen[k] > 0 for k in ("with deletes", "equality applying", "rewritten groups")), dict(seen)
