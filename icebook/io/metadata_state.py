"""An earlier metadata file read for what it says is current, not for its whole history.

The metadata log of a long-lived table names up to a hundred earlier files, each as large as the current
one (every snapshot it knew). Timelines need of each only a few fields (``TableState``), so this reads
them with a typed JSON decoder that skips everything else; a file it cannot read that way (corrupt,
format version 1 with its implied defaults) is parsed in full, whose errors name the file and the field.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from icebook.io.fileio import FileIO
from icebook.spec.metadata import SUPPORTED_FORMAT_VERSIONS, TableState, parse_metadata_json, table_state
from icebook.spec.metadata_json import inflate_metadata_json

_Int = Annotated[int, msgspec.Meta(ge=-(2**31), le=2**31 - 1)]
_Long = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]


class _Snapshot(msgspec.Struct, rename="kebab"):
    snapshot_id: _Long


class _LogEntry(msgspec.Struct, rename="kebab"):
    metadata_file: str


class _StateFields(msgspec.Struct, rename="kebab"):
    """The fields of the JSON that ``TableState`` needs, typed as Appendix C types them."""

    format_version: _Int
    last_updated_ms: _Long
    current_schema_id: _Int  # absent (v1 may imply it) or null: decoding fails, the full parser decides
    default_spec_id: _Int
    default_sort_order_id: _Int | None = None
    properties: dict[str, str] = {}
    snapshots: list[_Snapshot] = []
    metadata_log: list[_LogEntry] = []


_DECODER = msgspec.json.Decoder(_StateFields)


def read_table_state(fileio: FileIO, path: str) -> TableState:
    """What the metadata file at ``path`` says is current (``TableState``)."""
    data = inflate_metadata_json(fileio.read_bytes(path), file=path)
    try:
        # msgspec checks the UTF-8 only of the strings it decodes, not of the keys and values it skips: the
        # whole text is decoded first, so a file that is not UTF-8 goes to the full parser, as it does.
        raw = _DECODER.decode(data.decode("utf-8"))
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError, UnicodeDecodeError):
        raw = None  # the full parser names the file and where it is broken
    if (
        raw is None
        or raw.format_version not in SUPPORTED_FORMAT_VERSIONS
        or raw.format_version == 1  # v1's current schema and spec may be implied: the full rules apply
    ):
        return table_state(parse_metadata_json(data, file=path), path)
    return table_state(raw, path)


__all__ = ["read_table_state"]
