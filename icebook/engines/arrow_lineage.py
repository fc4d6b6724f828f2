"""Row lineage on the Arrow engine: the metadata columns ``_row_id`` and ``_last_updated_sequence_number``
(spec: "Row Lineage", "First Row ID Inheritance", "Row Lineage for Upgraded Tables").

A v3 writer leaves both columns null for the rows it adds or changes (or leaves them out of the file);
they are assigned on read. A null ``_row_id`` is the data file's ``first_row_id`` (itself inherited from
its manifest) plus the row's position in the file; a null ``_last_updated_sequence_number`` is the data
file's data sequence number. Rows moved by a writer carry both values in the file, and those are kept.

A data file without a ``first_row_id`` reads both columns as null, as the spec says of snapshots written
before a table was upgraded to v3 (such a snapshot has no ``first-row-id``), and as Iceberg's readers do
for ``_last_updated_sequence_number`` too (Spark 4.1 with Iceberg 1.12 answers null for both). In a snapshot that has one,
every data file must have one by inheritance: a missing one is damage, and reading the column is refused
rather than answered with nulls. Tables of format version 1 or 2 have no row lineage: asking for either
column is one ``UnsupportedFeature``, as Spark finds no such column there.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from icebook.analysis.scan.plan_items import ScanFile
from icebook.errors import MetadataError, UnsupportedFeature
from icebook.spec.metadata import TableMetadata
from icebook.spec.schema import LAST_UPDATED_SEQUENCE_NUMBER_ID, ROW_ID_ID, Schema
from icebook.spec.snapshots import Snapshot
from icebook.spec.types import LONG, NestedField

ROW_ID = "_row_id"
LAST_UPDATED_SEQUENCE_NUMBER = "_last_updated_sequence_number"
LINEAGE_FIELDS: dict[str, NestedField] = {
    ROW_ID: NestedField(field_id=ROW_ID_ID, name=ROW_ID, required=False, type=LONG),
    LAST_UPDATED_SEQUENCE_NUMBER: NestedField(
        field_id=LAST_UPDATED_SEQUENCE_NUMBER_ID, name=LAST_UPDATED_SEQUENCE_NUMBER, required=False, type=LONG
    ),
}
"""The two metadata columns as optional longs, by name (spec: "Reserved Field IDs")."""


def split_columns(
    metadata: TableMetadata, schema: Schema, columns: Sequence[str] | str | None
) -> tuple[list[str] | None, tuple[str, ...]]:
    """(the table columns of ``columns``, the lineage columns asked for, by their own names). A name is a
    lineage column, matched without case as Spark matches names, only when no table column has it."""
    if columns is None:
        return None, ()
    if isinstance(columns, str):
        columns = [columns]
    own = {f.name.lower() for f in schema.columns}
    asked = [c for c in columns if c.lower() in LINEAGE_FIELDS and c.lower() not in own]
    if asked and metadata.format_version < 3:
        raise UnsupportedFeature(
            f"{', '.join(asked)}: a table of format version {metadata.format_version} has no row lineage "
            "(the _row_id and _last_updated_sequence_number columns exist from format version 3)"
        )
    lineage = tuple(c.lower() for c in asked)
    return [c for c in columns if c not in asked], lineage


def lineage_columns(metadata: TableMetadata, schema: Schema) -> tuple[str, ...]:
    """Both lineage columns (less any a table column's name hides); one ``UnsupportedFeature`` for a table
    of format version 1 or 2."""
    return split_columns(metadata, schema, list(LINEAGE_FIELDS))[1]


def lineage_names(metadata: TableMetadata, schema: Schema) -> tuple[str, ...]:
    """The lineage columns a read of ``schema`` can select: both in a v3 table, unless a table column has the name."""
    if metadata.format_version < 3:
        return ()
    own = {f.name.lower() for f in schema.columns}
    return tuple(name for name in LINEAGE_FIELDS if name not in own)


def check_first_row_id(f: ScanFile, snapshot: Snapshot | None) -> None:
    """A data file of a snapshot with row ids (``first-row-id`` set) must have a ``first_row_id``, given or
    inherited ("First Row ID Inheritance"); without it its rows' ids cannot be told."""
    if f.first_row_id is None and snapshot is not None and snapshot.first_row_id is not None:
        raise MetadataError(
            f.manifest_path,
            "first_row_id",
            f"data file {f.file_path} has no first_row_id, and its manifest none to inherit, but snapshot "
            f"{snapshot.snapshot_id} assigns row ids (first-row-id {snapshot.first_row_id}): its rows' _row_id "
            "cannot be read",
            kind="manifest",
        )


def check_unique(ids: pa.ChunkedArray | pa.Array, files: Sequence[ScanFile]) -> None:
    """Row ids read from ``files`` are unique ("Row Lineage": a unique long identifier for every row): two
    files whose id ranges overlap (damage: ``first_row_id`` written or inherited twice) give one
    ``MetadataError`` naming the id and the files whose ranges hold it, never a read with repeated ids."""
    present = pc.drop_null(ids)
    if len(present) == 0 or pc.count_distinct(present).as_py() == len(present):
        return
    counts = pc.value_counts(present)
    repeated = counts.filter(pc.greater(counts.field("counts"), 1))[0]["values"].as_py()
    holders = [
        f for f in files if f.first_row_id is not None and f.first_row_id <= repeated < f.first_row_id + f.record_count
    ]
    named = (
        "; ".join(f"{f.file_path} (first_row_id {f.first_row_id}, {f.record_count} rows)" for f in holders)
        or "files that write it themselves"
    )
    raise MetadataError(
        holders[0].manifest_path if holders else files[0].manifest_path,
        "first_row_id",
        f"row id {repeated} is read more than once: the row-id ranges of the data files overlap ({named})",
        kind="manifest",
    )


def row_ids(f: ScanFile, written: pa.Array, positions: np.ndarray) -> pa.Array:
    """``_row_id`` of the rows at ``positions`` of data file ``f``: the file's value where it has one, else
    ``first_row_id + _pos`` ("Row lineage assignment"); null throughout when the file has no first_row_id."""
    if f.first_row_id is None:
        return pa.nulls(len(written), pa.int64())
    if written.null_count == 0:
        return written
    assigned = pa.array(positions + np.int64(f.first_row_id), pa.int64())
    return pc.coalesce(written, assigned)


def last_updated(f: ScanFile, written: pa.Array) -> pa.Array:
    """``_last_updated_sequence_number``: the file's value where it has one, else the file's data sequence number;
    null throughout when the file has no first_row_id (a file without row lineage)."""
    if f.first_row_id is None:
        return pa.nulls(len(written), pa.int64())
    if written.null_count == 0:
        return written
    return pc.coalesce(written, pa.scalar(f.sequence_number, pa.int64()))


__all__ = [
    "LAST_UPDATED_SEQUENCE_NUMBER",
    "LINEAGE_FIELDS",
    "ROW_ID",
    "check_first_row_id",
    "check_unique",
    "last_updated",
    "lineage_columns",
    "lineage_names",
    "row_ids",
    "split_columns",
]
