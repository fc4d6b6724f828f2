"""Where a table's time and bytes go: ``cost`` (a read down to row groups, ``Table.query_cost``) and
``storage`` (the bytes under a table's location by what keeps them, ``Table.storage``; of every table of
``CATALOG.NAMESPACE``, most bytes first).

``%ice cost --where FILTER`` takes the rest of the line as the filter, as written.
"""

from __future__ import annotations

import argparse
from typing import Any

from icebook.commands.maintenance import namespace_of
from icebook.commands.model import Call, Command, CommandError, Context, at_argument, default_name, one_line
from icebook.errors import IcebookError
from icebook.io import catalogs
from icebook.table import open_table


def _cost_arguments(p: argparse.ArgumentParser, context: Context) -> None:
    at_argument(p, context)
    p.add_argument("--columns", help="comma-separated columns to read (default: all)")
    p.add_argument("--where", help="filter, e.g. ts >= '2024-01-03' and region = 'us' (last: the rest of the line)")


def _cost(call: Call) -> Any:
    args = call.args
    columns = [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns else None
    return call.table.query_cost(args.where or None, columns=columns, at=args.at)


def _storage_arguments(p: argparse.ArgumentParser, context: Context) -> None:
    if context is Context.CLI:
        p.add_argument("target", help="a table (directory, metadata file or catalog.db.table), or CATALOG.NAMESPACE")
    else:
        p.add_argument("target", nargs="?", help="CATALOG.NAMESPACE: every table of it (default: one open table)")
        p.add_argument("--table", help="which open table (default: the current one)")
    at_argument(p, context)


def _storage(call: Call) -> Any:
    from icebook.analysis.cost.storage import namespace_storage

    args = call.args
    namespace = namespace_of(args.target) if args.target else None
    if namespace is not None:
        if args.at is not None or getattr(args, "table", None):
            raise CommandError("storage CATALOG.NAMESPACE sums every table's current state: no --at or --table")
        catalog, name = namespace
        return namespace_storage(_table_storage(f"{catalog}.{t}") for t in catalogs.list_tables(catalog, name))
    if call.context is Context.CLI:
        table = call.session.put(default_name(args.target), open_table(args.target))
    elif args.target:
        raise CommandError(
            f"storage {args.target}: not a namespace of a configured catalog (open a table with %ice open)"
        )
    else:
        table = call.session.get(args.table)
    return table.storage(at=args.at)


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
        arguments=_storage_arguments,
        on_table=False,
        group="maintenance",
    ),
)

__all__ = ["COST_COMMANDS"]
