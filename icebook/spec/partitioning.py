"""Partition specs (spec: "Partitioning", Appendix C "Partition Specs").

A partition spec lists partition fields: source column id(s), a partition field id, a
transform and a name. The partition tuple stored with each data file in a manifest is a
struct whose field ids are the partition field ids (see ``partition_type``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, ClassVar

from icebook.errors import MetadataError, NotFound, UnsupportedFeature
from icebook.spec._json import Wire, empty_map
from icebook.spec.schema import Schema
from icebook.spec.transforms import Transform, UnknownTransform, parse_transform
from icebook.spec.types import INT, UNKNOWN, NestedField, StructType

PARTITION_DATA_ID_START = 1000
"""First partition field id the reference implementation assigns (spec: "Partition Evolution")."""

_FIELD_KEYS = ("source-id", "source-ids", "field-id", "name", "transform")
_SPEC_KEYS = ("spec-id", "fields")


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionField:
    """One field of a partition spec (spec: "Partitioning")."""

    FIELD_DOCS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "source_id": "source-id: id of the source column in the table schema "
            "(None when only source-ids is written, for a multi-argument transform).",
            "source_ids": "source-ids: ids of all source columns (v3); (source-id,) for single-argument transforms.",
            "field_id": "field-id: partition field id, unique within the spec (across all specs in v2); "
            "the id of this field in the manifests' partition tuple.",
            "name": "name: partition field name, as in partition paths.",
            "transform": "transform: function applied to the source column(s) to produce the partition value.",
            "field_id_defaulted": "True when field-id was absent (v1) and assigned by the v1 rule "
            "(1000, 1001, ... in spec order); see assign_v1_partition_field_ids.",
            "extras": "Keys of the partition field JSON that icebook does not model, kept as written.",
        }
    )

    source_id: int | None
    source_ids: tuple[int, ...]
    field_id: int
    name: str
    transform: Transform
    field_id_defaulted: bool = False
    extras: Mapping[str, Any] = field(default_factory=empty_map)


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionSpec:
    """A partition spec: how to produce a tuple of partition values from a row (spec: "Partitioning")."""

    FIELD_DOCS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "spec_id": "spec-id: id of this partition spec; manifests record the spec their files were written with.",
            "fields": "fields: the partition fields, in partition tuple order.",
            "extras": "Keys of the partition spec JSON that icebook does not model, kept as written.",
        }
    )

    spec_id: int
    fields: tuple[PartitionField, ...] = ()
    extras: Mapping[str, Any] = field(default_factory=empty_map)

    def field_by_id(self, field_id: int) -> PartitionField | None:
        for f in self.fields:
            if f.field_id == field_id:
                return f
        return None

    @property
    def is_unpartitioned(self) -> bool:
        return is_unpartitioned(self)

    def __str__(self) -> str:
        inner = ", ".join(f"{f.name}={f.transform}({','.join(map(str, f.source_ids))})" for f in self.fields)
        return f"spec {self.spec_id}: [{inner}]"


def is_unpartitioned(spec: PartitionSpec) -> bool:
    """True when the spec has no fields, or only ``void`` fields (which always produce null)."""
    return all(f.transform.is_void for f in spec.fields)


def assign_v1_partition_field_ids(fields: Sequence[PartitionField]) -> tuple[PartitionField, ...]:
    """Apply the v1 default for missing partition ``field-id`` values.

    Spec ("Partition Evolution", Appendix C): in v1, partition field ids were not tracked but
    were assigned sequentially in each spec starting at 1000 by the reference implementation.
    Like the reference, a written id is kept and later unassigned fields continue after the
    highest id seen so far. Fields that receive an id this way are marked ``field_id_defaulted``.
    """
    last = PARTITION_DATA_ID_START - 1
    out: list[PartitionField] = []
    for f in fields:
        if f.field_id_defaulted:
            last += 1
            out.append(replace(f, field_id=last))
        else:
            last = max(last, f.field_id)
            out.append(f)
    return tuple(out)


def parse_partition_field(raw: Any, *, file: str, where: str, format_version: int) -> PartitionField:
    """Parse one partition field object; a missing v1 ``field-id`` is left for
    ``assign_v1_partition_field_ids`` (marked ``field_id_defaulted``, id -1 until assigned)."""
    w = Wire.of(raw, file=file, where=where)
    source_id, source_ids = w.source_columns()
    field_id = w.opt_int("field-id")
    defaulted = False
    if field_id is None:
        if format_version > 1:
            raise w.error("field-id", "missing")
        field_id, defaulted = -1, True
    return PartitionField(
        source_id=source_id,
        source_ids=source_ids,
        field_id=field_id,
        name=w.req_str("name"),
        transform=parse_transform(w.req_str("transform")),
        field_id_defaulted=defaulted,
        extras=w.extras(_FIELD_KEYS),
    )


def parse_partition_fields(raw: Any, *, file: str, where: str, format_version: int) -> tuple[PartitionField, ...]:
    if not isinstance(raw, list):
        raise MetadataError(file, where, "expected a list of partition fields", kind="metadata")
    fields = [
        parse_partition_field(f, file=file, where=f"{where}[{i}]", format_version=format_version)
        for i, f in enumerate(raw)
    ]
    if any(f.field_id_defaulted for f in fields):
        return assign_v1_partition_field_ids(fields)
    return tuple(fields)


def parse_partition_spec(raw: Any, *, file: str, where: str = "partition-spec", format_version: int) -> PartitionSpec:
    """Parse a full partition spec object (``spec-id`` and ``fields``) (Appendix C)."""
    w = Wire.of(raw, file=file, where=where)
    fields = parse_partition_fields(
        w.req_list("fields"), file=file, where=w.path("fields"), format_version=format_version
    )
    return PartitionSpec(spec_id=w.req_int("spec-id"), fields=fields, extras=w.extras(_SPEC_KEYS))


def partition_type(spec: PartitionSpec, schema: Schema) -> StructType:
    """The struct type of the spec's partition tuple: one optional field per partition field,
    with the partition field id and name, typed by the transform's result type.

    A ``void`` field whose source column was dropped from the schema is typed ``int`` (the
    spec's "Source type or int"); a field with an unknown transform is typed ``unknown``.
    """
    fields: list[NestedField] = []
    for pf in spec.fields:
        fields.append(
            NestedField(field_id=pf.field_id, name=pf.name, required=False, type=_result_type(pf, schema, spec))
        )
    return StructType(tuple(fields))


def _result_type(pf: PartitionField, schema: Schema, spec: PartitionSpec) -> Any:
    if isinstance(pf.transform, UnknownTransform):
        return UNKNOWN
    if len(pf.source_ids) != 1:
        raise UnsupportedFeature(f"partition field {pf.name!r}: multi-argument transform {pf.transform}")
    source = schema.find_field(pf.source_ids[0])
    if source is None:
        if pf.transform.is_void:
            return INT
        raise NotFound(
            f"partition field {pf.name!r} of spec {spec.spec_id}: source column id {pf.source_ids[0]} "
            f"is not in schema {schema.schema_id}"
        )
    return pf.transform.result_type(source.type)


__all__ = [
    "PARTITION_DATA_ID_START",
    "PartitionField",
    "PartitionSpec",
    "assign_v1_partition_field_ids",
    "is_unpartitioned",
    "parse_partition_field",
    "parse_partition_fields",
    "parse_partition_spec",
    "partition_type",
]
