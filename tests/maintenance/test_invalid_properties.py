"""Every table property icebook reads, set to invalid values on a copy of a scenario table: every view
answers or raises one ``IcebookError`` naming the property and its value, the views that need the
property raise, and ``health()`` always answers and lists the invalid property as a finding."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from _copies import relocate_table

import icebook
from icebook.engines.arrow import _ids_of
from icebook.errors import IcebookError, PropertyError
from icebook.spec import properties
from icebook.spec.properties import READ
from icebook.table import Table

pytestmark = pytest.mark.spark

INVALID = ["²", "-1", "abc", "", "1e99", "1" * 30, "١٢٣"]

# The views that read each property, so they must raise when it is invalid.
NEEDS: dict[str, set[str]] = {
    properties.TARGET_FILE_SIZE_BYTES.name: {"compaction_preview"},
    properties.DELETE_TARGET_FILE_SIZE_BYTES.name: {"delete_rewrite_preview"},
    properties.MANIFEST_TARGET_SIZE_BYTES.name: {"manifest_rewrite_preview"},
    properties.MAX_SNAPSHOT_AGE_MS.name: {"expire_preview"},
    properties.MIN_SNAPSHOTS_TO_KEEP.name: {"expire_preview"},
    properties.MAX_REF_AGE_MS.name: {"expire_preview"},
    properties.GC_ENABLED.name: {"expire_preview", "orphans"},
}

VIEWS: dict[str, Callable[[Table], Any]] = {
    "compaction_preview": lambda t: t.maintenance.compaction_preview(),
    "manifest_rewrite_preview": lambda t: t.maintenance.manifest_rewrite_preview(),
    "delete_rewrite_preview": lambda t: t.maintenance.delete_rewrite_preview(),
    "expire_preview": lambda t: t.maintenance.expire_preview(),
    "orphans": lambda t: t.maintenance.orphans(),
    "files": lambda t: t.inspect.files(),
    "scan": lambda t: t.scan().explain(),
    "read": lambda t: t.read(),
}


@pytest.fixture(scope="module")
def copied(scenario_locations: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of a scenario table with data, position and equality deletes and several snapshots."""
    return relocate_table(scenario_locations["equality_deletes"], tmp_path_factory.mktemp("wh") / "db" / "t")


def _with_property(location: Path, name: str, value: str) -> Table:
    """The copy with one property of its current metadata file set to ``value`` (the others as written)."""
    table = icebook.open(str(location))
    path = Path(table.metadata_location)
    document = json.loads(path.read_text())
    original = table.metadata.properties
    document["properties"] = {k: v for k, v in original.items() if k not in {p.name for p in READ}} | {name: value}
    path.write_text(json.dumps(document))
    return icebook.open(str(location))


@pytest.mark.parametrize("prop", READ, ids=lambda p: p.name)
@pytest.mark.parametrize("value", INVALID)
def test_views_answer_or_name_the_invalid_property(copied: Path, prop: properties.TableProperty, value: str) -> None:
    t = _with_property(copied, prop.name, value)
    report = t.maintenance.health()
    assert [(e.name, e.value) for e in report.invalid_properties] == [(prop.name, value)]
    [finding] = [f for f in report.findings if f.area == "properties"]
    assert prop.name in finding.title and repr(value) in finding.title
    needed = NEEDS.get(prop.name, set())
    for name, view in VIEWS.items():
        try:
            view(t)
        except IcebookError as exc:
            assert isinstance(exc, PropertyError), (name, exc)
            assert exc.name == prop.name and exc.value == value, (name, exc)
            assert f"{prop.name}={value!r}" in str(exc)
        else:
            assert name not in needed, f"{name} answered with {prop.name}={value!r}"


def test_valid_properties_change_what_health_measures(copied: Path) -> None:
    t = _with_property(copied, properties.MANIFEST_TARGET_SIZE_BYTES.name, "1024")
    report = t.maintenance.health()
    assert not report.invalid_properties and report.manifests.target_size_bytes == 1024
    assert t.maintenance.manifest_rewrite_preview().parts[0].target_size_bytes == 1024


def test_files_without_field_ids_are_read_through_the_name_mapping_or_name_it(copied: Path) -> None:
    """The name mapping matters only for a file without field ids: there it maps columns, or its
    invalid value is the error."""
    metadata = icebook.open(str(copied)).metadata
    no_ids = pa.schema([pa.field("x", pa.int64()), pa.field("y", pa.string())])
    name = properties.NAME_MAPPING.name
    mapped = replace(metadata, properties={name: json.dumps([{"field-id": 7, "names": ["y", "why"]}])})
    assert {i: f.name for i, f in _ids_of(no_ids, mapped, "f.parquet").items()} == {7: "y"}
    for value in INVALID:
        with pytest.raises(PropertyError) as info:
            _ids_of(no_ids, replace(metadata, properties={name: value}), "f.parquet")
        assert info.value.name == name and info.value.value == value
