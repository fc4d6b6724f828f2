"""The health, maintenance and metadata-table subcommands of the grammar.

``health`` shows the report of a table, or of every table of ``CATALOG.NAMESPACE`` ranked by debt; ``maintain ACTION`` runs one Spark procedure (``expire``, ``orphans``,
``compact``, ``rewrite-manifests``, ``rewrite-deletes``) and shows the before/after diff, or with
``--dry-run`` shows icebook's preview and runs nothing; ``why PATH`` says what keeps a file and what
would delete it; the metadata tables (``entries``,
``partitions``, ``metadata-log``, ``all-*``, ``position-deletes``, ...) show Spark-shaped frames.
"""

from __future__ import annotations

import argparse
import datetime as _dt
from typing import Any

from icebook.analysis.maintenance.health import HealthReport
from icebook.analysis.maintenance.lake_health import lake_health
from icebook.commands.grammar import Call, Command, CommandError, Context, at_argument, default_name, inspect_command
from icebook.io import catalogs
from icebook.table import Table
from icebook.table.opening import open_table

ACTIONS = ("expire", "orphans", "compact", "rewrite-manifests", "rewrite-deletes")


def table_or_namespace_arguments(p: argparse.ArgumentParser, context: Context) -> None:
    """A table, or ``CATALOG.NAMESPACE`` for every table of it (``health``, ``storage``), and ``--at``."""
    if context is Context.CLI:
        p.add_argument("target", help="a table (directory, metadata file or catalog.db.table), or CATALOG.NAMESPACE")
    else:
        p.add_argument("target", nargs="?", help="CATALOG.NAMESPACE: every table of it (default: one open table)")
        p.add_argument("--table", help="which open table (default: the current one)")
    at_argument(p, context)


def _health_arguments(p: argparse.ArgumentParser, context: Context) -> None:
    table_or_namespace_arguments(p, context)
    p.add_argument("--no-listing", action="store_true", help="do not list the table location (no orphan files section)")
    p.add_argument("--quick", action="store_true", help="CATALOG.NAMESPACE: the metadata files only (no manifests)")


def namespace_of(target: str) -> tuple[str, str] | None:
    """``CATALOG.NAMESPACE`` of a configured PyIceberg catalog, or None (then ``target`` names a table)."""
    catalog, _, rest = target.partition(".")
    if "/" in target or not rest or not catalogs.is_configured(catalog):
        return None
    return (catalog, rest) if rest in catalogs.list_namespaces(catalog, tuple(rest.split("."))[:-1]) else None


def table_or_namespace(call: Call) -> Table | tuple[str, str]:
    """What a ``table_or_namespace_arguments`` command names: (catalog, namespace), or the table (opened
    on the command line; an open one in a notebook)."""
    args, command = call.args, call.args.command
    namespace = namespace_of(args.target) if args.target else None
    if namespace is not None:
        if args.at is not None or getattr(args, "table", None):
            raise CommandError(f"{command} CATALOG.NAMESPACE takes every table's current state: no --at or --table")
        return namespace
    if call.context is Context.CLI:
        return call.session.put(default_name(args.target), open_table(args.target))
    if args.target:
        raise CommandError(
            f"{command} {args.target}: not a namespace of a configured catalog (open a table with %ice open)"
        )
    return call.session.get(args.table)


def _health(call: Call) -> Any:
    args = call.args
    target = table_or_namespace(call)
    if isinstance(target, tuple):
        listing = not args.no_listing

        def deep(identifier: str) -> HealthReport:
            return open_table(identifier).maintenance.health(list_files=listing)

        return lake_health(*target, deep=None if args.quick else deep)
    if args.quick:
        raise CommandError("health --quick is for CATALOG.NAMESPACE; a table's report reads its manifests")
    return target.maintenance.health(at=args.at, list_files=not args.no_listing)


def _maintain_arguments(p: argparse.ArgumentParser, _context: Context) -> None:
    p.add_argument("action", choices=ACTIONS, help="which procedure")
    p.add_argument("--dry-run", action="store_true", help="show icebook's preview; nothing runs")
    when = p.add_mutually_exclusive_group()
    when.add_argument("--older-than", help="expire, orphans: an ISO-8601 time")
    when.add_argument("--older-than-days", type=float, help="expire, orphans: that many days ago")
    p.add_argument("--retain-last", type=int, help="expire: snapshots each branch keeps at least")
    p.add_argument("--location", help="orphans: a directory under the table location to look in")
    p.add_argument("--where", help="compact: only files that may hold rows matching this filter")
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="compact, rewrite-deletes: a procedure option, e.g. min-input-files=2 (repeatable)",
    )


def _options(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise CommandError(f"--option {pair!r}: write KEY=VALUE, e.g. min-input-files=2")
        out[key.strip()] = value.strip()
    return out


def _older_than(args: argparse.Namespace) -> Any:
    if args.older_than_days is not None:
        return _dt.timedelta(days=args.older_than_days)
    return args.older_than


def _not_for(action: str, args: argparse.Namespace, names: tuple[str, ...]) -> None:
    given = [n for n in names if getattr(args, n) not in (None, [], False)]
    if given:
        flags = ", ".join("--" + n.replace("_", "-") for n in given)
        raise CommandError(f"maintain {action} does not take {flags}")


def _maintain(call: Call) -> Any:
    """``--dry-run`` calls the action's preview (``t.maintenance.expire_preview``, ...), else its procedure."""
    args, m = call.args, call.table.maintenance
    action, dry = args.action, args.dry_run
    if action == "expire":
        _not_for(action, args, ("location", "where", "option"))
        expire = m.expire_preview if dry else m.expire_snapshots
        return expire(_older_than(args), args.retain_last)
    if action == "orphans":
        _not_for(action, args, ("retain_last", "where", "option"))
        remove = m.orphans if dry else m.remove_orphan_files
        return remove(_older_than(args), args.location)
    if action == "compact":
        _not_for(action, args, ("older_than", "older_than_days", "retain_last", "location"))
        compact = m.compaction_preview if dry else m.rewrite_data_files
        return compact(_options(args.option) or None, args.where)
    _not_for(action, args, ("older_than", "older_than_days", "retain_last", "location", "where"))
    if action == "rewrite-manifests":
        _not_for(action, args, ("option",))
        return m.manifest_rewrite_preview() if dry else m.rewrite_manifests()
    rewrite = m.delete_rewrite_preview if dry else m.rewrite_position_delete_files
    return rewrite(_options(args.option) or None)


def _why_arguments(p: argparse.ArgumentParser, _context: Context) -> None:
    p.add_argument("path", help="a file of the table: data, delete, manifest, manifest list, statistics, metadata")
    when = p.add_mutually_exclusive_group()
    when.add_argument("--older-than", help="judge by expire_snapshots(older_than => this ISO-8601 time)")
    when.add_argument("--older-than-days", type=float, help="judge by an older_than that many days ago")
    p.add_argument("--retain-last", type=int, help="judge by expire_snapshots(retain_last => N)")


def _why(call: Call) -> Any:
    args = call.args
    return call.table.maintenance.why_kept(args.path, _older_than(args), args.retain_last)


MAINTENANCE_COMMANDS: tuple[Command, ...] = (
    Command(
        name="health",
        help="maintenance debt: small files, delete debt, manifests, history, stale refs, orphans; "
        "of one table, or of every table of CATALOG.NAMESPACE ranked by debt",
        run=_health,
        arguments=_health_arguments,
        on_table=False,
        group="maintenance",
    ),
    Command(
        name="maintain",
        help="run a maintenance procedure through Spark (--dry-run: preview only): " + ", ".join(ACTIONS),
        run=_maintain,
        arguments=_maintain_arguments,
        changes_table=True,
        group="maintenance",
    ),
    Command(
        name="why",
        help="why a file is still there: the snapshots and refs keeping it, the retention rule keeping each, "
        "and the call that would delete it (or what must happen first); orphans too",
        run=_why,
        arguments=_why_arguments,
        group="maintenance",
    ),
    inspect_command("entries", "entries", "every manifest entry of a snapshot (the entries table)", at=True),
    inspect_command("partitions", "partitions", "records, files and deletes per partition", at=True),
    inspect_command("data-files", "data_files", "a snapshot's live data files", at=True),
    inspect_command("delete-files", "delete_files", "a snapshot's live delete files", at=True),
    inspect_command("position-deletes", "position_deletes", "every position a snapshot's deletes remove", at=True),
    inspect_command("metadata-log", "metadata_log_entries", "previous metadata files and the current one", at=False),
    inspect_command("all-manifests", "all_manifests", "the manifests of every snapshot", at=False),
    inspect_command("all-entries", "all_entries", "every entry of every manifest of any snapshot", at=False),
    inspect_command("all-files", "all_files", "live files of every manifest of any snapshot", at=False),
    inspect_command("all-data-files", "all_data_files", "live data files of every manifest of any snapshot", at=False),
    inspect_command(
        "all-delete-files", "all_delete_files", "live delete files of every manifest of any snapshot", at=False
    ),
)

__all__ = ["ACTIONS", "MAINTENANCE_COMMANDS", "table_or_namespace", "table_or_namespace_arguments"]
