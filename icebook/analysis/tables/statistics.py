"""Table statistics files (spec "Table Statistics"): Puffin files of per-column blobs, registered in
the metadata's ``statistics`` list for one snapshot each.

Spark's ``compute_table_stats`` writes one ``apache-datasketches-theta-v1`` blob per column: a
theta sketch of the column's distinct values, plus the estimate as the blob property ``ndv``.
``table_statistics`` lists every blob with its column and, for theta sketches, the estimate that
icebook decodes from the sketch itself, next to the ``ndv`` the writer recorded.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from icebook.io.fileio import FileIO
from icebook.io.puffin import read_blob, read_puffin_footer
from icebook.io.sketches import THETA_BLOB, decode_theta_sketch
from icebook.spec.metadata import TableMetadata

COLUMNS = [
    "snapshot_id",
    "statistics_path",
    "blob_type",
    "field_ids",
    "column",
    "ndv_property",
    "estimate",
    "lower_bound",
    "upper_bound",
    "exact",
    "blob_length",
    "compression_codec",
]


def _column_name(metadata: TableMetadata, field_id: int) -> str | None:
    """The field's name in the newest schema that has it (a column may have been dropped since)."""
    for schema in sorted(metadata.schemas.values(), key=lambda s: s.schema_id, reverse=True):
        name = schema.find_column_name(field_id)
        if name is not None:
            return name
    return None


def table_statistics(metadata: TableMetadata, fileio: FileIO, snapshot_id: int | None = None) -> pd.DataFrame:
    """One row per blob of every statistics file (or of ``snapshot_id``'s), sketches decoded."""
    rows: list[dict[str, Any]] = []
    for stats in metadata.statistics:
        if snapshot_id is not None and stats.snapshot_id != snapshot_id:
            continue
        footer = read_puffin_footer(fileio, stats.statistics_path)
        for blob in footer.blobs:
            row: dict[str, Any] = {
                "snapshot_id": stats.snapshot_id,
                "statistics_path": stats.statistics_path,
                "blob_type": blob.type,
                "field_ids": list(blob.fields),
                "column": ", ".join(_column_name(metadata, f) or f"<field {f}>" for f in blob.fields),
                "ndv_property": int(blob.properties["ndv"]) if "ndv" in blob.properties else None,
                "blob_length": blob.length,
                "compression_codec": blob.compression_codec,
            }
            if blob.type == THETA_BLOB:
                sketch = decode_theta_sketch(read_blob(fileio, stats.statistics_path, blob), path=stats.statistics_path)
                row.update(
                    estimate=sketch.estimate,
                    lower_bound=sketch.lower_bound,
                    upper_bound=sketch.upper_bound,
                    exact=sketch.exact,
                )
            rows.append(row)
    return pd.DataFrame(rows, columns=COLUMNS)
