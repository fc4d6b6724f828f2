"""What the lake browser's endpoints answer, as plain JSON-ready data (no web framework here).

Catalogs are PyIceberg's configured ones, then the Spark catalogs a notebook kernel's session has by
Spark's configuration (read without starting Spark, which the browser never does; Hadoop catalogs are
browsed by their warehouse directories, as Iceberg lays them out: ``<warehouse>/<namespace>/<table>/metadata``;
a catalog of another type shows why it is not listed). A catalog that cannot be reached answers with its
one-line error in place of its namespaces; a table that cannot be read, with its error in place of its card.
Tables come in pages: the namespace is listed once per request (one catalog call), and only the
page's tables are resolved and their metadata files read, in parallel.

Each table shows its **live bytes**: the data and delete files in main's current snapshot, as that
snapshot's summary totals them (``total-files-size``), what ``t.storage()`` files under "data" and
"deletes". Not history, other refs, metadata or orphans: those need the manifests read and the location
listed (``t.storage()``): over the 16 scenario tables, 57 times the time of their metadata files alone
(``benchmarks/table_bytes.py``), and growing with every file and manifest, too slow for a namespace of
thousands. (On a v3 table with deletion vectors the summary counts each vector's blob, ``t.storage()``
the whole Puffin file.) Sorted by bytes, a page is cut from the whole
namespace in that order, so every table's metadata file is read for it (the cheap pass of the namespace
health report). The pages after the first are cut from the order the first page was cut from (kept
``ORDER_TTL_S`` seconds, while the namespace lists the same tables), so that paging neither reads every
table again nor skips or repeats a table that changed size in between; a first page always reads afresh.
A table whose bytes are unknown says why in its own place, and sorts after the others.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from icebook.analysis.maintenance.lake_health import Debt, Resolver, TableHealth, read_cards, report_debts
from icebook.engines import spark_session
from icebook.errors import IcebookError, NotFound, one_line
from icebook.io import catalogs
from icebook.io.catalogs import CatalogTable
from icebook.io.fileio import default_fileio
from icebook.io.locate import locate_metadata
from icebook.table.opening import open_table

PAGE = 100
MAX_PAGE = 500
SORTS = ("name", "bytes")
"""How a namespace's tables are ordered: by name (only the page's tables are read) or by live bytes, largest
first (every table's metadata file is read)."""
ORDER_TTL_S = 300.0
"""How long the pages after a first page sorted by bytes are cut from that page's order."""
_MAX_ORDERS = 32
_orders: OrderedDict[tuple[str, str, str], tuple[float, tuple[str, ...], list[TableHealth]]] = OrderedDict()
_orders_lock = threading.Lock()


def spark_catalogs() -> dict[str, spark_session.ConfiguredCatalog]:
    """The Spark catalogs a notebook kernel's session has (``spark_session.configured_catalogs``: Spark's
    configuration, never a started session) that PyIceberg does not also name: a name both configure
    resolves through PyIceberg, as ``icebook.open`` resolves it."""
    try:
        shadowed = set(catalogs.catalog_names())
    except IcebookError:
        shadowed = set()
    return {name: found for name, found in spark_session.configured_catalogs().items() if name.lower() not in shadowed}


def _spark_warehouse(found: spark_session.ConfiguredCatalog) -> Path:
    """A Spark catalog's warehouse directory, or why icebook cannot browse it, in one line."""
    where = f"Spark catalog {found.name!r} ({found.source})"
    if found.type != "hadoop":
        raise NotFound(
            f"{where} is of type {found.type or 'unset'!r}: icebook lists only Hadoop catalogs from Spark's "
            "configuration (configure it as a PyIceberg catalog to browse it here)"
        )
    warehouse = found.local_warehouse()
    if warehouse is None:
        raise NotFound(f"{where} has the warehouse {found.warehouse!r}: icebook lists only local Hadoop warehouses")
    if not warehouse.is_dir():
        raise NotFound(f"{where}: its warehouse {warehouse} does not exist")
    return warehouse


def catalog_list() -> list[dict[str, Any]]:
    """Every configured catalog: name, type, URI and warehouse (credentials redacted), or its error."""
    try:
        names = catalogs.catalog_names()
    except IcebookError as exc:
        names, out = [], [{"name": "(configuration)", "error": one_line(exc)}]
    else:
        out = []
    for name in names:
        try:
            out.append({"source": "pyiceberg", **catalogs.describe(name)})
        except IcebookError as exc:
            out.append({"name": name, "error": one_line(exc)})
    for name, found in sorted(spark_catalogs().items()):
        row = {
            "name": name,
            "source": "spark",
            "type": f"{found.type or 'unset'} (Spark)",
            "warehouse": found.warehouse,
        }
        try:
            _spark_warehouse(found)
        except IcebookError as exc:
            row["error"] = one_line(exc)
        out.append(row)
    return out


def _hadoop_tables(warehouse: Path, namespace: str) -> list[str]:
    directory = warehouse / namespace
    if not directory.is_dir():
        raise NotFound(f"no namespace {namespace!r} in the warehouse {warehouse}")
    return sorted(f"{namespace}.{d.name}" for d in directory.iterdir() if (d / "metadata").is_dir())


def _hadoop_namespaces(warehouse: Path) -> list[str]:
    return sorted(d.name for d in warehouse.iterdir() if d.is_dir() and not (d / "metadata").is_dir())


def _hadoop_resolver(warehouse: Path) -> Callable[[str, str], CatalogTable]:
    def resolve(catalog: str, table: str) -> CatalogTable:
        namespace, _, name = table.rpartition(".")
        location = warehouse / namespace / name
        return CatalogTable(
            catalog=catalog,
            namespace=(namespace,),
            name=name,
            metadata_location=locate_metadata(default_fileio(), os.fspath(location)),
            properties={},
        )

    return resolve


def namespace_list(catalog: str, parent: str = "") -> dict[str, Any]:
    try:
        spark = spark_catalogs()
        if catalog in spark and not parent:
            return {"namespaces": _hadoop_namespaces(_spark_warehouse(spark[catalog]))}
        return {"namespaces": catalogs.list_namespaces(catalog, parent)}
    except Exception as exc:  # an unreachable catalog: its one-line error, shown in its place
        return {"error": one_line(exc)}


def table_page(
    catalog: str, namespace: str, *, offset: int = 0, limit: int = PAGE, text: str = "", sort: str = "name"
) -> dict[str, Any]:
    """One page of a namespace's tables (filtered by a case-insensitive substring of the name, ordered by
    ``sort``, one of ``SORTS``), each with its card, live bytes and metadata debts."""
    if sort not in SORTS:
        return {"error": f"sort must be one of {', '.join(SORTS)}, not {sort!r}"}
    spark = spark_catalogs()
    resolve = None
    try:
        if catalog in spark:
            warehouse = _spark_warehouse(spark[catalog])
            resolve = _hadoop_resolver(warehouse)
            names = _hadoop_tables(warehouse, namespace)
        else:
            names = catalogs.list_tables(catalog, namespace)
    except Exception as exc:
        return {"error": one_line(exc)}
    wanted = text.casefold()
    if wanted:
        names = [n for n in names if wanted in n.rsplit(".", 1)[-1].casefold()]
    offset = max(offset, 0)
    limit = min(max(limit, 1), MAX_PAGE)
    if sort == "bytes":
        rows = _ordered_by_bytes(catalog, namespace, wanted, names, resolve, first=offset == 0)[offset : offset + limit]
    else:
        rows = read_cards(catalog, names[offset : offset + limit], resolve=resolve)
    tables = [row_json(r) for r in rows]
    if resolve is not None:  # the kernel's session may not be started yet: its tables open by their location
        for table in tables:
            table["open"] = table["card"]["location"] if table["card"] else None
    return {"total": len(names), "offset": offset, "tables": tables}


def deep_health(identifier: str) -> dict[str, Any]:
    """The table's full health (manifests read, location listed) as debts, on demand."""
    try:
        report = open_table(identifier).maintenance.health(list_files=True)
    except Exception as exc:
        return {"identifier": identifier, "error": one_line(exc)}
    debts = report_debts(report)
    return {
        "identifier": identifier,
        "badge": "debt" if debts else "ok",
        "debts": [debt_json(d, identifier) for d in debts],
        "summary": report.summary(),
    }


def locate(root_dir: str, path: str) -> dict[str, Any]:
    """A file-browser path (relative to the server's root) as the metadata file icebook would open."""
    root = Path(root_dir).resolve()
    target = (root / path).resolve()
    if target != root and root not in target.parents:
        return {"error": f"{path!r} is outside the server's root directory"}
    try:
        metadata = locate_metadata(default_fileio(), os.fspath(target))
    except Exception as exc:
        return {"error": one_line(exc)}
    return {"path": os.fspath(target), "metadata_location": metadata, "name": target.name}


def live_bytes(row: TableHealth) -> tuple[int | None, str | None]:
    """A table's live bytes (data and delete files in main's current snapshot, from its summary), or None
    and why they are unknown, in one line."""
    if row.error is not None:
        return None, row.error
    card = row.card
    if card is None or card.current_snapshot_id is None:
        return 0, None  # no snapshot: nothing is live
    if card.bytes is None:
        return None, f"bytes unknown: snapshot {card.current_snapshot_id}'s summary has no total-files-size"
    return card.bytes, None


def _ordered_by_bytes(
    catalog: str, namespace: str, wanted: str, names: list[str], resolve: Resolver | None, *, first: bool
) -> list[TableHealth]:
    """Every listed table's card, largest first: read afresh for a first page, else the first page's order
    while it is recent and the listing is the same."""
    key, listed, now = (catalog, namespace, wanted), tuple(names), time.monotonic()
    if not first:
        with _orders_lock:
            found = _orders.get(key)
        if found is not None and now - found[0] < ORDER_TTL_S and found[1] == listed:
            return found[2]
    rows = sorted(read_cards(catalog, names, resolve=resolve), key=_by_bytes)
    with _orders_lock:
        _orders[key] = (now, listed, rows)
        _orders.move_to_end(key)
        while len(_orders) > _MAX_ORDERS:
            _orders.popitem(last=False)
    return rows


def _by_bytes(row: TableHealth) -> tuple[bool, int, str]:
    """Largest first; unknown bytes after every known size; then by name."""
    size, _why = live_bytes(row)
    return size is None, -(size or 0), row.identifier


def row_json(row: TableHealth) -> dict[str, Any]:
    card = asdict(row.card) if row.card is not None else None
    if card is not None and row.card is not None:
        card["current_snapshot_time"] = row.card.current_snapshot_time
        # JavaScript numbers lose integers above 2**53: snapshot ids travel as text.
        card["current_snapshot_id"] = (
            None if row.card.current_snapshot_id is None else str(row.card.current_snapshot_id)
        )
    size, bytes_error = live_bytes(row)
    return {
        "identifier": row.identifier,
        "open": row.identifier,  # what the kernel opens: the name (a Spark session's table: its location)
        "name": row.identifier.rsplit(".", 1)[-1],
        "badge": row.badge,
        "error": row.error,
        # Text, like snapshot ids: byte counts above 2**53 are exact only as digits.
        "bytes": None if size is None else str(size),
        "bytes_error": None if row.error is not None else bytes_error,
        "card": card,
        "debts": [debt_json(d, row.identifier) for d in row.debts],
    }


def debt_json(debt: Debt, identifier: str) -> dict[str, Any]:
    return {
        "kind": debt.kind.debt,
        "title": debt.title,
        "procedure": debt.procedure.sql(identifier) if debt.procedure else None,
        "icebook": debt.procedure.icebook if debt.procedure else None,
    }


__all__ = ["SORTS", "catalog_list", "deep_health", "live_bytes", "locate", "namespace_list", "table_page"]
