"""The ``icebook`` command line: the ``%ice`` commands (one grammar), printed for a terminal.

icebook demo            # build the demo warehouse (once): its tables and what to try next
icebook tables path/to/warehouse
icebook history path/to/table
icebook files path/to/table --at release-2024-01 --where "content == 1"
icebook tree path/to/table --at 1234567890
icebook diff path/to/table A B
icebook sql path/to/table "SELECT count(*) FROM t" --engine arrow --csv

Tables are drawn at the terminal's width (``COLUMNS``); ``--wide`` shows every column in full,
``--json`` and ``--csv`` write rows for scripts.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

import pandas as pd

from icebook.commands import (
    CommandError,
    Context,
    HelpShown,
    NotInThisContext,
    Session,
    build_parser,
    execute,
    parse,
)
from icebook.display.registry import render_text
from icebook.display.terminal import fit_lines, frame_csv, frame_json, frame_text, terminal_width
from icebook.errors import IcebookError, one_line


def main(argv: list[str] | None = None, *, out: TextIO | None = None) -> int:
    """Run one command; 0 when it ran, 1 when it failed, 2 when it only works in a notebook."""
    words = sys.argv[1:] if argv is None else list(argv)
    stream = out or sys.stdout
    parser = build_parser(Context.CLI)
    try:
        args = parse(parser, words)
        text = shown(execute(args, Session(), Context.CLI, parser), args)
    except HelpShown as help_text:
        print(help_text.text.rstrip(), file=stream)
        return 0
    except NotInThisContext as exc:
        print(f"icebook: {exc}", file=sys.stderr)
        return 2
    except IcebookError as exc:
        message = one_line(exc)
        print(message if message.startswith("icebook") else f"icebook: {message}", file=sys.stderr)
        return 1
    try:
        print(text, file=stream)
    except BrokenPipeError:  # the reader stopped early (``| head``): not an error of the command
        sys.stderr.close()
    return 0


def shown(result: Any, args: argparse.Namespace) -> str:
    """``result`` as the command line prints it: a table at the terminal's width (``--wide``: in full),
    ``--json`` or ``--csv`` rows, or the result's text with long lines shortened in the middle."""
    if args.json or args.csv:
        rows = result.to_pandas() if not isinstance(result, pd.DataFrame) and hasattr(result, "to_pandas") else result
        if not isinstance(rows, pd.DataFrame):
            raise CommandError(f"--{'json' if args.json else 'csv'}: {args.command} shows text, not rows")
        return frame_json(rows) if args.json else frame_csv(rows)
    if isinstance(result, pd.DataFrame):
        return frame_text(result, wide=args.wide)
    text = render_text(result)
    width = terminal_width()
    return text if args.wide or width is None else fit_lines(text, width)


if __name__ == "__main__":
    raise SystemExit(main())
