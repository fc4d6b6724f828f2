"""Names the reference implementation gives the files it writes besides metadata, manifest lists
and manifests (those are in ``filenames``). Informative only: readers follow the paths in metadata.

- Data and delete files written by Spark: ``<partition %05d>-<task id>-<operation id>-<file count %05d>[-deletes].<format>``,
  where the operation id is the write's query UUID and ``-<epoch>`` (0 for a batch write): every file
  of one write shares it (``OutputFileFactory``).
- Table statistics (Puffin): ``<snapshot id>-<uuid>.stats`` (``compute_table_stats``).
- Partition statistics: ``partition-stats-<snapshot id>-<uuid>.<format>``.

Any other name was chosen by another writer (the Java API takes any path).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from icebook.spec.filenames import NamePart, base_name

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_TASK_FILE = re.compile(rf"^(\d{{5}})(-)(\d+)(-)({_UUID}(?:-\d+)?)(-)(\d{{5}})(-deletes)?(\.[A-Za-z0-9]+)$")
_STATS = re.compile(rf"^(-?\d+)(-)({_UUID})(\.stats)$")
_PARTITION_STATS = re.compile(rf"^(partition-stats-)(-?\d+)(-)({_UUID})(\.[A-Za-z0-9]+)$")


@dataclass(frozen=True, slots=True, kw_only=True)
class WrittenFileName:
    """A data, delete or statistics file name, split into its parts (``kind`` says which convention)."""

    path: str
    name: str
    kind: str
    """``task output`` (Spark data/delete file), ``table statistics``, ``partition statistics`` or ``other``."""
    parts: tuple[NamePart, ...]
    operation_id: str | None = None
    snapshot_id: int | None = None


def parse_written_file_name(path: str) -> WrittenFileName:
    name = base_name(path)
    if m := _TASK_FILE.match(name):
        parts = [
            NamePart(m.group(1), "partition_id", "Spark partition (input split) of the writing task, %05d"),
            NamePart("-", "separator", ""),
            NamePart(m.group(3), "task_id", "Spark task attempt id that wrote the file"),
            NamePart("-", "separator", ""),
            NamePart(
                m.group(5),
                "operation_id",
                "the write's query UUID (and, for data files, its epoch): shared by every file of one write",
            ),
            NamePart("-", "separator", ""),
            NamePart(m.group(7), "file_count", "counter of files this task wrote, from 00001"),
        ]
        if m.group(8):
            parts.append(NamePart(m.group(8), "suffix", "a delete file (position or equality deletes, or a DV)"))
        parts.append(NamePart(m.group(9), "extension", "file format"))
        return WrittenFileName(path=path, name=name, kind="task output", parts=tuple(parts), operation_id=m.group(5))
    if m := _STATS.match(name):
        parts = [
            NamePart(m.group(1), "snapshot_id", "snapshot the statistics were computed for"),
            NamePart("-", "separator", ""),
            NamePart(m.group(3), "uuid", "random UUID of this statistics file"),
            NamePart(m.group(4), "extension", "Puffin table statistics file"),
        ]
        return WrittenFileName(
            path=path, name=name, kind="table statistics", parts=tuple(parts), snapshot_id=int(m.group(1))
        )
    if m := _PARTITION_STATS.match(name):
        parts = [
            NamePart(m.group(1), "prefix", "partition statistics file"),
            NamePart(m.group(2), "snapshot_id", "snapshot the statistics were computed for"),
            NamePart("-", "separator", ""),
            NamePart(m.group(4), "uuid", "random UUID of this file"),
            NamePart(m.group(5), "extension", "file format"),
        ]
        return WrittenFileName(
            path=path, name=name, kind="partition statistics", parts=tuple(parts), snapshot_id=int(m.group(2))
        )
    note = "named by its writer; no convention to read (names are informative only)"
    return WrittenFileName(path=path, name=name, kind="other", parts=(NamePart(name, "name", note),))


__all__ = ["WrittenFileName", "parse_written_file_name"]
