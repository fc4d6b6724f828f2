"""What the command grammar is made of: contexts, errors, the session of open tables, ``Command`` and
``Call``, and the small helpers every command shares (see ``icebook.commands``)."""

from __future__ import annotations

import argparse
import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from icebook.errors import IcebookError, NotFound
from icebook.table import Table
from icebook.text import DAY_MS
from icebook.version import __version__


class Context(enum.Enum):
    """Who runs a command."""

    CLI = "cli"
    """``icebook ...`` in a shell: the table's location comes first; results are printed as text."""
    NOTEBOOK = "notebook"
    """``%ice ...`` in a notebook: tables are opened once and named; results are displayed."""


class CommandError(IcebookError):
    """A command line that does not parse, or names nothing open."""


class NotInThisContext(CommandError):
    """A command that exists only in the other context (``explore`` on the command line)."""


class HelpShown(Exception):
    """``--help``, ``help`` or ``--version`` was asked for: carries the text to show."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class CommandParser(argparse.ArgumentParser):
    """argparse that raises instead of printing and exiting (a magic must never end the kernel), so that
    the caller shows help and errors exactly once."""

    def error(self, message: str) -> Any:  # type: ignore[override]
        raise CommandError(f"{self.prog}: {message}")

    def exit(self, status: int = 0, message: str | None = None) -> Any:  # type: ignore[override]
        raise HelpShown(message or "")

    def print_help(self, file: Any = None) -> None:
        raise HelpShown(self.format_help())


class ShowVersion(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, *_args: Any) -> None:
        raise HelpShown(f"icebook {__version__}")


# ------------------------------------------------------------------------------------------ session


@dataclass
class Session:
    """The open tables of one notebook (or one command-line call) and which one is current."""

    tables: dict[str, Table] = field(default_factory=dict)
    current: str | None = None
    default_engine: str = "spark"
    """Engine of ``sql`` when it names none (``IceMagics.default_engine`` in a notebook)."""

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


def days_ms(n: int | None) -> int | None:
    return None if n is None else n * DAY_MS


# ------------------------------------------------------------------------------------------ commands


@dataclass(frozen=True, slots=True, kw_only=True)
class Call:
    """One parsed command, with what it runs against."""

    args: argparse.Namespace
    context: Context
    session: Session
    parser: argparse.ArgumentParser
    table_name: str | None = None
    """The session's name of the table the command acts on."""

    @property
    def table(self) -> Table:
        return self.session.get(self.table_name)


Handler = Callable[[Call], Any]
Arguments = Callable[[argparse.ArgumentParser, Context], None]
BOTH = frozenset(Context)
NOTEBOOK = frozenset({Context.NOTEBOOK})


def _no_arguments(_parser: argparse.ArgumentParser, _context: Context) -> None:
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Command:
    """One subcommand of the grammar."""

    name: str
    help: str
    run: Handler
    arguments: Arguments = _no_arguments
    on_table: bool = True
    """Acts on one table: its location first on the command line, ``--table NAME`` in a notebook."""
    contexts: frozenset[Context] = BOTH
    verbatim: str | None = None
    """The trailing free-text argument (a filter, a query): in a notebook line everything after the
    options is taken as written, with its own quotes, not split like a shell would. An option
    (``"--where"``): everything after it is its value, taken as written (so it comes last)."""
    changes_table: bool = False
    """Writes to the table (through Spark) and returns it reopened."""
    group: str = "explore"
    """Where ``--help`` lists it: one of ``GROUPS``."""


GROUPS: tuple[tuple[str, str], ...] = (
    ("explore", "see inside a table"),
    ("history", "snapshots, refs and what changed"),
    ("query", "read rows"),
    ("maintenance", "debt and the procedures that pay it"),
    ("lake", "catalogs, warehouses, the demo, lessons and icebook itself"),
)
"""The groups of ``--help``, in the order a newcomer needs them."""


def at_argument(p: argparse.ArgumentParser, _context: Context) -> None:
    p.add_argument("--at", help="snapshot id, branch, tag or ISO-8601 time (default: current)")


def inspect_command(name: str, method: str, text: str, *, at: bool) -> Command:
    """A command that shows one of the table's metadata tables (``t.inspect.<method>``), of one snapshot
    (``--at``) when ``at``."""

    def run(call: Call) -> Any:
        reader: Callable[..., Any] = getattr(call.table.inspect, method)
        return reader(at=call.args.at) if at else reader()

    # A snapshot's tables are explored; the tables over every snapshot are its history.
    return Command(
        name=name,
        help=text,
        run=run,
        arguments=at_argument if at else _no_arguments,
        group="explore" if at else "history",
    )


class Text(str):
    """Plain text a command shows (a scan explanation): displays without quotes in a notebook."""

    def __repr__(self) -> str:
        return str(self)
