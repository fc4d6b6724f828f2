"""Tables written by PyIceberg into a SQL catalog (sqlite), as many Python users write them.

Unlike the Spark scenarios (Hadoop catalog: ``v<N>.metadata.json`` and a version hint), these
tables have ``<NNNNN>-<uuid>.metadata.json`` files and no version hint; the catalog database
holds the pointer to the current metadata file. Each step is a PyIceberg call with a narrative,
``action(catalog, "db.<name>")``; ``build`` runs them into a cached warehouse.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable
from typing import Any

from icebook.scenarios.scenario import Claims, Scenario, Step

NAMESPACE = "db"


def _trips_rows(table: Any, ids: list[int], city: str, *, tip: bool = False) -> Any:
    import pyarrow as pa

    columns: dict[str, Any] = {
        "trip_id": pa.array(ids, pa.int64()),
        "city": [city] * len(ids),
        "fare": [round(i * 1.5, 2) for i in ids],
        "started_at": pa.array(
            [dt.datetime(2024, 1, 1 + i % 3, 8 + i % 12, tzinfo=dt.UTC) for i in ids], pa.timestamp("us", tz="UTC")
        ),
        "rider": pa.array([uuid.UUID(int=(i * 7919) << 64 | i).bytes for i in ids], pa.binary(16)),
    }
    schema = table.schema().as_arrow()
    if "amount" in schema.names:
        columns["amount"] = columns.pop("fare")
    if tip:
        columns["tip"] = [None if i % 4 == 0 else i / 10 for i in ids]
    ordered = {name: columns[name] for name in schema.names if name in columns}
    return pa.table(ordered).cast(pa.schema([schema.field(n) for n in ordered]))


def create_trips(catalog: Any, name: str) -> None:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType, TimestamptzType, UUIDType

    schema = Schema(
        NestedField(1, "trip_id", LongType(), required=True),
        NestedField(2, "city", StringType()),
        NestedField(3, "fare", DoubleType()),
        NestedField(4, "started_at", TimestamptzType()),
        NestedField(5, "rider", UUIDType()),
    )
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="city"))
    catalog.create_table(name, schema=schema, partition_spec=spec, properties={"format-version": "2"})


def append_trips(ids: list[int], city: str, *, tip: bool = False) -> Callable[[Any, str], None]:
    """The step's action: append the trips ``ids`` in ``city`` (with tips if ``tip``) to the current schema."""

    def append(catalog: Any, name: str) -> None:
        t = catalog.load_table(name)
        t.append(_trips_rows(t, ids, city, tip=tip))

    return append


def overwrite_lima(catalog: Any, name: str) -> None:
    t = catalog.load_table(name)
    t.overwrite(_trips_rows(t, [6, 7], "lima"), overwrite_filter="city == 'lima'")


def delete_small_ids(catalog: Any, name: str) -> None:
    catalog.load_table(name).delete("trip_id < 2")


def tag_release(catalog: Any, name: str) -> None:
    t = catalog.load_table(name)
    t.manage_snapshots().create_tag(t.current_snapshot().snapshot_id, "release-1").commit()


def evolve_schema(catalog: Any, name: str) -> None:
    from pyiceberg.types import DoubleType

    t = catalog.load_table(name)
    with t.update_schema() as update:
        update.add_column("tip", DoubleType(), doc="added after the first writes")
        update.rename_column("fare", "amount")


def evolve_spec(catalog: Any, name: str) -> None:
    from pyiceberg.transforms import DayTransform

    t = catalog.load_table(name)
    with t.update_spec() as update:
        update.add_field("started_at", DayTransform(), "started_day")


def branch_audit(catalog: Any, name: str) -> None:
    t = catalog.load_table(name)
    t.manage_snapshots().create_branch(t.current_snapshot().snapshot_id, "audit").commit()
    t = catalog.load_table(name)
    t.append(_trips_rows(t, [15, 16], "lima", tip=True), branch="audit")


def add_column_after_writes(catalog: Any, name: str) -> None:
    from pyiceberg.types import StringType

    t = catalog.load_table(name)
    with t.update_schema() as update:
        update.add_column("vehicle", StringType())


TRIPS = Scenario(
    name="trips",
    version=1,
    title="Taxi trips written by PyIceberg: appends, an overwrite, a delete, schema and partition evolution",
    steps=(
        Step(
            narrative="Create a v2 table partitioned by identity(city) with a uuid column.",
            action=create_trips,
        ),
        Step(narrative="Append three trips in oslo.", action=append_trips([1, 2, 3], "oslo")),
        Step(narrative="Append two trips in lima.", action=append_trips([4, 5], "lima")),
        Step(
            narrative="Overwrite city = 'lima' with two new trips: PyIceberg commits a delete, then an append.",
            action=overwrite_lima,
        ),
        Step(
            narrative="Delete trip_id < 2: PyIceberg rewrites the file (copy-on-write), an overwrite.",
            action=delete_small_ids,
        ),
        Step(narrative="Tag the current snapshot release-1.", action=tag_release),
        Step(
            narrative="Schema evolution: add tip, rename fare to amount (same field id).",
            action=evolve_schema,
        ),
        Step(narrative="Append trips that have tips.", action=append_trips([8, 9, 10, 11], "oslo", tip=True)),
        Step(
            narrative="Partition evolution: add day(started_at); old files keep spec 0.",
            action=evolve_spec,
        ),
        Step(narrative="Append under the new spec.", action=append_trips([12, 13, 14], "rome", tip=True)),
        Step(
            narrative="Branch audit from main and append to it only.",
            action=branch_audit,
        ),
        Step(
            narrative="Add a column after the last write: reads at main (a branch) show it, reads at the "
            "snapshot id do not (Spark's rule).",
            action=add_column_after_writes,
        ),
    ),
    claims=Claims(
        operations=("append", "append", "delete", "append", "overwrite", "append", "append", "append"),
        refs={"main": "BRANCH", "release-1": "TAG", "audit": "BRANCH"},
        spec_ids=frozenset({0, 1}),
        format_version=2,
    ),
    tags=("pyiceberg", "sql-catalog", "uuid", "schema-evolution", "partition-evolution"),
)


def create_readings(catalog: Any, name: str) -> None:
    from pyiceberg.schema import Schema
    from pyiceberg.types import DateType, IntegerType, NestedField, StringType

    schema = Schema(
        NestedField(1, "sensor", StringType()),
        NestedField(2, "value", IntegerType()),
        NestedField(3, "day", DateType()),
    )
    catalog.create_table(name, schema=schema, properties={"format-version": "1"})


def _readings(table: Any, start: int, n: int) -> Any:
    import pyarrow as pa

    schema = table.schema().as_arrow()
    data = {
        "sensor": [f"s{i % 3}" for i in range(start, start + n)],
        "value": list(range(start, start + n)),
        "day": [dt.date(2024, 2, 1) + dt.timedelta(days=i % 5) for i in range(start, start + n)],
    }
    return pa.table({k: data[k] for k in schema.names}).cast(schema)


def append_readings(start: int, n: int) -> Callable[[Any, str], None]:
    """The step's action: append ``n`` readings, the first numbered ``start``."""

    def append(catalog: Any, name: str) -> None:
        t = catalog.load_table(name)
        t.append(_readings(t, start, n))

    return append


def readings_promote(catalog: Any, name: str) -> None:
    from pyiceberg.types import LongType

    t = catalog.load_table(name)
    with t.update_schema() as update:
        update.update_column("value", LongType())


def readings_delete(catalog: Any, name: str) -> None:
    catalog.load_table(name).delete("sensor == 's1'")


def readings_replace_all(catalog: Any, name: str) -> None:
    t = catalog.load_table(name)
    t.overwrite(_readings(t, 100, 3))


READINGS = Scenario(
    name="readings",
    version=1,
    title="Sensor readings written by PyIceberg in format version 1: type promotion, a delete, a full overwrite",
    steps=(
        Step(narrative="Create an unpartitioned format-version 1 table.", action=create_readings),
        Step(narrative="Append six readings.", action=append_readings(0, 6)),
        Step(narrative="Promote value from int to long (old files keep int).", action=readings_promote),
        Step(narrative="Append four more readings.", action=append_readings(6, 4)),
        Step(narrative="Delete sensor s1 (copy-on-write).", action=readings_delete),
        Step(narrative="Overwrite the whole table with three readings.", action=readings_replace_all),
    ),
    claims=Claims(
        operations=("append", "append", "overwrite", "delete", "append"),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0}),
        format_version=1,
    ),
    tags=("pyiceberg", "sql-catalog", "format-v1", "type-promotion"),
)

PYICEBERG_SCENARIOS: dict[str, Scenario] = {s.name: s for s in (TRIPS, READINGS)}

__all__ = ["NAMESPACE", "PYICEBERG_SCENARIOS", "READINGS", "TRIPS"]
