"""Avro files of an Iceberg table: manifest lists and manifests (spec: "Manifests", "Manifest Lists").

* ``read_manifest_list`` -> tuple of ``ManifestFile`` (v1 defaults applied and recorded);
* ``read_manifest_header`` -> ``ManifestHeader`` from the Avro metadata only;
* ``read_manifest_entries`` -> one ``pyarrow.Table`` per manifest (columnar, fast);
* ``read_manifest_entry`` -> one ``ManifestEntry`` for detail views.
"""

from __future__ import annotations

from icebook.io.avro_entries import available_decoders, read_manifest_entries
from icebook.io.avro_entry import read_manifest_entry
from icebook.io.avro_header import read_manifest_header
from icebook.io.avro_list import read_manifest_list
from icebook.io.entry_columns import ENTRY_COLUMNS, INHERITED_FLAGS, entries_schema

__all__ = [
    "ENTRY_COLUMNS",
    "INHERITED_FLAGS",
    "available_decoders",
    "entries_schema",
    "read_manifest_entries",
    "read_manifest_entry",
    "read_manifest_header",
    "read_manifest_list",
]
