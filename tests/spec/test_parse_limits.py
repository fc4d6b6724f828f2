"""What metadata parsing refuses: values beyond their spec type, unrepresentable times, deep nesting,
non-numeric summary metrics, loose JSON types, duplicate snapshots; and parent cycles it records."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from _support.metadata_examples import FILE
from _support.metadata_examples import v2 as shared_v2

from icebook.errors import MetadataError
from icebook.spec._json import MAX_NESTING
from icebook.spec.metadata import parse_metadata_json, parse_table_metadata
from icebook.spec.types import parse_type


def v2() -> dict[str, Any]:
    """A private copy of the v2 example (its schema fields are shared objects)."""
    return copy.deepcopy(shared_v2())


def _parse(doc: dict[str, Any]) -> Any:
    return parse_table_metadata(doc, file=FILE)


def _error(doc: dict[str, Any]) -> str:
    with pytest.raises(MetadataError) as info:
        _parse(doc)
    return str(info.value)


@pytest.mark.parametrize(
    ("path", "value", "fits"),
    [
        (("snapshots", 0, "parent-snapshot-id"), 2**63 - 1, True),
        (("snapshots", 0, "parent-snapshot-id"), 2**63, False),
        (("snapshots", 0, "parent-snapshot-id"), -(2**63), True),
        (("snapshots", 0, "sequence-number"), 2**70, False),
        (("last-column-id",), 2**31 - 1, True),
        (("last-column-id",), 2**31, False),
        (("schemas", 0, "fields", 0, "id"), 2**31, False),
        (("partition-specs", 1, "fields", 0, "field-id"), -(2**31) - 1, False),
        (("snapshots", 0, "timestamp-ms"), 253_402_300_799_999, True),
        (("snapshots", 0, "timestamp-ms"), 253_402_300_800_000, False),
        (("snapshots", 0, "timestamp-ms"), -62_135_596_800_000, True),
        (("last-updated-ms",), -62_135_596_800_001, False),
        (("refs", "audit", "max-snapshot-age-ms"), 2**64, False),
    ],
)
def test_integers_fit_the_type_appendix_c_gives_them(path: tuple[Any, ...], value: int, fits: bool) -> None:
    doc = v2()
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    if fits:
        _parse(doc)
        return
    message = _error(doc)
    where = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path).lstrip(".")
    assert message.startswith(f"metadata {FILE}: {where}: "), message


def test_json_types_are_strict_where_a_wrong_one_would_mislead() -> None:
    doc = v2()
    doc["schemas"][0]["fields"][0]["required"] = "false"  # bool("false") is True
    assert "schemas[0].fields[0].required: expected true or false" in _error(doc)
    doc = v2()
    doc["schemas"][0]["fields"][0]["id"] = "1"
    assert "schemas[0].fields[0].id: expected an integer id" in _error(doc)


@pytest.mark.parametrize(
    ("type_text", "ok"),
    [
        ("decimal(38, 10)", True),
        ("decimal(39, 0)", False),
        ("decimal(0, 0)", False),
        ("fixed[16]", True),
        ("fixed[0]", False),
    ],
)
def test_decimal_precision_and_fixed_length(type_text: str, ok: bool) -> None:
    if ok:
        parse_type(type_text, file=FILE)
    else:
        with pytest.raises(MetadataError, match=r"invalid"):
            parse_type(type_text, file=FILE)


def _nested(depth: int) -> dict[str, Any]:
    inner: Any = "int"
    for i in range(depth):
        inner = {"type": "list", "element-id": 100 + i, "element-required": False, "element": inner}
    return inner


def test_type_nesting_is_bounded() -> None:
    parse_type(_nested(MAX_NESTING), file=FILE)
    with pytest.raises(MetadataError, match=rf"types nested more than {MAX_NESTING} levels"):
        parse_type(_nested(MAX_NESTING + 1), file=FILE)


def test_kept_json_and_defaults_are_bounded_too() -> None:
    doc = v2()
    deep: Any = 0
    for _ in range(MAX_NESTING + 1):
        deep = [deep]
    doc["schemas"][1]["fields"][3]["initial-default"] = deep
    assert "schemas[1].fields[3].initial-default" in _error(doc)
    doc = v2()
    doc["x-vendor"] = deep
    assert f"metadata {FILE}: x-vendor" in _error(doc)


def test_json_deeper_than_the_parser_allows_and_huge_literals() -> None:
    deep = b'{"format-version": 2, "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(MetadataError, match=rf"metadata {FILE}: JSON nested too deeply"):
        parse_metadata_json(deep, file=FILE)
    huge = json.dumps(v2()).replace('"last-column-id": 4', '"last-column-id": ' + "9" * 5000).encode()
    with pytest.raises(MetadataError, match=rf"metadata {FILE}: not valid JSON"):
        parse_metadata_json(huge, file=FILE)


@pytest.mark.parametrize("value", ["abc", "1.5", "--3", "", "9" * 30, "٣"])
def test_summary_metrics_are_counts(value: str) -> None:
    doc = v2()
    doc["snapshots"][0]["summary"]["total-records"] = value
    assert "snapshots[0].summary.total-records: expected the text of an integer count" in _error(doc)


def test_other_summary_keys_are_free_text() -> None:
    doc = v2()
    doc["snapshots"][0]["summary"]["spark.app.id"] = "local-1234 <b>"
    doc["snapshots"][0]["summary"]["added-data-files"] = "1"
    summary = _parse(doc).snapshots[0].summary
    assert summary["spark.app.id"] == "local-1234 <b>"  # kept as written, next to the checked counts
    assert summary["added-data-files"] == "1"


def test_duplicate_snapshot_ids() -> None:
    doc = v2()
    doc["snapshots"].append(copy.deepcopy(doc["snapshots"][0]))
    assert "snapshots[3].snapshot-id: duplicate snapshot id 10" in _error(doc)


@pytest.mark.parametrize(
    ("key", "id_key", "what"), [("schemas", "schema-id", "schema"), ("partition-specs", "spec-id", "spec")]
)
def test_duplicate_schema_and_spec_ids(key: str, id_key: str, what: str) -> None:
    doc = v2()
    doc[key].append(copy.deepcopy(doc[key][0]))
    n = len(doc[key]) - 1
    assert f"{key}[{n}].{id_key}: duplicate {what} id {doc[key][0][id_key]}" in _error(doc)


def test_parent_cycles_are_recorded_when_the_file_is_parsed() -> None:
    doc = v2()
    doc["snapshots"][0]["parent-snapshot-id"] = 30  # 10 -> 30 -> 20 -> 10
    metadata = _parse(doc)
    assert [c.snapshot_ids for c in metadata.parent_cycles] == [(10, 30, 20)]
    assert metadata.parent_cycles[0].where == "snapshots[0].parent-snapshot-id"
    assert metadata.parent_cycle(20) is metadata.parent_cycles[0]
    assert metadata.parent_cycles[0].describe() == "parent-snapshot-id links form a cycle: 10 -> 30 -> 20 -> 10"


def test_a_snapshot_that_is_its_own_parent() -> None:
    doc = v2()
    doc["snapshots"][1]["parent-snapshot-id"] = 20
    assert [c.snapshot_ids for c in _parse(doc).parent_cycles] == [(20,)]


def test_sound_history_has_no_cycles() -> None:
    assert _parse(v2()).parent_cycles == ()
