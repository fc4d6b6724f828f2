"""A decode that leaves the metric maps out still reports what the checks need of them: for every
manifest of every scenario table and every decoder, the facts a projected read carries equal the facts
of the maps a whole read returns (``icebook.io.metric_facts``)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

import icebook
from icebook.io.avro import available_decoders, read_manifest_entries
from icebook.io.metric_facts import METRIC_MAPS, MapFacts, facts_of, facts_of_columns, map_facts
from icebook.scenarios import SCENARIOS
from icebook.spec.schema import LAST_TABLE_FIELD_ID

PLAN_LIKE = ["status", "content", "file_path", "partition", "record_count", "file_size_in_bytes"]


@pytest.mark.spark
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_facts_of_a_projected_read_equal_those_of_the_whole_maps(
    scenario_locations: dict[str, Path], name: str
) -> None:
    t = icebook.open(scenario_locations[name])
    seen: set[str] = set()
    checked = 0
    for snapshot in t.snapshots:
        for m in t.store.manifest_list(snapshot):
            if m.manifest_path in seen:
                continue
            seen.add(m.manifest_path)
            whole = read_manifest_entries(t.fileio, m)
            expected = facts_of_columns({name: whole.column(name) for name in METRIC_MAPS})
            assert set(expected) == set(METRIC_MAPS), m.manifest_path
            assert facts_of(whole) == expected, m.manifest_path  # as the decoder reported them
            for decoder in available_decoders():
                if decoder == "polars":  # not in the default chain (see default_decoders)
                    continue
                projected = read_manifest_entries(t.fileio, m, columns=PLAN_LIKE, decoder=decoder)
                assert not set(METRIC_MAPS) & set(projected.column_names)
                assert facts_of(projected) == expected, (decoder, m.manifest_path)
            checked += 1
    assert checked == len(seen) > 0


def test_map_facts_of_maps_and_of_key_value_lists() -> None:
    counts = pa.array(
        [[(1, 5), (3, -2)], None, [(LAST_TABLE_FIELD_ID + 99, 7), (4, 0)]], pa.map_(pa.int32(), pa.int64())
    )
    assert map_facts(counts, counts=True) == MapFacts(1, 4, -2)
    assert map_facts(counts.slice(2), counts=True) == MapFacts(4, 4, 0)  # slicing respected
    assert map_facts(counts.slice(1, 1), counts=True) == MapFacts(None, None, None)
    # How a columnar Avro decoder returns a map with int keys: a list of key/value records.
    entry = pa.struct([("key", pa.int32()), ("value", pa.large_binary())])
    bounds = pa.array(
        [[{"key": 2, "value": b"a"}], [{"key": LAST_TABLE_FIELD_ID + 1, "value": b"z"}]], pa.large_list(entry)
    )
    assert map_facts(bounds, counts=False) == MapFacts(2, 2, None)
