"""SQL on the Arrow engine: polars runs the query over lazy scans that read only what it needs.

Each table is a polars lazy frame whose source is an icebook scan (a polars IO source). Polars' optimiser
hands the source the columns the query references and the predicate it can push down; the predicate is
translated into an icebook row filter, so the planner prunes manifests and data files by partition values
and column stats (a query on one partition opens only that partition's data files) and the reader reads
only the referenced columns. Polars applies its own predicate again to the rows it gets back, so the
translation only has to be inclusive: a part it cannot translate exactly is left out (never guessed),
which reads more, never fewer, rows.

A query runs in two passes (``sql``). Polars calls an IO source on one of its own threads while the
calling thread waits inside polars, where no signal reaches Python: a read run there could not be
interrupted (Ctrl-C, a timeout), and icebook's reader would call back into polars from polars' threads.
So the first pass runs the query over sources that only note what polars asks of each table (no rows);
icebook then reads each table once on the calling thread with those columns, filter and limit, and the
second pass runs the query over the rows in memory, where polars calls no Python.

Why polars: it is already the Arrow engine's SQL, its lazy optimiser passes projections and predicates
to a Python source as a structured expression, and a scan of a snapshot stays one call into icebook's
planner and reader (DuckDB would need the whole table as one Arrow dataset, or its own Iceberg reader).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.ipc

from icebook.analysis.expr import nodes
from icebook.analysis.expr.binding import bind
from icebook.analysis.expr.nodes import Expr, FilterError
from icebook.analysis.resolve import snapshot_schema
from icebook.analysis.store.table_like import TableLike
from icebook.analysis.tables.lazy import source_columns, source_rows
from icebook.engines.arrow import read
from icebook.engines.sql_names import spark_names
from icebook.errors import EngineError, one_line
from icebook.spec.schema import Schema
from icebook.spec.snapshots import Snapshot
from icebook.spec.types import DOUBLE, FLOAT
from icebook.text import EPOCH, EPOCH_DATE

_COMPARE = {"Eq": "=", "NotEq": "!=", "Lt": "<", "LtEq": "<=", "Gt": ">", "GtEq": ">="}
_UNIT = {"Nanoseconds": 1_000, "Microseconds": 1, "Milliseconds": 1 / 1_000}


@dataclass(frozen=True)
class SqlSource:
    """One table as the Arrow engine's SQL reads it: its rows' Arrow schema and polars schema, and
    ``rows``, which reads what polars asks of an IO source (the columns, a predicate, a limit)."""

    arrow_schema: pa.Schema
    polars_schema: pl.Schema
    rows: Callable[[list[str] | None, pl.Expr | None, int | None], pl.DataFrame]

    def lazy(self) -> pl.LazyFrame:
        """A polars lazy frame whose IO source is ``rows`` (projection and filters pushed into the scan)."""
        from polars.io.plugins import register_io_source

        def source(
            with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None, _batch_size: int | None
        ) -> Iterator[pl.DataFrame]:
            yield self.rows(with_columns, predicate, n_rows)

        return register_io_source(source, schema=self.polars_schema, explain_name="icebook")


def scan_source(
    table: TableLike, snapshot: Snapshot, *, schema: Schema | None = None, lineage: Sequence[str] = ()
) -> SqlSource:
    """``snapshot`` of ``table`` as an Arrow-engine SQL source.

    ``schema`` defaults to the snapshot's own schema; ``Table.sql_source`` passes the read schema of its ``at``.
    ``lineage``: row-lineage columns (``_row_id``, ``_last_updated_sequence_number``) the rows have after
    the table's own, read only when a query uses them."""
    read_schema = schema or snapshot_schema(table.metadata, snapshot)
    names = [f.name for f in read_schema.columns] + list(lineage)
    arrow_schema = read(table, snapshot, nodes.AlwaysFalse(), names if lineage else None, schema=read_schema).schema
    polars_schema = pl.from_arrow(arrow_schema.empty_table()).schema  # type: ignore[union-attr]

    def rows(with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None) -> pl.DataFrame:
        pushed = pushdown_filter(predicate, read_schema) if predicate is not None else None
        columns = source_columns(with_columns, predicate, names)
        chosen = (names if lineage else None) if columns is None else [c for c in names if c in columns]
        frame = pl.from_arrow(read(table, snapshot, pushed, chosen, schema=read_schema))
        assert isinstance(frame, pl.DataFrame)
        return source_rows(frame, with_columns, predicate, n_rows)

    return SqlSource(arrow_schema, polars_schema, rows)


@dataclass(frozen=True)
class _Asked:
    """What polars asked of one IO source in a query's first pass."""

    columns: list[str] | None
    predicate: pl.Expr | None
    n_rows: int | None


def _asked_once(asks: Sequence[_Asked]) -> _Asked:
    """One read that serves every scan of a table in the query (a self-join scans it twice): the union of
    the columns, the predicate and limit only when every scan has the same."""
    if len(asks) == 1:
        return asks[0]
    columns: list[str] | None = []
    for ask in asks:
        if ask.columns is None or columns is None:
            columns = None
        else:
            columns += [c for c in ask.columns if c not in columns]
    if columns is not None:  # each scan's filter is applied to rows holding the columns it reads
        columns += [c for a in asks if a.predicate is not None for c in a.predicate.meta.root_names()]
        columns = list(dict.fromkeys(columns))
    predicates = {None if a.predicate is None else a.predicate.meta.serialize(format="json") for a in asks}
    same = len(predicates) == 1
    n_rows = asks[0].n_rows if len({a.n_rows for a in asks}) == 1 else None
    return _Asked(columns, asks[0].predicate if same else None, n_rows if same else None)


def _run(tables: Mapping[str, pl.LazyFrame], query: str) -> pl.DataFrame:
    context = pl.SQLContext()
    for name, frame in tables.items():
        context.register(name, frame)
    try:
        return context.execute(query, eager=True)
    except Exception as exc:  # polars raises its own SQL and compute error types
        raise EngineError(f"SQL (arrow engine): {one_line(exc)}") from None


def _full_width(frame: pl.DataFrame, schema: pl.Schema) -> pl.DataFrame:
    """``frame`` with every column of ``schema``, those not read as nulls: the second pass resolves the
    query's names against the table's schema, as the first did."""
    missing = [pl.lit(None, dtype).alias(name) for name, dtype in schema.items() if name not in frame.columns]
    return frame.with_columns(missing).select(list(schema.names())) if missing else frame


def sql(sources: Mapping[str, SqlSource], query: str) -> pa.Table:
    """``query`` over tables registered by name, as Arrow shaped as Spark answers it: columns named as Spark
    names them, and a column that comes from a table in that column's Arrow type (polars holds a map as a
    list of key-value structs).

    Two passes (see the module's doc): what polars asks of each table, then the query over the rows read."""
    asked: dict[str, list[_Asked]] = {name: [] for name in sources}

    def noting(name: str, source: SqlSource) -> pl.LazyFrame:
        from polars.io.plugins import register_io_source

        def note(
            with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None, _batch_size: int | None
        ) -> Iterator[pl.DataFrame]:
            asked[name].append(_Asked(None if with_columns is None else list(with_columns), predicate, n_rows))
            yield from ()

        return register_io_source(note, schema=source.polars_schema, explain_name=f"icebook {name}")

    _run({name: noting(name, source) for name, source in sources.items()}, query)
    frames = {}
    for name, source in sources.items():
        if asked[name]:
            ask = _asked_once(asked[name])
            frame = _full_width(source.rows(ask.columns, ask.predicate, ask.n_rows), source.polars_schema)
        else:  # polars needed no row of it
            frame = pl.DataFrame(schema=source.polars_schema)
        frames[name] = frame.lazy()
    result = _run(frames, query)
    arrow = result.to_arrow(compat_level=pl.CompatLevel.oldest())
    known = {f.name: f.type for s in sources.values() for f in s.arrow_schema}
    columns = [
        _conform(column, known.get(name)) for name, column in zip(arrow.column_names, arrow.columns, strict=True)
    ]
    names = spark_names(query)
    if names is None or len(names) != len(columns):
        names = [None] * len(columns)
    final = [spark or ours for spark, ours in zip(names, arrow.column_names, strict=True)]
    # A column read from a table keeps its field's metadata (the v3 types' extension names).
    marks = {f.name: f.metadata for s in sources.values() for f in s.arrow_schema if f.metadata}
    fields = [
        pa.field(name, column.type, metadata=marks.get(ours) if column.type == known.get(ours) else None)
        for name, ours, column in zip(final, arrow.column_names, columns, strict=True)
    ]
    return pa.Table.from_arrays(columns, schema=pa.schema(fields))


def _conform(column: pa.ChunkedArray, source: pa.DataType | None) -> pa.ChunkedArray:
    """``column`` with Spark's Arrow types: 32-bit offsets (string, binary, list), and a column read from a
    table in that column's own type (maps rebuilt from polars' list of key-value structs)."""
    target = source if source is not None else _small(column.type)
    if column.type == target:
        return column
    try:
        return pa.chunked_array([_rebuilt(chunk, target) for chunk in column.chunks], type=target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, TypeError, ValueError):
        return column if source is None else _conform(column, None)  # a different column of the same name


def _small(t: pa.DataType) -> pa.DataType:
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_large_list(t) or pa.types.is_list(t):
        return pa.list_(pa.field(t.value_field.name, _small(t.value_type), t.value_field.nullable))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _small(f.type), f.nullable) for f in t])
    return t


def _rebuilt(array: pa.Array, target: pa.DataType) -> pa.Array:
    is_list = pa.types.is_large_list(array.type) or pa.types.is_list(array.type)
    if is_list and (pa.types.is_map(target) or pa.types.is_list(target)):
        offsets = array.offsets.to_numpy()
        first, last = int(offsets[0]), int(offsets[-1])
        values = array.values.slice(first, last - first)
        starts = pa.array(offsets - first, pa.int32())
        mask = array.is_null()
        if pa.types.is_map(target):
            keys, items = _rebuilt(values.field(0), target.key_type), _rebuilt(values.field(1), target.item_type)
            return pa.MapArray.from_arrays(starts, keys, items, type=target, mask=mask)
        return pa.ListArray.from_arrays(starts, _rebuilt(values, target.value_type), type=target, mask=mask)
    if pa.types.is_struct(target) and pa.types.is_struct(array.type):
        children = [_rebuilt(array.field(f.name), f.type) for f in target]
        return pa.StructArray.from_arrays(children, fields=list(target), mask=array.is_null())
    return array.cast(target)


# ------------------------------------------------------------------------------------------ the predicate


def pushdown_filter(predicate: pl.Expr, schema: Schema) -> Expr | None:
    """An icebook filter that every row matching ``predicate`` matches (None: nothing to push down).

    Conjuncts are translated one by one; one that cannot be translated exactly, or whose literal does
    not bind to its column's type, is dropped (the filter then selects more rows, never fewer)."""
    try:
        tree = json.loads(predicate.meta.serialize(format="json"))
    except Exception:  # an expression polars cannot serialise is simply not pushed down
        return None
    kept: list[Expr] = []
    for conjunct in _conjuncts(tree):
        expr = _weakened(conjunct, schema)
        if expr is not None:
            kept.append(expr)
    return nodes.and_(*kept) if kept else None


def _conjuncts(node: Any) -> Iterator[Any]:
    binary = node.get("BinaryExpr") if isinstance(node, dict) else None
    if binary is not None and binary.get("op") in ("And", "LogicalAnd"):
        yield from _conjuncts(binary["left"])
        yield from _conjuncts(binary["right"])
    else:
        yield node


def _weakened(node: Any, schema: Schema) -> Expr | None:
    """A translation of ``node`` that matches at least its rows: exact where possible; an ``and`` keeps
    the sides it can translate, an ``or`` needs both."""
    binary = node.get("BinaryExpr") if isinstance(node, dict) else None
    if binary is not None and binary.get("op") in ("And", "LogicalAnd", "Or", "LogicalOr"):
        left, right = _weakened(binary["left"], schema), _weakened(binary["right"], schema)
        if binary["op"] in ("And", "LogicalAnd"):
            if left is None or right is None:
                return left or right
            return nodes.And(left, right)
        return nodes.Or(left, right) if left is not None and right is not None else None
    return _exact(node, schema)


def _exact(node: Any, schema: Schema) -> Expr | None:
    """The exact translation of ``node`` (bound to ``schema`` to check its literals), or None."""
    try:
        expr = _translate(node, schema)
        if expr is None:
            return None
        bind(expr, schema)
        return expr
    except (FilterError, KeyError, TypeError, ValueError, OverflowError):
        return None


def _translate(node: Any, schema: Schema) -> Expr | None:
    if not isinstance(node, dict):
        return None
    if "BinaryExpr" in node:
        b = node["BinaryExpr"]
        op = b.get("op")
        if op in ("And", "LogicalAnd", "Or", "LogicalOr"):
            left, right = _translate(b["left"], schema), _translate(b["right"], schema)
            if left is None or right is None:
                return None
            return nodes.And(left, right) if op in ("And", "LogicalAnd") else nodes.Or(left, right)
        if op not in _COMPARE:
            return None
        column, value = _column(b["left"], schema), _literal(b["right"])
        symbol = _COMPARE[op]
        if column is None:
            column, value, symbol = _column(b["right"], schema), _literal(b["left"]), nodes.FLIP[symbol]
        if column is None or value is _NO_VALUE or value is None:
            return None
        return nodes.Compare(symbol, column, value)
    if "Function" in node:
        function, inputs = node["Function"].get("function"), node["Function"].get("input", [])
        boolean = function.get("Boolean") if isinstance(function, dict) else None
        if boolean in ("IsNull", "IsNotNull") and len(inputs) == 1:
            column = _column(inputs[0], schema)
            return None if column is None else nodes.Unary("is_null" if boolean == "IsNull" else "not_null", column)
        if boolean == "Not" and len(inputs) == 1:
            inner = _translate(inputs[0], schema)
            return None if inner is None else nodes.Not(inner)
        if isinstance(boolean, dict) and "IsIn" in boolean and len(inputs) == 2:
            column, values = _column(inputs[0], schema), _series(inputs[1])
            if column is None or values is None or any(v is None for v in values):
                return None
            return nodes.In(column, values)
        if isinstance(function, dict) and function.get("StringExpr") == "StartsWith" and len(inputs) == 2:
            column, prefix = _column(inputs[0], schema), _literal(inputs[1])
            return None if column is None or not isinstance(prefix, str) else nodes.StartsWith(column, prefix)
    return None


def _column(node: Any, schema: Schema) -> str | None:
    """A top-level column that compares as polars compares it: not float or double, where polars orders
    NaN above every number and Arrow's comparison does not (such predicates are left to polars)."""
    if not isinstance(node, dict) or not isinstance(node.get("Column"), str):
        return None
    name = node["Column"]
    field = next((f for f in schema.columns if f.name == name), None)
    if field is None or field.type in (FLOAT, DOUBLE):
        return None
    return str(name)


class _NoValue:
    pass


_NO_VALUE: Any = _NoValue()


def _literal(node: Any) -> Any:
    """A scalar literal as a Python value icebook's filters take (``_NO_VALUE`` when it is not one)."""
    literal = node.get("Literal", {}) if isinstance(node, dict) else {}
    dynamic = literal.get("Dyn") if isinstance(literal, dict) else None
    if isinstance(dynamic, dict) and len(dynamic) == 1:  # a Python literal not yet given a type
        ((kind, value),) = dynamic.items()
        if kind == "Int" and isinstance(value, int):
            return value
        if kind == "Str" and isinstance(value, str):
            return value
        return _NO_VALUE
    scalar = literal.get("Scalar") if isinstance(literal, dict) else None
    if not isinstance(scalar, dict) or len(scalar) != 1:
        return _NO_VALUE
    ((kind, value),) = scalar.items()
    if kind in ("Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "Int128"):
        return int(value)
    if kind in ("String", "Boolean"):
        return value
    if kind == "Date":
        return EPOCH_DATE + _dt.timedelta(days=int(value))
    if kind == "Datetime" and isinstance(value, list) and len(value) >= 2 and value[1] in _UNIT:
        ticks, unit, zone = value[0], value[1], value[2] if len(value) > 2 else None
        if isinstance(zone, dict):
            zone = zone.get("inner")
        if zone not in (None, "UTC", "+00:00", "Etc/UTC"):
            return _NO_VALUE
        if unit == "Nanoseconds" and ticks % 1_000:
            return _NO_VALUE  # finer than the table's microseconds: a comparison would change
        micros = ticks // 1_000 if unit == "Nanoseconds" else ticks * 1_000 if unit == "Milliseconds" else ticks
        moment = EPOCH + _dt.timedelta(microseconds=int(micros))
        return moment.replace(tzinfo=_dt.UTC) if zone is not None else moment
    return _NO_VALUE


def _series(node: Any) -> list[Any] | None:
    """The values of an ``is_in`` list, read back from polars' serialisation (Arrow IPC bytes)."""
    literal = node.get("Literal", {}) if isinstance(node, dict) else {}
    raw = literal.get("Series")
    if raw is None and isinstance(literal.get("Scalar"), dict):
        raw = literal["Scalar"].get("List")
    if not isinstance(raw, list) or len(raw) > 10_000_000:
        return None
    try:
        column = pa.ipc.open_stream(pa.BufferReader(bytes(raw))).read_all().column(0)
    except Exception:  # a form this polars does not write: left to polars
        return None
    values = column.to_pylist()
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):  # the list as one value
        if len(values) != 1 or values[0] is None:
            return None
        values = values[0]
    # Dates and times are left to polars (rare in an ``in`` list); every value must translate, or none.
    if len(values) > 10_000 or not all(isinstance(v, (int, str, bool)) for v in values):
        return None
    return values


__all__ = ["SqlSource", "pushdown_filter", "scan_source", "sql"]
