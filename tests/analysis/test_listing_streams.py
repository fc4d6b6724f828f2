"""Streamed listings equal the DataFrame forms: ``inspect.batches.files/data_files/delete_files/entries()``
give a ``pyarrow.RecordBatchReader`` with the same rows, in the same order, and the same types, at every
snapshot of every scenario table; one batch per manifest that lists a row."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import icebook
from icebook.analysis.tables.inspect import files_arrow, spark_shaped, to_pandas
from icebook.scenarios import SCENARIOS
from icebook.table import Table

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def tables(scenario_locations: dict[str, Path]) -> dict[str, Table]:
    return {name: icebook.open(str(path)) for name, path in scenario_locations.items()}


def _points(table: Table) -> list[int | None]:
    return [None, *(s.snapshot_id for s in table.snapshots)]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_streamed_listings_equal_the_frames_at_every_snapshot(name: str, tables: dict[str, Table]) -> None:
    table = tables[name]
    compared = 0
    for at in _points(table):
        for listing in ("files", "data_files", "delete_files", "entries"):
            reader = getattr(table.inspect.batches, listing)(at)
            assert isinstance(reader, pa.RecordBatchReader)
            streamed = reader.read_all()
            frame = getattr(table.inspect, listing)(at)
            assert list(streamed.column_names) == list(frame.columns), (name, at, listing)
            pd.testing.assert_frame_equal(to_pandas(streamed), frame, check_exact=True, obj=f"{name}@{at} {listing}")
            compared += len(frame)
        # the Arrow types are those of the table the DataFrame is made from
        whole = spark_shaped(
            table.metadata, files_arrow(table.store, table.snapshot(at) if at else table.current_snapshot)
        )
        assert table.inspect.batches.files(at).schema == whole.schema, (name, at)
    assert compared > 0 or not table.snapshots, name


def test_one_batch_per_manifest_and_none_kept_in_memory(tables: dict[str, Table]) -> None:
    name = max(tables, key=lambda n: len(tables[n].inspect.manifests()))
    table = icebook.open(tables[name].location)  # a fresh store: nothing decoded yet
    table.store.disk_cache = None  # (a cached listing is streamed without reading a manifest: below)
    manifests = table.inspect.manifests()
    listing = ((manifests["added_data_files_count"] + manifests["existing_data_files_count"]) > 0).sum() + (
        (manifests["added_delete_files_count"] + manifests["existing_delete_files_count"]) > 0
    ).sum()
    batches = list(table.inspect.batches.files())
    assert len(batches) == listing and all(b.num_rows for b in batches), name
    assert table.store.reads == len(manifests) and not table.store._entries  # decoded once, not kept


def test_a_cached_listing_streams_the_same_batches_without_reading_a_manifest(
    tables: dict[str, Table], tmp_path: Path
) -> None:
    from icebook.io.manifest_cache import ManifestCache

    name = max(tables, key=lambda n: len(tables[n].inspect.manifests()))
    cache = ManifestCache(tmp_path / "cache")
    for content in ("files", "data_files", "delete_files"):
        cold = icebook.open(tables[name].location)
        cold.store.disk_cache = None
        expected = list(getattr(cold.inspect.batches, content)())
        filling = icebook.open(tables[name].location)
        filling.store.disk_cache = cache
        getattr(filling.inspect, content)()  # the DataFrame listing fills the cache
        warm = icebook.open(tables[name].location)
        warm.store.disk_cache = cache
        reader = getattr(warm.inspect.batches, content)()
        batches = list(reader)
        assert reader.schema == expected[0].schema if expected else True
        assert [b.num_rows for b in batches] == [b.num_rows for b in expected], (name, content)
        assert all(b.equals(e) for b, e in zip(batches, expected, strict=True)), (name, content)
        assert warm.store.reads == 0 and not warm.store._lists, (name, content)  # nothing decoded
