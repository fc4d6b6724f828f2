"""Table metadata parsing for v1, v2 and v3 (spec: "Table Metadata Fields", Appendix C, E)."""

from __future__ import annotations

import copy
import gzip
import json
from typing import Any

import pytest
from _support.metadata_examples import FILE, SCHEMA_FIELDS, V1, v2, v3

from icebook.errors import MetadataError, NotFound, UnsupportedFeature
from icebook.spec.metadata import (
    TableMetadata,
    implied_main_branch,
    no_current_snapshot,
    parse_metadata_json,
    parse_table_metadata,
)
from icebook.spec.partitioning import (
    PartitionField,
    assign_v1_partition_field_ids,
    is_unpartitioned,
    partition_type,
)
from icebook.spec.snapshots import Branch, Operation, Tag, snapshot_sequence_number
from icebook.spec.sort_order import NullOrder, SortDirection
from icebook.spec.transforms import BucketTransform, DayTransform, IdentityTransform, UnknownTransform
from icebook.spec.types import DATE, INT, LONG, PrimitiveType

# ---------------------------------------------------------------- v1


def test_v1_defaults_applied_and_recorded() -> None:
    md = parse_table_metadata(copy.deepcopy(V1), file=FILE)
    assert md.format_version == 1
    assert md.table_uuid is None  # optional in v1, never invented
    assert md.last_partition_id is None
    assert md.default_sort_order_id is None and md.default_sort_order() is None
    assert md.last_sequence_number == 0
    assert list(md.schemas) == [0] and md.current_schema_id == 0
    assert md.current_schema().find_column_name(3) == "ts"
    spec = md.default_spec()
    assert md.default_spec_id == 0 and spec.spec_id == 0
    assert [f.field_id for f in spec.fields] == [1000, 1001]
    assert all(f.field_id_defaulted for f in spec.fields)
    assert md.refs["main"] == Branch(snapshot_id=3051729675574597004, implied=True)
    snap = md.current_snapshot()
    assert snap is not None and snap.manifest_list is None
    assert snap.manifests == ("/wh/db/t/metadata/m0.avro",)
    assert snap.sequence_number is None and snapshot_sequence_number(snap) == 0
    rules = {d.rule for d in md.defaults_applied}
    assert rules == {
        "v1_schemas",
        "v1_partition_specs",
        "v1_last_sequence_number",
        "assign_v1_partition_field_ids",
        "implied_main_branch",
    }
    fields = {d.field for d in md.defaults_applied}
    assert {"last-sequence-number", "refs.main", "partition-spec[1].field-id", "schema.schema-id"} <= fields
    assert "wire_keys" not in md.extras and "schema" in md.wire_keys and "refs" not in md.wire_keys


def test_v1_minus_one_means_no_current_snapshot() -> None:
    raw = copy.deepcopy(V1) | {"current-snapshot-id": -1, "snapshots": []}
    md = parse_table_metadata(raw, file=FILE)
    assert md.current_snapshot_id is None and md.current_snapshot() is None
    assert "main" not in md.refs
    assert any(d.rule == "no_current_snapshot" for d in md.defaults_applied)
    assert no_current_snapshot(-1) is None and no_current_snapshot(5) == 5


def test_v1_with_schemas_and_specs_lists() -> None:
    raw = copy.deepcopy(V1)
    raw["schemas"] = [{"type": "struct", "schema-id": 5, "fields": SCHEMA_FIELDS}]
    raw["current-schema-id"] = 5
    raw["partition-specs"] = [{"spec-id": 2, "fields": [{"source-id": 1, "name": "id", "transform": "identity"}]}]
    raw["default-spec-id"] = 2
    md = parse_table_metadata(raw, file=FILE)
    assert list(md.schemas) == [5] and md.current_schema_id == 5
    assert md.default_spec().fields[0].field_id == 1000
    assert any(d.field == "partition-specs[0].fields[0].field-id" for d in md.defaults_applied)


def test_assign_v1_partition_field_ids_continues_after_written_ids() -> None:
    def pf(fid: int, defaulted: bool) -> PartitionField:
        return PartitionField(
            source_id=1,
            source_ids=(1,),
            field_id=fid,
            name="f",
            transform=IdentityTransform(),
            field_id_defaulted=defaulted,
        )

    out = assign_v1_partition_field_ids([pf(-1, True), pf(1005, False), pf(-1, True)])
    assert [f.field_id for f in out] == [1000, 1005, 1006]


# ---------------------------------------------------------------- v2


def test_v2_full() -> None:
    md = parse_table_metadata(v2(), file=FILE)
    assert md.table_uuid == "fb072c92-a02b-11e9-ae9c-1bb7bc9eca94"
    assert md.last_sequence_number == 3
    assert md.defaults_applied == ()
    assert md.current_schema().schema_id == 1 and md.current_schema().identifier_field_ids == (1,)
    assert md.schema_by_id(0).highest_field_id == 3
    assert list(md.partition_specs) == [0, 1]
    assert is_unpartitioned(md.spec_by_id(0)) and not md.default_spec().is_unpartitioned
    spec = md.default_spec()
    assert isinstance(spec.fields[0].transform, DayTransform)
    assert spec.fields[1].transform == BucketTransform(16)
    ptype = partition_type(spec, md.current_schema())
    assert [(f.field_id, f.name, f.type) for f in ptype.fields] == [(1000, "ts_day", DATE), (1001, "id_bucket", INT)]
    order = md.sort_order_by_id(1)
    assert md.default_sort_order() == order
    assert order.fields[0].direction is SortDirection.ASC and order.fields[1].null_order is NullOrder.NULLS_LAST
    assert md.sort_order_by_id(0).is_unsorted
    assert [s.snapshot_id for s in md.snapshots] == [10, 20, 30]
    cur = md.current_snapshot()
    assert cur is not None and cur.snapshot_id == 30 and cur.parent_snapshot_id == 20
    assert cur.operation == Operation.DELETE and cur.operation == "delete"
    assert md.snapshot_by_id(10).summary == {"operation": "append", "added-data-files": "1"}
    assert md.snapshot_by_id(10).parent_snapshot_id is None
    audit = md.refs["audit"]
    assert isinstance(audit, Branch) and audit.min_snapshots_to_keep == 2 and audit.max_ref_age_ms == 604800000
    tag = md.refs["v1.0"]
    assert isinstance(tag, Tag) and tag.snapshot_id == 10 and tag.type == "tag"
    assert isinstance(md.refs["main"], Branch) and not md.refs["main"].implied
    assert [e.snapshot_id for e in md.snapshot_log] == [10, 30]
    assert md.metadata_log[0].metadata_file.endswith("00000-x.metadata.json")
    stats = md.statistics[0]
    assert stats.blob_metadata[0].fields == (1,) and stats.blob_metadata[0].properties == {"ndv": "3"}
    assert md.partition_statistics[0].file_size_in_bytes == 100
    assert md.extras == {"x-vendor": {"kept": True}}
    assert md.properties["commit.retry.num-retries"] == "4"
    assert md.next_row_id is None and md.encryption_keys == ()


def test_v2_lookups_raise_not_found() -> None:
    md = parse_table_metadata(v2(), file=FILE)
    with pytest.raises(NotFound, match="snapshot 99"):
        md.snapshot_by_id(99)
    with pytest.raises(NotFound, match="schema 7"):
        md.schema_by_id(7)
    with pytest.raises(NotFound, match="partition spec 7"):
        md.spec_by_id(7)
    with pytest.raises(NotFound, match="sort order 7"):
        md.sort_order_by_id(7)


def test_model_is_frozen() -> None:
    md = parse_table_metadata(v2(), file=FILE)
    with pytest.raises(AttributeError):
        md.location = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        md.schemas[5] = md.schemas[0]  # type: ignore[index]
    assert isinstance(md.snapshots, tuple)


def test_v2_refs_absent_implies_main() -> None:
    raw = v2()
    del raw["refs"]
    md = parse_table_metadata(raw, file=FILE)
    assert md.refs == {"main": Branch(snapshot_id=30, implied=True)}
    assert [str(d) for d in md.defaults_applied] == ["refs.main = branch -> 30 (implied_main_branch)"]
    assert implied_main_branch(None, {}) is None


def test_unknown_nested_fields_are_kept() -> None:
    raw = v2()
    raw["snapshots"][0]["x-engine"] = "trino"
    raw["refs"]["v1.0"]["min-snapshots-to-keep"] = 3  # branch-only key on a tag: kept, not dropped
    raw["schemas"][0]["x-doc"] = "s"
    md = parse_table_metadata(raw, file=FILE)
    assert md.snapshot_by_id(10).extras == {"x-engine": "trino"}
    assert md.refs["v1.0"].extras == {"min-snapshots-to-keep": 3}
    assert md.schema_by_id(0).extras == {"x-doc": "s"}


# ---------------------------------------------------------------- v3


def test_v3_fields() -> None:
    md = parse_table_metadata(v3(), file=FILE)
    assert md.format_version == 3 and md.next_row_id == 12
    snap = md.snapshot_by_id(30)
    assert (snap.first_row_id, snap.added_rows, snap.key_id) == (8, 4, "k1")
    key = md.encryption_keys[0]
    assert (key.key_id, key.encrypted_key_metadata, key.encrypted_by_id) == ("k1", "aWNlYmVyZwo=", "kms")
    multi = md.default_spec().fields[2]
    assert multi.source_id is None and multi.source_ids == (1, 2)
    assert isinstance(multi.transform, UnknownTransform) and str(multi.transform) == "zorder"
    ptype = partition_type(md.default_spec(), md.current_schema())
    assert ptype.fields[2].type == PrimitiveType("unknown")


def test_v3_encryption_key_appendix_c_spelling() -> None:
    raw = v3()
    raw["encryption-keys"] = [{"key-id": "5f819b", "key-metadata": "aWNlYmVyZwo="}]
    md = parse_table_metadata(raw, file=FILE)
    assert md.encryption_keys[0].encrypted_key_metadata == "aWNlYmVyZwo="


def test_v3_requires_next_row_id() -> None:
    raw = v3()
    del raw["next-row-id"]
    with pytest.raises(MetadataError) as err:
        parse_table_metadata(raw, file=FILE)
    assert str(err.value) == f"metadata {FILE}: next-row-id: missing"


# ---------------------------------------------------------------- errors


def test_missing_manifest_list_names_file_and_field() -> None:
    raw = v3()
    del raw["snapshots"][2]["manifest-list"]
    with pytest.raises(MetadataError) as err:
        parse_table_metadata(raw, file=FILE)
    assert str(err.value) == f"metadata {FILE}: snapshots[2].manifest-list: missing"
    assert err.value.file == FILE and err.value.field == "snapshots[2].manifest-list"


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda m: m.pop("location"), "location"),
        (lambda m: m.pop("table-uuid"), "table-uuid"),
        (lambda m: m.pop("last-sequence-number"), "last-sequence-number"),
        (lambda m: m.pop("current-schema-id"), "current-schema-id"),
        (lambda m: m.pop("sort-orders"), "sort-orders"),
        (lambda m: m["snapshots"][1].pop("timestamp-ms"), "snapshots[1].timestamp-ms"),
        (lambda m: m["snapshots"][0]["summary"].pop("operation"), "snapshots[0].summary.operation"),
        (lambda m: m["schemas"][1].pop("schema-id"), "schemas[1].schema-id"),
        (lambda m: m["partition-specs"][1]["fields"][0].pop("field-id"), "partition-specs[1].fields[0].field-id"),
        (lambda m: m["refs"]["audit"].pop("type"), "refs.audit.type"),
        (lambda m: m["metadata-log"][0].pop("metadata-file"), "metadata-log[0].metadata-file"),
    ],
)
def test_missing_required_field(mutate: Any, field: str) -> None:
    raw = v2()
    mutate(raw)
    with pytest.raises(MetadataError) as err:
        parse_table_metadata(raw, file=FILE)
    assert err.value.file == FILE
    assert err.value.field == field
    assert str(err.value) == f"metadata {FILE}: {field}: missing"


def test_wrong_types() -> None:
    raw = v2()
    raw["snapshots"][1]["timestamp-ms"] = "yesterday"
    with pytest.raises(MetadataError, match=r"snapshots\[1\]\.timestamp-ms: expected an integer, found string"):
        parse_table_metadata(raw, file=FILE)
    raw = v2()
    raw["last-column-id"] = True
    with pytest.raises(MetadataError, match="last-column-id: expected an integer, found boolean"):
        parse_table_metadata(raw, file=FILE)
    raw = v2()
    raw["sort-orders"][1]["fields"][0]["direction"] = "up"
    with pytest.raises(MetadataError, match=r"sort-orders\[1\]\.fields\[0\]\.direction"):
        parse_table_metadata(raw, file=FILE)


def test_ref_to_missing_snapshot() -> None:
    raw = v2()
    raw["refs"]["audit"]["snapshot-id"] = 404
    with pytest.raises(MetadataError) as err:
        parse_table_metadata(raw, file=FILE)
    assert err.value.field == "refs.audit.snapshot-id"
    assert "'audit'" in str(err.value) and "404" in str(err.value) and FILE in str(err.value)


def test_current_snapshot_must_exist() -> None:
    raw = v2()
    raw["current-snapshot-id"] = 404
    with pytest.raises(MetadataError) as err:
        parse_table_metadata(raw, file=FILE)
    assert err.value.field == "current-snapshot-id" and "404" in str(err.value)


def test_current_snapshot_must_match_main() -> None:
    raw = v2()
    raw["current-snapshot-id"] = 20
    with pytest.raises(MetadataError, match="main"):
        parse_table_metadata(raw, file=FILE)


def test_dangling_schema_and_spec_ids() -> None:
    raw = v2()
    raw["current-schema-id"] = 9
    with pytest.raises(MetadataError, match="current-schema-id: schema 9"):
        parse_table_metadata(raw, file=FILE)
    raw = v2()
    raw["default-spec-id"] = 9
    with pytest.raises(MetadataError, match="default-spec-id: spec 9"):
        parse_table_metadata(raw, file=FILE)


@pytest.mark.parametrize("version", [0, 4, 99])
def test_unsupported_format_version(version: int) -> None:
    raw = v2() | {"format-version": version}
    with pytest.raises(UnsupportedFeature) as err:
        parse_table_metadata(raw, file=FILE)
    assert FILE in str(err.value) and str(version) in str(err.value)


def test_missing_format_version() -> None:
    raw = v2()
    del raw["format-version"]
    with pytest.raises(MetadataError, match="format-version: missing"):
        parse_table_metadata(raw, file=FILE)


# ---------------------------------------------------------------- bytes


def test_parse_metadata_json_plain_and_gzip() -> None:
    data = json.dumps(v2()).encode()
    assert isinstance(parse_metadata_json(data, file=FILE), TableMetadata)
    md = parse_metadata_json(gzip.compress(data), file=FILE)
    assert md.current_snapshot_id == 30


def test_corrupt_json_names_line_and_column() -> None:
    text = json.dumps(v2(), indent=2).replace('"location":', '"location"', 1)
    with pytest.raises(MetadataError) as err:
        parse_metadata_json(text.encode(), file=FILE)
    msg = str(err.value)
    assert msg.startswith(f"metadata {FILE}: not valid JSON at line ")
    line = text[: text.index('"location"')].count("\n") + 1
    assert f"line {line} column" in msg


def test_truncated_json() -> None:
    data = json.dumps(v2()).encode()
    for cut in (len(data) // 2, len(data) - 1, 1):
        with pytest.raises(MetadataError, match="truncated") as err:
            parse_metadata_json(data[:cut], file=FILE)
        assert FILE in str(err.value)


def test_truncated_gzip() -> None:
    data = gzip.compress(json.dumps(v2()).encode())
    with pytest.raises(MetadataError, match="truncated gzip") as err:
        parse_metadata_json(data[: len(data) // 2], file=FILE)
    assert FILE in str(err.value)


def test_other_bad_bytes() -> None:
    with pytest.raises(MetadataError, match="empty file"):
        parse_metadata_json(b"", file=FILE)
    with pytest.raises(MetadataError, match="UTF-8"):
        parse_metadata_json(b'{"a": "\xff"}', file=FILE)
    with pytest.raises(MetadataError, match="top level"):
        parse_metadata_json(b"[1, 2]", file=FILE)


def test_partition_type_with_dropped_source() -> None:
    md = parse_table_metadata(v2(), file=FILE)
    spec = md.default_spec()
    narrow = md.schema_by_id(0)
    assert partition_type(spec, narrow).fields[1].type == INT
    # identity of a long keeps the source type
    raw = v2()
    raw["partition-specs"][1]["fields"][1]["transform"] = "identity"
    md2 = parse_table_metadata(raw, file=FILE)
    assert partition_type(md2.default_spec(), md2.current_schema()).fields[1].type == LONG
    raw["partition-specs"][1]["fields"][1]["source-id"] = 77
    md3 = parse_table_metadata(raw, file=FILE)
    with pytest.raises(NotFound, match="source column id 77"):
        partition_type(md3.default_spec(), md3.current_schema())
    raw["partition-specs"][1]["fields"][1]["transform"] = "void"
    md4 = parse_table_metadata(raw, file=FILE)
    assert partition_type(md4.default_spec(), md4.current_schema()).fields[1].type == INT


def test_a_snapshot_lacking_its_sequence_number_after_a_parent_with_one_is_an_error() -> None:
    # Found by the fuzz test: a byte flipped in the key ("sequence-num+er") read as the v1 default, 0.
    raw = v2()
    del raw["snapshots"][1]["sequence-number"]
    with pytest.raises(MetadataError, match=r"snapshots\[1\]\.sequence-number: missing, though its parent 10"):
        parse_table_metadata(raw, file=FILE)
    upgraded = v2()  # snapshots from before an upgrade from v1 lack it: the first, whose parent is none
    del upgraded["snapshots"][0]["sequence-number"]
    assert parse_table_metadata(upgraded, file=FILE).snapshots[0].sequence_number is None
