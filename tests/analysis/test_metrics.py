"""Column-wise bound decoding equals the value-by-value decoder of Appendix D, for every width and sign."""

from __future__ import annotations

import datetime
import decimal
import random

import pyarrow as pa
import pytest

from icebook.analysis.store.metrics import MapColumn, decode_bound_column, readable_columns, readable_metrics
from icebook.spec.types import BOOLEAN, DATE, DOUBLE, INT, LONG, STRING, TIMESTAMP, DecimalType, IcebergType
from icebook.spec.values import decode_value, encode_value


@pytest.mark.parametrize("precision,scale", [(9, 2), (18, 0), (38, 10), (4, 4)])
def test_decimal_bounds_every_width_and_sign(precision: int, scale: int) -> None:
    rng = random.Random(precision * 100 + scale)
    t = DecimalType(precision, scale)
    values: list[decimal.Decimal | None] = []
    for _ in range(400):
        digits = rng.randint(1, precision)
        unscaled = rng.randint(-(10**digits) + 1, 10**digits - 1)
        values.append(decimal.Decimal(unscaled).scaleb(-scale))
    values += [None, decimal.Decimal(0).scaleb(-scale), decimal.Decimal(-1).scaleb(-scale)]
    raw = pa.array([None if v is None else encode_value(v, t) for v in values], pa.binary())
    decoded = decode_bound_column(raw, t).to_pylist()
    expected = [None if b is None else decode_value(b, t) for b in raw.to_pylist()]
    assert decoded == expected


@pytest.mark.parametrize(
    ("t", "values"),
    [
        (INT, [0, -1, 2**31 - 1, -(2**31), None]),
        (LONG, [0, -1, 2**63 - 1, -(2**63), None]),
        (DATE, [0, -719162, 2932896, None]),
        (TIMESTAMP, [0, -1, 1_700_000_000_123_456, None]),
        (DOUBLE, [0.0, -1.5, 1e300, None]),
        (BOOLEAN, [True, False, None]),
        (STRING, ["", "ça va", "日本", None]),
    ],
)
def test_fixed_width_and_string_bounds(t: IcebergType, values: list[object]) -> None:
    raw = pa.array([None if v is None else encode_value(v, t) for v in values], pa.binary())
    decoded = decode_bound_column(raw, t)
    expected = [None if b is None else decode_value(b, t) for b in raw.to_pylist()]
    if t == DATE:
        decoded = decoded.view(pa.int32())
    elif t == TIMESTAMP:
        decoded = decoded.view(pa.int64())
    physical = decoded.to_pylist()
    assert physical == expected


def test_long_bounds_written_as_int_before_promotion() -> None:
    raw = pa.array([encode_value(7, INT), encode_value(-3, LONG)], pa.binary())
    assert decode_bound_column(raw, LONG).to_pylist() == [7, -3]


def test_map_lookup_handles_null_maps_and_missing_keys() -> None:
    maps = pa.array([[(1, 10), (2, 20)], None, [], [(2, 21)], [(1, 11)]], pa.map_(pa.int32(), pa.int64()))
    column = MapColumn(maps.slice(0))
    assert column.lookup(1).to_pylist() == [10, None, None, None, 11]
    assert column.lookup(2).to_pylist() == [20, None, None, 21, None]
    assert column.lookup(3).to_pylist() == [None] * 5
    sliced = MapColumn(maps.slice(1))
    assert sliced.lookup(2).to_pylist() == [None, None, 21, None]


@pytest.mark.parametrize("layout", ["same keys in every row", "rows differ"])
def test_map_lookup_equals_a_row_by_row_lookup(layout: str) -> None:
    # Writers list the same column ids in the same order in every file (found by stride); files
    # with other ids, a repeated id or a null value go through the general path.
    rng = random.Random(3)
    rows: list[list[tuple[int, int | None]]] = []
    for i in range(300):
        if layout == "same keys in every row":
            rows.append([(k, rng.choice([None, i * 10 + k])) for k in (3, 1, 2)])
        else:
            keys = rng.sample([1, 2, 3, 4], rng.randrange(0, 4)) + ([2] if i % 7 == 0 else [])
            rows.append([(k, i * 10 + k) for k in keys])
    maps = pa.array(rows, pa.map_(pa.int32(), pa.int64())).slice(5)
    column = MapColumn(maps)
    assert (column._slot is not None) == (layout == "same keys in every row")
    for key in (1, 2, 3, 4, 9):
        expected = [dict(row).get(key) for row in rows[5:]]  # a repeated key: the last value
        assert column.lookup(key).to_pylist() == expected, key


@pytest.mark.parametrize(
    "coords,wkb_type",
    [((2.5, -1.0), 1), ((2.5, -1.0, 7.0), 1001), ((2.5, -1.0, float("nan"), 3.0), 2001), ((2.5, -1.0, 7.0, 3.0), 3001)],
)
def test_geo_bounds_are_the_wkb_of_their_points(coords: tuple[float, ...], wkb_type: int) -> None:
    # The spec writes x:y, x:y:z, x:y:NaN:m (a measure without z) or x:y:z:m; each is one WKB point.
    import math
    import struct

    from icebook.spec.types import GeoType

    raw = pa.array([struct.pack(f"<{len(coords)}d", *coords), None], pa.binary())
    for t in (GeoType(kind="geometry", params=("srid:4326",)), GeoType(kind="geography")):
        wkb = decode_bound_column(raw, t).to_pylist()
        assert wkb[1] is None and wkb[0] is not None
        order, kind = struct.unpack_from("<BI", wkb[0])
        values = struct.unpack_from(f"<{(len(wkb[0]) - 5) // 8}d", wkb[0], 5)
        assert (order, kind) == (1, wkb_type)
        assert values == tuple(c for c in coords if not math.isnan(c))


@pytest.mark.parametrize("offset", [0, 7])
def test_fixed_width_bounds_read_in_place_equal_the_value_by_value_decode(offset: int) -> None:
    # Bounds maps in the regular layout (the same column ids in every row) are read from the items' bytes;
    # a column whose bounds are not all of its width (a long bound written as an int before a promotion, a
    # string) goes value by value, and both give what decode_value gives.
    from icebook.spec.schema import Schema
    from icebook.spec.types import NestedField, StructType

    schema = Schema(
        fields=StructType(
            (
                NestedField(field_id=1, name="id", type=LONG, required=True),
                NestedField(field_id=2, name="n", type=INT, required=False),
                NestedField(field_id=3, name="x", type=DOUBLE, required=False),
                NestedField(field_id=4, name="flag", type=BOOLEAN, required=False),
                NestedField(field_id=5, name="d", type=DATE, required=False),
                NestedField(field_id=6, name="ts", type=TIMESTAMP, required=False),
                NestedField(field_id=7, name="s", type=STRING, required=False),
                NestedField(field_id=8, name="promoted", type=LONG, required=False),
            )
        ),
        schema_id=0,
    )
    rng = random.Random(11)
    rows = []
    for i in range(120):
        values = {
            1: rng.randrange(-(2**63), 2**63),
            2: rng.randrange(-(2**31), 2**31),
            3: rng.uniform(-1e9, 1e9),
            4: rng.random() < 0.5,
            5: rng.randrange(-30000, 30000),
            6: rng.randrange(-(2**50), 2**50),
            7: "x" * rng.randrange(0, 5),
        }
        bounds = [(k, encode_value(v, schema.find_type(k))) for k, v in values.items()]
        promoted = rng.randrange(-(2**31), 2**31)
        bounds.append((8, encode_value(promoted, INT if i % 3 else LONG)))
        rows.append(bounds)
    maps = pa.array(rows, pa.map_(pa.int32(), pa.binary())).slice(offset)
    files = pa.table({"lower_bounds": maps, "upper_bounds": maps} | _empty_stat_maps(len(maps)))
    column = MapColumn(maps)
    assert column.fixed_width(1, 8, "<i8") is not None and column.fixed_width(8, 8, "<i8") is None
    metrics = readable_metrics(files, schema)
    for name, field_id, t in readable_columns(schema):
        expected = [decode_value(dict(row)[field_id], t) for row in rows[offset:]]
        got = metrics.field(name).field("lower_bound").to_pylist()
        if t == DATE:
            got = [(v - datetime.date(1970, 1, 1)).days for v in got]
        elif t == TIMESTAMP:
            got = [(v - datetime.datetime(1970, 1, 1)) // datetime.timedelta(microseconds=1) for v in got]
        assert got == expected, name
        assert metrics.field(name).field("upper_bound").equals(metrics.field(name).field("lower_bound"))


def _empty_stat_maps(n: int) -> dict[str, pa.Array]:
    empty = pa.array([[] for _ in range(n)], pa.map_(pa.int32(), pa.int64()))
    return {name: empty for name in ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts")}
