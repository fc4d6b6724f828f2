"""Finding a table's current metadata by location or by name: what opening a table and re-opening it share.
It builds no ``Table``, so the facade can re-open itself through it and ``opening.py`` can open through it, both
importing downwards."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from icebook.errors import NotFound
from icebook.io import catalogs
from icebook.io.fileio import FileIO, default_fileio
from icebook.io.locate import locate_metadata, read_table_metadata
from icebook.spec.metadata import TableMetadata


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class FoundTable:
    """A table's current metadata, where it was read from, with which FileIO, and by which name."""

    metadata: TableMetadata
    metadata_location: str
    fileio: FileIO
    identifier: str | None = None
    catalog_kind: Literal["pyiceberg", "spark"] | None = None


def find_table(
    location: str,
    *,
    catalog: str | None = None,
    fileio: FileIO | None = None,
    properties: Mapping[str, str] | None = None,
) -> FoundTable:
    """The current metadata of a table directory or metadata file (local path or URI, read with FileIO
    ``properties``), or of a table by name: ``catalog.namespace.table`` (or ``namespace.table`` with
    ``catalog=``).

    A name resolves through the PyIceberg catalog of that name when one is configured
    (``~/.pyiceberg.yaml``, ``PYICEBERG_CATALOG__*``), else through Spark's session catalog."""
    location = str(location)
    if catalog is not None:
        return _find_by_name(catalog, location, fileio)
    if not _is_local_path(location) and _looks_like_identifier(location):
        from icebook.engines import spark_engine

        name, rest = location.split(".", 1)
        if catalogs.is_configured(name):
            return _find_by_name(name, rest, fileio)
        try:
            metadata_location = spark_engine.metadata_location_of(location)
        except NotFound as exc:
            if exc.what.startswith("no catalog"):
                raise NotFound(
                    f"no catalog {name!r} (neither a PyIceberg catalog nor one of Spark's)",
                    available=sorted({*catalogs.catalog_names(), *(str(a) for a in exc.available)}),
                ) from None
            raise
        io = fileio or default_fileio(properties)
        return FoundTable(
            metadata=read_table_metadata(io, metadata_location),
            metadata_location=metadata_location,
            fileio=io,
            identifier=location,
            catalog_kind="spark",
        )
    io = fileio or default_fileio(properties)
    metadata_location = locate_metadata(io, location)
    return FoundTable(
        metadata=read_table_metadata(io, metadata_location), metadata_location=metadata_location, fileio=io
    )


def _looks_like_identifier(location: str) -> bool:
    from icebook.engines import spark_engine  # only for what is not a local path

    return spark_engine.looks_like_identifier(location)


def _is_local_path(location: str) -> bool:
    import os

    return os.path.exists(location)


def _find_by_name(catalog: str, name: str, fileio: FileIO | None) -> FoundTable:
    found = catalogs.resolve_table(catalog, name)
    io = fileio or default_fileio(found.properties)
    return FoundTable(
        metadata=read_table_metadata(io, found.metadata_location),
        metadata_location=found.metadata_location,
        fileio=io,
        identifier=found.identifier,
        catalog_kind="pyiceberg",
    )


__all__ = ["FoundTable", "find_table"]
