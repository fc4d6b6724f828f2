"""The ``icebook`` command line: the ``%ice`` commands (one grammar), printed as text.

icebook history path/to/table
icebook files path/to/table --at release-2024-01 --where "content == 1"
icebook tree path/to/table --at 1234567890
icebook diff path/to/table A B
icebook sql path/to/table "SELECT count(*) FROM t" --engine arrow
icebook demo            # build the demo warehouse (once) and print where it is
"""

from __future__ import annotations

import sys
from typing import TextIO

from icebook.commands import Context, HelpShown, NotInThisContext, Session, build_parser, execute, parse
from icebook.display.registry import render_text
from icebook.errors import IcebookError


def main(argv: list[str] | None = None, *, out: TextIO | None = None) -> int:
    """Run one command; 0 when it ran, 1 when it failed, 2 when it only works in a notebook."""
    words = sys.argv[1:] if argv is None else list(argv)
    stream = out or sys.stdout
    parser = build_parser(Context.CLI)
    try:
        args = parse(parser, words)
        text = render_text(execute(args, Session(), Context.CLI, parser))
    except HelpShown as shown:
        print(shown.text.rstrip(), file=stream)
        return 0
    except NotInThisContext as exc:
        print(f"icebook: {exc}", file=sys.stderr)
        return 2
    except IcebookError as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(message if message.startswith("icebook") else f"icebook: {message}", file=sys.stderr)
        return 1
    print(text, file=stream)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
