"""File-name conventions of the reference implementation (not part of the table spec).

Names are informative only: readers must follow the paths written in metadata. They do tell
a story, though: a manifest list ``snap-<snapshot id>-<attempt>-<commit UUID>.avro`` shares its
commit UUID with the manifests ``<commit UUID>-m<index>.avro`` written by the same commit, and
an attempt above 1 means the commit was retried. Metadata files are
``<version %05d>-<UUID>.metadata.json`` (catalog tables) or ``v<N>.metadata.json`` (Hadoop
tables); GZIP-compressed ones end ``.gz.metadata.json`` or ``.metadata.json.gz`` (spec
Appendix F, "Naming for GZIP compressed Metadata JSON files").

Each parsed name carries ``parts``: the segments of the name, in order, each with its role and
meaning, so a UI can annotate the name (the texts concatenate back to the name).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

UUID_PATTERN = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_VERSIONED = re.compile(rf"^(\d{{5,}})(-)({UUID_PATTERN})(\.gz)?(\.metadata\.json)(\.gz)?$")
_HADOOP = re.compile(r"^(v)(\d+)(\.gz)?(\.metadata\.json)(\.gz)?$")
_MANIFEST_LIST = re.compile(rf"^(snap-)(-?\d+)(-)(\d+)(-)({UUID_PATTERN})(\.avro)$")
_MANIFEST = re.compile(rf"^({UUID_PATTERN})(-m)(\d+)(\.avro)$")
_OPTIMIZED = re.compile(rf"^optimized-m-({UUID_PATTERN})\.avro$")


@dataclass(frozen=True, slots=True)
class NamePart:
    """One segment of a file name: its text, its role, and what it means."""

    text: str
    role: str
    meaning: str


def base_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def name_parts(match: re.Match[str], roles: Sequence[tuple[str, str]]) -> tuple[NamePart, ...]:
    """The parts of a name matched by a pattern that groups every segment: group i is given
    ``roles[i - 1]`` (role, meaning); a group that did not take part in the match is left out."""
    return tuple(
        NamePart(text, role, meaning)
        for text, (role, meaning) in zip(match.groups(), roles, strict=True)
        if text is not None
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ParsedName:
    """A file name split into its parts: ``path`` as given, ``name`` its last segment."""

    path: str
    name: str
    parts: tuple[NamePart, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataFileName(ParsedName):
    """A table metadata file name: ``00003-<uuid>.metadata.json`` or Hadoop ``v3.metadata.json``."""

    style: Literal["versioned", "hadoop"]
    version: int
    uuid: str | None
    gzip: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestListName(ParsedName):
    """A manifest list name ``snap-<snapshot id>-<attempt>-<commit uuid>.avro``."""

    snapshot_id: int
    attempt: int
    commit_uuid: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestName(ParsedName):
    """A manifest name ``<commit uuid>-m<index>.avro``."""

    commit_uuid: str
    index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class UnknownFileName(ParsedName):
    """A name that follows none of the conventions above (``note`` says what is known)."""

    note: str


FileName = MetadataFileName | ManifestListName | ManifestName | UnknownFileName

SEPARATOR = ("separator", "")
_GZ_INNER = ("compression", "GZIP-compressed metadata JSON (the form most readers expect)")
_GZ_OUTER = ("compression", "GZIP-compressed metadata JSON (suffix the Java implementation also reads)")
_JSON = ("extension", "table metadata file (JSON)")
_AVRO = ("extension", "Avro file")
_METADATA_STYLES: tuple[tuple[re.Pattern[str], Literal["versioned", "hadoop"], tuple[tuple[str, str], ...]], ...] = (
    (
        _VERSIONED,
        "versioned",
        (
            ("version", "metadata version: the number of this metadata file, %05d zero-padded"),
            SEPARATOR,
            ("uuid", "random UUID of this metadata file; unrelated to snapshot or commit UUIDs"),
            _GZ_INNER,
            _JSON,
            _GZ_OUTER,
        ),
    ),
    (
        _HADOOP,
        "hadoop",
        (
            ("prefix", "Hadoop-catalog metadata file (committed by atomic rename)"),
            ("version", "metadata version; version-hint.text names the current one"),
            _GZ_INNER,
            _JSON,
            _GZ_OUTER,
        ),
    ),
)
_MANIFEST_LIST_ROLES = (
    ("prefix", "manifest list of a snapshot"),
    ("snapshot_id", "id of the snapshot this manifest list belongs to"),
    SEPARATOR,
    ("attempt", "commit attempt; above 1 means the commit was retried"),
    SEPARATOR,
    ("commit_uuid", "UUID of the commit; the manifests it wrote start with it"),
    _AVRO,
)
_MANIFEST_ROLES = (
    ("commit_uuid", "UUID of the commit that wrote this manifest (as in its manifest list)"),
    ("separator", "manifest"),
    ("index", "index of this manifest among those the commit wrote, from 0"),
    _AVRO,
)


def parse_metadata_file_name(path: str) -> MetadataFileName | None:
    name = base_name(path)
    for pattern, style, roles in _METADATA_STYLES:
        if m := pattern.match(name):
            parts = name_parts(m, roles)
            gzip = sum(p.role == "compression" for p in parts)
            if gzip > 1:  # compressed twice over: no writer names a file so
                return None
            uuid = next((p.text.lower() for p in parts if p.role == "uuid"), None)
            version = next(int(p.text) for p in parts if p.role == "version")
            return MetadataFileName(
                path=path, name=name, style=style, version=version, uuid=uuid, gzip=gzip == 1, parts=parts
            )
    return None


def parse_manifest_list_name(path: str) -> ManifestListName | None:
    name = base_name(path)
    m = _MANIFEST_LIST.match(name)
    if not m:
        return None
    return ManifestListName(
        path=path,
        name=name,
        snapshot_id=int(m.group(2)),
        attempt=int(m.group(4)),
        commit_uuid=m.group(6).lower(),
        parts=name_parts(m, _MANIFEST_LIST_ROLES),
    )


def parse_manifest_name(path: str) -> ManifestName | None:
    name = base_name(path)
    m = _MANIFEST.match(name)
    if not m:
        return None
    parts = name_parts(m, _MANIFEST_ROLES)
    return ManifestName(path=path, name=name, commit_uuid=m.group(1).lower(), index=int(m.group(3)), parts=parts)


def _unknown(path: str) -> UnknownFileName:
    name = base_name(path)
    if _OPTIMIZED.match(name):
        note = "manifest written by a manifest rewrite (optimized-m-<uuid>); no commit UUID in the name"
    elif name == "version-hint.text":
        note = "Hadoop-catalog pointer to the current metadata version"
    elif name.endswith(".avro"):
        note = "Avro file not named by the snapshot-producer conventions"
    elif name.endswith(".puffin") or name.endswith(".stats"):
        note = "statistics or deletion-vector (Puffin) file"
    else:
        note = "not a recognised naming convention"
    return UnknownFileName(path=path, name=name, note=note, parts=(NamePart(name, "name", note),))


def parse_file_name(path: str) -> FileName:
    """Classify a metadata-directory file by its name (a path is accepted; its last segment is used)."""
    return (
        parse_metadata_file_name(path) or parse_manifest_list_name(path) or parse_manifest_name(path) or _unknown(path)
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class CommitFiles:
    """The files one commit (one commit UUID) wrote: manifest lists (one per attempt) and manifests."""

    commit_uuid: str
    manifest_lists: tuple[ManifestListName, ...]
    manifests: tuple[ManifestName, ...]

    @property
    def snapshot_ids(self) -> tuple[int, ...]:
        return tuple(dict.fromkeys(ml.snapshot_id for ml in self.manifest_lists))

    @property
    def max_attempt(self) -> int | None:
        return max((ml.attempt for ml in self.manifest_lists), default=None)

    @property
    def retried(self) -> bool:
        """True when an attempt above 1 or several manifest lists show the commit was retried."""
        return len(self.manifest_lists) > 1 or any(ml.attempt > 1 for ml in self.manifest_lists)


@dataclass(frozen=True, slots=True, kw_only=True)
class CommitLinks:
    """Files grouped by commit UUID, plus names that carry no commit UUID."""

    commits: Mapping[str, CommitFiles]
    unrecognized: tuple[str, ...]

    @property
    def retried(self) -> tuple[CommitFiles, ...]:
        return tuple(c for c in self.commits.values() if c.retried)

    def commit_of(self, path: str) -> CommitFiles | None:
        """The commit that wrote this manifest list or manifest, by its name."""
        parsed = parse_file_name(path)
        if isinstance(parsed, (ManifestListName, ManifestName)):
            return self.commits.get(parsed.commit_uuid)
        return None


def link_commits(manifest_list_names: Iterable[str], manifest_names: Iterable[str]) -> CommitLinks:
    """Group manifest lists and manifests by commit UUID.

    Shows which manifests each commit wrote and which commits were retried (an attempt above 1,
    or several manifest lists sharing one commit UUID). Names that do not follow the
    conventions go to ``unrecognized``. Commits are ordered by first appearance.
    """
    lists: dict[str, list[ManifestListName]] = {}
    manifests: dict[str, list[ManifestName]] = {}
    unrecognized: list[str] = []
    named: list[ManifestListName | ManifestName | str] = [
        *(parse_manifest_list_name(p) or p for p in manifest_list_names),
        *(parse_manifest_name(p) or p for p in manifest_names),
    ]
    for n in named:
        if isinstance(n, str):
            unrecognized.append(n)
            continue
        written = manifests.setdefault(n.commit_uuid, [])  # a commit is known from its list alone too
        if isinstance(n, ManifestListName):
            lists.setdefault(n.commit_uuid, []).append(n)
        else:
            written.append(n)
    commits = {
        uuid: CommitFiles(
            commit_uuid=uuid,
            manifest_lists=tuple(sorted(lists.get(uuid, []), key=lambda x: x.attempt)),
            manifests=tuple(sorted(dict.fromkeys(ms, None), key=lambda x: x.index)),
        )
        for uuid, ms in manifests.items()
    }
    return CommitLinks(commits=MappingProxyType(commits), unrecognized=tuple(unrecognized))


__all__ = [
    "SEPARATOR",
    "UUID_PATTERN",
    "CommitFiles",
    "CommitLinks",
    "FileName",
    "ManifestListName",
    "ManifestName",
    "MetadataFileName",
    "NamePart",
    "ParsedName",
    "UnknownFileName",
    "base_name",
    "link_commits",
    "name_parts",
    "parse_file_name",
    "parse_manifest_list_name",
    "parse_manifest_name",
    "parse_metadata_file_name",
]
