"""The subcommands shared by the ``%ice`` magic and the ``icebook`` command line.

One argparse grammar, one executor: the magic displays what a command returns (DataFrames,
widgets, analysis results), the command line prints it as text.
"""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from icebook.errors import IcebookError, NotFound
from icebook.table import Table, open_table


class CommandError(IcebookError):
    """A command line that does not parse, or names nothing open."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of printing and exiting (the magic must not kill the kernel)."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        raise CommandError(f"{self.prog}: {message}")

    def exit(self, status: int = 0, message: str | None = None) -> Any:  # type: ignore[override]
        raise HelpShown(self.format_help() if message is None else message)


class Text(str):
    """Plain text a command shows (a scan explanation): displays without quotes in a notebook."""

    def __repr__(self) -> str:
        return str(self)


class HelpShown(Exception):
    """``--help`` was asked for; carries the help text."""


def _at(p: argparse.ArgumentParser) -> None:
    p.add_argument("--at", help="snapshot id, branch, tag or ISO-8601 time (default: current)")


def _table(p: argparse.ArgumentParser, *, cli: bool) -> None:
    if cli:
        p.add_argument("table", help="table directory, metadata file or catalog.db.table")
    else:
        p.add_argument("--table", dest="table_name", help="which open table (default: the current one)")


def build_parser(prog: str, *, cli: bool) -> argparse.ArgumentParser:
    """The grammar. With ``cli`` every subcommand takes the table location first."""
    parser = _Parser(prog=prog, description="See inside Apache Iceberg tables and travel through their history.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    if not cli:
        p = sub.add_parser("open", help="open a table: a path, URI or catalog.db.table")
        p.add_argument("location")
        p.add_argument("--as", dest="name", help="name to refer to it by (default: the table's directory name)")
        p = sub.add_parser("use", help="make an open table the current one")
        p.add_argument("name")
        sub.add_parser("tables", help="list the open tables")
    for name, text in (
        ("history", "when each snapshot became current on main"),
        ("snapshots", "every snapshot with its operation and summary"),
        ("refs", "branches and tags with retention"),
        ("lineage", "the snapshot graph with branches and tags"),
        ("evolution", "schema, partition spec and sort order timelines"),
        ("explore", "the workbench view (notebook only)"),
    ):
        p = sub.add_parser(name, help=text)
        _table(p, cli=cli)
    for name, text in (
        ("tree", "metadata -> manifest list -> manifests -> files"),
        ("manifests", "a snapshot's manifests"),
    ):
        p = sub.add_parser(name, help=text)
        _table(p, cli=cli)
        _at(p)
    p = sub.add_parser("files", help="a snapshot's live data and delete files")
    _table(p, cli=cli)
    _at(p)
    p.add_argument("--where", help='pandas query over the files table, e.g. "content == 1"')
    for name, text in (
        ("diff", "what changed between two points"),
        ("changes", "rows inserted and deleted between two points"),
    ):
        p = sub.add_parser(name, help=text)
        _table(p, cli=cli)
        p.add_argument("a", help="from: snapshot id, branch, tag or time")
        p.add_argument("b", help="to: snapshot id, branch, tag or time")
    p = sub.add_parser("explain", help="the scan plan for a filter: what is read, skipped and why")
    _table(p, cli=cli)
    _at(p)
    p.add_argument("expr", nargs="*", help="filter, e.g. ts >= '2024-01-03' and region = 'us'")
    p = sub.add_parser("branch", help="create, replace, drop or fast-forward a branch (writes through Spark)")
    _table(p, cli=cli)
    p.add_argument("action", choices=["create", "replace", "drop", "fast-forward"])
    p.add_argument("name")
    p.add_argument("target", nargs="?", help="create/replace: snapshot id or ref (default current); fast-forward: to")
    p.add_argument("--retain-days", type=int, help="max ref age in days")
    p.add_argument("--keep", type=int, help="min snapshots to keep")
    p.add_argument("--max-snapshot-age-days", type=int, help="max snapshot age in days")
    p = sub.add_parser("tag", help="create, replace or drop a tag (writes through Spark)")
    _table(p, cli=cli)
    p.add_argument("action", choices=["create", "replace", "drop"])
    p.add_argument("name")
    p.add_argument("target", nargs="?", help="snapshot id or ref (default current)")
    p.add_argument("--retain-days", type=int, help="max ref age in days")
    for name, text in (
        ("rollback", "point main at an earlier snapshot or time"),
        ("cherrypick", "apply one snapshot onto main"),
    ):
        p = sub.add_parser(name, help=text)
        _table(p, cli=cli)
        p.add_argument("target")
    sub.add_parser("help", help="list the commands")
    return parser


@dataclass
class Session:
    """The open tables of one notebook (or one command-line call) and which one is current."""

    tables: dict[str, Table] = field(default_factory=dict)
    current: str | None = None

    def get(self, name: str | None) -> Table:
        key = name or self.current
        if key is None:
            raise CommandError("no table is open: %ice open <path | catalog.db.table> [--as NAME]")
        if key not in self.tables:
            raise NotFound(f"no open table named {key!r}", available=sorted(self.tables))
        return self.tables[key]

    def put(self, name: str, table: Table) -> Table:
        self.tables[name] = table
        self.current = name
        return table


def default_name(location: str) -> str:
    return location.rstrip("/").replace("\\", "/").split("/")[-1].split(".")[-1] or "t"


_EXPLAIN = re.compile(r"\s*explain((?:\s+--(?:at|table)\s+\S+)*)\s+(?!-)(.+)$", re.S)


def parse(parser: argparse.ArgumentParser, line: str | list[str]) -> argparse.Namespace:
    """Parse a magic's line (split like a shell) or the command line's words."""
    if isinstance(line, str) and (raw := _EXPLAIN.match(line)) and raw.group(2):
        # The filter is SQL-like text with its own quotes: keep it verbatim rather than shell-split it.
        return parser.parse_args(["explain", *shlex.split(raw.group(1)), "--", raw.group(2).strip()])
    if isinstance(line, list) and line[:1] == ["explain"]:
        line = _options_first(line)
    try:
        words = shlex.split(line) if isinstance(line, str) else line
    except ValueError as exc:
        raise CommandError(f"cannot parse {line!r}: {exc}") from None
    args = parser.parse_args(words)
    if args.command is None:
        raise CommandError("missing command; try: help")
    return args


def _options_first(words: list[str]) -> list[str]:
    """``explain TABLE --at X EXPR`` and ``explain TABLE EXPR --at X`` both parse: argparse cannot put
    an option between two positionals when the second takes any number of words."""
    options: list[str] = []
    rest: list[str] = []
    i = 1
    while i < len(words):
        if words[i] in ("--at", "--table") and i + 1 < len(words):
            options += words[i : i + 2]
            i += 2
        else:
            rest.append(words[i])
            i += 1
    return [words[0], *options, *rest]


def point(text: str | None) -> str | None:
    """Command-line text for ``at``, passed on as written: the table reads it with
    ``icebook.analysis.resolve.parse_at``, which knows the table's branch and tag names."""
    return text


def _days(n: int | None) -> int | None:
    return None if n is None else n * 86_400_000


Handler = Callable[[argparse.Namespace, Table], Any]


def _ref_op(args: argparse.Namespace, t: Table) -> Any:
    if args.command == "tag":
        if args.action == "drop":
            return t.drop_tag(args.name)
        return t.create_tag(
            args.name, point(args.target), retain_ms=_days(args.retain_days), replace=args.action == "replace"
        )
    if args.action == "drop":
        return t.drop_branch(args.name)
    if args.action == "fast-forward":
        if not args.target:
            raise CommandError("branch fast-forward NAME TO: say which branch to move to")
        return t.fast_forward(args.name, args.target)
    return t.create_branch(
        args.name,
        point(args.target),
        retain_ms=_days(args.retain_days),
        min_snapshots_to_keep=args.keep,
        max_snapshot_age_ms=_days(args.max_snapshot_age_days),
        replace=args.action == "replace",
    )


def _files(args: argparse.Namespace, t: Table) -> pd.DataFrame:
    df = t.inspect.files(at=point(args.at))
    if args.where:
        try:
            df = df.query(args.where)
        except Exception as exc:  # pandas raises many types for a bad expression
            raise CommandError(f"--where {args.where!r}: {exc}") from None
    return df


HANDLERS: dict[str, Handler] = {
    "history": lambda a, t: t.inspect.history(),
    "snapshots": lambda a, t: t.inspect.snapshots(),
    "refs": lambda a, t: t.inspect.refs(),
    "manifests": lambda a, t: t.inspect.manifests(at=point(a.at)),
    "files": _files,
    "tree": lambda a, t: t.tree(at=point(a.at)),
    "diff": lambda a, t: t.diff(point(a.a), point(a.b)),
    "changes": lambda a, t: t.changes(point(a.a), point(a.b)),
    "lineage": lambda a, t: t.lineage(),
    "evolution": lambda a, t: t.evolution(),
    "explain": lambda a, t: Text(t.scan(at=point(a.at), filter=" ".join(a.expr) or None).explain()),
    "explore": lambda a, t: t.explore(),
    "branch": _ref_op,
    "tag": _ref_op,
    "rollback": lambda a, t: t.rollback(point(a.target)),
    "cherrypick": lambda a, t: t.cherry_pick(point(a.target)),
}
CHANGES_TABLE = {"branch", "tag", "rollback", "cherrypick"}


def execute(args: argparse.Namespace, session: Session, parser: argparse.ArgumentParser) -> Any:
    """Run one parsed command against ``session``; returns what the command shows."""
    command = args.command
    if command == "help":
        return parser.format_help()
    if command == "open":
        return session.put(args.name or default_name(args.location), open_table(args.location))
    if command == "use":
        session.get(args.name)
        session.current = args.name
        return session.tables[args.name]
    if command == "tables":
        return pd.DataFrame(
            [(n, t.location, n == session.current) for n, t in session.tables.items()],
            columns=["name", "location", "current"],
        )
    if hasattr(args, "table"):  # command line: the table is the first argument
        table = open_table(args.table)
        session.put(default_name(args.table), table)
    else:
        table = session.get(args.table_name)
    result = HANDLERS[command](args, table)
    if command in CHANGES_TABLE and isinstance(result, Table):
        name = args.table_name or session.current if not hasattr(args, "table") else default_name(args.table)
        if name is not None:
            session.tables[name] = result  # the open table now shows the new state
    return result
