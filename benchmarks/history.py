"""Benchmark: ``lineage()`` and ``evolution()`` on a table with 50,000 snapshots (synthetic metadata).

The table is written directly (it is JSON plus one small Avro manifest list per snapshot; no data files):
a main line of commits with schema evolutions every 2,500 commits, two partition spec changes and a
sort order change, branches forking off main with a few commits each, tags along main, and rollbacks
that leave abandoned commits unreachable. Every snapshot has its own manifest list (a rolling window of
up to 12 manifests, as merge-append keeps a list short). The metadata log lists the previous 100
metadata files; the newest ``--previous-files`` of them are written (each the table as it was then,
with the snapshots it knew), the rest were deleted (as ``write.metadata.delete-after-commit`` does).

Measured in one run: icebook ``open``, ``lineage()``, ``evolution()`` (on a table opened outside the clock;
with ``to_pandas()`` of each, and ``files_per_spec``),
then the peer, PyIceberg: ``StaticTable.from_metadata``, ``inspect.snapshots()``, ``inspect.history()``
(which walks main's ancestry) and ``inspect.refs()``. Prints seconds and ratios peer / icebook.

    python benchmarks/history.py [--snapshots 50000] [--previous-files 2] [--runs 1]
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastavro

from icebook.config import icebook_home

GENERATOR_VERSION = 1
BASE_MS = 1_700_000_000_000
WINDOW = 12  # manifests per manifest list

MANIFEST_FILE_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "manifest_file",
    "fields": [
        {"name": "manifest_path", "type": "string", "field-id": 500},
        {"name": "manifest_length", "type": "long", "field-id": 501},
        {"name": "partition_spec_id", "type": "int", "field-id": 502},
        {"name": "content", "type": "int", "field-id": 517},
        {"name": "sequence_number", "type": "long", "field-id": 515},
        {"name": "min_sequence_number", "type": "long", "field-id": 516},
        {"name": "added_snapshot_id", "type": "long", "field-id": 503},
        {"name": "added_files_count", "type": "int", "field-id": 504},
        {"name": "existing_files_count", "type": "int", "field-id": 505},
        {"name": "deleted_files_count", "type": "int", "field-id": 506},
        {"name": "added_rows_count", "type": "long", "field-id": 512},
        {"name": "existing_rows_count", "type": "long", "field-id": 513},
        {"name": "deleted_rows_count", "type": "long", "field-id": 514},
        {
            "name": "partitions",
            "type": [
                "null",
                {
                    "type": "array",
                    "element-id": 508,
                    "items": {
                        "type": "record",
                        "name": "r508",
                        "fields": [
                            {"name": "contains_null", "type": "boolean", "field-id": 509},
                            {"name": "contains_nan", "type": ["null", "boolean"], "field-id": 518, "default": None},
                            {"name": "lower_bound", "type": ["null", "bytes"], "field-id": 510, "default": None},
                            {"name": "upper_bound", "type": ["null", "bytes"], "field-id": 511, "default": None},
                        ],
                    },
                },
            ],
            "default": None,
            "field-id": 507,
        },
        {"name": "key_metadata", "type": ["null", "bytes"], "default": None, "field-id": 519},
    ],
}


def table_dir(snapshots: int, previous_files: int) -> Path:
    return icebook_home() / "bench" / f"history_{snapshots}_p{previous_files}_v{GENERATOR_VERSION}"


def _schema(schema_id: int) -> dict[str, Any]:
    fields = [
        {"id": 1, "name": "id", "required": False, "type": "long"},
        {"id": 2, "name": "ts", "required": False, "type": "timestamptz"},
        {"id": 3, "name": "region", "required": False, "type": "string"},
    ]
    fields += [{"id": 4 + i, "name": f"c{i}", "required": False, "type": "int"} for i in range(schema_id)]
    return {"type": "struct", "schema-id": schema_id, "fields": fields}


SPECS = [
    {"spec-id": 0, "fields": [{"source-id": 3, "field-id": 1000, "name": "region", "transform": "identity"}]},
    {
        "spec-id": 1,
        "fields": [
            {"source-id": 3, "field-id": 1000, "name": "region", "transform": "identity"},
            {"source-id": 2, "field-id": 1001, "name": "ts_day", "transform": "day"},
        ],
    },
    {
        "spec-id": 2,
        "fields": [
            {"source-id": 3, "field-id": 1000, "name": "region", "transform": "identity"},
            {"source-id": 2, "field-id": 1001, "name": "ts_day", "transform": "day"},
            {"source-id": 1, "field-id": 1002, "name": "id_bucket", "transform": "bucket[16]"},
        ],
    },
]
SORT_ORDERS = [
    {"order-id": 0, "fields": []},
    {
        "order-id": 1,
        "fields": [{"source-id": 2, "transform": "identity", "direction": "asc", "null-order": "nulls-first"}],
    },
]


class _Writer:
    """Builds the snapshots commit by commit, writing each one's manifest list."""

    def __init__(self, location: Path, snapshots: int) -> None:
        self.location = location
        self.total = snapshots
        self.rng = random.Random(14)
        self.snapshots: list[dict[str, Any]] = []
        self.window: list[dict[str, Any]] = []
        self.schema = uuid.UUID(int=self.rng.getrandbits(128))
        self.parsed = fastavro.parse_schema(MANIFEST_FILE_SCHEMA)
        self.states: list[dict[str, Any]] = []  # (default spec, schema, order) after each commit

    def ids(self) -> int:
        return self.rng.getrandbits(62)

    def commit(self, parent: int | None, *, spec: int, schema: int, branch_window: list[dict[str, Any]] | None) -> int:
        sequence = len(self.snapshots) + 1
        snapshot_id = self.ids()
        window = branch_window if branch_window is not None else self.window
        manifest = {
            "manifest_path": str(self.location / "metadata" / f"{uuid.uuid4()}-m0.avro"),
            "manifest_length": 6000,
            "partition_spec_id": spec,
            "content": 0,
            "sequence_number": sequence,
            "min_sequence_number": sequence,
            "added_snapshot_id": snapshot_id,
            "added_files_count": 4,
            "existing_files_count": 0,
            "deleted_files_count": 0,
            "added_rows_count": 400,
            "existing_rows_count": 0,
            "deleted_rows_count": 0,
            "partitions": None,
            "key_metadata": None,
        }
        window.append(manifest)
        del window[:-WINDOW]
        path = self.location / "metadata" / f"snap-{snapshot_id}-1-{uuid.uuid4()}.avro"
        with open(path, "wb") as f:
            fastavro.writer(
                f,
                self.parsed,
                [{**m, "sequence_number": m["sequence_number"]} for m in window],
                metadata={
                    "format-version": "2",
                    "snapshot-id": str(snapshot_id),
                    "parent-snapshot-id": str(parent) if parent is not None else "null",
                    "sequence-number": str(sequence),
                },
            )
        self.snapshots.append(
            {
                "snapshot-id": snapshot_id,
                **({"parent-snapshot-id": parent} if parent is not None else {}),
                "sequence-number": sequence,
                "timestamp-ms": BASE_MS + sequence * 60_000,
                "manifest-list": str(path),
                "summary": {"operation": "append", "added-data-files": "4", "added-records": "400"},
                "schema-id": schema,
            }
        )
        return snapshot_id


def generate(snapshots: int, previous_files: int) -> Path:
    """Write the table (once; a marker file says it is complete) and return its metadata file."""
    location = table_dir(snapshots, previous_files)
    final = location / "metadata" / "v-final.metadata.json"
    if (location / "complete").is_file():
        return final
    shutil.rmtree(location, ignore_errors=True)
    (location / "metadata").mkdir(parents=True)
    w = _Writer(location, snapshots)
    main: list[int] = []
    log: list[dict[str, Any]] = []  # snapshot log of main
    refs: dict[str, Any] = {}
    branch_every = max(1, snapshots // 10)
    tag_every = max(1, snapshots // 100)
    rollback_every = max(1, snapshots // 5)
    states = []
    while len(w.snapshots) < snapshots:
        n = len(main)
        schema = min(n // 2_500, 19)
        spec = 0 if n < 0.4 * snapshots else 1 if n < 0.8 * snapshots else 2
        sid = w.commit(main[-1] if main else None, spec=spec, schema=schema, branch_window=None)
        main.append(sid)
        log.append({"snapshot-id": sid, "timestamp-ms": w.snapshots[-1]["timestamp-ms"]})
        states.append((spec, schema, 1 if n >= 0.5 * snapshots else 0, len(w.snapshots)))
        if n and n % tag_every == 0:
            refs[f"tag-{n}"] = {"snapshot-id": sid, "type": "tag"}
        if n and n % branch_every == 0 and len(w.snapshots) + 5 < snapshots:
            window = list(w.window)
            head = sid
            for _ in range(5):
                head = w.commit(head, spec=spec, schema=schema, branch_window=window)
            refs[f"branch-{n}"] = {"snapshot-id": head, "type": "branch"}
        if n and n % rollback_every == 0 and len(w.snapshots) + 3 < snapshots:
            head, window = sid, list(w.window)
            for _ in range(3):  # committed on main, then rolled back: unreachable
                head = w.commit(head, spec=spec, schema=schema, branch_window=window)
    refs["main"] = {"snapshot-id": main[-1], "type": "branch"}
    spec, schema, _order, _ = states[-1]

    def metadata(upto: int, known: int, entries: list[dict[str, Any]]) -> dict[str, Any]:
        spec_at, schema_at, order_at, _ = states[upto]
        head = main[upto]
        return {
            "format-version": 2,
            "table-uuid": str(w.schema),
            "location": str(location),
            "last-sequence-number": known,
            "last-updated-ms": w.snapshots[known - 1]["timestamp-ms"] + 1,
            "last-column-id": 3 + 19,
            "current-schema-id": schema_at,
            "schemas": [_schema(i) for i in range(schema_at + 1)],
            "default-spec-id": spec_at,
            "partition-specs": SPECS[: spec_at + 1],
            "last-partition-id": 1002,
            "default-sort-order-id": order_at,
            "sort-orders": SORT_ORDERS[: order_at + 1] if order_at else SORT_ORDERS[:1],
            "properties": {"commit.retry.num-retries": str(4 + upto % 3)},
            "current-snapshot-id": head,
            "refs": {k: v for k, v in refs.items() if _known(v["snapshot-id"], w.snapshots[:known])}
            | {"main": {"snapshot-id": head, "type": "branch"}},
            "snapshots": w.snapshots[:known],
            "snapshot-log": log[: upto + 1],
            "metadata-log": entries,
        }

    # The metadata log: the previous 100 files of main's last 100 commits; the newest few exist.
    last = len(main) - 1
    window_commits = list(range(max(0, last - 100), last))
    entries = []
    for k, upto in enumerate(window_commits):
        known = states[upto][3]
        path = location / "metadata" / f"v{upto + 1}.metadata.json"
        entries.append({"metadata-file": str(path), "timestamp-ms": w.snapshots[known - 1]["timestamp-ms"] + 1})
        if k >= len(window_commits) - previous_files:
            path.write_text(json.dumps(metadata(upto, known, entries[:-1][-100:])))
    final.write_text(json.dumps(metadata(last, len(w.snapshots), entries[-100:])))
    (location / "complete").write_text(json.dumps({"snapshots": len(w.snapshots)}))
    return final


_KNOWN: dict[int, set[int]] = {}


def _known(snapshot_id: int, snapshots: list[dict[str, Any]]) -> bool:
    ids = _KNOWN.get(len(snapshots))
    if ids is None:
        ids = _KNOWN[len(snapshots)] = {s["snapshot-id"] for s in snapshots}
    return snapshot_id in ids


def peer_step(step: str, metadata_file: Path, timeout: int) -> float | None:
    """Seconds one PyIceberg step took in a new process (opening the table not counted, except for
    ``open``); None when it did not finish within ``timeout``."""
    code = (
        "import sys, time\n"
        "from pyiceberg.table import StaticTable\n"
        "started = time.perf_counter()\n"
        f"t = StaticTable.from_metadata({str(metadata_file)!r})\n"
        f"if {step!r} != 'open':\n"
        "    started = time.perf_counter()\n"
        f"    getattr(t.inspect, {step!r})()\n"
        "print(time.perf_counter() - started)\n"
    )
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        return None
    return float(done.stdout.strip().splitlines()[-1])


def timed(runs: int, work: Callable[[], Any]) -> tuple[Any, float]:
    best, result = float("inf"), None
    for _ in range(runs):
        gc.collect()
        started = time.perf_counter()
        result = work()
        best = min(best, time.perf_counter() - started)
    return result, best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--snapshots", type=int, default=50_000)
    parser.add_argument("--previous-files", type=int, default=2, help="previous metadata files that still exist")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--peer-timeout", type=int, default=120, help="seconds allowed to each PyIceberg step")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    metadata_file = generate(args.snapshots, args.previous_files)
    print(f"table: {metadata_file.parent.parent} (generated or reused in {time.perf_counter() - started:.1f} s)")

    import icebook

    t, open_s = timed(args.runs, lambda: icebook.open(str(metadata_file)))
    print(
        f"snapshots: {len(t.metadata.snapshots):,}, refs: {len(t.refs)}, metadata log: {len(t.metadata.metadata_log)}"
    )
    lin, lineage_s = timed(args.runs, lambda: t.lineage())
    _, lineage_frame_s = timed(args.runs, lambda: lin.to_pandas())
    # A table object of its own, opened outside the clock: nothing lineage() read is reused.
    fresh = [icebook.open(str(metadata_file)) for _ in range(args.runs)]
    evo, evolution_s = timed(args.runs, lambda: fresh.pop().evolution())
    _, evolution_frame_s = timed(args.runs, lambda: evo.to_pandas())
    per_spec, per_spec_s = timed(args.runs, lambda: evo.files_per_spec)
    print(f"unreachable: {len(lin.unreachable):,}; schemas {len(evo.schemas)}, specs {len(evo.specs)}")
    print(f"{'step':<48}{'seconds':>10}{'peer/icebook':>14}")
    for name, seconds in (
        ("icebook open", open_s),
        ("icebook lineage()", lineage_s),
        ("icebook lineage().to_pandas()", lineage_frame_s),
        ("icebook evolution() (fresh table object)", evolution_s),
        ("icebook evolution().to_pandas()", evolution_frame_s),
        (f"icebook evolution().files_per_spec ({len(per_spec):,} rows)", per_spec_s),
    ):
        print(f"{name:<48}{seconds:>10.3f}", flush=True)

    # The peer, each step in its own process with a time limit (PyIceberg's history walk is slow here).
    against = {"open": open_s, "snapshots": lineage_s, "history": lineage_s, "refs": None}
    labels = {
        "open": "pyiceberg StaticTable.from_metadata",
        "snapshots": "pyiceberg inspect.snapshots()",
        "history": "pyiceberg inspect.history() (main ancestry)",
        "refs": "pyiceberg inspect.refs()",
    }
    for step, label in labels.items():
        seconds = peer_step(step, metadata_file, args.peer_timeout)
        base = against[step]
        if seconds is None:
            print(f"{label:<48}{'> ' + str(args.peer_timeout):>10}{'':>14}", flush=True)
        else:
            ratio = f"{seconds / base:.2f}" if base else ""
            print(f"{label:<48}{seconds:>10.3f}{ratio:>14}", flush=True)
    print("(ratios: the PyIceberg step over the icebook step: open, lineage)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
