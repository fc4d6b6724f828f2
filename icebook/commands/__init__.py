"""The one command grammar of ``icebook`` (the command line) and ``%ice`` / ``%%ice`` (notebooks).

Every subcommand is a ``Command`` in ``COMMANDS``: its arguments, where it runs and what it does.
``build_parser(context)`` makes the argparse grammar from that table, ``parse`` reads a line or a list
of words, ``execute`` runs the parsed command and returns plain results (DataFrames, analysis results,
a ``MetadataTree``, text). The ``Context`` says only two things: how a command names its table (the
command line takes the table's location first; a notebook names one of its open tables with ``--table``)
and who shows the result (the command line prints ``render_text``; the magic lets IPython display it).
Points in history (``--at``, diff's ``A B``, targets) are passed on as written: the table reads them
with ``icebook.analysis.resolve.parse_at``, which knows its branch and tag names.
"""

from __future__ import annotations

import argparse
import io
import re
import shlex
import shutil
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from icebook.analysis._frames import exact_frame
from icebook.analysis.engine_choice import Engine
from icebook.analysis.resolve import AtRef
from icebook.commands.cost_commands import COST_COMMANDS
from icebook.commands.grammar import (  # noqa: F401  (the grammar's public names live here too)
    BOTH,
    GROUPS,
    NOTEBOOK,
    Arguments,
    Call,
    Command,
    CommandError,
    CommandParser,
    Context,
    Handler,
    HelpShown,
    NotInThisContext,
    Session,
    ShowVersion,
    Text,
    at_argument,
    days_ms,
    default_name,
    inspect_command,
)
from icebook.commands.lake_commands import LAKE_COMMANDS, is_warehouse_directory, warehouse_tables
from icebook.commands.maintenance_commands import MAINTENANCE_COMMANDS
from icebook.commands.timelapse_commands import TIMELAPSE_COMMANDS
from icebook.display.terminal import with_field_types
from icebook.display.tree_render import MetadataTree
from icebook.errors import EngineError
from icebook.table import Table
from icebook.table.opening import catalog_listing, open_table, table_listing
from icebook.version import __version__


def _files_arguments(p: argparse.ArgumentParser, context: Context) -> None:
    at_argument(p, context)
    p.add_argument("--where", help='pandas query over the files table, e.g. "content == 1"')


def _two_points(p: argparse.ArgumentParser, _context: Context) -> None:
    p.add_argument("a", help="from: snapshot id, branch, tag or time")
    p.add_argument("b", help="to: snapshot id, branch, tag or time")


def _explain_arguments(p: argparse.ArgumentParser, context: Context) -> None:
    at_argument(p, context)
    p.add_argument("expr", nargs="*", help="filter, e.g. ts >= '2024-01-03' and region = 'us'")


def _sql_arguments(p: argparse.ArgumentParser, context: Context) -> None:
    where = p.add_mutually_exclusive_group()
    where.add_argument("--at", help="snapshot id, branch, tag or ISO-8601 time")
    where.add_argument("--branch", help="read this branch")
    where.add_argument("--tag", help="read this tag")
    p.add_argument("--engine", choices=[e.value for e in Engine], help="default: spark (IceMagics.default_engine)")
    if context is Context.NOTEBOOK:
        p.add_argument("-o", "--output", help="store the result in this notebook variable")
    p.add_argument("query", nargs="+", help="SQL over view t (the table) and the open tables by name")


def _branch_arguments(p: argparse.ArgumentParser, _context: Context) -> None:
    p.add_argument("action", choices=["create", "replace", "drop", "fast-forward"])
    p.add_argument("name")
    p.add_argument("target", nargs="?", help="create/replace: snapshot id or ref (default current); fast-forward: to")
    p.add_argument("--retain-days", type=int, help="max ref age in days")
    p.add_argument("--keep", type=int, help="min snapshots to keep")
    p.add_argument("--max-snapshot-age-days", type=int, help="max snapshot age in days")


def _tag_arguments(p: argparse.ArgumentParser, _context: Context) -> None:
    p.add_argument("action", choices=["create", "replace", "drop"])
    p.add_argument("name")
    p.add_argument("target", nargs="?", help="snapshot id or ref (default current)")
    p.add_argument("--retain-days", type=int, help="max ref age in days")


def _target(p: argparse.ArgumentParser, _context: Context) -> None:
    p.add_argument("target")


def _open_arguments(p: argparse.ArgumentParser, _context: Context) -> None:
    p.add_argument(
        "location", help="a table directory, metadata file or URI, catalog.namespace.table, or namespace.table"
    )
    p.add_argument("--as", dest="name", help="name to refer to it by (default: the table's directory name)")
    p.add_argument("--catalog", help="the catalog of a namespace.table name (PyIceberg's configuration or Spark's)")


def _tables_arguments(p: argparse.ArgumentParser, context: Context) -> None:
    what = "the open tables" if context is Context.NOTEBOOK else "a catalog or catalog.namespace is required"
    p.add_argument(
        "namespace",
        nargs="?",
        help=f"catalog.namespace, a catalog for all its namespaces, or a warehouse directory ({what} without)",
    )


def _use_arguments(p: argparse.ArgumentParser, _context: Context) -> None:
    p.add_argument("name")


def _files(call: Call) -> pd.DataFrame:
    args = call.args
    df = call.table.inspect.files(at=args.at)
    if args.where:
        try:
            df = df.query(args.where)
        except Exception as exc:  # pandas raises many types for a bad expression
            raise CommandError(f"--where {args.where!r}: {exc}") from None
    return df


def _tree(call: Call) -> MetadataTree:
    at = call.args.at
    table = call.table
    return MetadataTree(table=table, snapshot_id=None if at is None else table.snapshot(at).snapshot_id)


def _ref_op(call: Call) -> Any:
    args, manage = call.args, call.table.manage
    if args.command == "tag":
        if args.action == "drop":
            return manage.drop_tag(args.name)
        return manage.create_tag(
            args.name, args.target, retain_ms=days_ms(args.retain_days), replace=args.action == "replace"
        )
    if args.action == "drop":
        return manage.drop_branch(args.name)
    if args.action == "fast-forward":
        if not args.target:
            raise CommandError("branch fast-forward NAME TO: say which branch to move to")
        return manage.fast_forward(args.name, args.target)
    return manage.create_branch(
        args.name,
        args.target,
        retain_ms=days_ms(args.retain_days),
        min_snapshots_to_keep=args.keep,
        max_snapshot_age_ms=days_ms(args.max_snapshot_age_days),
        replace=args.action == "replace",
    )


def _sql(call: Call) -> pd.DataFrame:
    args = call.args
    ref = args.branch or args.tag
    at = AtRef(ref) if ref else args.at  # --at text is read by each table (parse_at)
    engine = args.engine or call.session.default_engine
    return run_sql(call.session, call.table, " ".join(args.query), at, engine)


def run_sql(session: Session, current: Table, query: str, at: Any, engine: str) -> pd.DataFrame:
    """``query`` over ``current`` as view ``t`` and every open table by its name, all at ``at``."""
    if Engine.named(engine) == Engine.ARROW:
        return _run_sql_arrow(session, current, query, at)
    from icebook.engines import spark_engine

    for name, table in session.tables.items():  # every open table by its name, same point
        if name != "t":
            point = table.spark_point(at)
            df = spark_engine.dataframe(table.metadata_location, point, identifier=table._spark_identifier())
            df.createOrReplaceTempView(name)
    result: pd.DataFrame = current.sql(query, at=at)
    return result


def _run_sql_arrow(session: Session, current: Table, query: str, at: Any) -> pd.DataFrame:
    """Without a JVM: each open table a lazy Arrow-engine scan, SQL by polars (projections and filters
    pushed into the scans)."""
    from icebook.engines import arrow_sql

    sources = {name: table.sql_source(at) for name, table in session.tables.items() if name != "t"}
    sources["t"] = current.sql_source(at)
    try:
        rows = arrow_sql.sql(sources, query)
    except EngineError as exc:
        raise CommandError(str(exc)) from None
    return exact_frame(rows)


def _cache_arguments(p: argparse.ArgumentParser, _context: Context) -> None:
    p.add_argument("action", choices=["info", "clear"], help="info: where, how many, how big; clear: delete all")


def _cache(call: Call) -> Text:
    from icebook.io.manifest_cache import shared_cache

    cache = shared_cache()
    if call.args.action == "clear":
        return Text(f"manifest cache: {cache.clear()} entries deleted from {cache.root}")
    info = cache.info()
    state = "on" if info.enabled else "off (ICEBOOK_MANIFEST_CACHE=off)"
    return Text(
        f"manifest cache: {state}\n"
        f"location: {info.root}\n"
        f"entries:  {info.entries:,}\n"
        f"size:     {info.bytes / 2**20:,.1f} MiB of {info.max_bytes / 2**20:,.0f} MiB (ICEBOOK_MANIFEST_CACHE_MB)"
    )


def _help(call: Call) -> Any:
    raise HelpShown(call.parser.format_help())


def _open(call: Call) -> Table:
    args = call.args
    return call.session.put(args.name or default_name(args.location), open_table(args.location, catalog=args.catalog))


def _use(call: Call) -> Table:
    table = call.session.get(call.args.name)
    call.session.current = call.args.name
    return table


def _tables(call: Call) -> pd.DataFrame:
    namespace = call.args.namespace
    if namespace and is_warehouse_directory(namespace):
        return warehouse_tables(Path(namespace))
    if namespace:
        return pd.DataFrame({"table": table_listing(namespace)})
    if call.context is Context.CLI:
        known = [row["catalog"] for row in catalog_listing()]
        raise CommandError(
            "icebook tables: name a catalog or catalog.namespace" + (f" ({', '.join(known)})" if known else "")
        )
    session = call.session
    return pd.DataFrame(
        [(n, t.location, n == session.current) for n, t in session.tables.items()],
        columns=["name", "location", "current"],
    )


def _catalogs(_call: Call) -> pd.DataFrame:
    return pd.DataFrame(catalog_listing(), columns=["catalog", "source", "type", "uri", "warehouse"])


COMMANDS: tuple[Command, ...] = (
    *LAKE_COMMANDS,
    Command(
        name="open",
        help="open a table: a path, URI or catalog.db.table",
        run=_open,
        arguments=_open_arguments,
        on_table=False,
        contexts=NOTEBOOK,
    ),
    Command(
        name="use",
        help="make an open table the current one",
        run=_use,
        arguments=_use_arguments,
        on_table=False,
        contexts=NOTEBOOK,
    ),
    Command(
        name="catalogs",
        help="the catalogs names resolve through (PyIceberg's configuration, Spark's session)",
        run=_catalogs,
        on_table=False,
        group="lake",
    ),
    Command(
        name="tables",
        help="the tables of a catalog namespace (in a notebook, without one: the open tables)",
        run=_tables,
        arguments=_tables_arguments,
        on_table=False,
        group="lake",
    ),
    inspect_command("history", "history", "when each snapshot became current on main", at=False),
    inspect_command("snapshots", "snapshots", "every snapshot with its operation and summary", at=False),
    inspect_command("refs", "refs", "branches and tags with retention", at=False),
    Command(
        name="lineage",
        help="the snapshot graph with branches and tags",
        run=lambda c: c.table.lineage(),
        group="history",
    ),
    Command(
        name="evolution",
        help="schema, partition spec and sort order timelines",
        run=lambda c: c.table.evolution(),
        group="history",
    ),
    Command(
        name="explore",
        help="the workbench: graph, tree, diff, evolution, queries, charts",
        run=lambda c: c.table.explore(),
        contexts=NOTEBOOK,
    ),
    Command(name="tree", help="metadata -> manifest list -> manifests -> files", run=_tree, arguments=at_argument),
    inspect_command("manifests", "manifests", "a snapshot's manifests", at=True),
    Command(name="files", help="a snapshot's live data and delete files", run=_files, arguments=_files_arguments),
    Command(
        name="v3",
        help="the v3 inspector: deletion vectors, row-id ranges, defaults, variant shredding, geo bounds",
        run=lambda c: c.table.v3(at=c.args.at),
        arguments=at_argument,
    ),
    Command(
        name="diff",
        help="what changed between two points",
        run=lambda c: c.table.diff(c.args.a, c.args.b),
        arguments=_two_points,
        group="history",
    ),
    Command(
        name="changes",
        help="rows inserted and deleted between two points",
        run=lambda c: c.table.changes(c.args.a, c.args.b),
        arguments=_two_points,
        group="history",
    ),
    Command(
        name="explain",
        help="the scan plan for a filter: what is read, skipped and why",
        run=lambda c: Text(c.table.scan(at=c.args.at, filter=" ".join(c.args.expr) or None).explain()),
        arguments=_explain_arguments,
        verbatim="expr",
        group="query",
    ),
    Command(
        name="sql",
        help="SQL over the table (view t) at a point in history; a cell of the ice cell magic runs it",
        run=_sql,
        arguments=_sql_arguments,
        verbatim="query",
        group="query",
    ),
    Command(
        name="branch",
        help="create, replace, drop or fast-forward a branch (writes through Spark)",
        run=_ref_op,
        arguments=_branch_arguments,
        changes_table=True,
        group="history",
    ),
    Command(
        name="tag",
        help="create, replace or drop a tag (writes through Spark)",
        run=_ref_op,
        arguments=_tag_arguments,
        changes_table=True,
        group="history",
    ),
    Command(
        name="rollback",
        help="point main at an earlier snapshot or time",
        run=lambda c: c.table.manage.rollback(c.args.target),
        arguments=_target,
        changes_table=True,
        group="history",
    ),
    Command(
        name="cherrypick",
        help="apply one snapshot onto main",
        run=lambda c: c.table.manage.cherry_pick(c.args.target),
        arguments=_target,
        changes_table=True,
        group="history",
    ),
    Command(
        name="cache",
        help="the disk cache of decoded manifests: info or clear",
        run=_cache,
        arguments=_cache_arguments,
        on_table=False,
        group="lake",
    ),
    Command(
        name="version",
        help="the icebook version",
        run=lambda c: Text(f"icebook {__version__}"),
        on_table=False,
        group="lake",
    ),
    Command(name="help", help="list the commands", run=_help, on_table=False, group="lake"),
    *MAINTENANCE_COMMANDS,
    *COST_COMMANDS,
    *TIMELAPSE_COMMANDS,
)
BY_NAME = {c.name: c for c in COMMANDS}


# ------------------------------------------------------------------------------------------ grammar


def build_parser(context: Context) -> CommandParser:
    """The grammar in ``context``: every command of ``COMMANDS``, tables named as the context names them."""
    prog = "icebook" if context is Context.CLI else "%ice"
    parser = CommandParser(
        prog=prog,
        description="See inside Apache Iceberg tables and travel through their history.",
        usage=f"{prog} COMMAND [options]".replace("%", "%%"),  # argparse formats usage with %
        epilog=grouped_commands(context),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action=ShowVersion, nargs=0, help="print the icebook version")
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", parser_class=CommandParser, help=argparse.SUPPRESS, prog=prog
    )
    for command in COMMANDS:
        only = "" if context in command.contexts else " (notebook only)"
        p = sub.add_parser(command.name, help=command.help + only, description=command.help)
        if command.on_table:
            if context is Context.CLI:
                p.add_argument("table", help="table directory, metadata file or catalog.db.table")
            else:
                p.add_argument("--table", help="which open table (default: the current one)")
        command.arguments(p, context)
        if context is Context.CLI:
            shown = p.add_mutually_exclusive_group()
            shown.add_argument("--wide", action="store_true", help="every column in full, whatever the width")
            shown.add_argument("--json", action="store_true", help="rows as JSON (for scripts)")
            shown.add_argument("--csv", action="store_true", help="rows as CSV (for scripts)")
    return parser


def grouped_commands(context: Context) -> str:
    """The commands by group (``GROUPS``), in the order they are declared, as ``--help`` lists them."""
    prefix = "icebook" if context is Context.CLI else "%ice"
    known = [g for g, _ in GROUPS]
    width = max(len(c.name) for c in COMMANDS) + 2
    columns = max(60, shutil.get_terminal_size().columns - 2)  # as argparse wraps its own help
    lines = ["commands:"]
    for group, about in (*GROUPS, ("other", "")):
        members = [c for c in COMMANDS if (c.group if c.group in known else "other") == group]
        if not members:
            continue
        lines += ["", f"  {group}: {about}" if about else f"  {group}:"]
        for c in members:
            only = "" if context in c.contexts else " (notebook only)"
            lines += textwrap.wrap(
                c.help + only, columns, initial_indent=f"    {c.name:<{width}}", subsequent_indent=" " * (width + 4)
            )
    lines += ["", f"{prefix} COMMAND --help: the command's own options"]
    return "\n".join(lines)


def parse(parser: argparse.ArgumentParser, line: str | Sequence[str]) -> argparse.Namespace:
    """Parse a notebook line (split like a shell, free text kept verbatim) or the command line's words.
    No command at all shows the help."""
    if isinstance(line, str):
        try:
            words = _line_words(line)
        except ValueError as exc:
            raise CommandError(f"cannot parse {line!r}: {exc}") from None
    else:
        words = _options_first(list(line))
    args = parser.parse_args(words)
    if args.command is None:
        raise HelpShown(parser.format_help())
    return args


def parse_cell(parser: argparse.ArgumentParser, line: str, cell: str) -> argparse.Namespace:
    """``%%ice OPTIONS`` with the cell as its query: the ``sql`` command."""
    try:
        options = shlex.split(line)
    except ValueError as exc:
        raise CommandError(f"cannot parse {line!r}: {exc}") from None
    return parse(parser, ["sql", *options, "--", cell])


_OPTION = re.compile(r"-{1,2}[A-Za-z][\w-]*$")
FLAGS = frozenset({"--wide", "--json", "--csv"})
"""Options of the command line that take no value (how a result is shown)."""


def _line_words(line: str) -> list[str]:
    """Words of a notebook line. For a command with free text (``explain``, ``sql``) everything after its
    leading options is one word, exactly as written: it is SQL-like text with its own quotes."""
    lexer = shlex.shlex(io.StringIO(line), posix=True, punctuation_chars=False)
    lexer.whitespace_split = True
    lexer.commenters = ""
    stream: Any = lexer.instream
    words: list[str] = []
    command: Command | None = None
    while True:
        start = stream.tell()
        word = lexer.get_token()
        if word is None or word == lexer.eof:
            return words
        if command is None:
            command = BY_NAME.get(word)
            words.append(word)
            if command is None or command.verbatim is None:  # a trailing ``# note`` is a comment, as in a shell
                return words + shlex.split(line[stream.tell() :], comments=True)
            continue
        if word == command.verbatim:  # a free-text option: the rest of the line as written
            return [*words, word, line[stream.tell() :].strip()]
        if _OPTION.match(word):
            value = lexer.get_token()
            words += [word] if value is None else [word, value]
            continue
        return [*words, "--", line[start:].strip()]


def _options_first(words: list[str]) -> list[str]:
    """For a command with free text, its options before its words: argparse cannot put an option between
    two positionals when the second takes any number of words (``explain TABLE --at X EXPR``)."""
    command = BY_NAME.get(words[0]) if words else None
    if command is None or command.verbatim is None:
        return words
    options: list[str] = []
    rest: list[str] = []
    i = 1
    while i < len(words):
        if words[i] == "--":
            rest += words[i:]
            break
        if words[i] in FLAGS:
            options.append(words[i])
            i += 1
        elif _OPTION.match(words[i]) and i + 1 < len(words):
            options += words[i : i + 2]
            i += 2
        else:
            rest.append(words[i])
            i += 1
    return [words[0], *options, *rest]


# ------------------------------------------------------------------------------------------ executor


def execute(args: argparse.Namespace, session: Session, context: Context, parser: argparse.ArgumentParser) -> Any:
    """Run one parsed command in ``context`` against ``session``; returns what the command shows."""
    command = BY_NAME[args.command]
    if context not in command.contexts:
        raise NotInThisContext(f"{command.name} works in a notebook only: %ice {command.name} in JupyterLab")
    name = None
    if command.on_table:
        if context is Context.CLI:  # the table is the first argument; the session holds it by name
            name = default_name(args.table)
            session.put(name, open_table(args.table))
        else:
            name = args.table or session.current
            session.get(name)
    result = command.run(Call(args=args, context=context, session=session, parser=parser, table_name=name))
    if isinstance(result, pd.DataFrame) and name is not None:  # its bounds shown decoded, by their columns' types
        with_field_types(result, session.get(name).metadata.schemas.values())
    changed = result if isinstance(result, Table) else getattr(result, "table", None)
    if command.changes_table and isinstance(changed, Table) and name is not None:
        session.tables[name] = changed  # the open table now shows the new state (a dry run returns none)
    return result
