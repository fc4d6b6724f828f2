"""Names the reference implementation gives the files it writes besides metadata, manifest lists
and manifests (those are in ``filenames``). Informative only: readers follow the paths in metadata.

- Data and delete files written by Spark: ``<partition %05d>-<task id>-<operation id>-<file count %05d>[-deletes].<format>``,
  where the operation id is the write's query UUID and ``-<epoch>`` (0 for a batch write): every file
  of one write shares it (``OutputFileFactory``).
- Data files written by PyIceberg: ``00000-<task id>-<write uuid>.<format>``, the write UUID being the commit
  UUID of the append at the time it wrote them (a retried commit draws a new one; its files keep the old).
- Table statistics (Puffin): ``<snapshot id>-<uuid>.stats`` (``compute_table_stats``).
- Partition statistics: ``partition-stats-<snapshot id>-<uuid>.<format>``.

Any other name was chosen by another writer (the Java API takes any path).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from icebook.spec.filenames import SEPARATOR, UUID_PATTERN, NamePart, ParsedName, base_name, name_parts

_EXTENSION = r"(\.[A-Za-z0-9]+)"
_SNAPSHOT = ("snapshot_id", "snapshot the statistics were computed for")

# Each convention: the pattern (every segment a group), the kind of file, and each group's role and meaning.
_CONVENTIONS: tuple[tuple[re.Pattern[str], str, tuple[tuple[str, str], ...]], ...] = (
    (
        re.compile(rf"^(\d{{5}})(-)(\d+)(-)({UUID_PATTERN}(?:-\d+)?)(-)(\d{{5}})(-deletes)?{_EXTENSION}$"),
        "task output",
        (
            ("partition_id", "Spark partition (input split) of the writing task, %05d"),
            SEPARATOR,
            ("task_id", "Spark task attempt id that wrote the file"),
            SEPARATOR,
            (
                "operation_id",
                "the write's query UUID (and, for data files, its epoch): shared by every file of one write",
            ),
            SEPARATOR,
            ("file_count", "counter of files this task wrote, from 00001"),
            ("suffix", "a delete file (position or equality deletes, or a DV)"),
            ("extension", "file format"),
        ),
    ),
    (
        re.compile(rf"^(00000)(-)(\d+)(-)({UUID_PATTERN}){_EXTENSION}$"),
        "pyiceberg output",
        (
            ("prefix", "PyIceberg's fixed prefix"),
            SEPARATOR,
            ("task_id", "index of the write task that wrote the file"),
            SEPARATOR,
            ("write_uuid", "the commit UUID of the append when it wrote the file: shared by its files"),
            ("extension", "file format"),
        ),
    ),
    (
        re.compile(rf"^(-?\d+)(-)({UUID_PATTERN})(\.stats)$"),
        "table statistics",
        (
            _SNAPSHOT,
            SEPARATOR,
            ("uuid", "random UUID of this statistics file"),
            ("extension", "Puffin table statistics file"),
        ),
    ),
    (
        re.compile(rf"^(partition-stats-)(-?\d+)(-)({UUID_PATTERN}){_EXTENSION}$"),
        "partition statistics",
        (
            ("prefix", "partition statistics file"),
            _SNAPSHOT,
            SEPARATOR,
            ("uuid", "random UUID of this file"),
            ("extension", "file format"),
        ),
    ),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class WrittenFileName(ParsedName):
    """A data, delete or statistics file name, split into its parts (``kind`` says which convention)."""

    kind: str
    """``task output`` (Spark data/delete file), ``pyiceberg output`` (PyIceberg data file), ``table statistics``,
    ``partition statistics`` or ``other``."""
    operation_id: str | None = None
    write_uuid: str | None = None
    snapshot_id: int | None = None


def parse_written_file_name(path: str) -> WrittenFileName:
    name = base_name(path)
    for pattern, kind, roles in _CONVENTIONS:
        if m := pattern.match(name):
            parts = name_parts(m, roles)
            by_role = {p.role: p.text for p in parts}
            snapshot = by_role.get("snapshot_id")
            return WrittenFileName(
                path=path,
                name=name,
                kind=kind,
                parts=parts,
                operation_id=by_role.get("operation_id"),
                write_uuid=by_role["write_uuid"].lower() if "write_uuid" in by_role else None,
                snapshot_id=None if snapshot is None else int(snapshot),
            )
    note = "named by its writer; no convention to read (names are informative only)"
    return WrittenFileName(path=path, name=name, kind="other", parts=(NamePart(name, "name", note),))


__all__ = ["WrittenFileName", "parse_written_file_name"]
