"""The filters the scan tests put to every scenario table: single predicates (``LEAVES``, as
``explain_predicate`` takes them) and compound ones (``COMPOUND``, in the filter language)."""

from __future__ import annotations

import re
from typing import Any

Leaf = tuple[str, str, Any]
"""(column, operator as ``explain_predicate`` takes it, value)."""

LEAVES: dict[str, list[Leaf]] = {
    "events": [
        ("region", "=", "eu"),
        ("region", "!=", "us"),
        ("region", "in", ["eu", "apac"]),
        ("region", "not_in", ["us"]),
        ("region", "starts_with", "a"),
        ("region", "not_starts_with", "e"),
        ("region", "is_null", None),
        ("region", "not_null", None),
        ("ts", ">=", "2024-01-04"),
        ("ts", "<", "2024-01-03T00:00:00"),
        ("ts", ">", "2024-01-04T16:20:00"),
        ("ts", "<=", "2024-01-02T08:00:00"),
        ("ts", "=", "2024-01-05T10:00:00"),
        ("ts", "!=", "2024-01-05T10:00:00"),
        ("ts", "in", ["2024-01-01T09:00:00", "2024-01-07T12:00:00"]),
        ("ts", "is_null", None),
        ("event_id", ">", 100),
        ("event_id", "=", 7),
        ("amount", "<", 1.0),
    ],
    "orders_cow": [
        ("order_date", ">=", "2024-03-01"),
        ("order_date", "<", "2024-02-01"),
        ("order_date", "=", "2024-02-11"),
        ("order_date", ">", "2024-02-29"),
        ("order_date", "<=", "2024-01-31"),
        ("order_date", "!=", "2024-02-11"),
        ("order_date", "in", ["2024-01-10", "2024-03-05"]),
        ("order_date", "is_null", None),
        ("customer", "starts_with", "a"),
        ("total", ">", 50),
        ("status", "=", "shipped"),
        ("order_id", "<=", 2),
    ],
    "legacy_v1": [
        ("category", "=", "tools"),
        ("category", "in", ["garden", "kitchen"]),
        ("category", "not_null", None),
        ("sku", "starts_with", "ab"),
        ("sku", "starts_with", "abc-1"),
        ("sku", "starts_with", "a"),
        ("sku", "not_starts_with", "ab"),
        ("sku", "<", "b"),
        ("sku", ">=", "cd-200"),
        ("sku", "=", "ef-100"),
        ("sku", "in", ["ab-100", "zz-9"]),
        ("qty", ">", 10),
        ("price", ">=", 9.99),
        ("in_stock", "=", True),
    ],
    "dv_v3": [
        ("sensor", "=", "east"),
        ("sensor", "in", ["north", "south"]),
        ("sensor", "!=", "north"),
        ("sensor", "is_null", None),
        ("reading_id", ">", 1000),
        ("reading_id", "<", 10),
        ("taken_at", ">=", "2024-05-02"),
        ("reading", "<", 1.0),
    ],
    "equality_deletes": [
        ("region", "=", "eu"),
        ("region", "!=", "us"),
        ("region", "is_null", None),
        ("id", "in", [2, 8]),
        ("qty", ">=", 10),
        ("name", "starts_with", "b"),
    ],
    "hostile": [
        ("<img src=x onerror=alert(1)>", "=", "ok"),
        ("<img src=x onerror=alert(1)>", "starts_with", "<"),
        ("note", "not_null", None),
        ("id", "=", 2),
    ],
    "debt": [
        ("region", "=", "sa"),
        ("region", "in", ["us", "apac"]),
        ("id", ">", 500),
        ("amount", "<", 10.0),
    ],
    "file_formats": [
        ("region", "=", "eu"),
        ("region", "in", ["us", "apac"]),
        ("id", ">", 100),
        ("id", "=", 1),
        ("qty", "<", 2),
    ],
    "concurrent_writes": [
        ("region", "=", "eu"),
        ("region", "in", ["us", "apac"]),
        ("id", ">", 5),
        ("qty", "<", 3),
    ],
    "schema_evolution": [
        ("id", ">", 2),
        ("id", "=", 1),
        ("balance", ">=", 100),
    ],
    "transforms": [
        ("category", "=", "books"),
        ("id", "=", 3),
        ("id", "in", [1, 7]),
        ("name", "starts_with", "al"),
        ("name", "=", "bob"),
        ("ts", ">=", "2024-06-01"),
        ("ts", "<", "2023-01-01T12:00:00"),
        ("amount", ">", 50),
    ],
    "void_v1": [
        ("category", "=", "books"),
        ("ts", "<", "2024-05-02"),
        ("id", ">", 4),
    ],
    "sort_order": [
        ("temperature", ">", 700),
        ("temperature", "<=", -150),
        ("sensor", "=", "sensor-1"),
    ],
    "history": [
        ("region", "=", "north"),
        ("store", "starts_with", "store-1"),
        ("units", ">", 5),
        ("sale_id", "<", 10),
        ("sale_id", ">=", 1000),
    ],
    "growth": [
        ("region", "=", "eu"),
        ("ts", ">=", "2024-03-08"),
        ("ts", "<", "2024-03-05T12:00:00"),
        ("qty", ">", 90),
        ("qty", "is_null", None),
        ("order_id", "<", 100),
    ],
    "exact_values": [
        ("day", "=", "2024-01-07"),
        ("day", "<", "2000-01-01"),
        ("id", ">", 9007199254740992),
        ("amount", "<", 0),
        ("id", "is_null", None),
        ("seen", ">=", "2024-02-01"),
    ],
    "dv_lifecycle_v3": [("meter", "=", "m-1"), ("kwh", ">", 1.5), ("reading_id", "<", 5)],
    "upgrade_v3": [("depot", "in", ["oslo", "paris"]), ("weight_kg", "<=", 2.0), ("parcel_id", ">=", 10)],
    "lineage_v3": [("store", "=", "east"), ("qty", ">", 3), ("sku", "is_null", None)],
    "variant_v3": [("event_id", ">", 2), ("event_id", "not_null", None)],
    "geo_v3": [("site_id", ">=", 20), ("name", "starts_with", "n"), ("shape", "is_null", None)],
    "defaults_v3": [("name", "=", "ada"), ("customer_id", "<", 3), ("name", "is_null", None)],
    "types_v3": [("probe_id", ">", 10), ("probe_id", "<=", 1), ("probe_id", "is_null", None)],
}

COMPOUND: dict[str, list[str]] = {
    "events": [
        "region = 'eu' and ts >= '2024-01-04'",
        "region = 'eu' or ts < '2024-01-02'",
        "not (region = 'us' and ts >= '2024-01-03')",
        "not (region in ('eu', 'us')) or event_id < 3",
        "(ts >= '2024-01-02' and ts < '2024-01-03') or region is null",
        "not (ts > '2024-01-01')",
    ],
    "orders_cow": [
        "status = 'shipped' and order_date > '2024-02-29'",
        "not (order_date <= '2024-01-31')",
        "order_date < '2024-02-01' or order_date >= '2024-03-20'",
    ],
    "legacy_v1": [
        "qty > 5 or category is null",
        "not (sku starts with 'a')",
        "category = 'tools' and sku > 'ab-200'",
    ],
    "dv_v3": [
        "sensor is not null and reading < 1",
        "reading is nan or sensor = 'east'",
        "not (sensor = 'north') and reading_id > 40",
    ],
    "equality_deletes": ["not (region = 'us')", "region = 'eu' and qty < 6"],
    "hostile": ["`<img src=x onerror=alert(1)>` = 'ok' or id > 2"],
    "debt": ["region = 'sa' or id < 10"],
    "file_formats": ["region = 'eu' and id > 3"],
    "concurrent_writes": ["region = 'eu' and qty > 1"],
    "schema_evolution": ["not (id = 1) and balance < 50"],
    "transforms": ["category = 'books' or ts >= '2024-06-01'", "not (name starts with 'al') and id < 5"],
    "void_v1": ["category = 'books' and ts >= '2024-05-03'"],
    "sort_order": ["temperature > 700 or temperature < -150"],
    "history": ["region = 'south' and units >= 5"],
    "growth": ["region = 'apac' and ts >= '2024-03-09'", "region is null or qty < 5"],
    "exact_values": ["id is null or day >= '2024-02-01'", "not (day = '2024-01-07') and id > 0"],
    "dv_lifecycle_v3": ["meter = 'm-1' or kwh < 1", "not (reading_id > 3) and meter is not null"],
    "upgrade_v3": ["depot = 'lyon' and weight_kg > 1", "not (parcel_id < 5) or depot is null"],
    "lineage_v3": ["store = 'north' or qty > 5", "not (sku = 1) and qty is not null"],
    "variant_v3": ["event_id > 1 and event_id < 5", "not (event_id = 3)"],
    "geo_v3": ["site_id > 5 and name is not null", "shape is null or site_id = 1"],
    "defaults_v3": ["name = 'ada' or customer_id > 10", "not (customer_id < 3) and name is not null"],
    "types_v3": ["probe_id > 1 and probe_id < 11", "not (probe_id = 2)"],
}


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return str(value)


def filter_text(column: str, op: str, value: Any) -> str:
    """A leaf as the filter language writes it."""
    col = column if re.fullmatch(r"[A-Za-z_]\w*", column) else f"`{column}`"
    if op in ("is_null", "not_null"):
        return f"{col} is {'not ' if op == 'not_null' else ''}null"
    if op in ("in", "not_in"):
        return f"{col} {'not in' if op == 'not_in' else 'in'} ({', '.join(_literal(v) for v in value)})"
    if op in ("starts_with", "not_starts_with"):
        return f"{col} {'not starts' if op == 'not_starts_with' else 'starts'} with {_literal(value)}"
    return f"{col} {op} {_literal(value)}"
