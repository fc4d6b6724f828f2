"""Iceberg's Java API as the oracle for tables Spark cannot read (a type Spark lacks, such as timestamp_ns)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def java_table(spark: Any, location: Path | str) -> Any:
    """A handle on the table at ``location`` through Iceberg's HadoopTables (no Spark type conversion)."""
    tables = spark._jvm.org.apache.iceberg.hadoop.HadoopTables(spark._jsc.hadoopConfiguration())
    return tables.load(str(location))


def manifest_facts(spark: Any, table: Any) -> tuple[set[int], set[str]]:
    """(partition spec ids of every file any snapshot kept, file formats of every delete file), read from
    the manifests of all snapshots as ``all_files`` and ``all_delete_files`` would."""
    iceberg = spark._jvm.org.apache.iceberg
    spec_ids: set[int] = set()
    formats: set[str] = set()
    for snapshot in table.snapshots():
        for manifest in snapshot.allManifests(table.io()):
            if manifest.content().id() == 0:
                spec_ids.add(int(manifest.partitionSpecId()))
                continue
            reader = iceberg.ManifestFiles.readDeleteManifest(manifest, table.io(), table.specs())
            iterator = reader.iterator()
            while iterator.hasNext():
                formats.add(str(iterator.next().format()))
            reader.close()
    return spec_ids, formats
