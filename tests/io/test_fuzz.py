"""Fuzzing every public view of Spark-written tables of different shapes over damaged metadata JSON, manifest
lists, manifests and Puffin files.

The tables (``TABLES``): a v3 table with deletion vectors, a partitioned v1 table (no sequence numbers), a v2
table whose partition spec evolves and that holds equality deletes, a table whose schema evolves (added,
dropped, renamed, promoted and nested fields), and a partitioned v3 table with row lineage. Each file kind a
table lacks (a delete manifest, a Puffin file) is left out for that table.

Each case damages one file (one byte XOR-ed with a random non-zero value, or the file cut short) and serves
it through a FileIO that leaves the real files alone; then every view users call runs on the table: the
metadata tables (files, entries, manifests, partitions, the ``all_*`` tables), a scan plan with its tasks
read, its explanation, health, a diff, the time-lapse, a read, evolution and lineage. Each view must end,
within a time limit, in the undamaged table's answer or an ``IcebookError``: no other exception, no hang.

A different answer that names the damaged file in a note or finding the undamaged answer lacks ("marked":
evolution's note of an earlier metadata file it could not read) is counted as a visible mark. A different
answer is allowed where the damage is inside free text (``FREE_TEXT``: what a writer records for
people, which nothing can check); those are counted and printed with the field that changed, as json and
fastavro read the damaged file. One more kind is counted and printed, not failed: the damaged file is still a
valid file that says something else, other than free text (a path, a partition bound in a manifest list), in
bytes no checksum covers (a deflate block of an Avro file, metadata JSON), so that no reader can tell; each
is listed with the field, as another decoder reads it. Every other different answer fails the test: one where
json or fastavro cannot read the damaged file, or reads the same content as before.

The budget is fixed: ``ICEBOOK_FUZZ_SEEDS`` seeds (default 2; the first is ``ICEBOOK_FUZZ_FIRST_SEED``,
default 12) for each table, each seed damaging each of the table's files ``FLIPS_PER_SEED[kind]`` times and
cutting it ``CUTS_PER_SEED`` times: at most ``SEEDS * len(TABLES) * CASES_PER_SEED`` damaged files a run (180
by default, 152 with the kinds these tables have; ~2.5 minutes on a loaded two-core machine). A table is one
test, so each prints its own counts per view.
"""

from __future__ import annotations

import os
import random
import re
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from _support.fuzz import DamagedFileIO, first_difference, frame, names_the_file, same, what_changed

from icebook.display.registry import render_html, render_text
from icebook.engines.arrow import read_plan
from icebook.errors import IcebookError
from icebook.io.avro_header import check_framing
from icebook.io.worker_pool import POOL, decode_timeout
from icebook.table import Table
from icebook.table.opening import open_table

pytestmark = pytest.mark.spark

FIRST_SEED = int(os.environ.get("ICEBOOK_FUZZ_FIRST_SEED", "12"))
SEEDS = int(os.environ.get("ICEBOOK_FUZZ_SEEDS", "2"))
TABLES = ("dv_v3", "legacy_v1", "equality_deletes", "schema_evolution", "lineage_v3")
FLIPS_PER_SEED = {
    "metadata json": 2,
    "earlier metadata json": 1,  # read for what each earlier state said (evolution, diff)
    "manifest list": 2,
    "first manifest list": 1,  # the first snapshot's (the all_* tables, diff, time-lapse)
    "manifest": 2,
    "delete manifest": 2,
    "puffin file": 1,
}
FORMAT = {
    "metadata json": "metadata json",
    "earlier metadata json": "metadata json",
    "manifest list": "manifest list",
    "first manifest list": "manifest list",
    "manifest": "manifest",
    "delete manifest": "manifest",
    "puffin file": "puffin file",
}
"""Each damaged file's format, as ``_support.fuzz.what_changed`` reads it."""
CUTS_PER_SEED = 1
CASES_PER_SEED = sum(FLIPS_PER_SEED.values()) + CUTS_PER_SEED * len(FLIPS_PER_SEED)
"""The most damaged files one seed makes of one table (every kind present)."""
CASE_LIMIT_SECONDS = 60.0  # a decode is stopped after 2 s here; the rest is a loaded machine's slack
DECODE_SECONDS = 2.0
EXAMPLES = 12  # different answers printed as shown

FREE_TEXT = (
    re.compile(r"^snapshots\[\d+\]\.summary\."),  # what a writer says of its commit
    re.compile(r"^footer\.properties\.created-by$"),  # a Puffin file's writer
    re.compile(r"^header\.(iceberg\.)?created-by$"),
)
"""Fields whose damage may change an answer: text a writer records for people, checked by nothing."""

# ------------------------------------------------------------------------------------------- the views


def _frame_of(get: Callable[[Table], Any]) -> Callable[[Table], Any]:
    return lambda t: frame(get(t))


_AGE = re.compile(r"\d+(\.\d+)? (second|minute|hour|day|week|month|year)s?\b")


def _ageless(text: str) -> str:
    """Without the ages counted from now (a ref's age in health), which a run does not hold still."""
    return _AGE.sub("<age> old", text)


def _shown(get: Callable[[Table], Any]) -> Callable[[Table], Any]:
    """What the user sees: the text and the HTML rendering of a result."""

    def view(t: Table) -> Any:
        result = get(t)
        return (_ageless(render_text(result)), _ageless(render_html(result)))

    return view


def _rows(table: Any) -> Any:
    """A read's rows in one order whatever order its files came in (any column may be nested)."""
    return (table.schema, sorted(table.to_pylist(), key=repr))


def _scan(t: Table) -> Any:
    plan = t.scan()
    tasks = tuple(repr(task) for task in plan.tasks)
    return (tasks, plan.to_arrow(), _rows(read_plan(t.fileio, t.metadata, plan)))


def views(first: int) -> dict[str, Callable[[Table], Any]]:
    """Every public view, as a function of an opened table (``first``: the snapshot a diff starts at)."""
    return {
        "files": _frame_of(lambda t: t.inspect.files()),
        "entries": _frame_of(lambda t: t.inspect.entries()),
        "manifests": _frame_of(lambda t: t.inspect.manifests()),
        "snapshots": _frame_of(lambda t: t.inspect.snapshots()),
        "all_manifests": _frame_of(lambda t: t.inspect.all_manifests()),
        "all_entries": _frame_of(lambda t: t.inspect.all_entries()),
        "all_files": _frame_of(lambda t: t.inspect.all_files()),
        "all_data_files": _frame_of(lambda t: t.inspect.all_data_files()),
        "all_delete_files": _frame_of(lambda t: t.inspect.all_delete_files()),
        "partitions": _frame_of(lambda t: t.inspect.partitions()),
        "scan and tasks": _scan,
        "explain": lambda t: t.scan().explain(),
        "health": _shown(lambda t: t.maintenance.health()),
        "diff": _shown(lambda t: t.diff(first)),
        "timelapse": _shown(lambda t: t.timelapse()),
        "read": lambda t: _rows(t.read()),
        "evolution": _shown(lambda t: t.evolution()),
        "lineage": _shown(lambda t: t.lineage()),
    }


# ------------------------------------------------------------------------------------------- the cases


@dataclass
class Tally:
    same: int = 0
    error: int = 0
    free_text: int = 0
    marked: int = 0
    valid_other: int = 0


@dataclass
class Findings:
    by_view: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    by_file: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    free_text: Counter[str] = field(default_factory=Counter)
    valid_other: Counter[str] = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    slowest: float = 0.0


def _answers(location: str, fileio: Any, named: dict[str, Callable[[Table], Any]]) -> dict[str, tuple[str, Any]]:
    """Each view's ('answer', value), ('error', message) or ('foreign', exception)."""
    out: dict[str, tuple[str, Any]] = {}
    try:
        t = open_table(location, fileio=fileio)
    except IcebookError as exc:
        return {name: ("error", str(exc)) for name in named}
    except Exception as exc:
        return {name: ("foreign", exc) for name in named}
    for name, view in named.items():
        try:
            out[name] = ("answer", view(t))
        except IcebookError as exc:
            out[name] = ("error", str(exc))
        except Exception as exc:  # anything else is a failure the test reports
            out[name] = ("foreign", exc)
    return out


def _run_case(work: Callable[[], dict[str, tuple[str, Any]]]) -> tuple[dict[str, tuple[str, Any]] | None, float]:
    """The case's answers, or None when it did not end within the limit; and its seconds."""
    result: dict[str, Any] = {}

    def target() -> None:
        result["answers"] = work()

    started = time.monotonic()
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(CASE_LIMIT_SECONDS)
    return result.get("answers"), time.monotonic() - started


def _targets(clean: Table) -> dict[str, str]:
    """The file of each kind to damage; a kind the table lacks is left out."""
    snapshot = clean.current_snapshot
    assert snapshot is not None and snapshot.manifest_list is not None
    manifests = clean.inspect.manifests()
    deletes = clean.inspect.delete_files()
    first = clean.snapshots[0].manifest_list
    assert first is not None and clean.metadata.metadata_log
    found = {
        "metadata json": clean.metadata_location,
        "earlier metadata json": clean.metadata.metadata_log[-1].metadata_file,
        "manifest list": snapshot.manifest_list,
        "first manifest list": first,
    }
    for kind, rows in (
        ("manifest", manifests[manifests["content"] == 0]["path"]),
        ("delete manifest", manifests[manifests["content"] == 1]["path"]),
        ("puffin file", deletes[deletes["file_format"] == "PUFFIN"]["file_path"]),
    ):
        if len(rows):
            found[kind] = rows.iloc[0]
    return found


def _damaged(kind: str, path: str, data: bytes, rng: random.Random) -> list[tuple[str, int, bytes]]:
    """(how, where, bytes): flips, half of them after an Avro header (where the decoder reads), and cuts."""
    avro = FORMAT[kind] in ("manifest", "manifest list")
    low = check_framing(data, path, kind=FORMAT[kind]).header_length if avro else 0
    cases = []
    for i in range(FLIPS_PER_SEED[kind]):
        pos = rng.randrange(low, len(data)) if i % 2 else rng.randrange(len(data))
        damaged = bytearray(data)
        damaged[pos] ^= rng.randrange(1, 256)
        cases.append(("flip", pos, bytes(damaged)))
    for _ in range(CUTS_PER_SEED):
        cut = rng.randrange(len(data))
        cases.append(("cut", cut, data[:cut]))
    return cases


def _field_of(path: str) -> str:
    """A changed path without its row numbers: ``records[0].data_file.file_path`` -> ``data_file.file_path``."""
    return re.sub(r"^records\[\d+\]\.|\[\d+\]", "", path)


def _judge(
    findings: Findings,
    path: str,
    kind: str,
    how: str,
    where: int,
    clean: bytes,
    damaged: bytes,
    answers: dict[str, tuple[str, Any]],
    baseline: dict[str, Any],
) -> None:
    read_again: list[tuple[str, ...] | None] = []  # what another decoder reads as changed, once per case
    for name, (verdict, value) in answers.items():
        tally = findings.by_view[name]
        case = f"{kind} {how} at byte {where}: {name}"
        if verdict == "error":
            tally.error += 1
            findings.by_file[kind]["error"] += 1
        elif verdict == "foreign":
            findings.failures.append(f"{case}: {type(value).__name__}: {value}")
        elif same(value, baseline[name]):
            tally.same += 1
            findings.by_file[kind]["same"] += 1
        else:
            if names_the_file(value, baseline[name], path):
                tally.marked += 1
                findings.by_file[kind]["marked"] += 1
                continue
            if not read_again:
                read_again.append(what_changed(FORMAT[kind], clean, damaged))
            changed = read_again[0]
            if changed and all(any(p.search(c) for p in FREE_TEXT) for c in changed):
                tally.free_text += 1
                findings.by_file[kind]["free text"] += 1
                findings.free_text.update(changed)
            elif changed:
                tally.valid_other += 1
                findings.by_file[kind]["valid, says other"] += 1
                findings.valid_other.update(f"{name}: {_field_of(c)}" for c in changed)
                findings.examples.append(f"{case}: {first_difference(baseline[name], value, 100)}")
            else:
                why = "no other decoder reads the damaged file" if changed is None else "its content reads the same"
                findings.failures.append(
                    f"{case}: a different answer, though {why}: {first_difference(baseline[name], value)}"
                )


@pytest.mark.parametrize("table", TABLES)
def test_fuzz_every_view_ends_in_the_answer_or_an_icebook_error(
    scenario_locations: dict[str, Path], table: str
) -> None:
    assert SEEDS >= 1, f"ICEBOOK_FUZZ_SEEDS={SEEDS}: at least one seed"
    location = str(scenario_locations[table])
    clean = open_table(location)
    named = views(clean.snapshots[0].snapshot_id)
    baseline = {name: value for name, (verdict, value) in _answers(location, None, named).items()}
    assert all(not isinstance(v, BaseException) for v in baseline.values()), baseline
    targets = _targets(clean)
    findings = Findings()
    started_workers = POOL.started
    started = time.monotonic()
    cases = 0
    with decode_timeout(DECODE_SECONDS):
        for seed in range(FIRST_SEED, FIRST_SEED + SEEDS):
            rng = random.Random(seed)
            for kind, path in targets.items():
                data = Path(path).read_bytes()
                for how, where, damaged in _damaged(kind, path, data, rng):
                    io = DamagedFileIO(path, damaged)
                    answers, seconds = _run_case(lambda io=io: _answers(location, io, named))
                    cases += 1
                    findings.slowest = max(findings.slowest, seconds)
                    if answers is None:
                        findings.failures.append(f"{kind} {how} at byte {where}: no answer in {CASE_LIMIT_SECONDS} s")
                        continue
                    _judge(findings, path, kind, how, where, data, damaged, answers, baseline)

    print(f"\nfuzz of {table}, seeds {FIRST_SEED}..{FIRST_SEED + SEEDS - 1}: {cases} damaged files")
    print(f"  {'view':<18} {'same':>6} {'IcebookError':>13} {'marked':>7} {'free text':>10} {'valid, says other':>18}")
    for name, t in findings.by_view.items():
        print(f"  {name:<18} {t.same:>6} {t.error:>13} {t.marked:>7} {t.free_text:>10} {t.valid_other:>18}")
    for kind, counts in findings.by_file.items():
        print(f"  {kind:<16} " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(f"  free text changed: {dict(findings.free_text) or 'none'}")
    print("  a valid file saying something else (no checksum covers it), by view and field:")
    for what, n in sorted(findings.valid_other.items()):
        print(f"    {what}: {n}")
    print("  the first of them, as shown:", *findings.examples[:EXAMPLES], sep="\n    ")
    print(
        f"  {time.monotonic() - started:.1f} s; slowest case {findings.slowest:.1f} s; "
        f"decoder processes started {POOL.started - started_workers}; failures {len(findings.failures)}"
    )
    assert not findings.failures, "\n".join(findings.failures[:40])
    assert cases == SEEDS * sum(FLIPS_PER_SEED[kind] + CUTS_PER_SEED for kind in targets) <= SEEDS * CASES_PER_SEED
