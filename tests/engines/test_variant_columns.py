"""Variant columns in the Arrow engine without Spark: shredded columns rebuilt by the rules of
parquet-format ``VariantShredding.md`` (its own examples), and variants shown as JSON text."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from icebook.analysis.arrow_types import VARIANT_STORAGE, extension_metadata
from icebook.analysis.variant_text import variant_json, with_variants_as_json
from icebook.engines.arrow_v3_types import conform_v3
from icebook.spec import variant_encode as enc
from icebook.spec.types import VARIANT
from icebook.spec.variant import VariantError

metadata = enc.encode_metadata
EMPTY = metadata([])

FIELD = pa.struct([pa.field("value", pa.binary()), pa.field("typed_value", pa.string())])
TS_FIELD = pa.struct([pa.field("value", pa.binary()), pa.field("typed_value", pa.timestamp("us", tz="UTC"))])


def test_the_shredding_spec_examples_rebuild() -> None:
    # VariantShredding.md, "Objects": the event table (event_type a string, event_ts a timestamp).
    meta = metadata(["email", "error_msg", "event_ts", "event_type", "click"])
    rest = enc.encode_object([(0, "email", enc.encode_string("user@example.com"))])
    err = enc.encode_object([(1, "error_msg", enc.encode_string("malformed: ..."))])
    click = enc.encode_object([(4, "click", enc.encode_string("_button"))])
    rows = [  # value, event_type (value, typed), event_ts (value, typed), typed_value present
        (None, (None, "noop"), (None, 1729794114937), True),
        (rest, (None, "login"), (None, 1729794146402), True),
        (err, (None, None), (None, None), True),
        (enc.encode_string("malformed: not an object"), None, None, False),
        (click, (None, None), (None, 1729794240241), True),
        (None, (enc.NULL, None), (None, 1729794954163), True),
        (None, (None, "noop"), (enc.encode_string("2024-10-24"), None), True),
        (None, (None, None), (None, None), True),
        (enc.NULL, None, None, False),
    ]
    typed_type = pa.struct(
        [pa.field("event_type", FIELD, nullable=False), pa.field("event_ts", TS_FIELD, nullable=False)]
    )
    event_type = pa.array(
        [{"value": r[1][0], "typed_value": r[1][1]} if r[1] else {"value": None, "typed_value": None} for r in rows],
        FIELD,
    )
    event_ts = pa.array(
        [{"value": r[2][0], "typed_value": r[2][1]} if r[2] else {"value": None, "typed_value": None} for r in rows],
        TS_FIELD,
    )
    typed = pa.StructArray.from_arrays(
        [event_type, event_ts], fields=list(typed_type), mask=pa.array([not r[3] for r in rows])
    )
    column = pa.StructArray.from_arrays(
        [pa.array([meta] * len(rows), pa.binary()), pa.array([r[0] for r in rows], pa.binary()), typed],
        names=["metadata", "value", "typed_value"],
    )
    out = conform_v3(column, VARIANT)
    texts = variant_json(out).to_pylist()
    assert texts == [
        '{"event_ts":"' + _ts(1729794114937) + '+00:00","event_type":"noop"}',
        '{"email":"user@example.com","event_ts":"' + _ts(1729794146402) + '+00:00","event_type":"login"}',
        '{"error_msg":"malformed: ..."}',
        '"malformed: not an object"',
        '{"click":"_button","event_ts":"' + _ts(1729794240241) + '+00:00"}',
        '{"event_ts":"' + _ts(1729794954163) + '+00:00","event_type":null}',
        '{"event_ts":"2024-10-24","event_type":"noop"}',
        "{}",
        "null",
    ]


def _ts(micros: int) -> str:
    moment = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=micros)
    text = moment.strftime("%Y-%m-%d %H:%M:%S")
    return text + (("." + f"{moment.microsecond:06d}".rstrip("0")) if moment.microsecond else "")


def test_shredded_arrays_and_missing_top_level_values() -> None:
    element = pa.struct([pa.field("value", pa.binary()), pa.field("typed_value", pa.int8())])
    typed = pa.array(
        [[{"value": None, "typed_value": 1}, {"value": enc.NULL, "typed_value": None}], None, None],
        pa.list_(pa.field("element", element, nullable=False)),
    )
    column = pa.StructArray.from_arrays(
        [pa.array([EMPTY] * 3, pa.binary()), pa.array([None, enc.encode_string("s"), None], pa.binary()), typed],
        names=["metadata", "value", "typed_value"],
        mask=pa.array([False, False, True]),
    )
    out = conform_v3(column, VARIANT)
    assert variant_json(out).to_pylist() == ["[1,null]", '"s"', None]
    assert out.field("value").to_pylist()[0] == enc.encode_array([enc.encode_int(1, 1), enc.NULL])


def test_variant_columns_shown_as_json() -> None:
    arr = pa.array([{"metadata": EMPTY, "value": enc.encode_int(7, 1)}, None], VARIANT_STORAGE)
    table = pa.Table.from_arrays(
        [arr], schema=pa.schema([pa.field("v", VARIANT_STORAGE, metadata=extension_metadata(VARIANT))])
    )
    assert with_variants_as_json(table).column("v").to_pylist() == ["7", None]
    cut = pa.array([{"metadata": b"\x01\x05", "value": b"\x00"}], VARIANT_STORAGE)
    with pytest.raises(VariantError, match="cut short"):
        variant_json(cut)


def test_views_show_variants_as_json_and_keep_the_data() -> None:
    import icebook
    from icebook.analysis._frames import exact_frame
    from icebook.display.registry import render_html, render_text

    arr = pa.array(
        [{"metadata": metadata(["k"]), "value": enc.encode_object([(0, "k", enc.encode_string("<b>"))])}, None],
        VARIANT_STORAGE,
    )
    field = pa.field("v", VARIANT_STORAGE, metadata=extension_metadata(VARIANT))
    frame = exact_frame(pa.Table.from_arrays([arr], schema=pa.schema([field])))
    assert frame["v"].iloc[0]["metadata"] == metadata(["k"])  # the data keeps its bytes
    assert '{"k":"<b>"}' in render_text(frame)
    assert "{&quot;k&quot;:&quot;&lt;b&gt;&quot;}" in render_html(frame)  # escaped
    assert icebook.variant_json(frame["v"]).to_pylist() == ['{"k":"<b>"}', None]
