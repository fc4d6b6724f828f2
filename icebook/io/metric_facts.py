"""What the cross-checks need of a manifest's metric maps, kept when the maps themselves are not.

The six metric maps of ``data_file`` (spec: "Data File Fields": ``column_sizes``, ``value_counts``,
``null_value_counts``, ``nan_value_counts``, ``lower_bounds``, ``upper_bounds``) are most of a
manifest's bytes, and a scan plan without a filter reads none of them. A decode that leaves them
out still decodes them (an Avro record cannot be read in part), so the decoder reports, for every
map it decoded, the three numbers the checks of ``icebook.analysis.store.consistency`` need: the lowest
key, the highest key in the table's own id range, and the lowest count. The checks then hold
whether a map travelled to the kernel or not.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icebook.io.arrow_columns import single_array
from icebook.spec.schema import LAST_TABLE_FIELD_ID

COUNT_MAPS = ("column_sizes", "value_counts", "null_value_counts", "nan_value_counts")
METRIC_MAPS = (*COUNT_MAPS, "lower_bounds", "upper_bounds")
METRIC_MAP_TYPES = {
    **{name: pa.map_(pa.int32(), pa.int64()) for name in COUNT_MAPS},
    "lower_bounds": pa.map_(pa.int32(), pa.binary()),
    "upper_bounds": pa.map_(pa.int32(), pa.binary()),
}
"""The Arrow type of each metric map in an entries table (field id -> count, or -> Appendix D bytes)."""
_SCHEMA_KEY = b"icebook.metric_facts"


@dataclass(frozen=True, slots=True)
class MapFacts:
    """Of one metric map column, over every entry of one manifest (None: the maps hold no key)."""

    lowest_key: int | None
    highest_table_key: int | None
    """The highest key at or below ``LAST_TABLE_FIELD_ID``: keys above it are reserved metadata columns."""
    lowest_count: int | None
    """The lowest value of a count map (None for the bounds maps)."""

    def as_tuple(self) -> tuple[int | None, int | None, int | None]:
        return (self.lowest_key, self.highest_table_key, self.lowest_count)


MetricFacts = dict[str, MapFacts]
"""{metric map name: its facts}, for the maps a decode read."""


def _key_value_arrays(column: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, pa.Array]:
    """Every key and value of a map column, flattened: an Arrow map, or the list of key/value records
    that Avro maps with non-string keys are written as (and columnar Avro decoders return)."""
    array = single_array(column)
    if pa.types.is_map(array.type):  # the same layout as a list of key/value records
        array = array.cast(pa.list_(pa.struct([array.type.key_field, array.type.item_field])))
    entries = array.flatten()  # respects slicing and null lists
    return entries.field(0), entries.field(1)


def map_facts(column: pa.Array | pa.ChunkedArray, *, counts: bool) -> MapFacts:
    keys_array, values = _key_value_arrays(column)
    keys = np.asarray(keys_array.drop_null().to_numpy(zero_copy_only=False), dtype=np.int64)
    if not len(keys):
        return MapFacts(None, None, None)
    table_keys = keys[keys <= LAST_TABLE_FIELD_ID]
    lowest_count = pc.min(values).as_py() if counts else None
    return MapFacts(
        int(keys.min()),
        int(table_keys.max()) if len(table_keys) else None,
        int(lowest_count) if lowest_count is not None else None,
    )


def facts_of_columns(columns: Mapping[str, pa.Array | pa.ChunkedArray]) -> MetricFacts:
    """Facts of the metric maps among ``columns`` (by their spec names)."""
    return {name: map_facts(columns[name], counts=name in COUNT_MAPS) for name in METRIC_MAPS if name in columns}


def with_facts(table: pa.Table, facts: MetricFacts) -> pa.Table:
    """``table`` carrying ``facts`` in its schema metadata (kept by Arrow IPC, so by the disk cache too)."""
    text = json.dumps({name: f.as_tuple() for name, f in facts.items()}).encode()
    return table.replace_schema_metadata({**(table.schema.metadata or {}), _SCHEMA_KEY: text})


def facts_of(table: pa.Table) -> MetricFacts:
    """The facts of every metric map a decode of ``table`` read: as its decoder reported them, and computed
    from the columns for the maps it reported nothing of."""
    out: MetricFacts = {}
    recorded = (table.schema.metadata or {}).get(_SCHEMA_KEY)
    if recorded is not None:
        for name, values in json.loads(recorded).items():
            out[name] = MapFacts(*values)
    present = {name: table.column(name) for name in METRIC_MAPS if name in table.column_names and name not in out}
    out.update(facts_of_columns(present))
    return out


__all__ = [
    "COUNT_MAPS",
    "METRIC_MAPS",
    "MapFacts",
    "MetricFacts",
    "facts_of",
    "facts_of_columns",
    "map_facts",
    "with_facts",
]
