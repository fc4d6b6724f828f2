"""The table properties icebook reads, each with its type, its default and one way to fail.

Table properties are a string map (spec: "Table Metadata Fields", ``properties``); their names and
defaults are the reference implementation's (``TableProperties``), except ``schema.name-mapping.default``
and the retention properties, which the spec itself names ("Column Projection", "Snapshot Retention
Policy"). Every reader here parses strictly and raises one ``PropertyError`` naming the property and
its value:

- integers are ASCII digits with an optional sign (no other digits, exponents, spaces or empty
  strings), within the range of the reference implementation's type (``int`` 32 bits, ``long`` 64),
  and at least the property's minimum (a size must be positive);
- booleans are ``true`` or ``false`` in any case;
- the name mapping is the JSON of Appendix C ("Name Mapping Serialization").

A property that is not set takes its default. ``invalid_properties`` lists every problem at once,
for views that report them instead of failing (the health report).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from icebook.errors import PropertyError
from icebook.text import DAY_MS

_INTEGER = re.compile(r"[+-]?[0-9]+")  # [0-9] is ASCII only: no '²', no Arabic-Indic digits
INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class IntProperty:
    """An integer property: ``int`` (32 bits) or ``long`` (64 bits) in the reference implementation."""

    name: str
    default: int
    minimum: int
    maximum: int = LONG_MAX

    def parse(self, raw: str) -> int:
        if not _INTEGER.fullmatch(raw):
            raise PropertyError(self.name, raw, "not an integer (ASCII digits with an optional sign)")
        digits = raw.lstrip("+-").lstrip("0")
        value = int(raw) if len(digits) <= 19 else LONG_MAX + 1  # int() refuses thousands of digits
        if value > self.maximum or value < -self.maximum - 1:
            kind = "an int" if self.maximum == INT_MAX else "a long"
            raise PropertyError(self.name, raw, f"out of the range of {kind}")
        if value < self.minimum:
            raise PropertyError(self.name, raw, f"must be at least {self.minimum}")
        return value

    def read(self, properties: Mapping[str, str]) -> int:
        raw = properties.get(self.name)
        return self.default if raw is None else self.parse(raw)


@dataclass(frozen=True, slots=True)
class BoolProperty:
    name: str
    default: bool

    def parse(self, raw: str) -> bool:
        lowered = raw.lower()
        if lowered not in ("true", "false"):
            raise PropertyError(self.name, raw, "not a boolean (true or false)")
        return lowered == "true"

    def read(self, properties: Mapping[str, str]) -> bool:
        raw = properties.get(self.name)
        return self.default if raw is None else self.parse(raw)


@dataclass(frozen=True, slots=True, kw_only=True)
class MappedField:
    """One field of a name mapping: the names a column may have in a file without field ids."""

    names: tuple[str, ...]
    field_id: int | None = None
    fields: tuple[MappedField, ...] = ()


@dataclass(frozen=True, slots=True)
class NameMappingProperty:
    name: str

    def parse(self, raw: str) -> tuple[MappedField, ...]:
        try:
            return _mapped_fields(json.loads(raw), "")
        except (ValueError, RecursionError) as exc:  # json.JSONDecodeError is a ValueError
            raise PropertyError(self.name, raw, f"not a name mapping: {exc}") from None

    def read(self, properties: Mapping[str, str]) -> tuple[MappedField, ...] | None:
        raw = properties.get(self.name)
        return None if raw is None else self.parse(raw)

    @property
    def default(self) -> None:
        return None


def _mapped_fields(value: Any, where: str) -> tuple[MappedField, ...]:
    if not isinstance(value, list):
        raise ValueError(f"{where or 'the mapping'} must be a JSON list")
    out = []
    for i, item in enumerate(value):
        at = f"{where}[{i}]"
        if not isinstance(item, dict):
            raise ValueError(f"{at} must be an object")
        names = item.get("names")
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"{at}.names must be a list of strings")
        field_id = item.get("field-id")
        if field_id is not None and (isinstance(field_id, bool) or not isinstance(field_id, int)):
            raise ValueError(f"{at}.field-id must be an integer")
        nested = _mapped_fields(item["fields"], f"{at}.fields") if item.get("fields") is not None else ()
        out.append(MappedField(names=tuple(names), field_id=field_id, fields=nested))
    return tuple(out)


# Retention (spec: "Snapshot Retention Policy"; a ref's own settings take precedence).
MAX_SNAPSHOT_AGE_MS = IntProperty("history.expire.max-snapshot-age-ms", 5 * DAY_MS, minimum=0)
MIN_SNAPSHOTS_TO_KEEP = IntProperty("history.expire.min-snapshots-to-keep", 1, minimum=1, maximum=INT_MAX)
MAX_REF_AGE_MS = IntProperty("history.expire.max-ref-age-ms", LONG_MAX, minimum=0)  # Long.MAX_VALUE: forever
GC_ENABLED = BoolProperty("gc.enabled", True)
# Sizes the writers and the rewrite procedures aim at.
TARGET_FILE_SIZE_BYTES = IntProperty("write.target-file-size-bytes", 512 * 1024 * 1024, minimum=1)
DELETE_TARGET_FILE_SIZE_BYTES = IntProperty("write.delete.target-file-size-bytes", 64 * 1024 * 1024, minimum=1)
MANIFEST_TARGET_SIZE_BYTES = IntProperty("commit.manifest.target-size-bytes", 8 * 1024 * 1024, minimum=1)
# Metadata files kept by the writer.
PREVIOUS_VERSIONS_MAX = IntProperty("write.metadata.previous-versions-max", 100, minimum=1, maximum=INT_MAX)
DELETE_AFTER_COMMIT = BoolProperty("write.metadata.delete-after-commit.enabled", False)
# Reading files without field ids (spec: "Column Projection").
NAME_MAPPING = NameMappingProperty("schema.name-mapping.default")

TableProperty = IntProperty | BoolProperty | NameMappingProperty
READ: tuple[TableProperty, ...] = (
    MAX_SNAPSHOT_AGE_MS,
    MIN_SNAPSHOTS_TO_KEEP,
    MAX_REF_AGE_MS,
    GC_ENABLED,
    TARGET_FILE_SIZE_BYTES,
    DELETE_TARGET_FILE_SIZE_BYTES,
    MANIFEST_TARGET_SIZE_BYTES,
    PREVIOUS_VERSIONS_MAX,
    DELETE_AFTER_COMMIT,
    NAME_MAPPING,
)
"""Every table property icebook reads."""


def invalid_properties(properties: Mapping[str, str]) -> tuple[PropertyError, ...]:
    """The problem with each property of ``READ`` whose value cannot be used, in ``READ`` order."""
    problems = []
    for prop in READ:
        try:
            prop.read(properties)
        except PropertyError as exc:
            problems.append(exc)
    return tuple(problems)


__all__ = [
    "DELETE_AFTER_COMMIT",
    "DELETE_TARGET_FILE_SIZE_BYTES",
    "GC_ENABLED",
    "MANIFEST_TARGET_SIZE_BYTES",
    "MAX_REF_AGE_MS",
    "MAX_SNAPSHOT_AGE_MS",
    "MIN_SNAPSHOTS_TO_KEEP",
    "NAME_MAPPING",
    "PREVIOUS_VERSIONS_MAX",
    "READ",
    "TARGET_FILE_SIZE_BYTES",
    "BoolProperty",
    "IntProperty",
    "MappedField",
    "NameMappingProperty",
    "TableProperty",
    "invalid_properties",
]
