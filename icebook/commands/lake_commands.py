"""The commands about the lake and icebook itself: the demo warehouse, a warehouse directory's tables,
the lessons (the teaching notebooks shipped in the package) and the static book built from them."""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path

import pandas as pd

from icebook.commands.grammar import Call, Command, CommandError, Context, Text
from icebook.errors import NotFound
from icebook.scenarios.warehouse import WAREHOUSE_KINDS

_METADATA_SUFFIXES = (".metadata.json", ".metadata.json.gz", ".gz.metadata.json")
_DEPTH = 6


def is_warehouse_directory(text: str) -> bool:
    """``text`` names a local directory (a warehouse to list), not a catalog namespace."""
    return "/" in text or os.sep in text or text in (".", "..") or Path(text).is_dir()


def warehouse_tables(root: Path) -> pd.DataFrame:
    """The Iceberg tables under a warehouse directory (any folder holding a ``metadata`` folder with a
    metadata file), by their path under ``root``, with their locations. NotFound when there is none."""
    root = root.expanduser()
    if not root.is_dir():
        raise NotFound(f"no directory {root}")
    found: list[tuple[str, str]] = []
    for folder, dirs, _files in os.walk(root):
        here = Path(folder)
        depth = len(here.relative_to(root).parts)
        metadata = here / "metadata"
        if "metadata" in dirs and any(n.endswith(_METADATA_SUFFIXES) for n in os.listdir(metadata)):
            found.append((here.relative_to(root).as_posix() or here.name, str(here)))
            dirs.clear()  # a table's own folders hold no other table
            continue
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if depth < _DEPTH else []
    if not found:
        raise NotFound(f"no Iceberg table under {root} (a table is a folder with metadata/*.metadata.json)")
    return pd.DataFrame(sorted(found), columns=["table", "location"])


# ------------------------------------------------------------------------------------------ demo


def _demo_arguments(p: argparse.ArgumentParser, _context: Context) -> None:
    p.add_argument("kind", nargs="?", default="demo", choices=WAREHOUSE_KINDS, help="which warehouse (default: demo)")


def _demo(call: Call) -> Text:
    from icebook.display.terminal import frame_text
    from icebook.scenarios import SCENARIOS
    from icebook.scenarios.warehouse import demo_warehouse, ensure_warehouse, read_marker, table_location

    warehouse = demo_warehouse() if call.args.kind == "demo" else ensure_warehouse(call.args.kind)
    built = (read_marker(warehouse) or {}).get("scenarios", {})
    rows = [(name, f"db/{name}", SCENARIOS[name].title) for name in SCENARIOS if name in built]
    events = table_location(warehouse, "events")
    prefix = "icebook" if call.context is Context.CLI else "%ice"
    tries = (
        [
            f"icebook tables {warehouse}",
            f"icebook history {events}",
            f"icebook diff {events} release-2024-01 audit",
        ]
        if call.context is Context.CLI
        else [f"%ice tables {warehouse}", f"%ice open {events} --as events", "%ice diff release-2024-01 audit"]
    )
    return Text(
        "\n".join(
            [
                f"{prefix} demo: the {call.args.kind} warehouse, {len(rows)} tables; locations are under",
                f"  {warehouse}",
                "",
                frame_text(pd.DataFrame(rows, columns=["table", "location", "what it shows"])),
                "",
                "Try next:",
                *(f"  {line}" for line in tries),
            ]
        )
    )


# ------------------------------------------------------------------------------------------ lessons


def _lessons_arguments(p: argparse.ArgumentParser, _context: Context) -> None:
    p.add_argument("dir", help="folder to copy the lesson notebooks into (created; existing lessons are kept)")
    p.add_argument("--force", action="store_true", help="overwrite lessons already in the folder")


def _lessons(call: Call) -> Text:
    from icebook.book import notebook_paths

    target = Path(call.args.dir).expanduser()
    target.mkdir(parents=True, exist_ok=True)
    copied, kept = [], []
    for path in notebook_paths():
        destination = target / path.name
        if destination.exists() and not call.args.force:
            kept.append(path.name)
            continue
        shutil.copyfile(path, destination)
        copied.append(path.name)
    lines = [f"icebook lessons: {len(copied)} notebooks copied into {target}"]
    lines += [f"  {name}" for name in copied]
    if kept:
        lines.append(f"kept {len(kept)} already there (--force overwrites): {', '.join(kept)}")
    lines.append(f"Open them: jupyter lab {target / '00_tour.ipynb'}")
    return Text("\n".join(lines))


# ------------------------------------------------------------------------------------------ book


def _book_arguments(p: argparse.ArgumentParser, _context: Context) -> None:
    p.add_argument("dir", help="folder to write the book into (index.html and a page per lesson)")
    p.add_argument("--lessons", help="run these notebooks (a folder of .ipynb) instead of the shipped lessons")


def _book(call: Call) -> Text:
    from icebook.book import build, notebook_paths

    paths = notebook_paths(Path(call.args.lessons).expanduser() if call.args.lessons else None)
    out = Path(call.args.dir).expanduser()
    pages = build(out, paths, progress=call.context is Context.CLI)
    failed = [p for p in pages if p.errors]
    if failed:
        raise CommandError(
            f"book: {len(failed)} lesson(s) raised errors ({', '.join(p.notebook for p in failed)}); "
            f"their pages show them: {out / 'index.html'}"
        )
    lines = [f"{p.file}  {p.seconds:.1f} s" for p in pages]
    return Text("\n".join([f"icebook book: {len(pages)} pages", *lines, f"open {out / 'index.html'}"]))


LAKE_COMMANDS: tuple[Command, ...] = (
    Command(
        name="demo",
        help="build the demo warehouse (once): its tables, where they are, what to try next",
        run=_demo,
        arguments=_demo_arguments,
        on_table=False,
        group="lake",
    ),
    Command(
        name="lessons",
        help="copy the teaching notebooks into a folder",
        run=_lessons,
        arguments=_lessons_arguments,
        on_table=False,
        group="lake",
    ),
    Command(
        name="book",
        help="run the lessons and write them as a static HTML book into a folder",
        run=_book,
        arguments=_book_arguments,
        on_table=False,
        group="lake",
    ),
)

__all__ = ["LAKE_COMMANDS", "is_warehouse_directory", "warehouse_tables"]
