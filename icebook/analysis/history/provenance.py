"""Which commit wrote a file: the metadata's answer and the file names' answer, side by side.

Spec ("Manifests", "Manifest Entry Fields"): a manifest entry with status ADDED records the
snapshot that added its file (``snapshot_id``, inherited from the manifest list when null). That
is the authoritative answer. The names tell the same story by convention: the manifest holding
the ADDED entry is ``<commit uuid>-m<index>.avro`` and the manifest list of that commit is
``snap-<snapshot id>-<attempt>-<commit uuid>.avro``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow.compute as pc

from icebook.analysis.store.entries import added_entries
from icebook.analysis.store.table_like import TableLike
from icebook.errors import NotFound
from icebook.spec.filenames import parse_manifest_list_name, parse_manifest_name
from icebook.spec.metadata import commit_order


@dataclass(frozen=True, slots=True, kw_only=True)
class FileOrigin:
    """The commit that added one data or delete file."""

    file_path: str
    snapshot_id: int
    """From the ADDED manifest entry (the spec's answer)."""
    operation: str | None
    manifest_path: str
    """The manifest where the file's entry is ADDED."""
    manifest_list: str | None
    """The manifest list of ``snapshot_id``."""
    manifest_commit_uuid: str | None
    """The commit UUID in the manifest's name (None when the name follows no convention)."""
    list_commit_uuid: str | None
    attempt: int | None
    """The attempt in the manifest list's name: above 1 when the commit was retried."""

    @property
    def names_agree(self) -> bool:
        """True when the manifest's name carries the commit UUID of the snapshot's manifest list."""
        return self.manifest_commit_uuid is not None and self.manifest_commit_uuid == self.list_commit_uuid


def file_origin(table: TableLike, file_path: str) -> FileOrigin:
    """The snapshot whose commit added ``file_path``, found in the ADDED entry of a manifest.

    Snapshots are searched oldest first, so the answer is the first commit that added the file.
    """
    metadata = table.metadata
    for snapshot in sorted(metadata.snapshots, key=commit_order):
        if snapshot.manifest_list is None:
            continue
        for manifest, added in added_entries(table.store, snapshot, ("file_path", "snapshot_id")):
            rows = added.filter(pc.equal(added.column("file_path"), file_path))
            if rows.num_rows:
                added_by = rows.column("snapshot_id")[0].as_py()
                owner = metadata.snapshot_by_id(added_by) if added_by is not None else snapshot
                listed = parse_manifest_list_name(owner.manifest_list) if owner.manifest_list else None
                named = parse_manifest_name(manifest.manifest_path)
                return FileOrigin(
                    file_path=file_path,
                    snapshot_id=owner.snapshot_id,
                    operation=owner.operation,
                    manifest_path=manifest.manifest_path,
                    manifest_list=owner.manifest_list,
                    manifest_commit_uuid=named.commit_uuid if named else None,
                    list_commit_uuid=listed.commit_uuid if listed else None,
                    attempt=listed.attempt if listed else None,
                )
    raise NotFound(f"no snapshot of table {metadata.location} added {file_path}")
