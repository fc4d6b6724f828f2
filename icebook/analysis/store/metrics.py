"""``readable_metrics``: a file's column stats keyed by column name, bounds decoded (column-wise).

Spark's metadata tables show, for every primitive column of the current schema (sorted by
name), ``column_size``, ``value_count``, ``null_value_count``, ``nan_value_count`` and the
``lower_bound``/``upper_bound`` decoded from the binary single-value serialization
(spec Appendix D). Fixed-width bounds are decoded with numpy over whole columns; other
types go value by value through ``icebook.spec.values.decode_value``.

A ``geometry``/``geography`` bound is a point ``x:y[:z[:m]]``; Spark's metadata tables type it as the
column's type (``lower_bound: geometry(4326)``), so here it is that point as a value of the column: its
WKB, marked ``geoarrow.wkb`` like the column's values (``arrow_types.arrow_field``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.arrow_types import arrow_field, arrow_type
from icebook.errors import IcebookError, MetadataError, one_line
from icebook.io.arrow_columns import single_array
from icebook.spec.schema import Schema
from icebook.spec.types import (
    BINARY,
    DATE,
    STRING,
    TIME,
    TIMESTAMP_TYPES,
    VARIANT,
    DecimalType,
    GeoType,
    IcebergType,
    PrimitiveType,
    is_primitive,
)
from icebook.spec.values import FIXED_WIDTH, decode_value, point_wkb

_INTEGER_BACKED = frozenset({DATE, TIME, *TIMESTAMP_TYPES})
"""Types whose Arrow values are built from the integers the spec stores (days, micros, nanos)."""
_STAT_MAPS = (
    ("column_size", "column_sizes"),
    ("value_count", "value_counts"),
    ("null_value_count", "null_value_counts"),
    ("nan_value_count", "nan_value_counts"),
)


def readable_columns(schema: Schema) -> list[tuple[str, int, IcebergType]]:
    """(full name, field id, type) of every primitive column, sorted by name, as Spark orders them."""
    out = []
    for field_id, name in schema.id_to_name().items():
        t = schema.find_type(field_id)
        if t is not None and is_primitive(t) and t != VARIANT:
            out.append((name, field_id, t))
    return sorted(out)


class MapColumn:
    """A ``map<int, V>`` column flattened once, so looking up one key over all rows is a numpy mask
    (``pyarrow.compute.map_lookup`` is ~100x slower on manifests with hundreds of thousands of files).

    Writers put the same column ids in the same order into every file's maps; when a column has that
    regular layout the value for a key is every k-th item, found without searching at all.
    """

    def __init__(self, column: pa.ChunkedArray | pa.Array) -> None:
        arr = single_array(column)
        self.length = len(arr)
        offsets = np.asarray(arr.offsets.to_numpy(zero_copy_only=False), dtype=np.int64)
        self.offsets = offsets - offsets[0]
        self.keys = np.asarray(arr.keys.to_numpy(zero_copy_only=False))[offsets[0] : offsets[-1]]
        self.items = arr.items.slice(offsets[0], offsets[-1] - offsets[0])
        self.null_rows = np.asarray(arr.is_null().to_numpy(zero_copy_only=False)) if arr.null_count else None
        self._row_of_entry: np.ndarray | None = None
        self._slot: dict[int, int] | None = None
        self._width = 0
        self._grid: np.ndarray | None = None
        """The items as a row per entry, when they are numbers without nulls in the regular layout."""
        lengths = np.diff(self.offsets)
        if self.length and self.null_rows is None and lengths[0] > 0 and (lengths == lengths[0]).all():
            width = int(lengths[0])
            grid = self.keys.reshape(self.length, width)
            if (grid == grid[0]).all():
                self._width = width
                self._slot = {int(key): j for j, key in enumerate(grid[0])}  # a repeated key: the last wins
                if pa.types.is_integer(self.items.type) and not self.items.null_count:
                    numbers = self.items.to_numpy(zero_copy_only=False)
                    self._grid = numbers.reshape(self.length, width)

    def lookup(self, key: int) -> pa.Array:
        """The value for ``key`` in each row (null where the row has no such key)."""
        if self._slot is not None:
            slot = self._slot.get(key)
            if slot is None:
                return pa.nulls(self.length, self.items.type)
            if self._grid is not None:  # every k-th number, as a strided copy
                return pa.array(np.ascontiguousarray(self._grid[:, slot]))
            return self.items.take(pa.array(np.arange(self.length, dtype=np.int64) * self._width + slot))
        hits = np.flatnonzero(self.keys == key)
        if self._row_of_entry is None:
            self._row_of_entry = np.repeat(np.arange(self.length, dtype=np.int64), np.diff(self.offsets))
        rows = self._row_of_entry[hits]
        if self.null_rows is not None:  # a null map has no entries, whatever its offsets say
            keep = ~self.null_rows[rows]
            hits, rows = hits[keep], rows[keep]
        index = np.full(self.length, -1, dtype=np.int64)
        index[rows] = hits
        return self.items.take(pa.array(index, mask=index < 0))

    def fixed_width(self, key: int, width: int, dtype: str) -> np.ndarray | None:
        """The value for ``key`` in each row as a number of ``dtype`` (``width`` bytes), read straight from the
        items' bytes (no binary column is built for it), when the layout is regular, no item is null and every
        row's value for ``key`` has ``width`` bytes; else None (``lookup`` then says what each row holds)."""
        items = self.items
        slot = None if self._slot is None else self._slot.get(key)
        if slot is None or items.null_count or not pa.types.is_binary(items.type):
            return None
        _, offset_buffer, data_buffer = items.buffers()
        offsets = np.frombuffer(offset_buffer, dtype=np.int32, count=len(items) + 1, offset=items.offset * 4)
        starts = offsets[slot : len(items) : self._width]
        ends = offsets[slot + 1 : len(items) + 1 : self._width]
        if data_buffer is None or len(starts) != self.length or ((ends - starts) != width).any():
            return None
        # Every byte position as the start of a number: one gather of n numbers, unaligned reads allowed.
        at_each_byte = np.ndarray((data_buffer.size - width + 1,), dtype=dtype, buffer=data_buffer, strides=(1,))
        return at_each_byte[starts]


@dataclass(frozen=True, slots=True)
class RowFiles:
    """Which manifest each row of a table built from several manifests comes from: ``ends[i]`` is the row
    after the last of ``files[i]``'s rows."""

    files: tuple[str, ...]
    ends: tuple[int, ...]

    @classmethod
    def of(cls, parts: Sequence[tuple[str, int]]) -> RowFiles:
        """From (manifest path, its row count) in the order the rows were concatenated."""
        return cls(files=tuple(f for f, _ in parts), ends=tuple(accumulate(n for _, n in parts)))

    def __call__(self, row: int) -> str:
        i = bisect_right(self.ends, row)
        return self.files[min(i, len(self.files) - 1)] if self.files else "<manifest>"


Origin = str | RowFiles
"""The file the rows' bounds were read from: one manifest, or one per range of rows."""


def bound_label(column: str, name: str, field_id: int) -> str:
    """How an error names a bound: ``lower_bounds of column 'name' (field id 2)``."""
    return f"{column} of column {name!r} (field id {field_id})"


def decode_bound_column(
    raw: pa.Array, t: IcebergType, *, file: Origin = "<manifest>", column: str = "bound"
) -> pa.Array:
    """Decode a column of Appendix D binary values of type ``t`` into an Arrow array of ``arrow_type(t)``.

    Bounds follow ``icebook.errors.decoded_values``, the rule for values decoded from a table's files, and say
    more: any failure (a cast, an Arrow compute, numpy over the bytes) is one ``MetadataError`` naming the
    file, the bound and the first row whose value is not valid for ``t``, never a foreign exception and never
    a silent value."""
    try:
        return _decode_bounds(raw, t, file if isinstance(file, str) else "<manifest>", column)
    except Exception as exc:
        raise _bound_error(raw, t, file, column, exc) from None


def _bound_error(raw: pa.Array, t: IcebergType, file: Origin, column: str, exc: Exception) -> IcebookError:
    """The error of the first row whose bound does not decode to ``t``, value by value (the failure path)."""
    where: Callable[[int], str] = file if isinstance(file, RowFiles) else (lambda _row: file)
    target = arrow_type(t)
    for row, value in enumerate(raw.to_pylist()):
        if value is None:
            continue
        try:
            decoded = decode_value(value, t, field=column, file=where(row))
            decoded = decoded.bytes if hasattr(decoded, "bytes") else decoded
            pa.array([_physical(decoded, t)], type=target)
        except MetadataError as error:
            return MetadataError(error.file, column, f"row {row}: {error.problem}", kind=error.kind)
        except IcebookError as error:
            return error
        except Exception as error:
            return MetadataError(where(row), column, f"row {row}: not a valid {t} ({one_line(error)})", kind="bound in")
    return MetadataError(where(0), column, f"cannot be decoded as {t} ({one_line(exc)})", kind="bound in")


def invalid_bounds(entries: pa.Table, schema: Schema, file: str) -> list[IcebookError]:
    """Every bound column of ``entries`` (manifest entries with ``lower_bounds``/``upper_bounds``) that does
    not decode to its column's type in ``schema``: one error per (bound, column), naming the first bad row."""
    found: list[IcebookError] = []
    for column in ("lower_bounds", "upper_bounds"):
        if column not in entries.column_names or entries.num_rows == 0:
            continue
        bounds = MapColumn(entries.column(column))
        for name, field_id, t in readable_columns(schema):
            raw = bounds.lookup(field_id)
            if _plainly_valid(raw, t):
                continue
            try:
                decode_bound_column(raw, t, file=file, column=bound_label(column, name, field_id))
            except IcebookError as exc:
                found.append(exc)
    return found


def _plainly_valid(raw: pa.Array, t: IcebergType) -> bool:
    """Whether every bound of ``raw`` decodes to ``t`` by the byte lengths alone, without decoding them: any
    bytes of a fixed-width type's own width are a value (``_fixed``), and so is a decimal of at most 16
    bytes (``_decimals``). False means "decode to find out" (other widths, other types)."""
    if raw.null_count == len(raw):
        return True
    lengths = pc.min_max(pc.binary_length(raw))  # nulls left out
    shortest, longest = lengths["min"].as_py(), lengths["max"].as_py()
    if isinstance(t, DecimalType):
        return bool(longest <= 16)
    width = FIXED_WIDTH.get(t.name, (0, ""))[0] if isinstance(t, PrimitiveType) else 0
    return bool(width) and shortest == longest == width


def _decode_bounds(raw: pa.Array, t: IcebergType, file: str, column: str) -> pa.Array:
    target = arrow_type(t)
    if len(raw) == 0 or raw.null_count == len(raw):
        return pa.nulls(len(raw), target)
    if isinstance(t, PrimitiveType):
        if t == STRING:
            return pc.cast(raw, pa.string())
        if t == BINARY:
            return raw
        width, dtype = FIXED_WIDTH.get(t.name, (0, ""))
        if width:
            fast = _fixed(raw, width, dtype, target)
            if fast is not None:
                return fast
    if isinstance(t, DecimalType):
        return _decimals(raw, target)
    values = [None if v is None else decode_value(v, t, field=column, file=file) for v in raw.to_pylist()]
    if isinstance(t, GeoType):  # a bound is a point: as WKB, the form rows give geo values
        values = [None if v is None else point_wkb(v) for v in values]
    if target == pa.binary(16):  # uuid: keep the 16 bytes
        values = [None if v is None else v.bytes if hasattr(v, "bytes") else v for v in values]
    return pa.array([_physical(v, t) for v in values], type=target)


def _physical(value: Any, t: IcebergType) -> Any:
    if value is not None and isinstance(t, PrimitiveType) and t in _INTEGER_BACKED:
        return int(value)
    return value


def _fixed(raw: pa.Array, width: int, dtype: str, target: pa.DataType) -> pa.Array | None:
    """Vectorised decode when every present value has exactly ``width`` bytes, else None: numpy over the
    binary column's own offsets and bytes (read in place when the values are back to back)."""
    n = len(raw)
    _, offset_buffer, data_buffer = raw.buffers()
    offset_type = np.dtype(np.int64 if pa.types.is_large_binary(raw.type) else np.int32)
    offsets = np.frombuffer(offset_buffer, dtype=offset_type, count=n + 1, offset=raw.offset * offset_type.itemsize)
    lengths = np.diff(offsets)
    valid = np.asarray(raw.is_valid().to_numpy(zero_copy_only=False), dtype=bool) if raw.null_count else None
    if ((lengths if valid is None else lengths[valid]) != width).any():
        return None
    start = int(offsets[0])
    if valid is None and data_buffer is not None:  # n values back to back, each ``width`` bytes
        numbers = np.frombuffer(data_buffer, dtype=dtype, count=n, offset=start)
    else:
        data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
        grid = np.zeros((n, width), dtype=np.uint8)
        rows = np.flatnonzero(valid) if valid is not None else np.arange(n)
        grid[rows] = data[offsets[rows, None].astype(np.int64) + np.arange(width)]
        numbers = grid.reshape(-1).view(dtype)
    return _fixed_array(numbers, dtype, target, valid)


def _fixed_array(numbers: np.ndarray, dtype: str, target: pa.DataType, valid: np.ndarray | None = None) -> pa.Array:
    """Fixed-width values read as numbers of ``dtype`` (Appendix D's little-endian forms) as an array of
    ``target`` (``valid``: which rows hold a value)."""
    if dtype == "u1":
        numbers = numbers != 0
    physical = pa.array(numbers, mask=None if valid is None else ~valid)
    if pa.types.is_timestamp(target) or pa.types.is_date(target) or pa.types.is_time(target):
        storage = pa.int32() if pa.types.is_date32(target) else pa.int64()
        return physical.cast(storage).view(target)
    return physical.cast(target)


def _bound_column(bounds: MapColumn, t: IcebergType, file: Origin, column: str, name: str, field_id: int) -> pa.Array:
    """Column ``field_id``'s bounds in ``bounds`` decoded to ``t``: a fixed-width type whose every row holds a
    value of its width is read from the map's bytes in place; anything else goes through ``decode_bound_column``
    (and its errors)."""
    width, dtype = FIXED_WIDTH.get(t.name, (0, "")) if isinstance(t, PrimitiveType) else (0, "")
    if width:
        numbers = bounds.fixed_width(field_id, width, dtype)
        if numbers is not None:
            return _fixed_array(numbers, dtype, arrow_type(t))
    raw = bounds.lookup(field_id) if bounds.length else pa.array([], pa.binary())
    return decode_bound_column(raw, t, file=file, column=bound_label(column, name, field_id))


def _decimals(raw: pa.Array, target: pa.DataType) -> pa.Array:
    """Decimal bounds (big-endian two's complement, minimal bytes) into decimal128's 16-byte
    little-endian storage, grouped by byte length so every step is a numpy operation."""
    n = len(raw)
    _, offset_buffer, data_buffer = raw.buffers()
    width = np.int64 if pa.types.is_large_binary(raw.type) else np.int32
    offsets = np.frombuffer(offset_buffer, dtype=width, count=n + 1, offset=raw.offset * np.dtype(width).itemsize)
    offsets = offsets.astype(np.int64)
    data = np.frombuffer(data_buffer, dtype=np.uint8) if data_buffer is not None else np.zeros(0, np.uint8)
    lengths = np.diff(offsets)
    valid = np.asarray(raw.is_valid().to_numpy(zero_copy_only=False), dtype=bool) & (lengths > 0)
    out = np.zeros((n, 16), dtype=np.uint8)
    for length in np.unique(lengths[valid]):
        if length > 16:
            raise ValueError(f"decimal bound of {length} bytes does not fit decimal128")
        rows = np.flatnonzero(valid & (lengths == length))
        big_endian = data[offsets[rows, None] + np.arange(length)]
        out[rows, :length] = big_endian[:, ::-1]
        negative = big_endian[:, 0] >= 0x80
        out[rows[negative], length:] = 0xFF
    validity = pa.array(valid).buffers()[1]
    return pa.Array.from_buffers(target, n, [validity, pa.py_buffer(out.tobytes())], null_count=int(n - valid.sum()))


def _column_fields(t: IcebergType) -> list[pa.Field]:
    """One column's readable metrics: its counts, then its bounds in the column's own type."""
    counts = [pa.field(label, pa.int64()) for label, _ in _STAT_MAPS]
    return counts + [arrow_field(label, t, True) for label in ("lower_bound", "upper_bound")]


def readable_metrics(files: pa.Table, schema: Schema, *, file: Origin = "<manifest>") -> pa.StructArray:
    """The ``readable_metrics`` struct column for a table of data_file rows; a bound that is not valid for its
    column's type raises the ``MetadataError`` naming its manifest and column (``decode_bound_column``)."""
    columns = readable_columns(schema)
    n = files.num_rows
    if not n:  # the type alone (building arrays from nothing would import pandas, through pyarrow)
        return pa.nulls(0, pa.struct([pa.field(name, pa.struct(_column_fields(t))) for name, _, t in columns]))
    children: list[pa.Array] = []
    fields: list[pa.Field] = []
    maps = {column: MapColumn(files.column(column)) for _, column in _STAT_MAPS}
    maps.update({column: MapColumn(files.column(column)) for column in ("lower_bounds", "upper_bounds")})
    for name, field_id, t in columns:
        parts = [maps[column].lookup(field_id) for _, column in _STAT_MAPS]
        parts += [_bound_column(maps[c], t, file, c, name, field_id) for c in ("lower_bounds", "upper_bounds")]
        children.append(pa.StructArray.from_arrays(parts, fields=_column_fields(t)))
        fields.append(pa.field(name, children[-1].type))
    if not fields:
        return pa.array([{}] * n, pa.struct([]))
    return pa.StructArray.from_arrays(children, fields=fields)
