"""Filter expressions: the string parser, binding to a schema, literal conversion, errors, and the walks
over expression nodes."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest

from icebook.analysis.expr.binding import bind
from icebook.analysis.expr.filter_arrow import to_arrow
from icebook.analysis.expr.nodes import (
    VISITORS,
    AlwaysTrue,
    And,
    Compare,
    FilterError,
    In,
    IsNull,
    Not,
    NotIn,
    Or,
    StartsWith,
    Unary,
    push_not,
)
from icebook.analysis.expr.parser import parse_filter
from icebook.spec.schema import Schema
from icebook.spec.types import DATE, LONG, STRING, TIMESTAMPTZ, DecimalType, NestedField, StructType

SCHEMA = Schema(
    schema_id=7,
    fields=StructType(
        (
            NestedField(field_id=1, name="event_id", required=True, type=LONG),
            NestedField(field_id=2, name="ts", required=False, type=TIMESTAMPTZ),
            NestedField(field_id=3, name="region", required=False, type=STRING),
            NestedField(field_id=4, name="page", required=False, type=STRING),
            NestedField(field_id=5, name="amount", required=False, type=DecimalType(10, 2)),
            NestedField(field_id=6, name="day", required=False, type=DATE),
        )
    ),
)


def test_parse_precedence_and_forms() -> None:
    e = parse_filter("ts >= '2024-01-01' and region = 'us'")
    assert e == And(Compare(">=", "ts", "2024-01-01"), Compare("=", "region", "us"))
    e = parse_filter("event_id in (1, 2, 3) or not (page is null)")
    assert e == Or(In("event_id", [1, 2, 3]), Not(IsNull("page")))
    assert parse_filter("page starts with 'se'") == StartsWith("page", "se")
    assert parse_filter("page not starts with 'se'") == StartsWith("page", "se", negated=True)
    assert parse_filter("a = 1 or b = 2 and c = 3") == Or(
        Compare("=", "a", 1), And(Compare("=", "b", 2), Compare("=", "c", 3))
    )
    assert parse_filter("event_id not in (1)") == NotIn("event_id", [1])
    assert parse_filter("page is not null") == Unary("not_null", "page")
    assert parse_filter("5 < event_id") == Compare(">", "event_id", 5)
    assert parse_filter("name = 'it''s'") == Compare("=", "name", "it's")
    assert parse_filter("`odd col` <> 2") == Compare("!=", "odd col", 2)
    assert parse_filter("  ") == AlwaysTrue()


@pytest.mark.parametrize(
    ("text", "position"),
    [("region = ", 9), ("region = 'us' and", 17), ("(region = 'us'", 14), ("region ~ 'x'", 7), ("in (1)", 0)],
)
def test_syntax_errors_name_the_position(text: str, position: int) -> None:
    with pytest.raises(FilterError, match=f"position {position}"):
        parse_filter(text)


def test_binding_converts_literals_to_column_types() -> None:
    e = bind("ts >= '2024-01-01' and day < '2024-01-03' and amount = 1.5 and event_id in (1, '2')", SCHEMA)
    preds = []

    def walk(x: object) -> None:
        if isinstance(x, And):
            walk(x.left)
            walk(x.right)
        else:
            preds.append(x)

    walk(e)
    assert preds[0].value == 1704067200000000  # type: ignore[attr-defined]
    assert preds[0].ref.field_id == 2  # type: ignore[attr-defined]
    assert preds[1].value == 19725  # type: ignore[attr-defined]
    assert preds[2].value == Decimal("1.5")  # type: ignore[attr-defined]
    assert preds[3].values == (1, 2)  # type: ignore[attr-defined]


def test_unknown_column_and_bad_literal() -> None:
    with pytest.raises(FilterError, match="unknown column 'nope'"):
        bind("nope = 1", SCHEMA)
    with pytest.raises(FilterError, match="event_id"):
        bind("event_id = 'abc'", SCHEMA)
    with pytest.raises(FilterError, match="starts with"):
        bind("event_id starts with 'a'", SCHEMA)
    assert isinstance(FilterError("x"), Exception)


def test_case_insensitive_names_and_not_pushdown() -> None:
    e = push_not(bind("not (REGION = 'us' or event_id < 3)", SCHEMA))
    assert e == And(
        Compare("!=", bind("region = 'us'", SCHEMA).ref, "us"),  # type: ignore[union-attr]
        Compare(">=", bind("event_id = 1", SCHEMA).ref, 3),  # type: ignore[union-attr]
    )


def test_arrow_evaluation_uses_sql_null_semantics() -> None:
    table = pa.table(
        {
            "event_id": pa.array([1, 2, 3, 4], pa.int64()),
            "region": ["us", None, "eu", "us"],
            "page": ["search", "home", None, "settings"],
        }
    )

    def ids(text: str) -> list[int]:
        return table.filter(to_arrow(bind(text, SCHEMA))).column("event_id").to_pylist()

    assert ids("region != 'us'") == [3]  # null region is neither equal nor unequal
    assert ids("region not in ('us')") == [3]
    assert ids("not (region in ('us'))") == [3]
    assert ids("page starts with 'se'") == [1, 4]
    assert ids("event_id in (1, 2, 3) or not (page is null)") == [1, 2, 3, 4]
    assert ids("region is null or page is null") == [2, 3]


def _all_walks_loaded() -> None:
    # Each module registers its walks when imported: load every module of the package.
    import icebook.analysis.expr.filter_arrow
    import icebook.analysis.expr.projection
    import icebook.analysis.expr.pruning
    import icebook.analysis.expr.pruning_arrow  # noqa: F401


def test_every_walk_handles_the_nodes_it_covers() -> None:
    _all_walks_loaded()
    names = {v.name for v in VISITORS}
    assert {"binding._bind", "filter_arrow._to_arrow", "pruning.evaluate", "pruning_arrow.evaluate_columns"} <= names
    assert {"nodes.push_not", "projection._project", "projection.predicate_text"} <= names
    for walk in VISITORS:
        fallback = walk.dispatch.dispatch(object)
        unhandled = [t.__name__ for t in walk.covers if walk.dispatch.dispatch(t) is fallback]
        assert not unhandled, f"{walk.name} does not handle {unhandled}"


def test_a_new_node_fails_loudly_in_every_walk() -> None:
    _all_walks_loaded()

    class Xor:  # a node type no walk knows
        pass

    for walk in VISITORS:
        with pytest.raises(FilterError, match=rf"{walk.name} does not handle Xor"):
            walk.dispatch(Xor(), *[None] * 3)


def test_binding_something_that_is_not_an_expression() -> None:
    with pytest.raises(FilterError, match=r"binding\._bind does not handle int .*: 42"):
        bind(42, SCHEMA)  # type: ignore[arg-type]
