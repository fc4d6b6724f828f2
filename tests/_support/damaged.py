"""Damaged table files served without touching the real ones: a FileIO that serves replacement bytes for
some paths, and the Avro and manifest edits that make them."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa

import icebook
from icebook.io.fileio import ArrowFileIO


class ServingFileIO(ArrowFileIO):
    """Serves replacement bytes for some paths, or redirects them to another file; the rest from disk."""

    def __init__(self, files: dict[str, bytes] | None = None, redirect: dict[str, str] | None = None) -> None:
        super().__init__()
        self.files = files or {}
        self.redirect = redirect or {}

    def read_bytes(self, path: str) -> bytes:
        return self.files[path] if path in self.files else super().read_bytes(self.redirect.get(path, path))

    def open_input(self, path: str) -> Any:
        if path in self.files:
            return pa.BufferReader(self.files[path])
        return super().open_input(self.redirect.get(path, path))

    def size(self, path: str) -> int:
        return len(self.files[path]) if path in self.files else super().size(self.redirect.get(path, path))


def rewrite_avro(path: str, edit: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> bytes:
    """The Avro file at ``path`` with its records edited: same schema, metadata and codec."""
    with open(path, "rb") as f:
        reader = fastavro.reader(f)
        schema = reader.writer_schema
        codec = reader.codec
        meta = {k: v for k, v in reader.metadata.items() if not k.startswith("avro.")}
        records = list(reader)
    out = io.BytesIO()
    fastavro.writer(out, schema, edit(records), codec=codec, metadata=meta)
    return out.getvalue()


def with_edited_entry(location: Path, content: int, edit: Callable[[dict[str, Any]], None]) -> ServingFileIO:
    """Serve the first current manifest of ``content`` (0 data, 1 deletes) with its first entry's data_file
    edited, and the manifest list re-written with the edited manifest's length."""
    t = icebook.open(location)
    snapshot = t.current_snapshot
    assert snapshot is not None and snapshot.manifest_list is not None
    manifests = t.inspect.manifests()
    victim = manifests[manifests["content"] == content]["path"].iloc[0]

    def edit_entries(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        edit(records[0]["data_file"])
        return records

    manifest = rewrite_avro(victim, edit_entries)

    def fix_length(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for r in records:
            if r["manifest_path"] == victim:
                r["manifest_length"] = len(manifest)
        return records

    return ServingFileIO({victim: manifest, snapshot.manifest_list: rewrite_avro(snapshot.manifest_list, fix_length)})
