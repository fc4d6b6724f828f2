"""Variants shown as text: each value of a ``variant`` column as Arrow reads it (``arrow_types``:
``<metadata, value>``) as the JSON text Spark's ``to_json`` gives (``spec/variant.py``)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.arrow_types import EXTENSION_NAME, VARIANT_EXTENSION, VARIANT_STORAGE
from icebook.spec.variant import VariantError, VariantMetadata, parse_metadata, to_json


def is_variant_field(field: pa.Field) -> bool:
    """Whether ``field`` holds variants in icebook's Arrow form (by its extension name)."""
    meta = field.metadata or {}
    return meta.get(EXTENSION_NAME) == VARIANT_EXTENSION.encode()


def variant_json(values: Any) -> pa.Array:
    """Each variant of ``values`` (a ``variant`` column as icebook reads it) as the JSON text Spark's
    ``to_json`` gives; null where the variant is null."""
    if hasattr(values, "to_arrow") and not hasattr(values, "combine_chunks"):  # a polars Series
        values = values.to_arrow()
    elif hasattr(getattr(values, "array", None), "__arrow_array__"):  # a pandas Series of pd.ArrowDtype
        values = pa.array(values.array)
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


VARIANTS_ATTR = "icebook.variant_columns"
"""``DataFrame.attrs`` key: the frame's top-level variant columns (pandas keeps no field metadata)."""


def mark_variant_columns(frame: Any, schema: pa.Schema) -> Any:
    """``frame`` (pandas, from rows of ``schema``) told which of its columns hold variants."""
    names = [f.name for f in schema if is_variant_field(f)]
    if names:
        frame.attrs[VARIANTS_ATTR] = names
    return frame


def frame_variants_as_json(frame: Any) -> Any:
    """A pandas ``frame`` to show: its variant columns (``mark_variant_columns``) as JSON text."""
    names = [n for n in frame.attrs.get(VARIANTS_ATTR, ()) if n in frame.columns]
    if not names:
        return frame
    import pandas as pd

    out = frame.copy()
    for name in names:
        column = frame[name]
        texts = variant_json(pa.array(column.array) if hasattr(column.array, "__arrow_array__") else column.tolist())
        out[name] = pd.Series(texts.to_pylist(), index=frame.index, dtype=object)
    return out


__all__ = [
    "VARIANTS_ATTR",
    "frame_variants_as_json",
    "is_variant_field",
    "mark_variant_columns",
    "variant_json",
    "with_variants_as_json",
]
