"""Fixed-seed fuzzing of a manifest list, a manifest and a Puffin file of a Spark-written table.

Every damaged copy (one byte XOR-ed with a random non-zero value, or the file cut short) is served
through a FileIO that leaves the real files alone. Each case must end, within a time limit, in
either the undamaged answer or an IcebookError; nothing may hang and nothing else may be raised.
Avro deflate blocks carry no checksum, so some flips change a value without breaking anything
that could be checked: those are counted ("undetected") and printed, not hidden.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from icebook.errors import IcebookError
from icebook.io.avro_header import check_framing
from icebook.io.fileio import ArrowFileIO
from icebook.io.puffin import read_deletion_vector_blob, read_puffin_footer
from icebook.io.worker_pool import POOL, decode_timeout
from icebook.table import Table, open_table

pytestmark = pytest.mark.spark

SEED = 12
FLIPS = {"manifest list": 340, "manifest": 360, "puffin file": 320}
TRUNCATIONS = {"manifest list": 70, "manifest": 70, "puffin file": 70}
CASE_LIMIT_SECONDS = 60.0  # a decode is stopped after 2 s here; the rest is a loaded machine's slack
DECODE_SECONDS = 2.0


class DamagedFileIO(ArrowFileIO):
    """Serves ``data`` in place of the file at ``path``; every other file as it is on disk."""

    def __init__(self, path: str, data: bytes) -> None:
        super().__init__()
        self.path = path
        self.data = data

    def read_bytes(self, path: str) -> bytes:
        return self.data if path == self.path else super().read_bytes(path)

    def open_input(self, path: str) -> Any:
        return pa.BufferReader(self.data) if path == self.path else super().open_input(path)

    def size(self, path: str) -> int:
        return len(self.data) if path == self.path else super().size(path)


def _plain(value: Any) -> Any:
    """Cells of a pandas frame as plain Python (numpy arrays as lists), so repr() compares them whole."""
    if isinstance(value, np.ndarray):
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _frame(df: pd.DataFrame) -> str:
    return repr(_plain(df.to_dict(orient="list")))


def _table_answer(t: Table) -> tuple[Any, ...]:
    files = t.inspect.files()
    manifests = t.inspect.manifests()
    rows = t.read().sort_by("reading_id")
    return (_frame(files), _frame(manifests), rows)


def _puffin_answer(t: Table, path: str) -> tuple[Any, ...]:
    footer = read_puffin_footer(t.fileio, path)
    vectors = tuple(tuple(read_deletion_vector_blob(t.fileio, path, b).tolist()) for b in footer.blobs)
    return (t.read().sort_by("reading_id"), footer, vectors)  # the Puffin file matters to reads only


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return len(a) == len(b) and all(
        x.equals(y) if isinstance(x, pa.Table) else x == y for x, y in zip(a, b, strict=True)
    )


@dataclass
class Outcome:
    right: int = 0
    icebook_error: int = 0
    undetected: int = 0


def _run_case(
    work: Callable[[], tuple[Any, ...]], baseline: tuple[Any, ...]
) -> tuple[str, float, BaseException | None]:
    """('right' | 'error' | 'undetected' | 'other' | 'hang', seconds, the unexpected exception)."""
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["answer"] = work()
        except IcebookError:
            result["kind"] = "error"
        except BaseException as exc:  # anything else is a failure of the test, reported below
            result["kind"] = "other"
            result["exc"] = exc

    started = time.monotonic()
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(CASE_LIMIT_SECONDS)
    seconds = time.monotonic() - started
    if thread.is_alive():
        return "hang", seconds, None
    if "answer" in result:
        return ("right" if _same(result["answer"], baseline) else "undetected"), seconds, None
    return result["kind"], seconds, result.get("exc")


def _data_area(data: bytes, path: str, kind: str) -> tuple[int, int]:
    """Where an Avro file's blocks start and end (flips there reach the decoder, not the header)."""
    if kind == "puffin file":
        return 4, len(data)
    framing = check_framing(data, path, kind=kind)
    return framing.header_length, len(data)


def test_fuzz_flips_and_truncations_end_in_the_answer_or_an_icebook_error(
    scenario_locations: dict[str, Path],
) -> None:
    location = str(scenario_locations["dv_v3"])
    clean = open_table(location)
    snapshot = clean.current_snapshot
    assert snapshot is not None and snapshot.manifest_list is not None
    manifests = clean.inspect.manifests()
    data_manifest = manifests[manifests["content"] == 0]["path"].iloc[0]
    dv_files = clean.inspect.delete_files()
    puffin = dv_files[dv_files["file_format"] == "PUFFIN"]["file_path"].iloc[0]
    targets = {"manifest list": snapshot.manifest_list, "manifest": data_manifest, "puffin file": puffin}

    rng = random.Random(SEED)
    outcomes = {kind: {"flip": Outcome(), "truncation": Outcome()} for kind in targets}
    unexpected: list[str] = []
    slowest = 0.0
    started_workers = POOL.started
    with decode_timeout(DECODE_SECONDS):
        for kind, path in targets.items():
            data = Path(path).read_bytes()
            baseline = _puffin_answer(clean, path) if kind == "puffin file" else _table_answer(clean)
            low, high = _data_area(data, path, kind)
            cases: list[tuple[str, bytes]] = []
            for i in range(FLIPS[kind]):
                # Half the flips anywhere in the file, half in the data after the header.
                pos = rng.randrange(len(data)) if i % 2 == 0 else rng.randrange(low, high)
                damaged = bytearray(data)
                damaged[pos] ^= rng.randrange(1, 256)
                cases.append(("flip", bytes(damaged)))
            for _ in range(TRUNCATIONS[kind]):
                cases.append(("truncation", data[: rng.randrange(len(data))]))

            for how, damaged_bytes in cases:
                io = DamagedFileIO(path, damaged_bytes)

                def work(io: DamagedFileIO = io, kind: str = kind, path: str = path) -> tuple[Any, ...]:
                    t = open_table(location, fileio=io)
                    return _puffin_answer(t, path) if kind == "puffin file" else _table_answer(t)

                verdict, seconds, exc = _run_case(work, baseline)
                slowest = max(slowest, seconds)
                tally = outcomes[kind][how]
                if verdict == "right":
                    tally.right += 1
                elif verdict == "error":
                    tally.icebook_error += 1
                elif verdict == "undetected":
                    tally.undetected += 1
                else:
                    unexpected.append(f"{kind} {how}: {verdict} {type(exc).__name__ if exc else ''}: {exc}")

    print(f"\nfuzz (seed {SEED}): right answer / IcebookError / undetected difference")
    for kind, by_how in outcomes.items():
        for how, o in by_how.items():
            print(f"  {kind:<14} {how:<10} {o.right:>4} / {o.icebook_error:>4} / {o.undetected:>4}")
    total = Counter[str]()
    for by_how in outcomes.values():
        for o in by_how.values():
            total.update(right=o.right, error=o.icebook_error, undetected=o.undetected)
    print(
        f"  total: {total['right']} / {total['error']} / {total['undetected']}; slowest case {slowest:.1f} s; "
        f"decoder processes started {POOL.started - started_workers}"
    )
    assert not unexpected, "\n".join(unexpected[:20])
    flips = sum(
        o.right + o.icebook_error + o.undetected for by in outcomes.values() for h, o in by.items() if h == "flip"
    )
    cuts = sum(
        o.right + o.icebook_error + o.undetected for by in outcomes.values() for h, o in by.items() if h != "flip"
    )
    assert flips >= 1000 and cuts >= 200
    # A truncated file is always detected: framing, manifest_length, a CRC or a footer says so.
    assert all(by["truncation"].undetected == 0 for by in outcomes.values()), outcomes
