"""What an earlier metadata file says is current, read with the typed decoder that skips the rest
(``icebook.io.metadata_state``), equals what the full parse says, for every metadata file of every
scenario table (gzip and format v1 included); a file it cannot read fails as the full parse does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _support.metadata_examples import v2

import icebook
from icebook.errors import MetadataError
from icebook.io.fileio import ArrowFileIO
from icebook.io.locate import read_table_metadata
from icebook.io.metadata_state import read_table_state
from icebook.scenarios import SCENARIOS
from icebook.spec.metadata import table_state


@pytest.mark.spark
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_states_equal_the_full_parse(scenario_locations: dict[str, Path], name: str) -> None:
    t = icebook.open(scenario_locations[name])
    files = [e.metadata_file for e in t.metadata.metadata_log] + [t.metadata_location]
    fileio = ArrowFileIO()
    for f in files:
        assert read_table_state(fileio, f) == table_state(read_table_metadata(fileio, f), f), f


@pytest.mark.spark
def test_a_broken_file_fails_as_the_full_parse_does(scenario_locations: dict[str, Path], tmp_path: Path) -> None:
    source = icebook.open(scenario_locations["events"]).metadata_location
    doc = json.loads(Path(source).read_text())
    doc["snapshots"][0]["snapshot-id"] = "not a number"
    broken = tmp_path / "v9.metadata.json"
    broken.write_text(json.dumps(doc))
    with pytest.raises(MetadataError, match=r"snapshots\[0\]\.snapshot-id") as full:
        read_table_metadata(ArrowFileIO(), str(broken))
    with pytest.raises(MetadataError) as light:
        read_table_state(ArrowFileIO(), str(broken))
    assert str(light.value) == str(full.value)
    cut = tmp_path / "v10.metadata.json"
    cut.write_text(Path(source).read_text()[:500])
    with pytest.raises(MetadataError, match="truncated"):
        read_table_state(ArrowFileIO(), str(cut))


@pytest.mark.parametrize(
    "before",
    [
        b'"commit.retry.num-retries": "',  # a property's value, which the typed decoder reads
        b'"p',  # the properties key: a key it does not know, so it skips it (the properties then read as none)
        b'"location": "s3',  # a value it skips
        b'"table-u',  # another key it skips
    ],
)
def test_a_byte_that_is_not_utf8_fails_as_the_full_parse_does(tmp_path: Path, before: bytes) -> None:
    # Found by the fuzz test, twice: msgspec raised a bare UnicodeDecodeError for a string it decodes, and read
    # past one in a key or value it skips (so evolution showed the file's properties as none, unmarked).
    data = json.dumps(v2()).encode()
    anchor = data.index(b'"properties"') if before == b'"p' else data.index(before)
    at = anchor + len(before)
    broken = tmp_path / "v3.metadata.json"
    broken.write_bytes(data[:at] + b"\x9e" + data[at + 1 :])
    with pytest.raises(MetadataError, match=f"not valid UTF-8 at byte {at}$") as full:
        read_table_metadata(ArrowFileIO(), str(broken))
    with pytest.raises(MetadataError) as light:
        read_table_state(ArrowFileIO(), str(broken))
    assert str(light.value) == str(full.value)
