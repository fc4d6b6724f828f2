"""Where a table's time and bytes go: ``cost`` (a read down to row groups, ``Table.query_cost``).

``%ice cost --where FILTER`` takes the rest of the line as the filter, as written.
"""

from __future__ import annotations

import argparse
from typing import Any

from icebook.commands.model import Call, Command, Context, at_argument


def _cost_arguments(p: argparse.ArgumentParser, context: Context) -> None:
    at_argument(p, context)
    p.add_argument("--columns", help="comma-separated columns to read (default: all)")
    p.add_argument("--where", help="filter, e.g. ts >= '2024-01-03' and region = 'us' (last: the rest of the line)")


def _cost(call: Call) -> Any:
    args = call.args
    columns = [c.strip() for c in args.columns.split(",") if c.strip()] if args.columns else None
    return call.table.query_cost(args.where or None, columns=columns, at=args.at)


COST_COMMANDS: tuple[Command, ...] = (
    Command(
        name="cost",
        help="what a read costs: files, row groups skipped by their statistics and why, bytes read",
        run=_cost,
        arguments=_cost_arguments,
        verbatim="--where",
        group="query",
    ),
)

__all__ = ["COST_COMMANDS"]
