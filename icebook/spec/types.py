"""Iceberg data types (spec: "Schemas and Data Types", Appendix C "Schemas").

Types are frozen values. ``parse_type`` reads the JSON form of Appendix C and
``str(t)`` gives back the canonical type string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from icebook.errors import MetadataError
from icebook.spec._json import INT32, MAX_NESTING, check_depth, check_int


class Primitive(StrEnum):
    """The primitive types without parameters (spec: "Primitive Types"), by their type strings."""

    UNKNOWN = "unknown"
    BOOLEAN = "boolean"
    INT = "int"
    LONG = "long"
    FLOAT = "float"
    DOUBLE = "double"
    DATE = "date"
    TIME = "time"
    TIMESTAMP = "timestamp"
    TIMESTAMPTZ = "timestamptz"
    TIMESTAMP_NS = "timestamp_ns"
    TIMESTAMPTZ_NS = "timestamptz_ns"
    STRING = "string"
    UUID = "uuid"
    BINARY = "binary"
    VARIANT = "variant"

    def __repr__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True, slots=True)
class PrimitiveType:
    """A primitive type without parameters, e.g. ``int`` or ``timestamptz``.

    ``name`` is the spec's type string, as a ``Primitive`` (a text is read into one).
    """

    name: Primitive

    def __post_init__(self) -> None:
        object.__setattr__(self, "name", Primitive(self.name))

    def __str__(self) -> str:
        return str(self.name)


@dataclass(frozen=True, slots=True)
class DecimalType:
    """Fixed-point decimal; precision P (38 or less), scale S (spec: "Primitive Types")."""

    precision: int
    scale: int

    def __str__(self) -> str:
        return f"decimal({self.precision},{self.scale})"


@dataclass(frozen=True, slots=True)
class FixedType:
    """Fixed-length byte array of length L (spec: "Primitive Types")."""

    length: int

    def __str__(self) -> str:
        return f"fixed[{self.length}]"


@dataclass(frozen=True, slots=True)
class GeoType:
    """v3 ``geometry(C)`` or ``geography(C, A)``; parameters kept as written."""

    kind: str
    params: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.kind}({', '.join(self.params)})" if self.params else self.kind


@dataclass(frozen=True, slots=True, kw_only=True)
class NestedField:
    """A struct field, list element or map key/value: an id unique in the table schema,
    a name, whether it is required, its type, and an optional doc (spec: "Nested Types").

    ``initial_default``/``write_default`` are the v3 default values in their JSON
    single-value form (Appendix D), kept as written.
    """

    field_id: int
    name: str
    required: bool
    type: IcebergType
    doc: str | None = None
    initial_default: Any = None
    write_default: Any = None
    has_initial_default: bool = False
    has_write_default: bool = False


@dataclass(frozen=True, slots=True)
class StructType:
    """A tuple of named, typed fields, each with a unique id (spec: "Nested Types")."""

    fields: tuple[NestedField, ...] = ()

    def __str__(self) -> str:
        inner = ", ".join(f"{f.name}: {f.type}" for f in self.fields)
        return f"struct<{inner}>"

    def field_by_id(self, field_id: int) -> NestedField | None:
        for f in self.fields:
            if f.field_id == field_id:
                return f
        return None


@dataclass(frozen=True, slots=True)
class ListType:
    """A list of elements of one type; the element has its own field id (spec: "Nested Types")."""

    element: NestedField

    def __str__(self) -> str:
        return f"list<{self.element.type}>"


@dataclass(frozen=True, slots=True)
class MapType:
    """Key-value pairs; key and value each have a field id; keys are required (spec: "Nested Types")."""

    key: NestedField
    value: NestedField

    def __str__(self) -> str:
        return f"map<{self.key.type}, {self.value.type}>"


IcebergType = PrimitiveType | DecimalType | FixedType | GeoType | StructType | ListType | MapType


BOOLEAN = PrimitiveType(Primitive.BOOLEAN)
INT = PrimitiveType(Primitive.INT)
LONG = PrimitiveType(Primitive.LONG)
FLOAT = PrimitiveType(Primitive.FLOAT)
DOUBLE = PrimitiveType(Primitive.DOUBLE)
DATE = PrimitiveType(Primitive.DATE)
TIME = PrimitiveType(Primitive.TIME)
TIMESTAMP = PrimitiveType(Primitive.TIMESTAMP)
TIMESTAMPTZ = PrimitiveType(Primitive.TIMESTAMPTZ)
TIMESTAMP_NS = PrimitiveType(Primitive.TIMESTAMP_NS)
TIMESTAMPTZ_NS = PrimitiveType(Primitive.TIMESTAMPTZ_NS)
STRING = PrimitiveType(Primitive.STRING)
UUID = PrimitiveType(Primitive.UUID)
BINARY = PrimitiveType(Primitive.BINARY)
VARIANT = PrimitiveType(Primitive.VARIANT)
UNKNOWN = PrimitiveType(Primitive.UNKNOWN)

_PRIMITIVE_NAMES = frozenset(p.value for p in Primitive)

# Families the rules of the spec speak of.
TIMESTAMP_TYPES = frozenset({TIMESTAMP, TIMESTAMPTZ, TIMESTAMP_NS, TIMESTAMPTZ_NS})
NANOSECOND_TYPES = frozenset({TIMESTAMP_NS, TIMESTAMPTZ_NS})
UTC_ADJUSTED_TYPES = frozenset({TIMESTAMPTZ, TIMESTAMPTZ_NS})
"""``timestamptz`` and ``timestamptz_ns``: stored as UTC."""

_DECIMAL = re.compile(r"^decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)$")
_FIXED = re.compile(r"^fixed\[\s*(\d+)\s*\]$")
_GEO = re.compile(r"^(geometry|geography)\s*(?:\((.*)\))?$")


def is_primitive(t: IcebergType) -> bool:
    return isinstance(t, (PrimitiveType, DecimalType, FixedType, GeoType))


def _id(raw: dict[str, Any], key: str, *, file: str, where: str) -> int:
    value = raw[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise MetadataError(file, f"{where}.{key}", f"expected an integer id, found {value!r}"[:120], kind="metadata")
    return check_int(value, key, file=file, where=f"{where}.{key}")


def _flag(raw: dict[str, Any], key: str, *, file: str, where: str) -> bool:
    value = raw[key]
    if not isinstance(value, bool):
        raise MetadataError(file, f"{where}.{key}", f"expected true or false, found {value!r}"[:120], kind="metadata")
    return value


def parse_type(raw: Any, *, file: str = "<metadata>", where: str = "type", depth: int = 0) -> IcebergType:
    """Parse a type from its JSON form (Appendix C); errors name ``file`` and ``where``.

    Types nest at most ``MAX_NESTING`` levels deep, so nothing that walks a schema later can
    run out of stack.
    """
    if depth > MAX_NESTING:
        raise MetadataError(file, where, f"types nested more than {MAX_NESTING} levels deep", kind="metadata")
    if isinstance(raw, str):
        text = raw.strip()
        if text in _PRIMITIVE_NAMES:
            return PrimitiveType(Primitive(text))
        if m := _DECIMAL.match(text):
            precision, scale = int(m.group(1)), int(m.group(2))
            if not 1 <= precision <= 38 or scale > precision:
                # "Scale is fixed, precision must be 38 or less" (Primitive Types)
                raise MetadataError(file, where, f"invalid {text}: precision must be 1 to 38", kind="metadata")
            return DecimalType(precision, scale)
        if m := _FIXED.match(text):
            length = int(m.group(1))
            if not 0 < length <= INT32[1]:
                raise MetadataError(file, where, f"invalid {text}: length out of range", kind="metadata")
            return FixedType(length)
        if m := _GEO.match(text):
            params = tuple(p.strip() for p in m.group(2).split(",")) if m.group(2) else ()
            return GeoType(m.group(1), params)
        raise MetadataError(file, where, f"unknown type {raw[:80]!r}", kind="metadata")
    if isinstance(raw, dict):
        kind = raw.get("type")
        try:
            if kind == "struct":
                return parse_struct(raw, file=file, where=where, depth=depth)
            if kind == "list":
                element = NestedField(
                    field_id=_id(raw, "element-id", file=file, where=where),
                    name="element",
                    required=_flag(raw, "element-required", file=file, where=where),
                    type=parse_type(raw["element"], file=file, where=f"{where}.element", depth=depth + 1),
                )
                return ListType(element)
            if kind == "map":
                key = NestedField(
                    field_id=_id(raw, "key-id", file=file, where=where),
                    name="key",
                    required=True,
                    type=parse_type(raw["key"], file=file, where=f"{where}.key", depth=depth + 1),
                )
                value = NestedField(
                    field_id=_id(raw, "value-id", file=file, where=where),
                    name="value",
                    required=_flag(raw, "value-required", file=file, where=where),
                    type=parse_type(raw["value"], file=file, where=f"{where}.value", depth=depth + 1),
                )
                return MapType(key, value)
        except KeyError as exc:
            raise MetadataError(file, f"{where}.{exc.args[0]}", "missing", kind="metadata") from None
        except (TypeError, ValueError) as exc:
            raise MetadataError(file, where, f"malformed {kind}: {exc}", kind="metadata") from None
        raise MetadataError(file, f"{where}.type", f"unknown nested type {str(kind)[:80]!r}", kind="metadata")
    raise MetadataError(file, where, f"expected a type string or object, found {type(raw).__name__}", kind="metadata")


def parse_struct(raw: dict[str, Any], *, file: str = "<metadata>", where: str = "schema", depth: int = 0) -> StructType:
    """Parse a struct's ``fields`` list (Appendix C)."""
    fields_raw = raw.get("fields")
    if not isinstance(fields_raw, list):
        raise MetadataError(file, f"{where}.fields", "missing or not a list", kind="metadata")
    fields: list[NestedField] = []
    for i, f in enumerate(fields_raw):
        if not isinstance(f, dict):
            raise MetadataError(file, f"{where}.fields[{i}]", "not an object", kind="metadata")
        here = f"{where}.fields[{i}]"
        try:
            name = f["name"]
            if not isinstance(name, str):
                raise MetadataError(file, f"{here}.name", "expected a string", kind="metadata")
            for default in ("initial-default", "write-default"):
                if default in f:
                    check_depth(f[default], file=file, where=f"{here}.{default}")
            fields.append(
                NestedField(
                    field_id=_id(f, "id", file=file, where=here),
                    name=name,
                    required=_flag(f, "required", file=file, where=here),
                    type=parse_type(f["type"], file=file, where=f"{where}.{name}", depth=depth + 1),
                    doc=f.get("doc"),
                    initial_default=f.get("initial-default"),
                    write_default=f.get("write-default"),
                    has_initial_default="initial-default" in f,
                    has_write_default="write-default" in f,
                )
            )
        except KeyError as exc:
            raise MetadataError(file, f"{here}.{exc.args[0]}", "missing", kind="metadata") from None
        except (TypeError, ValueError) as exc:
            raise MetadataError(file, here, f"malformed field: {exc}", kind="metadata") from None
    return StructType(tuple(fields))


def type_to_json(t: IcebergType) -> Any:
    """The Appendix C JSON form of a type (inverse of ``parse_type``)."""
    if isinstance(t, StructType):
        return {"type": "struct", "fields": [field_to_json(f) for f in t.fields]}
    if isinstance(t, ListType):
        return {
            "type": "list",
            "element-id": t.element.field_id,
            "element-required": t.element.required,
            "element": type_to_json(t.element.type),
        }
    if isinstance(t, MapType):
        return {
            "type": "map",
            "key-id": t.key.field_id,
            "key": type_to_json(t.key.type),
            "value-id": t.value.field_id,
            "value-required": t.value.required,
            "value": type_to_json(t.value.type),
        }
    return str(t)


def field_to_json(f: NestedField) -> dict[str, Any]:
    out: dict[str, Any] = {"id": f.field_id, "name": f.name, "required": f.required, "type": type_to_json(f.type)}
    if f.doc is not None:
        out["doc"] = f.doc
    if f.has_initial_default:
        out["initial-default"] = f.initial_default
    if f.has_write_default:
        out["write-default"] = f.write_default
    return out


__all__ = [
    "BINARY",
    "BOOLEAN",
    "DATE",
    "DOUBLE",
    "FLOAT",
    "INT",
    "LONG",
    "NANOSECOND_TYPES",
    "STRING",
    "TIME",
    "TIMESTAMP",
    "TIMESTAMPTZ",
    "TIMESTAMPTZ_NS",
    "TIMESTAMP_NS",
    "TIMESTAMP_TYPES",
    "UNKNOWN",
    "UTC_ADJUSTED_TYPES",
    "UUID",
    "VARIANT",
    "DecimalType",
    "FixedType",
    "GeoType",
    "IcebergType",
    "ListType",
    "MapType",
    "NestedField",
    "Primitive",
    "PrimitiveType",
    "StructType",
    "is_primitive",
    "parse_struct",
    "parse_type",
    "type_to_json",
]
