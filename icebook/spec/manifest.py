"""Manifest lists, manifests and their entries (spec: "Manifests", "Manifest Lists").

Models hold values as written in the file. Values the spec tells readers to supply
(v1 defaults, "Sequence Number Inheritance", "First Row ID Inheritance") are applied by
the named functions below, and every supplied value is recorded as an ``Inherited``
so the UI can say where it came from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import IntEnum, StrEnum
from typing import Any, ClassVar

from icebook.errors import MetadataError


class ManifestContent(IntEnum):
    """manifest_file.content (517): the type of files tracked by the manifest."""

    DATA = 0
    DELETES = 1

    @property
    def label(self) -> str:
        """``data`` or ``deletes``, as the manifest header's ``content`` key spells it."""
        return self.name.lower()


class FileContent(IntEnum):
    """data_file.content (134): data, position deletes or equality deletes."""

    DATA = 0
    POSITION_DELETES = 1
    EQUALITY_DELETES = 2


class FileFormat(StrEnum):
    """data_file.file_format (101): the file's format, as the reference implementation names it.

    The spec spells the names in lower case and writers in upper case; ``parse`` reads either."""

    PARQUET = "PARQUET"
    ORC = "ORC"
    AVRO = "AVRO"
    PUFFIN = "PUFFIN"

    @classmethod
    def parse(cls, text: str, *, file: str) -> FileFormat:
        """The format named by ``text`` in any case; an unknown name is a ``MetadataError`` naming ``file``."""
        try:
            return cls(text.upper())
        except ValueError:
            known = ", ".join(f.value for f in cls)
            raise MetadataError(
                file, "file_format", f"unknown file format {text!r} ({known})", kind="manifest"
            ) from None


class EntryStatus(IntEnum):
    """manifest_entry.status (0): used to track additions and deletions."""

    EXISTING = 0
    ADDED = 1
    DELETED = 2

    @property
    def is_alive(self) -> bool:
        """ADDED or EXISTING: the entry keeps its file in the snapshot; a DELETED entry only records a removal."""
        return self != EntryStatus.DELETED


class FileKind(StrEnum):
    """What a file is to the table: the content files (a deletion vector apart from the position delete
    files it replaces, as plans and views tell them apart) and the metadata that points at them, named as
    the reference implementation counts deletions."""

    DATA = "data file"
    POSITION_DELETES = "position delete file"
    DELETION_VECTOR = "deletion vector"
    EQUALITY_DELETES = "equality delete file"
    MANIFEST = "manifest"
    MANIFEST_LIST = "manifest list"
    STATISTICS = "statistics file"
    METADATA = "metadata file"
    VERSION_HINT = "version hint"

    @classmethod
    def of_content(cls, content: int, *, deletion_vector: bool = False) -> FileKind:
        """The kind of a content file (``data_file.content``; an unknown code reads as data, as a v1 file is);
        ``deletion_vector``: a position delete file that is a deletion vector (a Puffin blob)."""
        if content == FileContent.POSITION_DELETES:
            return cls.DELETION_VECTOR if deletion_vector else cls.POSITION_DELETES
        return cls.EQUALITY_DELETES if content == FileContent.EQUALITY_DELETES else cls.DATA


@dataclass(frozen=True, slots=True, kw_only=True)
class Inherited:
    """A value a reader supplied because the file left it null or absent.

    ``rule`` is the spec sentence that says so, ``source`` where the value came from.
    """

    field: str
    value: Any
    rule: str
    source: str


RULE_V1_LIST_SEQUENCE = "Manifest Lists: sequence_number ... use 0 when reading v1 manifest lists"
RULE_V1_LIST_MIN_SEQUENCE = "Manifest Lists: min_sequence_number ... use 0 when reading v1 manifest lists"
RULE_V1_LIST_CONTENT = "Manifest Lists: content ... 0 for all v1 manifests"
RULE_SNAPSHOT_ID = "Manifest Entry Fields: snapshot_id ... Inherited when null"
RULE_SEQUENCE = (
    "Sequence Number Inheritance: sequence numbers are inherited by replacing null with the manifest's "
    "sequence number from the manifest list (only if the entry status is 1, added)"
)
RULE_V1_SEQUENCE = (
    "Sequence Number Inheritance: when reading v1 manifests with no sequence number column, "
    "sequence numbers for all files must default to 0"
)
RULE_FIRST_ROW_ID = (
    "First Row ID Inheritance: null is replaced with the manifest's first_row_id plus the sum of record_count "
    "for all data files that preceded the file in the manifest that also had a null first_row_id"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionFieldSummary:
    """manifest_file.partitions element ``field_summary`` (508); bounds are Appendix D bytes."""

    contains_null: bool
    contains_nan: bool | None = None
    lower_bound: bytes | None = None
    upper_bound: bytes | None = None

    FIELD_DOCS: ClassVar[dict[str, str]] = {
        "contains_null": "509: whether the manifest contains at least one partition with a null value for the field",
        "contains_nan": "518: whether the manifest contains at least one partition with a NaN value for the field",
        "lower_bound": "510: lower bound for the non-null, non-NaN values in the partition field (Appendix D bytes)",
        "upper_bound": "511: upper bound for the non-null, non-NaN values in the partition field (Appendix D bytes)",
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestFile:
    """One manifest_file record of a manifest list (spec: "Manifest Lists").

    ``sequence_number``/``min_sequence_number``/``content`` are ``None`` when the file
    (a v1 list) has no such column, until ``apply_manifest_list_defaults`` supplies the
    spec's values; ``inherited`` then records each supplied value.
    """

    manifest_path: str
    manifest_length: int
    partition_spec_id: int
    content: ManifestContent | None
    sequence_number: int | None
    min_sequence_number: int | None
    added_snapshot_id: int | None
    added_files_count: int | None = None
    existing_files_count: int | None = None
    deleted_files_count: int | None = None
    added_rows_count: int | None = None
    existing_rows_count: int | None = None
    deleted_rows_count: int | None = None
    partitions: tuple[PartitionFieldSummary, ...] | None = None
    key_metadata: bytes | None = None
    first_row_id: int | None = None
    inherited: tuple[Inherited, ...] = ()
    format_version: int = 1

    FIELD_DOCS: ClassVar[dict[str, str]] = {
        "manifest_path": "500: location of the manifest file",
        "manifest_length": "501: length of the manifest file in bytes",
        "partition_spec_id": "502: ID of a partition spec used to write the manifest",
        "content": "517: type of files tracked by the manifest, 0 data or 1 deletes; 0 for all v1 manifests",
        "sequence_number": "515: sequence number when the manifest was added to the table; 0 for v1 lists",
        "min_sequence_number": "516: minimum data sequence number of all live files in the manifest; 0 for v1",
        "added_snapshot_id": "503: ID of the snapshot where the manifest file was added",
        "added_files_count": "504: number of entries with status ADDED (1); null means assumed non-zero",
        "existing_files_count": "505: number of entries with status EXISTING (0); null means assumed non-zero",
        "deleted_files_count": "506: number of entries with status DELETED (2); null means assumed non-zero",
        "added_rows_count": "512: number of rows in all files with status ADDED",
        "existing_rows_count": "513: number of rows in all files with status EXISTING",
        "deleted_rows_count": "514: number of rows in all files with status DELETED",
        "partitions": "507: a field summary for each partition field in the manifest's partition spec",
        "key_metadata": "519: implementation-specific key metadata for encryption",
        "first_row_id": "520 (v3): starting _row_id to assign to rows added by ADDED data files",
    }

    def explain(self, name: str) -> str | None:
        """Why ``name`` has its value when the file did not carry it, else ``None``."""
        return _explain(self.inherited, name)

    @property
    def effective_content(self) -> ManifestContent:
        """``content``, or DATA where a v1 list stores none ("0 for all v1 manifests"): the type of files
        the manifest tracks, whether or not ``apply_manifest_list_defaults`` has run."""
        return ManifestContent.DATA if self.content is None else self.content

    @property
    def counts_recorded(self) -> bool:
        """Whether the list records how many ADDED, EXISTING and DELETED entries the manifest holds."""
        counts = (self.added_files_count, self.existing_files_count, self.deleted_files_count)
        return all(c is not None for c in counts)


@dataclass(frozen=True, slots=True, kw_only=True)
class DataFile:
    """The data_file struct (2) of a manifest entry (spec: "Data File Fields").

    Metric maps are keyed by column field id. ``partition`` maps partition field name to
    its value (in spec order); ``partition_field_ids`` gives each name's partition field id.
    ``spec_id`` is the manifest's partition spec id (as Spark's ``files`` table shows it).
    """

    content: FileContent
    file_path: str
    file_format: str
    spec_id: int
    partition: Mapping[str, Any]
    partition_field_ids: Mapping[str, int]
    record_count: int
    file_size_in_bytes: int
    block_size_in_bytes: int | None = None
    column_sizes: Mapping[int, int] | None = None
    value_counts: Mapping[int, int] | None = None
    null_value_counts: Mapping[int, int] | None = None
    nan_value_counts: Mapping[int, int] | None = None
    distinct_counts: Mapping[int, int] | None = None
    lower_bounds: Mapping[int, bytes] | None = None
    upper_bounds: Mapping[int, bytes] | None = None
    key_metadata: bytes | None = None
    split_offsets: tuple[int, ...] | None = None
    equality_ids: tuple[int, ...] | None = None
    sort_order_id: int | None = None
    first_row_id: int | None = None
    referenced_data_file: str | None = None
    content_offset: int | None = None
    content_size_in_bytes: int | None = None

    FIELD_DOCS: ClassVar[dict[str, str]] = {
        "content": "134: type of content stored by the file: 0 data, 1 position deletes, 2 equality deletes",
        "file_path": "100: full URI for the file with FS scheme",
        "file_format": "101: file format name: avro, orc, parquet or puffin",
        "spec_id": "partition spec id of the manifest that tracks the file (manifest metadata partition-spec-id)",
        "partition": "102: partition data tuple, schema based on the partition spec output",
        "record_count": "103: number of records in the file, or the cardinality of a deletion vector",
        "file_size_in_bytes": "104: total file size in bytes",
        "block_size_in_bytes": "105 (v1, deprecated): always written with a default in v1",
        "column_sizes": "108: column id -> total size on disk of all regions that store the column",
        "value_counts": "109: column id -> number of values in the column (including null and NaN)",
        "null_value_counts": "110: column id -> number of null values in the column",
        "nan_value_counts": "137: column id -> number of NaN values in the column",
        "distinct_counts": "111 (deprecated): column id -> number of distinct values",
        "lower_bounds": "125: column id -> lower bound serialized as binary (Appendix D); may be truncated",
        "upper_bounds": "128: column id -> upper bound serialized as binary (Appendix D); may be truncated",
        "key_metadata": "131: implementation-specific key metadata for encryption",
        "split_offsets": "132: split offsets for the data file, e.g. row group offsets; sorted ascending",
        "equality_ids": "135: field ids used to determine row equality in equality delete files",
        "sort_order_id": "140: ID of the sort order of the file; null or unknown means unsorted",
        "first_row_id": "142 (v3): the _row_id of the first row in the data file",
        "referenced_data_file": "143: location of a data file that all deletes reference; required for DVs",
        "content_offset": "144 (v3): offset in the file where the content (a deletion vector blob) starts",
        "content_size_in_bytes": "145 (v3): length of the referenced content stored in the file",
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestEntry:
    """One manifest_entry (spec: "Manifest Entry Fields"), after inheritance.

    ``inherited`` lists the values supplied by inheritance rather than read from the file.
    """

    status: EntryStatus
    snapshot_id: int | None
    sequence_number: int | None
    file_sequence_number: int | None
    data_file: DataFile
    inherited: tuple[Inherited, ...] = ()

    FIELD_DOCS: ClassVar[dict[str, str]] = {
        "status": "0: 0 EXISTING, 1 ADDED, 2 DELETED; deletes are informational only and not used in scans",
        "snapshot_id": "1: snapshot id where the file was added, or deleted if status is 2; inherited when null",
        "sequence_number": "3: data sequence number of the file; inherited when null and status is 1 (added)",
        "file_sequence_number": "4: sequence number of the snapshot that added the file; inherited when null "
        "and status is 1 (added)",
        "data_file": "2: file path, partition tuple, metrics, ...",
    }

    def explain(self, name: str) -> str | None:
        return _explain(self.inherited, name)


def _explain(inherited: Sequence[Inherited], name: str) -> str | None:
    for item in inherited:
        if item.field == name:
            return f"{item.field} = {item.value!r} from {item.source} ({item.rule})"
    return None


def apply_manifest_list_defaults(manifest: ManifestFile, format_version: int) -> ManifestFile:
    """Supply what a v1 manifest list does not store (spec: "Manifest Lists").

    v1 lists have no ``content`` (0 for all v1 manifests) and no ``sequence_number`` /
    ``min_sequence_number`` (use 0 when reading v1 manifest lists). Values present in
    the file are never replaced.
    """
    supplied: list[Inherited] = []
    changes: dict[str, Any] = {}
    if manifest.content is None:
        changes["content"] = ManifestContent.DATA
        supplied.append(Inherited(field="content", value=0, rule=RULE_V1_LIST_CONTENT, source="v1 default"))
    if format_version == 1:
        if manifest.sequence_number is None:
            changes["sequence_number"] = 0
            supplied.append(
                Inherited(field="sequence_number", value=0, rule=RULE_V1_LIST_SEQUENCE, source="v1 default")
            )
        if manifest.min_sequence_number is None:
            changes["min_sequence_number"] = 0
            supplied.append(
                Inherited(field="min_sequence_number", value=0, rule=RULE_V1_LIST_MIN_SEQUENCE, source="v1 default")
            )
    if not supplied:
        return manifest
    return replace(manifest, inherited=manifest.inherited + tuple(supplied), **changes)


def inherit_snapshot_id(snapshot_id: int | None, manifest: ManifestFile) -> tuple[int | None, Inherited | None]:
    """manifest_entry.snapshot_id: "Inherited when null" from the manifest's added_snapshot_id."""
    if snapshot_id is not None:
        return snapshot_id, None
    value = manifest.added_snapshot_id
    if value is None:
        return None, None
    return value, Inherited(
        field="snapshot_id",
        value=value,
        rule=RULE_SNAPSHOT_ID,
        source=f"manifest list added_snapshot_id of {manifest.manifest_path}",
    )


def inherit_sequence_numbers(
    status: EntryStatus | int,
    sequence_number: int | None,
    file_sequence_number: int | None,
    manifest: ManifestFile,
    *,
    format_version: int,
) -> tuple[int | None, int | None, tuple[Inherited, ...]]:
    """Data and file sequence numbers of one entry (spec: "Sequence Number Inheritance").

    * v1 manifests (no sequence number columns): all files default to 0.
    * A null value of an ADDED (1) entry is replaced by the manifest's sequence_number.
    * EXISTING (0) and DELETED (2) entries must carry both values explicitly; a null stays
      null (a spec violation the UI can show) rather than being invented.
    """
    if format_version == 1:
        notes = tuple(
            Inherited(field=name, value=0, rule=RULE_V1_SEQUENCE, source="v1 default")
            for name, value in (("sequence_number", sequence_number), ("file_sequence_number", file_sequence_number))
            if value is None
        )
        return (
            0 if sequence_number is None else sequence_number,
            0 if file_sequence_number is None else file_sequence_number,
            notes,
        )
    if int(status) != EntryStatus.ADDED or manifest.sequence_number is None:
        return sequence_number, file_sequence_number, ()
    source = f"manifest list sequence_number of {manifest.manifest_path}"
    notes_list: list[Inherited] = []
    if sequence_number is None:
        sequence_number = manifest.sequence_number
        notes_list.append(Inherited(field="sequence_number", value=sequence_number, rule=RULE_SEQUENCE, source=source))
    if file_sequence_number is None:
        file_sequence_number = manifest.sequence_number
        notes_list.append(
            Inherited(field="file_sequence_number", value=file_sequence_number, rule=RULE_SEQUENCE, source=source)
        )
    return sequence_number, file_sequence_number, tuple(notes_list)


def inherit_first_row_ids(
    contents: Sequence[int],
    record_counts: Sequence[int],
    first_row_ids: Sequence[int | None],
    manifest: ManifestFile,
) -> tuple[tuple[int | None, ...], tuple[bool, ...]]:
    """first_row_id of every entry of one manifest, in file order (spec: "First Row ID Inheritance").

    A null first_row_id of a data file becomes the manifest's first_row_id plus the sum of
    record_count of all preceding data files that also had a null first_row_id, whatever
    the entry status. Delete files always have null. Returns (values, inherited flags).
    """
    base = manifest.first_row_id
    values: list[int | None] = []
    flags: list[bool] = []
    running = 0
    for content, count, value in zip(contents, record_counts, first_row_ids, strict=True):
        if value is not None or int(content) != FileContent.DATA or base is None:
            values.append(value)  # explicit values are kept; delete files stay as written (null)
            flags.append(False)
            continue
        values.append(base + running)
        flags.append(True)
        running += int(count)
    return tuple(values), tuple(flags)


def first_row_id_note(value: int, manifest: ManifestFile) -> Inherited:
    return Inherited(
        field="first_row_id",
        value=value,
        rule=RULE_FIRST_ROW_ID,
        source=f"manifest list first_row_id of {manifest.manifest_path}",
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ManifestHeader:
    """Avro key-value metadata of a manifest file (spec: "Manifests").

    ``partition_spec`` is the raw JSON text of the partition fields array; ``schema`` the
    table schema JSON at write time; ``avro_schema`` the Avro schema JSON of the file.
    """

    path: str
    schema: str | None
    schema_id: int | None
    partition_spec: str | None
    partition_spec_id: int | None
    format_version: int | None
    content: ManifestContent | None
    avro_schema: str
    codec: str
    extras: Mapping[str, str] = field(default_factory=dict)

    FIELD_DOCS: ClassVar[dict[str, str]] = {
        "schema": "JSON representation of the table schema at the time the manifest was written",
        "schema_id": "ID of the schema used to write the manifest (required in v2+)",
        "partition_spec": "JSON of only the partition fields array of the spec used to write the manifest",
        "partition_spec_id": "ID of the partition spec used to write the manifest (required in v2+)",
        "format_version": "table format version number of the manifest (required in v2+)",
        "content": "type of content files tracked by the manifest: data or deletes (v2+)",
        "avro_schema": "the Avro schema of the file: manifest_entry with the partition struct of its spec",
        "codec": "Avro block compression codec (null, deflate, snappy, zstandard, ...)",
    }


__all__ = [
    "DataFile",
    "EntryStatus",
    "FileContent",
    "FileFormat",
    "FileKind",
    "Inherited",
    "ManifestContent",
    "ManifestEntry",
    "ManifestFile",
    "ManifestHeader",
    "PartitionFieldSummary",
    "apply_manifest_list_defaults",
    "first_row_id_note",
    "inherit_first_row_ids",
    "inherit_sequence_numbers",
    "inherit_snapshot_id",
]
