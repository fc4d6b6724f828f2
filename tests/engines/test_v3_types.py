"""The v3 types read by both engines alike, equal to Spark 4.1 with Iceberg 1.12.

Small tables written here (a Hadoop catalog in a temporary directory): ``variant`` columns unshredded and
then shredded (``write.parquet.shred-variants``), a variant inside a struct, ``geometry``/``geography``
(``spark.sql.geospatial.enabled``), and through Iceberg's Java API ``unknown`` and nanosecond timestamps,
which Spark 4.1 cannot read: those are held to Iceberg's own Java reader instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _arrow_compare import assert_same, extension_marks, spark_arrow
from _support.java_oracle import java_rows

import icebook
from icebook.analysis.variant_text import variant_json
from icebook.engines.spark_session import add_catalog
from icebook.errors import IcebookError, MetadataError
from icebook.scenarios import javaapi

pytestmark = pytest.mark.spark

CATALOG = "v3types"

VARIANT_ROWS = [
    """(1, parse_json('{"a": 1, "b": [1, 2.5, "x", null, true], "c": {"d": 1e300, "e": -0.0}}'),
        named_struct('a', 1, 'w', parse_json('[1,2]')))""",
    "(2, parse_json('null'), null)",
    "(3, null, named_struct('a', 2, 'w', null))",
    "(4, parse_json('12345678901234567890123'), named_struct('a', 3, 'w', parse_json('\"str\"')))",
    "(5, parse_json('1.50'), null)",
    """(6, to_variant_object(named_struct('d', date'2024-01-02', 't', timestamp'2024-01-02 03:04:05.123456',
        'tn', timestamp_ntz'1960-01-02 03:04:05', 'b', X'0102FF', 'f', cast(1.5 as float),
        'g', cast(0.1 as double), 'dec', cast(3.10 as decimal(10,2)), 'by', cast(-1 as tinyint),
        'u', cast(null as string), 's', 'quote " backslash \\\\ tab \t é')), null)""",
]
SHREDDED_ROWS = [
    """(7, parse_json('{"a": 1, "b": "two", "c": [1, 2, 3], "o": {"x": 1.5, "y": "z"}}'),
        named_struct('a', 1, 'w', parse_json('{"q": 1}')))""",
    """(8, parse_json('{"a": 2, "b": "three", "extra": 1.25, "c": [1, "mixed", null]}'), null)""",
    """(9, parse_json('{"a": "notint", "b": null, "o": {"x": "s"}}'), null)""",
    "(10, parse_json('[1, 2]'), null)",
    "(11, parse_json('\"just a string\"'), null)",
    "(12, parse_json('null'), null)",
    "(13, null, null)",
    """(14, parse_json('{"c": [], "o": {}, "long": "a string longer than sixty-four bytes, stored as a long string"}'),
        null)""",
]


def _java_table(spark: Any, location: str, columns: list[tuple[int, str, Any]]) -> Any:
    iceberg = spark._jvm.org.apache.iceberg
    fields = spark._jvm.java.util.ArrayList()
    for field_id, name, type_ in columns:
        fields.add(iceberg.types.Types.NestedField.optional(field_id, name, type_))
    properties = spark._jvm.java.util.HashMap()
    properties.put("format-version", "3")
    tables = iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration())
    return tables.create(iceberg.Schema(fields), iceberg.PartitionSpec.unpartitioned(), properties, location)


@pytest.fixture(scope="module")
def v3(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Table name -> location of the small v3 tables."""
    root = tmp_path_factory.mktemp("v3types")
    spark.conf.set("spark.sql.geospatial.enabled", "true")
    add_catalog(CATALOG, root)
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.db")
    spark.sql(
        f"CREATE TABLE {CATALOG}.db.variants (id int, v variant, s struct<a: int, w: variant>) USING iceberg "
        "TBLPROPERTIES ('format-version'='3')"
    )
    spark.sql(f"INSERT INTO {CATALOG}.db.variants VALUES {', '.join(VARIANT_ROWS)}")
    spark.sql(f"ALTER TABLE {CATALOG}.db.variants SET TBLPROPERTIES ('write.parquet.shred-variants'='true')")
    # One file per insert (the writer infers the shredded schema from the rows of its file): mostly objects
    # (shredded as an object, a string and a null beside them), then the rest.
    for rows in (SHREDDED_ROWS[:3] + SHREDDED_ROWS[4:8], SHREDDED_ROWS[3:4]):
        spark.sql(
            f"INSERT INTO {CATALOG}.db.variants SELECT /*+ REPARTITION(1) */ * FROM VALUES {', '.join(rows)} "
            "AS rows(id, v, s)"
        )
    spark.sql(
        f"CREATE TABLE {CATALOG}.db.geo (id int, g geometry(4326), h geography(4326), p struct<at: geometry(4326)>) "
        "USING iceberg TBLPROPERTIES ('format-version'='3')"
    )
    point = "X'0101000000000000000000F03F0000000000000040'"
    line = "X'010200000002000000000000000000000000000000000000000000000000000840000000000000F03F'"
    spark.sql(
        f"""INSERT INTO {CATALOG}.db.geo VALUES
        (1, ST_SetSrid(ST_GeomFromWKB({point}), 4326), ST_SetSrid(ST_GeogFromWKB({point}), 4326),
            named_struct('at', ST_SetSrid(ST_GeomFromWKB({line}), 4326))),
        (2, ST_SetSrid(ST_GeomFromWKB({line}), 4326), null, null),
        (3, null, ST_SetSrid(ST_GeogFromWKB({line}), 4326), named_struct('at', null))"""
    )
    types = spark._jvm.org.apache.iceberg.types.Types
    unknown = _java_table(spark, str(root / "db" / "unknown"), [(1, "id", types.IntegerType.get())])
    unknown.updateSchema().addColumn("u", types.UnknownType.get()).commit()
    data = javaapi.write_data_file(spark, unknown, [{"id": 1}, {"id": 2}], partition=None, label="unknown")
    unknown.newAppend().appendFile(data).commit()
    nanos = _java_table(
        spark,
        str(root / "db" / "nanos"),
        [
            (1, "id", types.IntegerType.get()),
            (2, "ts", types.TimestampNanoType.withoutZone()),
            (3, "tstz", types.TimestampNanoType.withZone()),
        ],
    )
    time = spark._jvm.java.time
    rows = [
        {"id": 1, "ts": time.LocalDateTime.of(2024, 1, 2, 3, 4, 5, 123456789)},
        {"id": 2, "tstz": time.OffsetDateTime.of(1969, 12, 31, 23, 59, 59, 999999999, time.ZoneOffset.UTC)},
        {"id": 3},
    ]
    data = javaapi.write_data_file(spark, nanos, rows, partition=None, label="nanos")
    nanos.newAppend().appendFile(data).commit()
    return {name: str(root / "db" / name) for name in ("variants", "geo", "unknown", "nanos")}


def test_variants_read_like_spark_at_every_snapshot(spark: Any, v3: dict[str, str]) -> None:
    t = icebook.open(v3["variants"])
    assert len(t.snapshots) == 3
    for snapshot in t.snapshots:
        at = snapshot.snapshot_id
        ours = t.read(at)
        theirs = spark_arrow(spark, f"SELECT * FROM {CATALOG}.db.variants VERSION AS OF {at}")
        assert_same(ours, theirs, f"variants @ {at}")  # the rebuilt shredded values byte for byte
        assert_same(ours, t.read(at, engine="spark"), f"variants @ {at}, engine='spark'")
    marks = extension_marks(t.read().schema)
    assert marks == {"v": (b"arrow.parquet.variant", b""), "s.w": (b"arrow.parquet.variant", b"")}


def test_shredded_files_are_read(v3: dict[str, str]) -> None:
    t = icebook.open(v3["variants"])
    shredded = [
        f.file_path
        for f in t.inspect.files().itertuples()
        if "typed_value" in str(pq.ParquetFile(f.file_path).schema_arrow.field("v").type)
    ]
    assert shredded, "the second insert wrote no shredded file"


def test_variant_json_equals_spark_to_json(spark: Any, v3: dict[str, str]) -> None:
    rows = spark.sql(f"SELECT id, to_json(v) AS v, to_json(s.w) AS w FROM {CATALOG}.db.variants").collect()
    theirs = {r.id: (r.v, r.w) for r in rows}
    table = icebook.open(v3["variants"]).read()
    ids = table.column("id").to_pylist()
    v = variant_json(table.column("v")).to_pylist()
    w = variant_json(table.column("s").combine_chunks().field("w")).to_pylist()
    s_null = table.column("s").is_null().to_pylist()
    ours = {i: (a, None if n else b) for i, a, b, n in zip(ids, v, w, s_null, strict=True)}
    assert ours == theirs
    assert ours[6][0] is not None and '"t":"2024-01-02 03:04:05.123456+00:00"' in ours[6][0]


def test_sql_and_lazy_give_the_same_variants(spark: Any, v3: dict[str, str]) -> None:
    t = icebook.open(v3["variants"])
    query = "SELECT id, v, s FROM t WHERE id > 3"
    arrow = t.sql(query, engine="arrow", output="arrow")
    theirs = t.sql(query, engine="spark", output="arrow")
    assert_same(arrow, theirs, "sql")
    lazy = t.lazy().filter(__import__("polars").col("id") > 3).collect().to_arrow()
    assert extension_marks(lazy.schema) == extension_marks(arrow.schema)
    assert sorted(map(str, lazy.column("v").to_pylist())) == sorted(map(str, arrow.column("v").to_pylist()))


def test_geo_reads_like_spark(spark: Any, v3: dict[str, str]) -> None:
    t = icebook.open(v3["geo"])
    ours = t.read()
    assert_same(ours, spark_arrow(spark, f"SELECT * FROM {CATALOG}.db.geo"), "geo")
    assert_same(ours, t.read(engine="spark"), "geo, engine='spark'")
    assert_same(
        t.sql("SELECT * FROM t", engine="arrow", output="arrow"), t.sql("SELECT * FROM t", output="arrow"), "sql"
    )
    assert extension_marks(ours.schema) == {
        "g": (b"geoarrow.wkb", b'{"crs":"OGC:CRS84","crs_type":"authority_code"}'),
        "h": (b"geoarrow.wkb", b'{"crs":"OGC:CRS84","crs_type":"authority_code","edges":"spherical"}'),
        "p.at": (b"geoarrow.wkb", b'{"crs":"OGC:CRS84","crs_type":"authority_code"}'),
    }
    assert ours.schema.field("g").type == pa.binary()
    by_id = {r["id"]: r for r in ours.to_pylist()}
    assert by_id[1]["g"] == bytes.fromhex("0101000000000000000000F03F0000000000000040")


def test_unknown_is_an_all_null_column(spark: Any, v3: dict[str, str]) -> None:
    t = icebook.open(v3["unknown"])
    ours = t.read()
    assert ours.schema.field("u").type == pa.null()
    assert ours.column("u").null_count == ours.num_rows == 2
    assert_same(ours, t.read(engine="spark"), "unknown")
    assert_same(
        t.sql("SELECT * FROM t", engine="arrow", output="arrow"), t.sql("SELECT * FROM t", output="arrow"), "sql"
    )


def test_nanosecond_timestamps_are_exact(spark: Any, v3: dict[str, str]) -> None:
    # Spark 4.1 has no nanosecond type: Iceberg's own Java reader is the reference.
    t = icebook.open(v3["nanos"])
    assert t.current_snapshot is not None
    theirs = java_rows(spark, v3["nanos"], t.current_snapshot.snapshot_id)
    for rows in (t.read(), t.sql("SELECT * FROM t", engine="arrow", output="arrow"), t.lazy().collect().to_arrow()):
        assert rows.schema.field("ts").type == pa.timestamp("ns")
        assert rows.schema.field("tstz").type == pa.timestamp("ns", tz="UTC")
        assert_same(rows, theirs, "nanos")
    nanos = dict(zip(theirs.column("id").to_pylist(), theirs.column("ts").cast(pa.int64()).to_pylist(), strict=True))
    assert nanos[1] % 1000 == 789
    with pytest.raises(IcebookError, match="timestamp_ns"):
        t.read(engine="spark")


def test_a_variant_with_metadata_cut_short_is_one_error(v3: dict[str, str], tmp_path: Path) -> None:
    import shutil

    t = icebook.open(v3["variants"])
    unshredded = next(
        f for f in sorted(t.inspect.files()["file_path"]) if "typed_value" not in str(pq.read_schema(f).field("v").type)
    )
    backup = tmp_path / "backup.parquet"
    shutil.copy(unshredded, backup)
    data = pq.read_table(unshredded)
    v = data.column("v").combine_chunks()
    metadata = [None if m is None else m[:3] for m in v.field("metadata").to_pylist()]  # a 5-key dictionary cut short
    field = data.schema.field("v")
    cut = pa.StructArray.from_arrays(
        [pa.array([m or b"\x01\x00\x00" for m in metadata], pa.binary()), v.field("value")],
        fields=[field.type.field(0), field.type.field(1)],
        mask=v.is_null(),
    )
    try:
        pq.write_table(data.set_column(data.schema.get_field_index("v"), field, cut), unshredded)
        with pytest.raises(MetadataError) as info:
            icebook.open(v3["variants"]).read()
        assert unshredded in str(info.value) and ": v: " in str(info.value) and "cut short" in str(info.value)
    finally:
        shutil.copy(backup, unshredded)
    assert icebook.open(v3["variants"]).read().num_rows == len(VARIANT_ROWS) + len(SHREDDED_ROWS)


def test_variants_in_lists_and_maps_read_like_spark(spark: Any, v3: dict[str, str]) -> None:
    spark.sql(
        f"CREATE TABLE {CATALOG}.db.nested (id int, a array<variant>, m map<string, variant>) USING iceberg "
        "TBLPROPERTIES ('format-version'='3', 'write.parquet.shred-variants'='true')"
    )
    spark.sql(
        f"""INSERT INTO {CATALOG}.db.nested VALUES
        (1, array(parse_json('{{"k": 1}}'), parse_json('[2]'), null), map('x', parse_json('"y"'), 'z', null)),
        (2, null, null),
        (3, array(), map())"""
    )
    t = icebook.open(
        spark.sql(f"DESCRIBE TABLE EXTENDED {CATALOG}.db.nested").where("col_name = 'Location'").first()[1]
    )
    ours = t.read()
    assert_same(ours, spark_arrow(spark, f"SELECT * FROM {CATALOG}.db.nested"), "nested")
    assert_same(ours, t.read(engine="spark"), "nested, engine='spark'")
    variant = (b"arrow.parquet.variant", b"")
    assert extension_marks(ours.schema) == {"a[].element": variant, "m{}.value": variant}
