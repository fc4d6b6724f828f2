"""A namespace of tables of different sizes for the lake browser's sort by bytes: several sizes (one table
of two appends), an empty table, one whose current summary has no ``total-files-size`` (as some writers
leave it) and one whose metadata file is gone. Shared by the server's HTTP tests and the browser's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

SIZED_TABLES = ("empty", "small", "large", "medium", "twice")
"""The tables whose bytes are known."""
UNSIZED, LOST = "unsized", "lost"


def create_sized_tables(catalog: Any, namespace: str) -> None:
    """Create the namespace in ``catalog`` (a PyIceberg SQL catalog on local files) with its tables."""
    import pyarrow as pa
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    schema = Schema(
        NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType(), required=False)
    )
    catalog.create_namespace(namespace)
    catalog.create_table(f"{namespace}.empty", schema)
    for name, rows in (("small", 3), ("large", 5000), ("medium", 400), ("twice", 200)):
        table = catalog.create_table(f"{namespace}.{name}", schema)
        for _ in range(2 if name == "twice" else 1):
            ids = pa.array(range(rows), pa.int64())
            names = pa.array([f"name {i} " * (1 + i % 7) for i in range(rows)])
            table.append(pa.table({"id": ids, "name": names}, schema=schema.as_arrow()))
    source = Path(urlsplit(catalog.load_table(f"{namespace}.small").metadata_location).path)
    document = json.loads(source.read_text())
    for snapshot in document["snapshots"]:
        snapshot["summary"].pop("total-files-size")
    unsized = source.with_name("00099-unsized.metadata.json")
    unsized.write_text(json.dumps(document))
    catalog.register_table((namespace, UNSIZED), unsized.as_uri())
    lost = source.with_name("00098-lost.metadata.json")
    lost.write_text(json.dumps(document))
    catalog.register_table((namespace, LOST), lost.as_uri())
    lost.unlink()


def live_bytes(catalog: Any, namespace: str, name: str) -> int:
    """A table's live data files' sizes on disk, by PyIceberg's own scan plan (not icebook's reading)."""
    tasks = catalog.load_table(f"{namespace}.{name}").scan().plan_files()
    return sum(Path(urlsplit(task.file.file_path).path).stat().st_size for task in tasks)


def by_bytes(catalog: Any, namespace: str) -> tuple[list[str], dict[str, int]]:
    """The known tables, largest first (their sizes differ, so the order is strict), and their sizes."""
    sizes = {name: live_bytes(catalog, namespace, name) for name in SIZED_TABLES}
    assert len(set(sizes.values())) == len(sizes), sizes
    order = sorted(sizes, key=lambda n: -sizes[n])
    assert order[0] == "large" and order[-1] == "empty" and sizes["empty"] == 0, sizes
    return order, sizes
