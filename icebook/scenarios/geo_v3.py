"""``geo_v3``: ``geometry`` and ``geography`` columns, from Spark SQL and from the Java API with bounds."""

from __future__ import annotations

import struct
from typing import Any

from icebook.scenarios.javaapi import fresh_handle, jvm, write_data_file
from icebook.scenarios.scenario import Claims, Scenario, Step, create_table


def _point(x: float, y: float) -> bytes:
    return struct.pack("<BIdd", 1, 1, x, y)


def _line(*xy: tuple[float, float]) -> bytes:
    return struct.pack("<BII", 1, 2, len(xy)) + b"".join(struct.pack("<dd", x, y) for x, y in xy)


def _polygon(*ring: tuple[float, float]) -> bytes:
    return struct.pack("<BIII", 1, 3, 1, len(ring)) + b"".join(struct.pack("<dd", x, y) for x, y in ring)


SHAPES: dict[str, bytes] = {
    "depot": _point(2.35, 48.85),
    "route": _line((2.35, 48.85), (4.83, 45.76), (5.37, 43.3)),
    "zone": _polygon((2.0, 48.0), (3.0, 48.0), (3.0, 49.0), (2.0, 49.0), (2.0, 48.0)),
}
"""Well-known binary (little endian) of a point, a line and a polygon, in longitude/latitude."""

LATE_SHAPES: dict[str, bytes] = {
    "north": _point(10.75, 59.91),
    "ring": _polygon((10.0, 59.0), (11.5, 59.0), (11.5, 60.5), (10.0, 60.5), (10.0, 59.0)),
}


def _sql_rows(shapes: dict[str, bytes], first_id: int) -> str:
    rows = []
    for i, (name, wkb) in enumerate(shapes.items()):
        hex_wkb = wkb.hex().upper()
        rows.append(
            f"({first_id + i}, '{name}', ST_SetSrid(ST_GeomFromWKB(X'{hex_wkb}'), 4326), ST_GeogFromWKB(X'{hex_wkb}'))"
        )
    return ",\n".join(rows)


def java_append_with_bounds(spark: Any, table_name: str) -> str:
    """Append one file written by Iceberg's generic Parquet writer, which records geometry bounds."""
    table = fresh_handle(spark, table_name)
    buffer = jvm(spark).java.nio.ByteBuffer
    rows = [
        {"site_id": 20 + i, "name": name, "shape": buffer.wrap(wkb), "area": buffer.wrap(wkb)}
        for i, (name, wkb) in enumerate(LATE_SHAPES.items())
    ]
    rows.append({"site_id": 22, "name": "unplaced"})
    data_file = write_data_file(spark, table, rows, partition=None, label="geo")
    table.newAppend().appendFile(data_file).commit()
    bounded = sorted(int(k) for k in data_file.lowerBounds().keySet())
    return f"appended {data_file.location()} with lower bounds for field ids {bounded}"


GEO_V3 = Scenario(
    name="geo_v3",
    version=1,
    title="Delivery sites as GEOMETRY and GEOGRAPHY (SRID 4326): points, lines, polygons, nulls",
    steps=(
        create_table(
            "Create a format-version 3 table with a planar geometry column and a spherical geography column.",
            columns="site_id INT NOT NULL, name STRING, shape GEOMETRY(4326), area GEOGRAPHY(4326)",
            format_version=3,
        ),
        Step(
            narrative="Append a point, a line and a polygon from Spark SQL (Spark records no bounds for them).",
            sql=f"INSERT INTO {{table}} VALUES\n{_sql_rows(SHAPES, 1)}",
        ),
        Step(
            narrative="Append a site with no shape: geometry and geography are NULL.",
            sql="INSERT INTO {table} VALUES (10, 'nowhere', NULL, NULL)",
        ),
        Step(
            narrative="Append through Iceberg's Java API, whose Parquet writer keeps geometry bounds in the manifest.",
            action=java_append_with_bounds,
        ),
    ),
    claims=Claims(
        operations=("append", "append", "append"),
        refs={"main": "BRANCH"},
        spec_ids=frozenset({0}),
        format_version=3,
    ),
    tags=("format-v3", "geospatial"),
    spark_since=(4, 1),
)
