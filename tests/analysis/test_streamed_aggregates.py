"""Aggregates computed manifest by manifest equal the same aggregates of the whole listing, at every snapshot of
every scenario table: ``inspect.partitions``, the file-size histogram, per-manifest statistics, a scan plan's
totals and the time-lapse's frame totals; ``t.inspect.lazy`` listings collect to the streamed rows and types; the
size warning fires above its threshold and only there."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from _support.filters import COMPOUND

import icebook
from icebook.analysis.history.timelapse import timelapse
from icebook.analysis.scan.plan_items import Level
from icebook.analysis.scan.planner import plan_scan
from icebook.analysis.scan.summary import plan_summary, summarize_scan
from icebook.analysis.store.manifests import ManifestStore
from icebook.analysis.tables.aggregates import manifest_statistics, partitions_streamed
from icebook.analysis.tables.listing_size import WARN_ROWS_VARIABLE
from icebook.display.charts import size_bins, streamed_size_bins
from icebook.errors import LargeListingWarning, OptionError
from icebook.scenarios import SCENARIOS
from icebook.spec.snapshots import Snapshot
from icebook.table import Table

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def tables(scenario_locations: dict[str, Path]) -> dict[str, Table]:
    return {name: icebook.open(str(path)) for name, path in scenario_locations.items()}


def _snapshots(table: Table) -> Iterator[tuple[int | None, Snapshot | None]]:
    yield None, table.current_snapshot
    for s in table.snapshots:
        yield s.snapshot_id, s


def _oracle_partitions(table: Table, at: int | None) -> list[dict[str, Any]]:
    """Spark's ``partitions`` rule over the whole entries listing, one file at a time: counts and sizes by
    content; last updated by the latest commit (the first file listed wins a tie; an expired snapshot does not
    count); the spec of the partition's last file listed; rows in order of first appearance."""
    entries = table.inspect.entries(at)
    committed = {s.snapshot_id: s.timestamp_ms for s in table.metadata.snapshots}
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    files = pa.array(entries["data_file"]).to_pylist() if len(entries) else []
    for status, snapshot_id, f in zip(entries["status"], entries["snapshot_id"], files, strict=True):
        if status == 2:
            continue
        partition = f.get("partition") or {}
        g = groups.setdefault(
            tuple(partition.values()),
            {"partition": partition, "record_count": 0, "file_count": 0, "total_data_file_size_in_bytes": 0}
            | {f"{k}_delete_{m}_count": 0 for k in ("position", "equality") for m in ("record", "file")}
            | {"last_updated_at": None, "last_updated_snapshot_id": None},
        )
        when = committed.get(int(snapshot_id)) if not pd.isna(snapshot_id) else None
        if when is not None and (g["last_updated_at"] is None or when > g["last_updated_at"]):
            g["last_updated_at"], g["last_updated_snapshot_id"] = when, int(snapshot_id)
        g["spec_id"] = f["spec_id"]
        kind = {0: None, 1: "position", 2: "equality"}[f["content"]]
        if kind is None:
            g["record_count"] += f["record_count"]
            g["file_count"] += 1
            g["total_data_file_size_in_bytes"] += f["file_size_in_bytes"]
        else:
            g[f"{kind}_delete_record_count"] += f["record_count"]
            g[f"{kind}_delete_file_count"] += 1
    return list(groups.values())


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_streamed_partitions_equal_the_whole_listing_rule(name: str, tables: dict[str, Table]) -> None:
    table = tables[name]
    for at, snapshot in _snapshots(table):
        streamed = partitions_streamed(table.store, snapshot)
        expected = _oracle_partitions(table, at)
        for row in expected:
            if row["last_updated_at"] is not None:
                row["last_updated_at"] = pd.Timestamp(row["last_updated_at"], unit="ms", tz="UTC").to_pydatetime()
        oracle = pa.Table.from_pylist(expected, schema=streamed.schema)
        assert streamed.equals(oracle), (name, at, streamed.to_pylist()[:3], oracle.to_pylist()[:3])
        frame = table.inspect.partitions(at)
        assert list(frame.columns) == streamed.column_names and len(frame) == len(expected), (name, at)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_streamed_size_histogram_equals_the_listing_histogram(name: str, tables: dict[str, Table]) -> None:
    table = tables[name]
    for at, _ in _snapshots(table):
        files = table.inspect.files(at)
        sizes = files.get("file_size_in_bytes", pd.Series(dtype="int64"))
        if "content_size_in_bytes" in files:  # a deletion vector counts its blob, not the shared Puffin file
            sizes = files["content_size_in_bytes"].fillna(sizes)
        sizes = sizes.astype("int64")
        whole = size_bins(sizes, files.get("content", pd.Series(dtype="int64")))
        streamed, counted = streamed_size_bins(table, at)
        assert counted == len(files), (name, at)
        pd.testing.assert_frame_equal(streamed, whole, check_dtype=False, obj=f"{name}@{at}")
        # every file in exactly one bin: lo <= size < hi, the outermost bins open-ended
        if len(files):
            edges = sorted(set(streamed["lo"]) | set(streamed["hi"]))
            inner = np.clip(np.searchsorted(edges, sizes.to_numpy(), side="right") - 1, 0, len(edges) - 2)
            per_bin = streamed.groupby("order")["files"].sum()
            assert per_bin.tolist() == np.bincount(inner, minlength=len(edges) - 1).tolist(), (name, at)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_manifest_statistics_equal_each_whole_manifest(name: str, tables: dict[str, Table]) -> None:
    table = tables[name]
    whole = ManifestStore(table.fileio, table.metadata, disk_cache=False)
    fresh = ManifestStore(table.fileio, table.metadata, disk_cache=False)
    for at, snapshot in _snapshots(table):
        stats = manifest_statistics(fresh, snapshot).to_pandas()
        assert not fresh._entries, name  # nothing kept
        manifests = whole.manifest_list(snapshot) if snapshot is not None else ()
        assert stats["manifest_path"].tolist() == [m.manifest_path for m in manifests]
        for row, m in zip(stats.itertuples(), manifests, strict=True):
            e = whole.entries(m).to_pandas()
            status, content, records = e["status"], e["content"], e["record_count"]
            live = status != 2
            assert (row.added_files, row.existing_files, row.deleted_files) == tuple(
                int((status == s).sum()) for s in (1, 0, 2)
            ), (name, at, m.manifest_path)
            assert row.live_data_files == int((live & (content == 0)).sum())
            assert row.live_delete_files == int((live & (content != 0)).sum())
            assert row.live_records == int(records[live & (content == 0)].sum())
            assert row.live_partitions == len({repr(p) for p in e["partition"][live]}), (name, at, m.manifest_path)
        assert int(stats["live_data_files"].sum() + stats["live_delete_files"].sum()) == len(table.inspect.files(at))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scan_summary_equals_the_plan(name: str, tables: dict[str, Table]) -> None:
    table = tables[name]
    fresh = icebook.open(table.location)
    for snapshot in table.snapshots:
        for text in [None, *COMPOUND.get(name, [])]:
            plan = plan_scan(table, snapshot, text)
            streamed = summarize_scan(fresh, snapshot, text)
            assert streamed == plan_summary(plan), (name, snapshot.snapshot_id, text)
            totals = streamed.totals
            assert totals.data_files == plan.task_count
            assert totals.records == sum(t.file.record_count for t in plan.tasks)
            assert totals.bytes == sum(t.file.file_size_in_bytes for t in plan.tasks)
            assert (streamed.manifests_kept, streamed.manifests_skipped) == plan._level_counts(Level.MANIFEST)
            assert (totals.data_files, totals.data_files_skipped) == plan._level_counts(Level.DATA_FILE)
            assert (totals.delete_files, totals.delete_files_skipped) == plan._level_counts(Level.DELETE_FILE)
            assert plan.delete_file_count <= totals.delete_files
    assert not fresh.store._entries, name  # the summaries kept no manifest
    if table.snapshots:  # the Table method: at and filter as ``t.scan`` reads them
        for text in [None, *COMPOUND.get(name, [])]:
            assert table.scan_summary(None, text) == plan_summary(table.scan(None, text)), (name, text)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_timelapse_totals_equal_the_files_listing_and_keep_no_files(name: str, tables: dict[str, Table]) -> None:
    table = icebook.open(tables[name].location)
    frames = timelapse(table, progress=False).frames.to_pandas()
    assert not table.store._entries, name
    for frame in frames.itertuples():
        files = table.inspect.files(frame.snapshot_id)
        data = files[files["content"] == 0] if len(files) else files
        assert frame.data_files == len(data) and frame.delete_files == len(files) - len(data), (name, frame)
        assert frame.records == int(data["record_count"].sum()) if len(data) else frame.records == 0
        assert frame.bytes == int(data["file_size_in_bytes"].sum()) if len(data) else frame.bytes == 0


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_lazy_listings_collect_to_the_streamed_rows_and_types(name: str, tables: dict[str, Table]) -> None:
    table = tables[name]
    for at, _ in _snapshots(table):
        for listing in ("files", "data_files", "delete_files", "entries"):
            method = getattr(table.inspect, listing)
            lazy = getattr(table.inspect.lazy, listing)(at)
            assert isinstance(lazy, pl.LazyFrame)
            whole = pl.from_arrow(getattr(table.inspect.batches, listing)(at).read_all())
            assert isinstance(whole, pl.DataFrame)
            collected = lazy.collect()
            assert collected.schema == whole.schema and collected.equals(whole), (name, at, listing)
            assert collected.columns == list(method(at).columns), (name, at, listing)
            assert lazy.select(pl.len()).collect().item() == whole.height, (name, at, listing)
            if listing != "entries" and len(whole):
                assert whole.schema["record_count"] == pl.Int64  # never a long through float64
                first = whole["file_path"][0]
                picked = lazy.filter(pl.col("file_path") == first).select("file_path", "record_count").collect()
                assert (
                    picked.rows()
                    == whole.filter(pl.col("file_path") == first).select("file_path", "record_count").rows()
                )
                assert lazy.head(1).collect().equals(whole.head(1)), (name, at, listing)
    for listing in ("all_files", "all_data_files", "all_delete_files", "all_entries"):
        collected = getattr(table.inspect.lazy, listing)().collect()
        streamed = pl.from_arrow(getattr(table.inspect.batches, listing)().read_all())
        frame = getattr(table.inspect, listing)()
        assert collected.equals(streamed) and collected.columns == list(frame.columns), (name, listing)


def test_the_size_warning_fires_above_the_threshold_only(
    tables: dict[str, Table], monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tables["events"]
    rows = {"files": len(table.inspect.files()), "entries": len(table.inspect.entries())}
    assert all(rows.values())
    for listing, n in rows.items():
        method = getattr(table.inspect, listing)
        monkeypatch.setenv(WARN_ROWS_VARIABLE, str(n - 1))
        with pytest.warns(LargeListingWarning) as caught:
            frame = method()
        assert len(frame) == n  # warned, and still whole
        message = str(caught[0].message)
        assert (
            f"{n:,} rows" in message
            and f"t.inspect.batches.{listing}()" in message
            and f"t.inspect.lazy.{listing}()" in message
        ), message
        with warnings.catch_warnings():
            warnings.simplefilter("error", LargeListingWarning)
            getattr(table.inspect.batches, listing)().read_all()  # streams never warn
            getattr(table.inspect.lazy, listing)().collect()
            monkeypatch.setenv(WARN_ROWS_VARIABLE, str(n))
            assert len(method()) == n
    monkeypatch.setenv(WARN_ROWS_VARIABLE, "lots")
    with pytest.raises(OptionError, match=WARN_ROWS_VARIABLE):
        table.inspect.files()
