"""Where a table's time and bytes go: ``cost`` (a read down to row groups, ``Table.query_cost``) and
``storage`` (the bytes under a table's location by what keeps them, ``Table.storage``; of every table of
``CATALOG.NAMESPACE``, most bytes first).

``%ice cost --where FILTER`` takes the rest of the line as the filter, as written.
"""

from __future__ import annotations

import argparse
from typing import Any

from icebook.commands.grammar import Call, Command, Context, at_argument
from icebook.commands.maintenance_commands import table_or_namespace, table_or_namespace_arguments
from icebook.errors import IcebookError, one_line
from icebook.io import catalogs
from icebook.table.opening import open_table


def _cost_arguments(p: argparse.ArgumentParser, context: Context) -> None:
    at_argument(p, context)
    p.add_argument("--columns", help="comma-separated columns to read (default: all)")
    p.add_argument("--where", help="filter, e.g. ts >= '2024-01-03' and region = 'us' (last: the rest of the line)")


def _cost(call: Call) -> Any:
    args = call.args
    columns = [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns else None
    return call.table.query_cost(args.where or None, columns=columns, at=args.at)


def _storage(call: Call) -> Any:
    from icebook.analysis.cost.storage import namespace_storage

    target = table_or_namespace(call)
    if isinstance(target, tuple):
        catalog, name = target
        return namespace_storage(_table_storage(f"{catalog}.{t}") for t in catalogs.list_tables(catalog, name))
    return target.storage(at=call.args.at)


def _table_storage(identifier: str) -> tuple[str, Any]:
    try:
        return identifier, open_table(identifier).storage()
    except IcebookError as exc:
        return identifier, one_line(exc)


COST_COMMANDS: tuple[Command, ...] = (
    Command(
        name="cost",
        help="what a read costs: files, row groups skipped by their statistics and why, bytes read",
        run=_cost,
        arguments=_cost_arguments,
        verbatim="--where",
        group="query",
    ),
    Command(
        name="storage",
        help="where the bytes are: live data and deletes, other refs, retained history, metadata, orphans; "
        "of one table, or of every table of CATALOG.NAMESPACE, most bytes first",
        run=_storage,
        arguments=table_or_namespace_arguments,
        on_table=False,
        group="maintenance",
    ),
)

__all__ = ["COST_COMMANDS"]
