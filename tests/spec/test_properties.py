"""Table properties: typed readers with the reference implementation's defaults and one error policy
(``PropertyError`` naming the property and its value)."""

from __future__ import annotations

import pytest

from icebook.errors import IcebookError, PropertyError
from icebook.spec import properties
from icebook.spec.properties import READ, BoolProperty, IntProperty, MappedField, invalid_properties

INVALID = ["²", "-1", "abc", "", "1e99", "1" * 30, "١٢٣", " 5", "5 ", "0x10", "1.5", "+-1"]


@pytest.mark.parametrize("prop", READ, ids=lambda p: p.name)
def test_unset_properties_take_their_defaults(prop: properties.TableProperty) -> None:
    assert prop.read({}) == prop.default
    assert prop.read({"unrelated": "²"}) == prop.default


@pytest.mark.parametrize("prop", READ, ids=lambda p: p.name)
@pytest.mark.parametrize("raw", INVALID)
def test_every_invalid_value_is_one_error_naming_the_property_and_value(
    prop: properties.TableProperty, raw: str
) -> None:
    with pytest.raises(PropertyError) as info:
        prop.read({prop.name: raw})
    error = info.value
    assert isinstance(error, IcebookError)
    assert error.name == prop.name and error.value == raw
    assert str(error).startswith(f"table property {prop.name}={raw!r}: ")


def test_integers_are_ascii_digits_within_their_type_and_minimum() -> None:
    size = properties.TARGET_FILE_SIZE_BYTES
    assert size.read({size.name: "134217728"}) == 134217728
    assert size.read({size.name: "+7"}) == 7
    assert size.read({size.name: "0007"}) == 7
    assert size.read({size.name: str(2**63 - 1)}) == 2**63 - 1
    for raw, problem in [("0", "at least 1"), (str(2**63), "range of a long"), ("9" * 5000, "range of a long")]:
        with pytest.raises(PropertyError, match=problem):
            size.read({size.name: raw})
    keep = properties.MIN_SNAPSHOTS_TO_KEEP
    assert keep.read({keep.name: str(2**31 - 1)}) == 2**31 - 1
    with pytest.raises(PropertyError, match="range of an int"):
        keep.read({keep.name: str(2**31)})
    age = properties.MAX_SNAPSHOT_AGE_MS
    assert age.read({age.name: "0"}) == 0


def test_booleans_are_true_or_false_in_any_case() -> None:
    gc = properties.GC_ENABLED
    assert gc.read({gc.name: "FALSE"}) is False and gc.read({gc.name: "True"}) is True
    for raw in ("yes", "1", "false ", "ｔｒｕｅ"):
        with pytest.raises(PropertyError, match="not a boolean"):
            gc.read({gc.name: raw})


def test_name_mapping_is_read_as_appendix_c_says() -> None:
    mapping = properties.NAME_MAPPING
    raw = (
        '[{"field-id": 1, "names": ["id", "record_id"]}, {"names": ["x"], "fields": [{"field-id": 3, "names": ["y"]}]}]'
    )
    assert mapping.read({mapping.name: raw}) == (
        MappedField(names=("id", "record_id"), field_id=1),
        MappedField(names=("x",), fields=(MappedField(names=("y",), field_id=3),)),
    )
    for bad in ('{"names": []}', '[{"field-id": 1}]', '[{"field-id": "1", "names": ["a"]}]', "[" * 10_000):
        with pytest.raises(PropertyError, match="not a name mapping"):
            mapping.read({mapping.name: bad})


def test_invalid_properties_lists_each_problem_once() -> None:
    props = {p.name: "²" for p in READ} | {"unrelated": "²"}
    problems = invalid_properties(props)
    assert [e.name for e in problems] == [p.name for p in READ]
    assert invalid_properties({properties.GC_ENABLED.name: "false"}) == ()


def test_readers_are_typed_classes() -> None:
    assert all(isinstance(p, IntProperty | BoolProperty | properties.NameMappingProperty) for p in READ)
    assert len({p.name for p in READ}) == len(READ)
