"""The lake browser on a namespace of 1,000 tables: the panel's first page, and the cheap (metadata-only)
pass of the namespace health report.

Creates a SQL catalog (sqlite) with N tables, metadata files only: each a v2 metadata file with a few
snapshots whose summaries carry records, files and bytes (their manifest lists do not exist: neither
measured path reads one), registered into the catalog. Then measures, each from a cold catalog:

- the first page (100 tables, with cards and badges) as the server extension answers it;
- the first page sorted by live bytes (every table's metadata file read to order them);
- the cheap pass of the namespace health report over all N tables;
- the peer: PyIceberg loading each of the N tables one after another (what a script would do to list
  them with their snapshots), in the same run.

    python benchmarks/lake_browser.py [--tables 1000] [--page 100]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from icebook.io import catalogs

CATALOG = "bench"
NAMESPACE = "lake"
DAY_MS = 86_400_000


def _metadata(location: str, i: int, now_ms: int) -> dict[str, Any]:
    snapshots = []
    files, records, size = 0, 0, 0
    for s in range(1 + i % 5):
        added = 1 + (i + s) % 7
        files, records, size = files + added, records + added * 1000, size + added * (4 << 20 if i % 3 else 64 << 20)
        snapshots.append(
            {
                "snapshot-id": 1000 * i + s + 1,
                **({"parent-snapshot-id": 1000 * i + s} if s else {}),
                "sequence-number": s + 1,
                "timestamp-ms": now_ms - (10 - s) * DAY_MS,
                "manifest-list": f"{location}/metadata/snap-{1000 * i + s + 1}-1-{uuid.uuid4()}.avro",
                "summary": {
                    "operation": "append",
                    "added-data-files": str(added),
                    "total-data-files": str(files),
                    "total-delete-files": str(s if i % 4 == 0 else 0),
                    "total-records": str(records),
                    "total-files-size": str(size),
                    "total-position-deletes": "0",
                    "total-equality-deletes": "0",
                },
                "schema-id": 0,
            }
        )
    current = snapshots[-1]["snapshot-id"]
    return {
        "format-version": 2,
        "table-uuid": str(uuid.uuid4()),
        "location": location,
        "last-sequence-number": len(snapshots),
        "last-updated-ms": now_ms,
        "last-column-id": 2,
        "current-schema-id": 0,
        "schemas": [
            {
                "type": "struct",
                "schema-id": 0,
                "fields": [
                    {"id": 1, "name": "id", "required": False, "type": "long"},
                    {"id": 2, "name": "name", "required": False, "type": "string"},
                ],
            }
        ],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": []}],
        "last-partition-id": 999,
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": {},
        "current-snapshot-id": current,
        "refs": {"main": {"snapshot-id": current, "type": "branch"}},
        "snapshots": snapshots,
        "snapshot-log": [{"snapshot-id": s["snapshot-id"], "timestamp-ms": s["timestamp-ms"]} for s in snapshots],
        "metadata-log": [],
    }


def build(root: Path, tables: int, catalog_name: str = CATALOG) -> dict[str, str]:
    """A SQL catalog named ``catalog_name`` (a SQL catalog's rows carry its name) of ``tables`` tables."""
    from pyiceberg.catalog.sql import SqlCatalog

    warehouse = root / "warehouse"
    warehouse.mkdir()
    properties = {"type": "sql", "uri": f"sqlite:///{root / 'catalog.db'}", "warehouse": warehouse.as_uri()}
    catalog = SqlCatalog(catalog_name, **properties)
    catalog.create_namespace(NAMESPACE)
    now = int(time.time() * 1000)
    for i in range(tables):
        location = warehouse / NAMESPACE / f"table_{i:05d}"
        (location / "metadata").mkdir(parents=True)
        path = location / "metadata" / f"00001-{uuid.uuid4()}.metadata.json"
        path.write_text(json.dumps(_metadata(location.as_uri(), i, now)))
        catalog.register_table((NAMESPACE, f"table_{i:05d}"), path.as_uri())
    return properties


def _configure(properties: dict[str, str]) -> None:
    import os

    for key, value in properties.items():
        os.environ[f"PYICEBERG_CATALOG__{CATALOG.upper()}__{key.upper()}"] = value


def _cold() -> None:
    """Forget loaded catalogs, so each measurement connects and lists from scratch."""
    catalogs._loaded.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--page", type=int, default=100)
    args = parser.parse_args()

    from icebook.analysis.maintenance.lake_health import lake_health
    from icebook.server.lake_browser import table_page

    with tempfile.TemporaryDirectory(prefix="icebook-lake-bench-") as tmp:
        started = time.perf_counter()
        properties = build(Path(tmp), args.tables)
        print(f"built {args.tables} tables (metadata only) in {time.perf_counter() - started:.1f} s")
        _configure(properties)

        _cold()
        started = time.perf_counter()
        page = table_page(CATALOG, NAMESPACE, offset=0, limit=args.page)
        first_page = time.perf_counter() - started
        assert page.get("total") == args.tables and len(page["tables"]) == min(args.page, args.tables), page
        assert all(t["card"] is not None for t in page["tables"]), [t["error"] for t in page["tables"] if t["error"]][
            :3
        ]

        _cold()
        started = time.perf_counter()
        largest = table_page(CATALOG, NAMESPACE, offset=0, limit=args.page, sort="bytes")
        by_bytes = time.perf_counter() - started
        sizes = [int(t["bytes"]) for t in largest["tables"]]
        assert len(sizes) == min(args.page, args.tables) and sizes == sorted(sizes, reverse=True), sizes[:5]

        _cold()
        started = time.perf_counter()
        report = lake_health(CATALOG, NAMESPACE, progress=False)
        cheap = time.perf_counter() - started
        assert len(report.rows) == args.tables and all(r.error is None for r in report.rows)

        _cold()
        catalog = catalogs.load(CATALOG)
        started = time.perf_counter()
        for name in catalog.list_tables(NAMESPACE):
            loaded = catalog.load_table(name)
            assert loaded.metadata.current_snapshot() is not None
        peer = time.perf_counter() - started

    indebted = sum(1 for r in report.rows if r.debts)
    print(f"first page ({args.page} of {args.tables} tables, cards and badges): {first_page:.2f} s (goal: 2 s)")
    print(f"first page sorted by bytes (every table's metadata file read): {by_bytes:.2f} s")
    print(f"cheap health pass over {args.tables} tables: {cheap:.2f} s (goal: 30 s); {indebted} tables with debt")
    print(f"peer: PyIceberg load_table of each of the {args.tables} tables, one after another: {peer:.2f} s")


if __name__ == "__main__":
    main()
