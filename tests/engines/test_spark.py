"""The Spark engine: time travel through the one session, SQL over a pinned view, branch and tag operations."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import shutil
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from _support.java_oracle import java_rows

import icebook
from icebook.cli import main as cli_main
from icebook.engines.spark_engine import to_arrow
from icebook.engines.spark_session import add_catalog, get_session
from icebook.errors import EngineError, NotFound, UnsupportedFeature
from icebook.scenarios import SCENARIOS
from icebook.scenarios.warehouse import build_warehouse, buildable


def _canon(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return (value if value.tzinfo else value.replace(tzinfo=dt.UTC)).timestamp()
    if isinstance(value, decimal.Decimal | bytes | str | int | float | bool | dt.date) or value is None:
        return value
    if type(value).__name__ == "VariantVal":  # icebook's variant: struct<metadata, value>
        return (("metadata", bytes(value.metadata)), ("value", bytes(value.value)))
    if type(value).__name__ in ("Geometry", "Geography"):  # icebook's geo values: the WKB
        return bytes(value.getBytes())
    if isinstance(value, bytearray):
        return bytes(value)
    if hasattr(value, "asDict"):  # a Spark struct
        return tuple(sorted((k, _canon(v)) for k, v in value.asDict().items()))
    if isinstance(value, dict):  # an Arrow struct, or a Spark map
        return tuple(sorted(((k, _canon(v)) for k, v in value.items()), key=repr))
    if isinstance(value, list):  # a list, or an Arrow map as (key, value) pairs
        # a Spark Row is a tuple too: a list of two-field structs is not a map
        if value and all(isinstance(v, tuple) and len(v) == 2 and not hasattr(v, "asDict") for v in value):
            return tuple(sorted(((k, _canon(v)) for k, v in value), key=repr))
        return tuple(_canon(v) for v in value)
    return repr(value)


def _arrow_rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted((tuple(_canon(v) for v in row.values()) for row in table.to_pylist()), key=repr)


def _spark_rows(spark: Any, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    df = spark.sql(sql)
    return df.columns, sorted((tuple(_canon(v) for v in r) for r in df.collect()), key=repr)


@pytest.mark.spark
@pytest.mark.parametrize("name", buildable())  # on Spark 3.5 too: the scenarios it can build
def test_read_every_snapshot_equals_version_as_of(spark: Any, scenario_locations: dict[str, Path], name: str) -> None:
    t = icebook.open(scenario_locations[name])
    for snapshot in t.snapshots:
        sid = snapshot.snapshot_id
        if not SCENARIOS[name].spark_reads:  # Spark cannot load the table: Iceberg's Java reader is the reference
            if {str(c.type) for c in t.read_schema(sid).columns} & {"timestamp_ns", "timestamptz_ns"}:
                with pytest.raises(UnsupportedFeature, match='engine="arrow"'):
                    t.read(at=sid, engine="spark")
                continue
            theirs_arrow = java_rows(spark, scenario_locations[name], sid)
        else:  # Spark's own Arrow, its variant and geo structs in icebook's form (to_arrow), not its Python objects
            theirs_arrow = to_arrow(spark.sql(f"SELECT * FROM lake.db.{name} VERSION AS OF {sid}"))
        ours = t.read(at=sid, engine="spark")
        assert ours.column_names == theirs_arrow.column_names
        assert _arrow_rows(ours) == _arrow_rows(theirs_arrow), f"{name}@{sid}"


@pytest.mark.spark
def test_read_refs_and_times_equal_spark(spark: Any, scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    for ref in ("audit", "release-2024-01", "main"):
        ours = t.read(at=ref, engine="spark")
        columns, theirs = _spark_rows(spark, f"SELECT * FROM lake.db.events VERSION AS OF '{ref}'")
        assert ours.column_names == columns and _arrow_rows(ours) == theirs, ref
    for entry in t.metadata.snapshot_log[::3]:
        when = dt.datetime.fromtimestamp(entry.timestamp_ms / 1000, dt.UTC)
        stamp = when.strftime("%Y-%m-%d %H:%M:%S.%f")
        ours = t.read(at=when, engine="spark")
        _, theirs = _spark_rows(spark, f"SELECT * FROM lake.db.events TIMESTAMP AS OF '{stamp}'")
        assert _arrow_rows(ours) == theirs, stamp


@pytest.mark.spark
def test_read_with_filter_and_columns(spark: Any, scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["orders_cow"])
    ours = t.read(filter="status = 'shipped'", columns=["order_id", "customer"], engine="spark")
    _, theirs = _spark_rows(spark, "SELECT order_id, customer FROM lake.db.orders_cow WHERE status = 'shipped'")
    assert ours.column_names == ["order_id", "customer"] and _arrow_rows(ours) == theirs


@pytest.mark.spark
def test_sql_binds_view_t_pinned_to_at(spark: Any, scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    first = t.snapshots[0].snapshot_id
    df = t.sql("SELECT count(*) AS n FROM t", at=first)
    assert int(df["n"][0]) == 5
    df = t.sql("SELECT count(*) AS n FROM t", at="audit")
    n_audit = spark.sql("SELECT count(*) AS n FROM lake.db.events VERSION AS OF 'audit'").collect()[0].n
    assert int(df["n"][0]) == n_audit
    as_spark = t.sql("SELECT event_id FROM t WHERE event_id > 10", as_spark=True)
    assert hasattr(as_spark, "toPandas")


@pytest.mark.spark
def test_open_by_catalog_name(scenario_locations: dict[str, Path]) -> None:
    by_name = icebook.open("lake.db.events")
    by_path = icebook.open(scenario_locations["events"])
    assert by_name.identifier == "lake.db.events"
    assert by_name.metadata_location == by_path.metadata_location
    assert by_name.metadata == by_path.metadata


@pytest.mark.spark
def test_unknown_table_name_lists_tables(spark: Any, warehouse: Path) -> None:
    with pytest.raises(NotFound, match=r"no table lake\.db\.nope.*lake\.db\.events"):
        icebook.open("lake.db.nope")
    with pytest.raises(NotFound, match=r"no catalog 'nocat' \(neither a PyIceberg catalog nor one of Spark's\).*lake"):
        icebook.open("nocat.db.events")


@pytest.mark.spark
def test_unknown_points_list_what_exists(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    with pytest.raises(NotFound, match=r"nope.*available: audit, main, release-2024-01"):
        t.read(at="nope", engine="spark")
    with pytest.raises(NotFound, match=r"snapshot 7"):
        t.sql("SELECT 1", at=7)
    with pytest.raises(NotFound, match=r"no branch named 'nope'"):
        t.manage.fast_forward("main", "nope")


@pytest.mark.spark
def test_spark_failures_are_engine_errors_with_sparks_first_line(scenario_locations: dict[str, Path]) -> None:
    t = icebook.open(scenario_locations["events"])
    with pytest.raises(EngineError) as info:
        t.sql("SELECT no_such_column FROM t")
    first = str(info.value).splitlines()[0]
    assert "no_such_column" in first and "UNRESOLVED_COLUMN" in first
    assert "\tat " not in str(info.value) and "py4j" not in first.lower()


@pytest.mark.spark
def test_one_session_per_process(spark: Any) -> None:
    assert get_session() is spark
    assert icebook.spark.session() is spark
    assert spark.sparkContext._jvm is not None


@pytest.fixture()
def ops_table(spark: Any, tmp_path: Path) -> icebook.table.Table:
    """A private orders_cow table built by its scenario, for operations that change tables."""
    warehouse = tmp_path / "ops"
    catalog = f"ops_{uuid.uuid4().hex[:8]}"
    add_catalog(catalog, warehouse)
    scenario = SCENARIOS["orders_cow"]
    for step in scenario.steps:
        spark.sql(scenario.sql(step).replace("lake.db.", f"{catalog}.db."))
    yield icebook.open(f"{catalog}.db.orders_cow")
    shutil.rmtree(warehouse, ignore_errors=True)


def _spark_refs(spark: Any, identifier: str) -> dict[str, tuple[str, int, Any, Any, Any]]:
    return {
        r.name: (r.type, r.snapshot_id, r.max_reference_age_in_ms, r.min_snapshots_to_keep, r.max_snapshot_age_in_ms)
        for r in spark.sql(f"SELECT * FROM {identifier}.refs").collect()
    }


def _our_refs(t: icebook.table.Table) -> dict[str, tuple[str, int, Any, Any, Any]]:
    df = t.inspect.refs()
    return {
        r["name"]: (
            r["type"],
            int(r["snapshot_id"]),
            *(
                None if v is None or v is pd_na() else int(v)
                for v in (r["max_reference_age_in_ms"], r["min_snapshots_to_keep"], r["max_snapshot_age_in_ms"])
            ),
        )
        for r in df.to_dict("records")
    }


def pd_na() -> Any:
    import pandas as pd

    return pd.NA


@pytest.mark.spark
def test_branch_and_tag_operations_match_spark(spark: Any, ops_table: icebook.table.Table) -> None:
    t = ops_table
    ident = t.identifier
    assert ident is not None
    first, second = t.snapshots[0].snapshot_id, t.snapshots[1].snapshot_id
    t2 = t.manage.create_branch(
        "dev", at=first, retain_ms=dt.timedelta(days=3), min_snapshots_to_keep=2, max_snapshot_age_ms=3_600_000
    )
    assert t2.refs["dev"].snapshot_id == first and "dev" not in t.refs  # old object unchanged: before/after
    t3 = t2.manage.create_tag("v1", at=second, retain_ms=7 * 86_400_000)
    t4 = t3.manage.replace_branch("dev", at=second)
    assert t4.refs["dev"].snapshot_id == second
    assert _our_refs(t4) == _spark_refs(spark, ident)
    t5 = t4.manage.fast_forward("dev", "main")
    assert t5.refs["dev"].snapshot_id == t5.current_snapshot.snapshot_id
    t6 = t5.manage.replace_tag("v1", at=first).manage.drop_branch("dev")
    assert "dev" not in t6.refs and t6.refs["v1"].snapshot_id == first
    assert _our_refs(t6) == _spark_refs(spark, ident)
    t7 = t6.manage.drop_tag("v1")
    assert set(t7.refs) == {"main"} and _our_refs(t7) == _spark_refs(spark, ident)


@pytest.mark.spark
def test_rollback_set_current_and_cherry_pick_match_spark(spark: Any, ops_table: icebook.table.Table) -> None:
    t = ops_table
    ident = t.identifier
    head = t.current_snapshot.snapshot_id
    second = t.snapshots[1].snapshot_id
    rolled = t.manage.rollback(second)
    assert rolled.current_snapshot.snapshot_id == second
    assert _spark_refs(spark, ident)["main"][1] == second
    back = rolled.manage.set_current_snapshot(head)
    assert back.current_snapshot.snapshot_id == head
    # strictly before the time: 1 ms after snapshot 2 was committed rolls back to snapshot 2
    by_time = back.manage.rollback(dt.datetime.fromtimestamp((t.snapshots[2].timestamp_ms + 1) / 1000, dt.UTC))
    assert by_time.current_snapshot.snapshot_id == t.snapshots[2].snapshot_id
    # An append made on a branch is cherry-picked onto a main that moved on: a new snapshot.
    staged = by_time.manage.wap_write(
        "staging", "INSERT INTO {table} VALUES (99, 'zed', 'placed', 1.00, DATE '2024-03-30')"
    )
    spark.sql(f"INSERT INTO {ident} VALUES (98, 'yan', 'placed', 2.00, DATE '2024-03-29')")  # main moves on
    picked = staged.reopen().manage.cherry_pick(staged.refs["staging"].snapshot_id)
    assert picked.current_snapshot.summary.get("source-snapshot-id") == str(staged.refs["staging"].snapshot_id)
    ours = sorted(picked.inspect.snapshots()["snapshot_id"].tolist())
    theirs = sorted(r.snapshot_id for r in spark.sql(f"SELECT snapshot_id FROM {ident}.snapshots").collect())
    assert ours == theirs and _our_refs(picked) == _spark_refs(spark, ident)


@pytest.mark.spark
def test_write_audit_publish(spark: Any, ops_table: icebook.table.Table) -> None:
    t = ops_table
    before = t.read(engine="spark").num_rows
    audited = t.manage.wap_write("audit", "INSERT INTO {table} VALUES (100, 'ann', 'placed', 5.00, DATE '2024-03-31')")
    assert audited.read(at="audit", engine="spark").num_rows == before + 1
    assert audited.read(at="main", engine="spark").num_rows == before
    published = audited.manage.publish("audit")
    assert published.read(engine="spark").num_rows == before + 1
    assert published.refs["main"].snapshot_id == published.refs["audit"].snapshot_id


@pytest.mark.spark
def test_the_ref_commands_change_the_table_as_spark_sees_it(spark: Any, ops_table: icebook.table.Table) -> None:
    # The commands a user types (``icebook branch ...``, ``%ice tag ...``) run t.manage's methods.
    t = ops_table
    ident = t.identifier
    assert ident is not None
    first, second = t.snapshots[0].snapshot_id, t.snapshots[1].snapshot_id

    def run(*words: str) -> icebook.table.Table:
        out = io.StringIO()
        assert cli_main(list(words), out=out) == 0, out.getvalue()
        return icebook.open(ident)

    after = run("branch", ident, "create", "dev", str(first), "--keep", "2")
    assert after.refs["dev"].snapshot_id == first and _our_refs(after) == _spark_refs(spark, ident)
    after = run("tag", ident, "create", "v1", str(second), "--retain-days", "7")
    assert after.refs["v1"].snapshot_id == second and _our_refs(after) == _spark_refs(spark, ident)
    after = run("branch", ident, "fast-forward", "dev", "main")
    assert after.refs["dev"].snapshot_id == after.current_snapshot.snapshot_id
    after = run("rollback", ident, str(second))
    assert after.current_snapshot.snapshot_id == second and _spark_refs(spark, ident)["main"][1] == second
    run("branch", ident, "drop", "dev")
    after = run("tag", ident, "drop", "v1")
    assert set(after.refs) == {"main"} and _our_refs(after) == _spark_refs(spark, ident)


def test_build_warehouse_rejects_unwritable_path(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(icebook.errors.EnvironmentProblem, match="not writable"):
        build_warehouse(blocker / "wh", [SCENARIOS["legacy_v1"]], progress=False)
