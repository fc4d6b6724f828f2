"""The v3 inspector's sections on small files and hand-made results (no Spark): variant shredding read from
Parquet footers, geo boxes drawn as SVG, and every string of the view escaped."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from icebook.analysis.v3.deletion_vectors import DataFileVector, DeletionVector, DeletionVectorMap
from icebook.analysis.v3.geo import GeoBounds, GeoBox
from icebook.analysis.v3.variants import file_variants
from icebook.display.registry import render_html, render_text

BINARY = pa.binary()


def _field(name: str, t: pa.DataType, fid: int | None = None) -> pa.Field:
    return pa.field(name, t, metadata=None if fid is None else {b"PARQUET:field_id": str(fid).encode()})


def _shred(typed: pa.DataType) -> pa.StructType:
    return pa.struct([_field("value", BINARY), _field("typed_value", typed)])


def _write(tmp_path: Path, fields: list[pa.Field]) -> pq.FileMetaData:
    path = tmp_path / "v.parquet"
    schema = pa.schema(fields)
    pq.write_table(pa.Table.from_pylist([{f.name: None for f in fields}], schema=schema), path)
    return pq.read_metadata(path)


def test_unshredded_and_shredded_variants_and_one_inside_a_struct(tmp_path: Path) -> None:
    shredded = pa.struct(
        [
            _field("a", _shred(pa.int64())),
            _field("tags", _shred(pa.list_(_field("element", _shred(pa.string()))))),
        ]
    )
    meta = _write(
        tmp_path,
        [
            _field("id", pa.int64(), 1),
            _field("plain", pa.struct([_field("metadata", BINARY), _field("value", BINARY)]), 2),
            _field(
                "doc",
                pa.struct([_field("metadata", BINARY), _field("value", BINARY), _field("typed_value", shredded)]),
                3,
            ),
            _field(
                "outer",
                pa.struct(
                    [
                        _field(
                            "inner",
                            pa.struct(
                                [
                                    _field("metadata", BINARY),
                                    _field("value", BINARY),
                                    _field("typed_value", pa.float64()),
                                ]
                            ),
                            5,
                        )
                    ]
                ),
                4,
            ),
        ],
    )
    found = {v.column: v for v in file_variants(meta, "f.parquet", {2: "plain", 3: "doc", 5: "outer.inner", 9: "gone"})}
    assert not found["plain"].is_shredded and found["plain"].parquet_path == "plain"
    assert [(s.path, s.column, s.physical_type) for s in found["doc"].shredded] == [
        ("$.a", "doc.typed_value.a.typed_value", "INT64"),
        ("$.tags[*]", "doc.typed_value.tags.typed_value.list.element.typed_value", "BYTE_ARRAY"),
    ]
    assert found["doc"].shredded[1].logical_type == "String"
    assert found["doc"].residual == ("$.a", "$.tags", "$.tags[*]")
    assert [(s.path, s.column) for s in found["outer.inner"].shredded] == [("$", "outer.inner.typed_value")]
    assert found["gone"].parquet_path is None and not found["gone"].shredded


def test_geo_boxes_are_drawn_and_a_box_across_the_antimeridian_in_two_parts() -> None:
    boxes = (
        GeoBox(
            file_path="/t/a.parquet",
            column="g",
            field_id=2,
            type="geometry(srid:4326)",
            lower=(1.0, 2.0),
            upper=(3.0, 4.0),
        ),
        GeoBox(
            file_path="/t/b.parquet",
            column="h",
            field_id=3,
            type="geography(srid:4326)",
            lower=(170.0, -10.0),
            upper=(-170.0, 10.0),
        ),
    )
    result = GeoBounds(location="/t", snapshot_id=1, columns=("g", "h"), boxes=boxes)
    assert [b.crosses_antimeridian for b in boxes] == [False, True]
    html = render_html(result)
    assert html.count("<rect x=") == 1 + 3  # the frame, one box, and the crossing box's two parts
    assert "a.parquet [1.0, 2.0] - [3.0, 4.0]" in html
    frame = result.to_pandas()
    assert frame[["xmin", "ymin", "xmax", "ymax"]].values.tolist() == [
        [1.0, 2.0, 3.0, 4.0],
        [170.0, -10.0, -170.0, 10.0],
    ]


def test_every_string_of_the_view_is_escaped() -> None:
    hostile = "/t/<script>alert(1)</script>.parquet"
    vector = DeletionVector(
        puffin_path="/t/<b>x</b>.puffin",
        content_offset=4,
        content_size_in_bytes=40,
        cardinality=6,
        referenced_data_file=hostile,
        sequence_number=2,
        snapshot_id=1,
        manifest_path="/t/m.avro",
        ranges=((0, 4), (9, 9)),
    )
    dv_map = DeletionVectorMap(
        location="/t",
        snapshot_id=1,
        files=(
            DataFileVector(file_path=hostile, partition="p=<i>", record_count=10, sequence_number=1, vector=vector),
        ),
        dangling=(vector,),
    )
    html = render_html(dv_map)
    assert "<script>" not in html and "<b>x</b>" not in html and "<i>" not in html
    assert "&lt;script&gt;" in html and "0-4, 9" in html
    assert "0-4, 9" in render_text(dv_map)
    assert dv_map.to_pandas()["deleted_positions"].tolist() == ["0-4, 9"]
