"""Table schemas (spec: "Schemas and Data Types", Appendix C "Schemas").

A schema is a struct type with a ``schema-id`` and optional ``identifier-field-ids``.
Field ids, not names, identify columns: names may change through schema evolution.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar

from icebook.errors import MetadataError
from icebook.spec._json import Wire, empty_map
from icebook.spec.defaults import check_defaults
from icebook.spec.types import IcebergType, ListType, MapType, NestedField, StructType, parse_struct

_SCHEMA_KEYS = ("type", "fields", "schema-id", "identifier-field-ids")

# Spec "Reserved Field IDs": metadata columns that may appear in data and delete file schemas.
LAST_TABLE_FIELD_ID = 2**31 - 1 - 200
"""Tables must not use field ids above this (``Integer.MAX_VALUE - 200``): the rest are metadata columns'."""
DELETE_FILE_PATH_ID = 2147483546
"""``file_path``: path of a data file, in position delete files (string)."""
DELETE_POS_ID = 2147483545
"""``pos``: ordinal position of a row in that data file, in position delete files (long)."""
ROW_ID_ID = 2147483540
"""``_row_id``: a row's unique id for row lineage (long, v3; spec: "Row Lineage")."""
LAST_UPDATED_SEQUENCE_NUMBER_ID = 2147483539
"""``_last_updated_sequence_number``: the sequence number that last updated a row (long, v3)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Schema:
    """A table schema: a struct of uniquely-identified fields plus a schema id (spec: "Schemas").

    Lookups by id and by dotted full name cover fields nested in structs, lists (``a.element``)
    and maps (``m.key``, ``m.value``), following the reference implementation's naming.
    """

    FIELD_DOCS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "schema_id": "schema-id: id of this schema; snapshots and manifests refer to it (Appendix C).",
            "fields": "The schema's top-level fields, each with a unique field id, name, type and required flag.",
            "identifier_field_ids": "identifier-field-ids: ids of the primitive fields that identify a row "
            "(spec: Identifier Field IDs); uniqueness is not enforced by Iceberg.",
            "extras": "Keys of the schema JSON object that icebook does not model, kept as written.",
        }
    )

    schema_id: int
    fields: StructType
    identifier_field_ids: tuple[int, ...] = ()
    extras: Mapping[str, Any] = field(default_factory=empty_map)
    _by_id: Mapping[int, NestedField] = field(init=False, repr=False, compare=False)
    _names: Mapping[int, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_id: dict[int, NestedField] = {}
        names: dict[int, str] = {}
        for full_name, f in _walk(self.fields, ""):
            by_id[f.field_id] = f
            names[f.field_id] = full_name
        object.__setattr__(self, "_by_id", MappingProxyType(by_id))
        object.__setattr__(self, "_names", MappingProxyType(names))

    @property
    def columns(self) -> tuple[NestedField, ...]:
        """Top-level fields in order."""
        return self.fields.fields

    def find_field(self, field_id: int) -> NestedField | None:
        """The field (at any depth) with this id, or None."""
        return self._by_id.get(field_id)

    def find_type(self, field_id: int) -> IcebergType | None:
        f = self._by_id.get(field_id)
        return f.type if f is not None else None

    def find_column_name(self, field_id: int) -> str | None:
        """Dotted full name of the field with this id (``loc.lat``, ``tags.element``), or None."""
        return self._names.get(field_id)

    def find_field_by_name(self, name: str, *, case_sensitive: bool = True) -> NestedField | None:
        """The field whose dotted full name is ``name``, or None."""
        if case_sensitive:
            for fid, full in self._names.items():
                if full == name:
                    return self._by_id[fid]
            return None
        lowered = name.lower()
        for fid, full in self._names.items():
            if full.lower() == lowered:
                return self._by_id[fid]
        return None

    def id_to_name(self) -> Mapping[int, str]:
        """Every field id (nested included) mapped to its dotted full name."""
        return self._names

    def name_to_id(self) -> Mapping[str, int]:
        return MappingProxyType({name: fid for fid, name in self._names.items()})

    @property
    def highest_field_id(self) -> int:
        """The largest field id used anywhere in this schema (0 for an empty schema)."""
        return max(self._by_id, default=0)

    def __str__(self) -> str:
        return f"schema {self.schema_id}: {self.fields}"


def columns_by_id(schemas: Iterable[Schema]) -> dict[int, tuple[str, IcebergType]]:
    """Field id -> (dotted full name, type) over ``schemas``, a later schema naming an id again winning:
    how the metric maps and bounds of a table's files, keyed by ids of any of its schemas, are named."""
    out: dict[int, tuple[str, IcebergType]] = {}
    for schema in schemas:
        for field_id, name in schema.id_to_name().items():
            out[field_id] = (name, schema._by_id[field_id].type)
    return out


def _walk(t: IcebergType, prefix: str) -> Iterator[tuple[str, NestedField]]:
    """Pre-order walk yielding (full name, field) for every nested field."""
    children: tuple[NestedField, ...]
    if isinstance(t, StructType):
        children = t.fields
    elif isinstance(t, ListType):
        children = (t.element,)
    elif isinstance(t, MapType):
        children = (t.key, t.value)
    else:
        return
    for f in children:
        name = f"{prefix}.{f.name}" if prefix else f.name
        yield name, f
        yield from _walk(f.type, name)


def parse_schema(raw: Any, *, file: str, where: str = "schema", default_schema_id: int | None = None) -> Schema:
    """Parse a schema JSON object (Appendix C).

    ``default_schema_id`` is used only when the object has no ``schema-id`` (allowed in v1);
    when it is None a missing ``schema-id`` is an error.
    """
    w = Wire.of(raw, file=file, where=where)
    kind = w.obj.get("type", "struct")
    if kind != "struct":
        raise w.error("type", f"a schema must be a struct, found {kind!r}")
    schema_id = w.opt_int("schema-id")
    if schema_id is None:
        if default_schema_id is None:
            raise w.error("schema-id", "missing")
        schema_id = default_schema_id
    ids = w.int_list("identifier-field-ids") if w.has("identifier-field-ids") else ()
    struct = parse_struct(dict(w.obj), file=file, where=where)
    check_defaults(struct.fields, file=file, where=where)
    schema = Schema(schema_id=schema_id, fields=struct, identifier_field_ids=ids, extras=w.extras(_SCHEMA_KEYS))
    seen: set[int] = set()
    for _, f in _walk(struct, ""):
        if f.field_id in seen:
            raise MetadataError(file, where, f"field id {f.field_id} is used twice", kind="metadata")
        seen.add(f.field_id)
    for fid in ids:
        if fid not in seen:
            raise MetadataError(
                file, f"{where}.identifier-field-ids", f"field id {fid} is not in the schema", kind="metadata"
            )
    return schema


__all__ = [
    "DELETE_FILE_PATH_ID",
    "DELETE_POS_ID",
    "LAST_TABLE_FIELD_ID",
    "LAST_UPDATED_SEQUENCE_NUMBER_ID",
    "ROW_ID_ID",
    "Schema",
    "columns_by_id",
    "parse_schema",
]
