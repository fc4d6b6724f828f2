"""``Table.v3(at)``: every v3 structure of a table at one snapshot, in one result.

Each section is its own analysis (``deletion_vectors``, ``row_lineage``, ``defaults``, ``variants``,
``geo``), computed here together for the view; a section with nothing to show is empty, never absent.
"""

from __future__ import annotations

from dataclasses import dataclass

from icebook.analysis.store.table_like import TableLike
from icebook.analysis.v3.default_provenance import Defaults, defaults
from icebook.analysis.v3.deletion_vectors import DeletionVectorMap, deletion_vector_map
from icebook.analysis.v3.findings import V3Finding
from icebook.analysis.v3.geo import GeoBounds, geo_bounds
from icebook.analysis.v3.row_lineage import RowLineage, row_lineage
from icebook.analysis.v3.variants import VariantShredding, variant_shredding
from icebook.spec.schema import Schema
from icebook.spec.snapshots import Snapshot


@dataclass(frozen=True, slots=True, kw_only=True)
class V3Inspection:
    """The v3 inspector's sections at one snapshot."""

    location: str
    format_version: int
    snapshot_id: int | None
    deletion_vectors: DeletionVectorMap
    row_lineage: RowLineage
    defaults: Defaults
    variants: VariantShredding
    geo: GeoBounds

    @property
    def findings(self) -> tuple[V3Finding, ...]:
        return self.deletion_vectors.findings + self.row_lineage.findings

    def __repr__(self) -> str:
        return (
            f"<V3Inspection {self.location} v{self.format_version} at {self.snapshot_id}: "
            f"{len(self.deletion_vectors.vectors)} deletion vectors, {len(self.row_lineage.files)} row-id ranges, "
            f"{len(self.defaults.columns)} columns with defaults, {len(self.variants.columns)} variant and "
            f"{len(self.geo.columns)} geo columns, {len(self.findings)} findings>"
        )


def inspect_v3(table: TableLike, snapshot: Snapshot | None, schema: Schema) -> V3Inspection:
    """Every section for ``snapshot`` read with ``schema`` (the read schema at that point)."""
    return V3Inspection(
        location=table.location,
        format_version=table.metadata.format_version,
        snapshot_id=None if snapshot is None else snapshot.snapshot_id,
        deletion_vectors=deletion_vector_map(table, snapshot),
        row_lineage=row_lineage(table, snapshot),
        defaults=defaults(table, snapshot, schema),
        variants=variant_shredding(table, snapshot, schema),
        geo=geo_bounds(table, snapshot, schema),
    )


__all__ = ["V3Inspection", "inspect_v3"]
