"""A small PyIceberg-written table for the cost tests: small row groups, an unpartitioned then a partitioned
spec, nulls, decimals, dates and timestamps, and a delete."""

from __future__ import annotations

import datetime as dt
import decimal
from pathlib import Path
from typing import Any

import pyarrow as pa

import icebook

ROWS = 400


def cost_rows() -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(ROWS), pa.int64()),
            "region": pa.array([["us", "eu", "ap"][i % 3] for i in range(ROWS)]),
            "qty": pa.array([None if i % 50 == 0 else i % 97 for i in range(ROWS)], pa.int32()),
            "price": pa.array([decimal.Decimal(i) / 100 for i in range(ROWS)], pa.decimal128(9, 2)),
            "day": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=i // 100) for i in range(ROWS)]),
            "ts": pa.array([dt.datetime(2024, 1, 1) + dt.timedelta(hours=i) for i in range(ROWS)], pa.timestamp("us")),
            "note": pa.array([None if i < 200 else f"n{i:04d}" for i in range(ROWS)]),
        }
    )


def write_cost_table(root: Path) -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("c", uri=f"sqlite:///{root / 'c.db'}", warehouse=(root / "wh").as_uri())
    catalog.create_namespace("db")
    rows = cost_rows()
    t = catalog.create_table("db.t", rows.schema, properties={"write.parquet.row-group-limit": "50"})
    t.append(rows.slice(0, 100))  # unpartitioned, then partitioned by region
    with t.update_spec() as update:
        update.add_identity("region")
    t = catalog.load_table("db.t")
    t.append(rows.slice(100, 150))
    t.append(rows.slice(250))
    t.delete("id < 10")
    return icebook.open(t.metadata_location)
