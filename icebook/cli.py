"""The ``icebook`` command line: the ``%ice`` subcommands, printing readable text.

icebook history path/to/table
icebook files path/to/table --at release-2024-01 --where "content == 1"
icebook tree path/to/table --at 1234567890
icebook diff path/to/table A B
icebook demo            # build the demo warehouse (once) and print where it is
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

import pandas as pd

from icebook import __version__
from icebook.analysis.resolve import resolve_snapshot
from icebook.commands import HelpShown, Session, build_parser, execute, parse, point
from icebook.display.registry import render_text
from icebook.errors import IcebookError
from icebook.spec.filenames import parse_file_name
from icebook.table import Table

ENTRY_STATUS = {0: "EXISTING", 1: "ADDED", 2: "DELETED"}
CONTENT = {0: "data", 1: "position deletes", 2: "equality deletes"}
FILES_PER_MANIFEST = 20


def _size(n: int | None) -> str:
    if n is None:
        return "?"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _name(path: str) -> str:
    parsed = parse_file_name(path)
    parts = ", ".join(
        f"{p.role}={p.text}" for p in parsed.parts if p.role not in ("prefix", "extension", "separator", "name")
    )
    base = path.rstrip("/").split("/")[-1]
    return f"{base}  ({parts})" if parts else base


def tree_text(t: Table, at: Any = None, *, per_manifest: int = FILES_PER_MANIFEST) -> str:
    """metadata file -> snapshot -> manifest list -> manifests -> files, as indented text."""
    lines = [f"metadata {_name(t.metadata_location)}  format v{t.format_version}"]
    snapshot = resolve_snapshot(t.metadata, at)
    if snapshot is None:
        return "\n".join([*lines, "  (no snapshot)"])
    refs = [n for n, r in t.refs.items() if r.snapshot_id == snapshot.snapshot_id]
    label = f"  [{', '.join(refs)}]" if refs else ""
    lines.append(f"└─ snapshot {snapshot.snapshot_id}  {snapshot.operation}  seq {snapshot.sequence_number}{label}")
    lines.append(f"   └─ manifest list {_name(snapshot.manifest_list or '(inline v1 manifests)')}")
    manifests = t.store.manifest_list(snapshot)
    for i, m in enumerate(manifests):
        last = i == len(manifests) - 1
        branch, stem = ("└─", "   ") if last else ("├─", "│  ")
        kind = "deletes" if int(m.content or 0) == 1 else "data"
        lines.append(
            f"      {branch} manifest {_name(m.manifest_path)}  {kind}, spec {m.partition_spec_id}, "
            f"added {m.added_files_count} existing {m.existing_files_count} deleted {m.deleted_files_count}"
        )
        entries = t.store.entries(m)
        rows = entries.slice(0, per_manifest).to_pylist()
        for j, e in enumerate(rows):
            twig = "└─" if j == len(rows) - 1 and entries.num_rows <= per_manifest else "├─"
            inherited = " (inherited)" if e.get("sequence_number_inherited") else ""
            lines.append(
                f"      {stem}   {twig} {ENTRY_STATUS.get(e['status'], e['status'])} {CONTENT.get(e['content'], e['content'])} "
                f"{e['file_path'].rstrip('/').split('/')[-1]}  partition {e['partition']}  "
                f"{e['record_count']} rows, {_size(e['file_size_in_bytes'])}, "
                f"seq {e['sequence_number']}{inherited} file seq {e['file_sequence_number']}"
            )
        if entries.num_rows > per_manifest:
            lines.append(f"      {stem}   └─ ... {entries.num_rows - per_manifest} more")
    return "\n".join(lines)


def render(result: Any) -> str:
    """Readable text for whatever a command returned."""
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    if isinstance(result, pd.DataFrame):
        with pd.option_context("display.max_colwidth", 80, "display.width", 200):
            return result.to_string(index=False) if len(result) else "(no rows)"
    if isinstance(result, Table):
        return repr(result)
    return render_text(result)


def main(argv: list[str] | None = None, *, out: TextIO | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else list(argv)
    stream = out or sys.stdout
    if args_list and args_list[0] in ("--version", "version"):
        print(f"icebook {__version__}", file=stream)
        return 0
    if args_list and args_list[0] == "demo":
        from icebook.scenarios.build import ensure_warehouse

        try:
            print(ensure_warehouse(args_list[1] if len(args_list) > 1 else "demo"), file=stream)
        except IcebookError as exc:
            print(f"icebook: {exc}", file=sys.stderr)
            return 1
        return 0
    parser = build_parser("icebook", cli=True)
    try:
        args = parse(parser, args_list) if args_list else None
        if args is None:
            print(parser.format_help(), file=stream)
            return 0
        session = Session()
        if args.command == "tree":
            from icebook.table import open_table

            print(tree_text(open_table(args.table), point(args.at)), file=stream)
            return 0
        if args.command == "explore":
            print("icebook: explore is a notebook view; use %ice explore in JupyterLab", file=sys.stderr)
            return 2
        print(render(execute(args, session, parser)), file=stream)
    except HelpShown as shown:
        print(str(shown).rstrip(), file=stream)
    except IcebookError as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(message if message.startswith("icebook") else f"icebook: {message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
