"""What the lake browser's endpoints answer, as plain JSON-ready data (no web framework here).

Catalogs are PyIceberg's configured ones. A catalog that cannot be reached answers with its one-line
error in place of its namespaces; a table that cannot be read, with its error in place of its card.
Tables come in pages: the namespace is listed once per request (one catalog call), and only the
page's tables are resolved and their metadata files read, in parallel.
"""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

from icebook.analysis.maintenance.lake_health import Debt, TableHealth, one_line, read_cards, report_debts
from icebook.errors import IcebookError
from icebook.io import catalogs
from icebook.io.fileio import default_fileio
from icebook.io.locate import locate_metadata
from icebook.table import open_table

PAGE = 100
MAX_PAGE = 500


def catalog_list() -> list[dict[str, Any]]:
    """Every configured catalog: name, type, URI and warehouse (credentials redacted), or its error."""
    try:
        names = catalogs.catalog_names()
    except IcebookError as exc:
        return [{"name": "(configuration)", "error": one_line(exc)}]
    out: list[dict[str, Any]] = []
    for name in names:
        try:
            out.append({"source": "pyiceberg", **catalogs.describe(name)})
        except IcebookError as exc:
            out.append({"name": name, "error": one_line(exc)})
    return out


def namespace_list(catalog: str, parent: str = "") -> dict[str, Any]:
    try:
        return {"namespaces": catalogs.list_namespaces(catalog, parent)}
    except Exception as exc:  # an unreachable catalog: its one-line error, shown in its place
        return {"error": one_line(exc)}


def table_page(catalog: str, namespace: str, *, offset: int = 0, limit: int = PAGE, text: str = "") -> dict[str, Any]:
    """One page of a namespace's tables (filtered by a case-insensitive substring of the name), each
    with its card and metadata debts."""
    try:
        names = catalogs.list_tables(catalog, namespace)
    except Exception as exc:
        return {"error": one_line(exc)}
    wanted = text.casefold()
    if wanted:
        names = [n for n in names if wanted in n.rsplit(".", 1)[-1].casefold()]
    offset = max(offset, 0)
    limit = min(max(limit, 1), MAX_PAGE)
    rows = read_cards(catalog, names[offset : offset + limit])
    return {"total": len(names), "offset": offset, "tables": [row_json(r) for r in rows]}


def deep_health(identifier: str) -> dict[str, Any]:
    """The table's full health (manifests read, location listed) as debts, on demand."""
    try:
        report = open_table(identifier).health(list_files=True)
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


def row_json(row: TableHealth) -> dict[str, Any]:
    card = asdict(row.card) if row.card is not None else None
    if card is not None and row.card is not None:
        card["current_snapshot_time"] = row.card.current_snapshot_time
        # JavaScript numbers lose integers above 2**53: snapshot ids travel as text.
        card["current_snapshot_id"] = (
            None if row.card.current_snapshot_id is None else str(row.card.current_snapshot_id)
        )
    return {
        "identifier": row.identifier,
        "name": row.identifier.rsplit(".", 1)[-1],
        "badge": row.badge,
        "error": row.error,
        "card": card,
        "debts": [debt_json(d, row.identifier) for d in row.debts],
    }


def debt_json(debt: Debt, identifier: str) -> dict[str, Any]:
    return {
        "kind": debt.kind,
        "title": debt.title,
        "procedure": debt.procedure.sql(identifier) if debt.procedure else None,
        "icebook": debt.procedure.icebook if debt.procedure else None,
    }


__all__ = ["catalog_list", "deep_health", "locate", "namespace_list", "table_page"]
