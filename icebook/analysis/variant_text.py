"""Variants shown as text: each value of a ``variant`` column as Arrow reads it (``arrow_types``:
``<metadata, value>``) as the JSON text Spark's ``to_json`` gives (``spec/variant.py``)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.arrow_types import EXTENSION_NAME, VARIANT_EXTENSION, VARIANT_STORAGE
from icebook.spec.variant import VariantError, VariantMetadata, parse_metadata, to_json


def is_variant_field(field: pa.Field) -> bool:
    """Whether ``field`` holds variants in icebook's Arrow form (by its extension name)."""
    meta = field.metadata or {}
    return meta.get(EXTENSION_NAME) == VARIANT_EXTENSION.encode()


def variant_json(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Each variant of ``values`` (a ``variant`` column as icebook reads it) as the JSON text Spark's
    ``to_json`` gives; null where the variant is null."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks else pa.array([], VARIANT_STORAGE)
    if isinstance(values.type, pa.ExtensionType):
        values = values.storage
    if not pa.types.is_struct(values.type) or values.type.get_field_index("metadata") < 0:
        raise VariantError("value", f"not a variant column: {values.type}")
    metadata = values.field("metadata").to_pylist()
    encoded = values.field("value").to_pylist()
    valid = pc.is_valid(values).to_pylist()
    seen: dict[bytes, VariantMetadata] = {}
    out: list[str | None] = []
    for ok, meta, value in zip(valid, metadata, encoded, strict=True):
        if not ok or meta is None or value is None:
            out.append(None)
            continue
        parsed = seen.get(meta) or seen.setdefault(meta, parse_metadata(meta))
        out.append(to_json(parsed, value))
    return pa.array(out, pa.string())


def with_variants_as_json(table: pa.Table) -> pa.Table:
    """``table`` with each top-level variant column replaced by its JSON text (for showing rows)."""
    for i, field in enumerate(table.schema):
        if is_variant_field(field):
            table = table.set_column(i, pa.field(field.name, pa.string()), variant_json(table.column(i)))
    return table


__all__ = ["is_variant_field", "variant_json", "with_variants_as_json"]
