"""The ``timelapse`` subcommand: the table replayed through its history (``Table.timelapse``).

``%ice timelapse`` shows the scrubber widget (its static fallback in a saved notebook); ``icebook
timelapse`` prints the frames as text. ``--partitions`` shows the per-partition state instead.
"""

from __future__ import annotations

import argparse
from typing import Any

from icebook.commands.grammar import Call, Command, Context


def _arguments(p: argparse.ArgumentParser, _context: Context) -> None:
    p.add_argument("--ref", help="only this branch's or tag's ancestry (default: every snapshot)")
    p.add_argument("--since", help="from this snapshot id, ref or time (inclusive)")
    p.add_argument("--until", help="up to this snapshot id, ref or time (inclusive)")
    p.add_argument(
        "--partitions", action="store_true", help="the per-partition state at every frame (long form) instead"
    )


def _timelapse(call: Call) -> Any:
    lapse = call.table.timelapse(ref=call.args.ref, since=call.args.since, until=call.args.until)
    return lapse.partitions_frame() if call.args.partitions else lapse


TIMELAPSE_COMMANDS = (
    Command(
        name="timelapse",
        help="replay the table through its history: one frame per snapshot, growth, deletes, partitions",
        run=_timelapse,
        arguments=_arguments,
        group="history",
    ),
)

__all__ = ["TIMELAPSE_COMMANDS"]
