"""The ``icebook`` command line: the same subcommands as the ``%ice`` magic, as text."""

from __future__ import annotations

import argparse
import sys

from icebook import __version__
from icebook.errors import IcebookError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="icebook", description="See inside Apache Iceberg tables.")
    parser.add_argument("--version", action="version", version=f"icebook {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="build the demo warehouse (once) and print its location")
    demo.add_argument("--kind", default="demo", choices=["demo", "test"], help="which cached warehouse")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "demo":
            from icebook.scenarios.build import ensure_warehouse

            print(ensure_warehouse(args.kind))
    except IcebookError as exc:
        print(f"icebook: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
