"""Geo bounds as boxes (spec: "Bound serialization" for ``geometry`` and ``geography``).

A geo column's lower and upper bounds in a manifest are points ``x:y[:z[:m]]``: the box's lower-left and
upper-right corners. For ``geography``, a lower ``x`` above the upper ``x`` means the box crosses the
antimeridian (it runs from ``xmin`` east to 180 and on from -180 to ``xmax``). Spark writes no geo bounds;
a file without them has no box.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from icebook.analysis.store.entries import live_data_entries
from icebook.analysis.store.table_like import TableLike
from icebook.spec.schema import Schema
from icebook.spec.snapshots import Snapshot
from icebook.spec.types import GeoType
from icebook.spec.values import decode_value

_COLUMNS = ("status", "content", "file_path", "record_count", "lower_bounds", "upper_bounds")


@dataclass(frozen=True, slots=True, kw_only=True)
class GeoBox:
    """One data file's bounding box for one geo column."""

    file_path: str
    column: str
    field_id: int
    type: str
    lower: tuple[float, ...]
    upper: tuple[float, ...]

    @property
    def xmin(self) -> float:
        return self.lower[0]

    @property
    def ymin(self) -> float:
        return self.lower[1]

    @property
    def xmax(self) -> float:
        return self.upper[0]

    @property
    def ymax(self) -> float:
        return self.upper[1]

    @property
    def crosses_antimeridian(self) -> bool:
        return self.type.startswith("geography") and self.xmin > self.xmax


@dataclass(frozen=True, slots=True, kw_only=True)
class GeoBounds:
    """``t.v3(at).geo``: the geo columns of the read schema, and each live data file's box for each."""

    location: str
    snapshot_id: int | None
    columns: tuple[str, ...]
    boxes: tuple[GeoBox, ...]
    without_bounds: tuple[tuple[str, str], ...] = ()
    """(file, column) pairs whose manifest entry records no bounds for the column."""

    def to_pandas(self) -> pd.DataFrame:
        return pd.DataFrame(
            [
                (b.file_path, b.column, b.field_id, b.type, b.xmin, b.ymin, b.xmax, b.ymax, b.crosses_antimeridian)
                for b in self.boxes
            ],
            columns=["file_path", "column", "field_id", "type", "xmin", "ymin", "xmax", "ymax", "crosses_antimeridian"],
        )

    def __repr__(self) -> str:
        return (
            f"<GeoBounds snapshot {self.snapshot_id}: {len(self.columns)} geo columns, {len(self.boxes)} boxes, "
            f"{len(self.without_bounds)} (file, column) pairs without bounds>"
        )


def _bounds(pairs: list[tuple[int, bytes]] | None) -> dict[int, bytes]:
    return dict(pairs or [])


def geo_bounds(table: TableLike, snapshot: Snapshot | None, schema: Schema) -> GeoBounds:
    """Boxes of every geo column of ``schema`` for each live data file at ``snapshot``; a bound that is not
    a point is one ``MetadataError`` naming the manifest and the field."""
    geo = {
        fid: (name, t) for fid, name in schema.id_to_name().items() if isinstance(t := schema.find_type(fid), GeoType)
    }
    boxes: list[GeoBox] = []
    missing: list[tuple[str, str]] = []
    if snapshot is not None and geo:
        for manifest, entries in live_data_entries(table.store, snapshot, _COLUMNS):
            rows = zip(
                entries.column("file_path").to_pylist(),
                entries.column("lower_bounds").to_pylist(),
                entries.column("upper_bounds").to_pylist(),
                strict=True,
            )
            for path, lower, upper in rows:
                low, high = _bounds(lower), _bounds(upper)
                for fid, (name, t) in geo.items():
                    if fid not in low or fid not in high:
                        missing.append((path, name))
                        continue
                    where = manifest.manifest_path
                    boxes.append(
                        GeoBox(
                            file_path=path,
                            column=name,
                            field_id=fid,
                            type=str(t),
                            lower=decode_value(low[fid], t, field=f"lower_bounds[{fid}] of {path}", file=where),
                            upper=decode_value(high[fid], t, field=f"upper_bounds[{fid}] of {path}", file=where),
                        )
                    )
    return GeoBounds(
        location=table.location,
        snapshot_id=None if snapshot is None else snapshot.snapshot_id,
        columns=tuple(name for name, _ in geo.values()),
        boxes=tuple(boxes),
        without_bounds=tuple(missing),
    )


__all__ = ["GeoBounds", "GeoBox", "geo_bounds"]
