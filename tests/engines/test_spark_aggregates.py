"""``engine="spark"`` for the metadata aggregates: Spark's ``partitions`` metadata table and the health
report's file measures (which delete files apply included), aggregated by the local Spark session, equal
the local answers exactly (values and dtypes) on every scenario table at every snapshot, and at every
branch and tag for ``partitions``; only aggregated rows reach Python."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _support.java_oracle import java_files

import icebook
from icebook.analysis.maintenance.health_sections import SIZE_BUCKETS
from icebook.analysis.scan.columns import bound_columns
from icebook.engines import spark_aggregates, spark_deletes
from icebook.errors import EngineError, NotFound
from icebook.scenarios import SCENARIOS
from icebook.spec.types import UUID, is_primitive

pytestmark = pytest.mark.spark


def _same_frame(spark: pd.DataFrame, local: pd.DataFrame, label: str) -> None:
    assert list(spark.columns) == list(local.columns), label
    assert spark.dtypes.to_dict() == local.dtypes.to_dict(), label
    pd.testing.assert_frame_equal(spark, local, check_exact=True, obj=label)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_partitions_through_spark_equal_the_local_table_at_every_snapshot_and_ref(
    spark: Any, scenario_locations: dict[str, Path], name: str
) -> None:
    t = icebook.open(scenario_locations[name])
    points: list[Any] = [s.snapshot_id for s in t.snapshots] + sorted(t.refs)
    for at in points:
        _same_frame(t.inspect.partitions(at, engine="spark"), t.inspect.partitions(at), f"{name} at {at}")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_file_measures_through_spark_equal_the_health_reports_at_every_snapshot(
    spark: Any, scenario_locations: dict[str, Path], name: str
) -> None:
    t = icebook.open(scenario_locations[name])
    for snapshot in t.snapshots:
        at = snapshot.snapshot_id
        if SCENARIOS[name].spark_reads:
            ours = t.maintenance.file_measures(at, engine="spark")
            assert ours == t.maintenance.file_measures(at), f"{name} at {at}"
        else:  # Spark cannot load the table's metadata tables (a type it lacks): one error, and the local answer
            with pytest.raises(EngineError, match="timestamp_ns"):
                t.maintenance.file_measures(at, engine="spark")
            ours = t.maintenance.file_measures(at)
            data = [r for r in java_files(spark, scenario_locations[name], at) if r["content"] == 0]
            records, size = sum(p.records for p in ours.partitions), sum(p.data_bytes for p in ours.partitions)
            java = (len(data), sum(r["record_count"] for r in data), sum(r["file_size_in_bytes"] for r in data))
            assert (ours.data_files, records, size) == java, (name, at)
        assert ours == t.maintenance.health(at, list_files=False).files
        assert [b for b, _ in ours.size_histogram] == [b[0] for b in SIZE_BUCKETS]
        assert sum(n for _, n in ours.size_histogram) == ours.data_files


def test_the_default_and_unknown_engines(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    assert t.maintenance.file_measures() == t.maintenance.health(list_files=False).files
    with pytest.raises(NotFound, match=r"engine 'duckdb'.*arrow.*spark"):
        t.inspect.partitions(engine="duckdb")
    with pytest.raises(NotFound, match=r"engine 'duckdb'.*arrow.*spark"):
        t.maintenance.file_measures(engine="duckdb")  # type: ignore[arg-type]


def test_only_aggregated_rows_reach_python(
    spark: Any, scenario_locations: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    collected: list[int] = []
    query = spark_aggregates.SparkMetadataTables.query

    def counting(self: spark_aggregates.SparkMetadataTables, name: str, sql: str) -> Any:
        result = query(self, name, sql)
        collected.append(result.num_rows)
        return result

    monkeypatch.setattr(spark_aggregates.SparkMetadataTables, "query", counting)
    t = icebook.open(scenario_locations["debt"])  # many files per partition, and delete files
    measures = t.maintenance.file_measures(engine="spark")
    partitions = t.inspect.partitions(engine="spark")
    files = len(t.inspect.files())
    assert len(collected) == 5  # measures, histogram, equality ids, delete applicability, partitions
    assert measures.delete_files and files > len(measures.partitions)
    assert max(collected) <= max(len(measures.partitions), len(partitions), len(SIZE_BUCKETS)) < files


def test_bounds_spark_compares_order_as_the_local_statistics_do(
    spark: Any, scenario_locations: dict[str, Path]
) -> None:
    """The statistics rule's bounds in Spark (readable metrics; a uuid's raw bytes, as Spark's readable
    metrics fail on uuid columns) order every pair of data files as the local bounds do."""
    t = icebook.open(scenario_locations["file_formats"])  # a uuid, decimals, timestamps, dates, strings
    schema = t.metadata.current_schema()
    files = t.inspect.batches.files().read_all()
    paths = files.column("file_path").to_pylist()
    fields = [f for f in schema.fields.fields if is_primitive(f.type)]
    local = bound_columns(files, schema, {f.field_id for f in fields}, "test")
    view = f"{t.metadata_location}#files"
    spark.read.format("iceberg").load(view).createOrReplaceTempView("bounds_files")
    uuid_pairs = 0  # pairs whose uuid bounds were compared: the raw-bytes path ran
    for f in fields:
        name = schema.find_column_name(f.field_id) or f.name
        lo = spark_deletes._bound("d", f.field_id, name, "lower_bound", f.type)
        hi = spark_deletes._bound("x", f.field_id, name, "upper_bound", f.type)
        rows = spark.sql(
            f"SELECT d.path AS d, x.path AS x, {lo} > {hi} AS apart FROM "
            "(SELECT file_path AS path, lower_bounds AS lows, upper_bounds AS highs, readable_metrics AS m "
            "FROM bounds_files) d CROSS JOIN "
            "(SELECT file_path AS path, lower_bounds AS lows, upper_bounds AS highs, readable_metrics AS m "
            "FROM bounds_files) x"
        ).collect()
        lower, upper = local[f.field_id].lower.to_pylist(), local[f.field_id].upper.to_pylist()
        for row in rows:
            i, j = paths.index(row.d), paths.index(row.x)
            expected = None if lower[i] is None or upper[j] is None else lower[i] > upper[j]
            assert row.apart == expected, (name, row.d, row.x, lower[i], upper[j])
            uuid_pairs += expected is not None and f.type == UUID
    assert uuid_pairs
