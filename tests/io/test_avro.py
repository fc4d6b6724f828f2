"""Manifest lists and manifests decoded by icebook, compared with what Spark reports."""

from __future__ import annotations

import datetime as dt
import io
import json
import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from _spark_tables import add_catalog, build_tables

from icebook.errors import MetadataError, NotFound
from icebook.io.avro import (
    INHERITED_FLAGS,
    available_decoders,
    entries_schema,
    read_manifest_entries,
    read_manifest_entry,
    read_manifest_header,
    read_manifest_list,
)
from icebook.io.fileio import ArrowFileIO
from icebook.spec.manifest import EntryStatus, ManifestContent, ManifestFile
from icebook.spec.types import parse_struct
from icebook.spec.values import decode_value, to_python_object

TABLES = ("types_v1", "types_v2", "types_v3", "mor_v2", "mor_v3", "rewrite_v2")
FIO = ArrowFileIO()


def _rows(df: Any) -> list[dict[str, Any]]:
    return [r.asDict(recursive=True) for r in df.collect()]


@pytest.fixture(scope="module")
def avro_spark_tables(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Spark-built fixture tables plus what Spark's metadata tables say about them."""
    warehouse = tmp_path_factory.mktemp("avro_wh")
    add_catalog(spark, "lake_avro", warehouse)
    build_tables(spark, "lake_avro")
    out: dict[str, Any] = {"warehouse": warehouse}
    for t in TABLES:
        for meta in ("entries", "files", "manifests", "all_manifests"):
            out[f"{t}.{meta}"] = _rows(spark.sql(f"SELECT * FROM lake_avro.db.{t}.{meta}"))
    return out


def _metadata(warehouse: Path, table: str) -> dict[str, Any]:
    latest = sorted(
        (warehouse / "db" / table / "metadata").glob("v*.metadata.json"), key=lambda p: int(p.name[1:].split(".")[0])
    )[-1]
    return json.loads(latest.read_text())


def _current_manifests(warehouse: Path, table: str) -> tuple[dict[str, Any], tuple[ManifestFile, ...]]:
    md = _metadata(warehouse, table)
    snap = next(s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"])
    mfs = read_manifest_list(
        FIO,
        snap["manifest-list"],
        format_version=md["format-version"],
        snapshot_sequence_number=snap.get("sequence-number"),
        snapshot_id=snap["snapshot-id"],
    )
    return md, mfs


@pytest.mark.spark
@pytest.mark.parametrize("table", TABLES)
def test_manifest_list_matches_spark_manifests(avro_spark_tables: dict[str, Any], table: str) -> None:
    md, mfs = _current_manifests(avro_spark_tables["warehouse"], table)
    spark = {r["path"]: r for r in avro_spark_tables[f"{table}.manifests"]}
    assert {m.manifest_path for m in mfs} == set(spark)
    for m in mfs:
        s = spark[m.manifest_path]
        assert m.manifest_length == s["length"]
        assert m.partition_spec_id == s["partition_spec_id"]
        assert m.added_snapshot_id == s["added_snapshot_id"]
        assert int(m.content) == s["content"]
        data = m.content == ManifestContent.DATA
        assert m.added_files_count == (s["added_data_files_count"] if data else s["added_delete_files_count"])
        assert m.existing_files_count == (s["existing_data_files_count"] if data else s["existing_delete_files_count"])
        assert m.deleted_files_count == (s["deleted_data_files_count"] if data else s["deleted_delete_files_count"])
        assert m.partitions is not None
        assert [p.contains_null for p in m.partitions] == [p["contains_null"] for p in s["partition_summaries"]]
        if md["format-version"] == 1:
            assert m.sequence_number == 0 and m.min_sequence_number == 0 and m.content == ManifestContent.DATA
            assert {i.field for i in m.inherited} == {"content", "sequence_number", "min_sequence_number"}
            assert "use 0 when reading v1 manifest lists" in (m.explain("sequence_number") or "")
        else:
            assert m.inherited == ()
            assert m.sequence_number is not None and m.sequence_number >= 1


@pytest.mark.spark
def test_partition_summary_bounds_match_spark(avro_spark_tables: dict[str, Any]) -> None:
    from icebook.spec.types import DATE, INT
    from icebook.spec.values import to_human

    _, mfs = _current_manifests(avro_spark_tables["warehouse"], "mor_v3")
    spark = {r["path"]: r for r in avro_spark_tables["mor_v3.manifests"]}
    compared = 0
    for m in mfs:
        assert m.partitions is not None
        for summary, s, type_ in zip(
            m.partitions, spark[m.manifest_path]["partition_summaries"], (INT, DATE), strict=True
        ):
            assert summary.lower_bound is not None and summary.upper_bound is not None
            assert to_human(decode_value(summary.lower_bound, type_), type_) == s["lower_bound"]
            assert to_human(decode_value(summary.upper_bound, type_), type_) == s["upper_bound"]
            compared += 1
    assert compared, "mor_v3 has no manifest partition summary: nothing was compared with Spark"


@pytest.mark.spark
@pytest.mark.parametrize("table", TABLES)
def test_all_manifests_matches_spark(avro_spark_tables: dict[str, Any], table: str) -> None:
    md = _metadata(avro_spark_tables["warehouse"], table)
    ours = set()
    for snap in md["snapshots"]:
        for m in read_manifest_list(FIO, snap["manifest-list"], format_version=md["format-version"]):
            ours.add((m.manifest_path, snap["snapshot-id"], m.added_snapshot_id, m.manifest_length))
    spark = {
        (r["path"], r["reference_snapshot_id"], r["added_snapshot_id"], r["length"])
        for r in avro_spark_tables[f"{table}.all_manifests"]
    }
    assert ours == spark


def _entries(warehouse: Path, table: str, decoder: str | None = None) -> list[dict[str, Any]]:
    _, mfs = _current_manifests(warehouse, table)
    rows = []
    for m in mfs:
        rows.extend(read_manifest_entries(FIO, m, decoder=decoder).to_pylist())
    return rows


def _spark_key(e: dict[str, Any]) -> tuple[str, int, int | None]:
    return (e["file_path"], e["status"], e.get("content_offset"))


def _map(value: Any) -> dict[int, Any] | None:
    if value is None:
        return None
    items = value.items() if isinstance(value, dict) else value
    return {int(k): (bytes(v) if isinstance(v, (bytes, bytearray)) else v) for k, v in items}


@pytest.mark.spark
@pytest.mark.parametrize("table", TABLES)
def test_entries_match_spark_entries(avro_spark_tables: dict[str, Any], table: str) -> None:
    ours = {}
    for e in _entries(avro_spark_tables["warehouse"], table):
        ours[_spark_key(e)] = e
    spark_rows = avro_spark_tables[f"{table}.entries"]
    assert len(ours) == len(spark_rows)
    for s in spark_rows:
        df = s["data_file"]
        key = (df["file_path"], s["status"], df.get("content_offset"))
        e = ours[key]
        for name in ("snapshot_id", "sequence_number", "file_sequence_number"):
            assert e[name] == s[name], (key, name)
        for name in (
            "content",
            "file_format",
            "spec_id",
            "record_count",
            "file_size_in_bytes",
            "sort_order_id",
            "referenced_data_file",
            "content_offset",
            "content_size_in_bytes",
            "first_row_id",
            "split_offsets",
            "equality_ids",
            "key_metadata",
        ):
            if name in df:
                assert e[name] == df[name], (key, name)
        for name in (
            "column_sizes",
            "value_counts",
            "null_value_counts",
            "nan_value_counts",
            "lower_bounds",
            "upper_bounds",
        ):
            assert _map(e[name]) == _map(df[name]), (key, name)
        assert e["partition"] == df.get("partition", {}), key  # Spark omits an empty partition


@pytest.mark.spark
@pytest.mark.parametrize("table", ("types_v1", "types_v2", "types_v3"))
def test_bounds_match_spark_readable_metrics(avro_spark_tables: dict[str, Any], table: str) -> None:
    md = _metadata(avro_spark_tables["warehouse"], table)
    schema = parse_struct(next(s for s in md["schemas"] if s["schema-id"] == md["current-schema-id"]))
    ours = {e["file_path"]: e for e in _entries(avro_spark_tables["warehouse"], table) if e["status"] != 2}
    checked = 0
    for s in avro_spark_tables[f"{table}.files"]:
        e = ours[s["file_path"]]
        for f in schema.fields:
            metrics = s["readable_metrics"][f.name]
            for ours_map, key in ((e["lower_bounds"], "lower_bound"), (e["upper_bounds"], "upper_bound")):
                raw = dict(ours_map).get(f.field_id)
                if raw is None:
                    assert metrics[key] is None
                    continue
                value = to_python_object(decode_value(raw, f.type), f.type)
                if isinstance(value, dt.datetime) and value.tzinfo is not None:
                    value = value.replace(tzinfo=None)  # Spark returns session-zone (UTC) naive datetimes
                expected = metrics[key]
                expected = bytes(expected) if isinstance(expected, bytearray) else expected
                assert value == expected, (table, f.name, key)
                checked += 1
    assert checked > 20


@pytest.mark.spark
@pytest.mark.parametrize("table", TABLES)
def test_all_decoders_give_equal_tables(avro_spark_tables: dict[str, Any], table: str) -> None:
    assert available_decoders()[0] == "polars-avro"
    _, mfs = _current_manifests(avro_spark_tables["warehouse"], table)
    for m in mfs:
        reference = read_manifest_entries(FIO, m, decoder="fastavro")
        assert reference.schema == entries_schema(reference.schema.field("partition").type)
        for decoder in available_decoders():
            assert read_manifest_entries(FIO, m, decoder=decoder).equals(reference), (m.manifest_path, decoder)
        assert read_manifest_entries(FIO, m).equals(reference)


@pytest.mark.spark
def test_projection_equals_full_table(avro_spark_tables: dict[str, Any]) -> None:
    _, mfs = _current_manifests(avro_spark_tables["warehouse"], "mor_v3")
    for m in mfs:
        full = read_manifest_entries(FIO, m)
        for columns in (["status", "sequence_number"], ["file_path", "first_row_id"], ["snapshot_id_inherited"]):
            part = read_manifest_entries(FIO, m, columns=columns)
            assert set(columns) <= set(part.column_names)
            for c in columns:
                assert part.column(c).equals(full.column(c))
    with pytest.raises(ValueError, match="unknown manifest entry columns"):
        read_manifest_entries(FIO, mfs[0], columns=["nope"])


@pytest.mark.spark
def test_inheritance_flags_and_values(avro_spark_tables: dict[str, Any]) -> None:
    wh = avro_spark_tables["warehouse"]
    _, mfs = _current_manifests(wh, "types_v3")
    for m in mfs:
        t = read_manifest_entries(FIO, m).to_pylist()
        assert all(r["sequence_number_inherited"] and r["sequence_number"] == m.sequence_number for r in t)
        assert all(r["first_row_id_inherited"] for r in t)
        expected = m.first_row_id
        assert expected is not None
        for r in t:  # "manifest's first_row_id plus the sum of record_count of preceding ... files"
            assert r["first_row_id"] == expected
            expected += r["record_count"]
    _, mfs = _current_manifests(wh, "rewrite_v2")
    rows = [r for m in mfs for r in read_manifest_entries(FIO, m).to_pylist()]
    existing = [r for r in rows if r["status"] == EntryStatus.EXISTING]
    assert existing and not any(r["sequence_number_inherited"] or r["file_sequence_number_inherited"] for r in existing)
    _, mfs = _current_manifests(wh, "types_v1")
    rows = [r for m in mfs for r in read_manifest_entries(FIO, m).to_pylist()]
    assert all(r["sequence_number"] == 0 and r["sequence_number_inherited"] for r in rows)
    assert all(r["content"] == 0 and r["first_row_id"] is None for r in rows)
    assert all(not r[flag] for r in rows for flag in ("first_row_id_inherited",))
    assert set(INHERITED_FLAGS) <= set(rows[0])


@pytest.mark.spark
def test_read_manifest_entry_matches_table_row(avro_spark_tables: dict[str, Any]) -> None:
    for table in ("types_v1", "types_v2", "mor_v3", "rewrite_v2"):
        _, mfs = _current_manifests(avro_spark_tables["warehouse"], table)
        compared = 0
        for m in mfs:
            rows = read_manifest_entries(FIO, m).to_pylist()
            for i, row in enumerate(rows):
                compared += 1
                e = read_manifest_entry(FIO, m, i)
                assert int(e.status) == row["status"]
                assert (e.snapshot_id, e.sequence_number, e.file_sequence_number) == (
                    row["snapshot_id"],
                    row["sequence_number"],
                    row["file_sequence_number"],
                )
                d = e.data_file
                assert (d.file_path, d.record_count, d.first_row_id, d.spec_id) == (
                    row["file_path"],
                    row["record_count"],
                    row["first_row_id"],
                    row["spec_id"],
                )
                assert d.lower_bounds == _map(row["lower_bounds"])
                assert list(d.partition) == list(row["partition"])
                if row["sequence_number_inherited"]:
                    assert "Sequence Number" in (e.explain("sequence_number") or "")
            with pytest.raises(NotFound):
                read_manifest_entry(FIO, m, len(rows))
        assert compared, f"{table}: no manifest entry was read, nothing was compared"


@pytest.mark.spark
def test_manifest_header(avro_spark_tables: dict[str, Any]) -> None:
    _, mfs = _current_manifests(avro_spark_tables["warehouse"], "mor_v3")
    deletes = next(m for m in mfs if m.content == ManifestContent.DELETES)
    h = read_manifest_header(FIO, deletes.manifest_path)
    assert h.format_version == 3 and h.content == ManifestContent.DELETES and h.partition_spec_id == 0
    assert [f["name"] for f in json.loads(h.partition_spec or "[]")] == ["id_bucket", "ts_day"]
    assert json.loads(h.schema or "{}")["type"] == "struct"
    assert h.codec == "deflate"
    h1 = read_manifest_header(FIO, _current_manifests(avro_spark_tables["warehouse"], "types_v1")[1][0].manifest_path)
    assert h1.format_version == 1 and h1.content is None


# ------------------------------------------------------------------ synthetic files


def _spark_manifest(wh: Path) -> tuple[ManifestFile, dict[str, Any], dict[str, str], list[dict[str, Any]]]:
    _, mfs = _current_manifests(wh, "mor_v3")
    m = next(m for m in mfs if m.content == ManifestContent.DATA)
    with open(m.manifest_path, "rb") as f:
        reader = fastavro.reader(f)
        schema = json.loads(reader.metadata["avro.schema"])
        meta = {k: v for k, v in reader.metadata.items() if not k.startswith("avro.")}
        records = list(reader)
    return m, schema, meta, records


@pytest.mark.spark
@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "zstandard"])
def test_codecs(avro_spark_tables: dict[str, Any], tmp_path: Path, codec: str) -> None:
    m, schema, meta, records = _spark_manifest(avro_spark_tables["warehouse"])
    path = tmp_path / f"codec-{codec}.avro"
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), records * 50, codec=codec, metadata=meta, sync_interval=2000)
    mf = replace(m, manifest_path=str(path), manifest_length=path.stat().st_size)
    reference = read_manifest_entries(FIO, mf, decoder="fastavro")
    assert reference.num_rows == len(records) * 50
    assert read_manifest_entries(FIO, mf, decoder="polars-avro").equals(reference)
    assert read_manifest_entries(FIO, mf).equals(reference)


@pytest.mark.spark
def test_errors_name_the_file(avro_spark_tables: dict[str, Any], tmp_path: Path) -> None:
    m, schema, meta, records = _spark_manifest(avro_spark_tables["warehouse"])
    missing = replace(m, manifest_path=str(tmp_path / "abc-m0.avro"))
    with pytest.raises(NotFound, match=r"abc-m0\.avro"):
        read_manifest_entries(FIO, missing)
    with pytest.raises(NotFound, match=r"abc-m0\.avro"):
        read_manifest_header(FIO, missing.manifest_path)

    data = Path(m.manifest_path).read_bytes()
    truncated = tmp_path / "trunc-m0.avro"
    truncated.write_bytes(data[: len(data) - 200])
    bad = replace(m, manifest_path=str(truncated))
    with pytest.raises(MetadataError, match=r"manifest .*trunc-m0\.avro: "):
        read_manifest_entries(FIO, bad)
    garbage = tmp_path / "garbage-m0.avro"
    garbage.write_bytes(b"not avro at all")
    with pytest.raises(MetadataError, match=r"manifest .*garbage-m0\.avro: corrupt Avro header"):
        read_manifest_entries(FIO, replace(m, manifest_path=str(garbage), manifest_length=garbage.stat().st_size))
    with pytest.raises(MetadataError, match=r"manifest list .*garbage-m0\.avro"):
        read_manifest_list(FIO, str(garbage), format_version=2)

    # A partition record with 1 field under a spec with 2 fields.
    part = schema["fields"][4]["type"]["fields"][3]["type"]
    part["fields"] = part["fields"][:1]
    for r in records:
        r["data_file"]["partition"] = {"id_bucket": r["data_file"]["partition"]["id_bucket"]}
    meta = {**meta, "partition-spec-id": "1"}
    arity = tmp_path / "abc-m0.avro"
    with open(arity, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), records, metadata=meta)
    with pytest.raises(MetadataError) as info:
        read_manifest_entries(FIO, replace(missing, manifest_length=arity.stat().st_size))
    assert str(info.value) == f"manifest {arity}: data_file.partition: expected 2 fields for spec 1, found 1"


@pytest.mark.spark
def test_unpartitioned_manifest_reads_with_fast_decoder(avro_spark_tables: dict[str, Any]) -> None:
    _, mfs = _current_manifests(avro_spark_tables["warehouse"], "rewrite_v2")
    compared = 0
    for m in mfs:
        t = read_manifest_entries(FIO, m, decoder="polars-avro")
        assert t.schema.field("partition").type == pa.struct([])
        assert t.equals(read_manifest_entries(FIO, m, decoder="fastavro"))
        compared += 1
    assert compared, "rewrite_v2 has no current manifest: no decoder was compared"


@pytest.mark.spark
def test_manifest_list_reads_from_bytes_only(avro_spark_tables: dict[str, Any], tmp_path: Path) -> None:
    """Manifests are decoded from FileIO bytes, so any FileIO (s3, in-memory) works."""
    m, *_ = _spark_manifest(avro_spark_tables["warehouse"])

    class MemoryIO:
        def __init__(self, files: dict[str, bytes]) -> None:
            self.files = files

        def read_bytes(self, path: str) -> bytes:
            return self.files[path]

        def open_input(self, path: str) -> Any:
            return pa.BufferReader(self.files[path])

    mem = MemoryIO({"s3://bucket/m.avro": Path(m.manifest_path).read_bytes()})
    moved = replace(m, manifest_path="s3://bucket/m.avro")
    assert read_manifest_entries(mem, moved).equals(read_manifest_entries(FIO, m))
    assert read_manifest_header(mem, "s3://bucket/m.avro").partition_spec_id == 0  # type: ignore[arg-type]
    assert io.BytesIO  # the decoders read from in-memory buffers
    shutil.rmtree(tmp_path, ignore_errors=True)


@pytest.mark.parametrize("entries", [0, 1, 2500])
@pytest.mark.parametrize("columns", [None, ["status", "data_file"], ["snapshot_id"]])
def test_the_workers_polars_avro_reader_gives_what_read_avro_gives(entries: int, columns: list[str] | None) -> None:
    # The worker calls polars-avro's reader without its polars frame (avro_decode.read_polars_avro): the same
    # columns, values and row order as read_avro, on stored blocks as the worker hands it them.
    import polars_avro
    from _synthetic import manifest_bytes

    from icebook.io.avro_decode import read_polars_avro
    from icebook.io.avro_header import check_framing, inflated, parse_container_header

    data = manifest_bytes(max(entries, 1))
    if entries == 0:
        meta, _, _ = parse_container_header(data)
        out = io.BytesIO()
        schema = fastavro.parse_schema(json.loads(meta["avro.schema"]))
        fastavro.writer(out, schema, [], codec="deflate")
        data = out.getvalue()
    stored = inflated(data, check_framing(data, "m.avro", kind="manifest"), "m.avro", kind="manifest")
    ours = read_polars_avro(stored, columns)
    theirs = polars_avro.read_avro(io.BytesIO(stored), columns=columns).to_arrow()
    assert ours.num_rows == theirs.num_rows == entries
    assert ours.schema.names == theirs.schema.names
    assert ours.cast(theirs.schema).equals(theirs)
