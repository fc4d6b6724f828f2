"""Decoders never run on a table's bytes in the kernel's process: a hang is stopped, a native panic or
a crash becomes a MetadataError naming the file, and the next read works.

The damaged bytes are exact: a reproducible synthetic manifest (``_synthetic.py``) with one byte
changed, found to make polars-avro 0.13 spin forever and polars' own reader panic.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from _support.metadata_examples import FILE, v2
from _synthetic import PATH, manifest_bytes, manifest_file

from icebook.analysis.store.manifests import ManifestStore
from icebook.errors import IcebookError, MetadataError
from icebook.io import worker_pool as worker_pool_module
from icebook.io.avro import read_manifest_entries, read_manifest_entry
from icebook.io.avro_header import check_deflate_blocks, check_framing
from icebook.io.manifest_cache import ManifestCache
from icebook.io.worker_pool import POOL, SETTINGS, WorkerPool, decode_isolated, decode_timeout
from icebook.spec.metadata import parse_table_metadata

CLEAN = manifest_bytes(6)
BLOCK = check_framing(CLEAN, PATH, kind="manifest").blocks[0]
SPINS = (BLOCK.offset + 822, 139)  # polars-avro never returns on this file (its optional values read strictly)
PANICS = (BLOCK.offset + 445, 170)  # polars.read_avro raises pyo3_runtime.PanicException
LIMIT = 120.0  # seconds a test waits for a call before calling it a hang


def _flip(position: int, xor: int) -> bytes:
    damaged = bytearray(CLEAN)
    damaged[position] ^= xor
    return bytes(damaged)


class MemoryIO:
    def __init__(self, data: bytes) -> None:
        self.data = data

    def read_bytes(self, path: str) -> bytes:
        return self.data

    def open_input(self, path: str) -> Any:
        return pa.BufferReader(self.data)


def _within_limit(call: Callable[[], Any]) -> tuple[str, Any]:
    """('returned', value) or ('raised', exception), or fail the test if ``call`` does not end."""
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["returned"] = call()
        except BaseException as exc:  # a BaseException reaching the caller is what is being tested
            outcome["raised"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(LIMIT)
    assert not thread.is_alive(), f"the call did not end within {LIMIT} s"
    return next(iter(outcome.items()))


def test_the_synthetic_manifest_reads_cleanly() -> None:
    table = read_manifest_entries(MemoryIO(CLEAN), manifest_file(CLEAN))
    assert table.num_rows == 6
    assert table.column("snapshot_id").to_pylist() == [7] * 6  # inherited from the manifest list


def test_a_decoder_that_never_returns_is_stopped_and_the_next_read_works() -> None:
    damaged = _flip(*SPINS)
    POOL.shutdown()  # no idle worker left from earlier tests: the next read must start a new one
    started = POOL.started
    with decode_timeout(3.0):
        kind, value = _within_limit(lambda: read_manifest_entries(MemoryIO(damaged), manifest_file(damaged)))
    assert kind == "raised" and isinstance(value, MetadataError), value
    assert str(value).startswith(f"manifest {PATH}: ") and "did not finish within 3 s" in str(value)
    kind, value = _within_limit(lambda: read_manifest_entries(MemoryIO(CLEAN), manifest_file(CLEAN)))
    assert kind == "returned" and value.num_rows == 6
    assert POOL.started == started + 2  # the stopped worker was replaced, not reused


def test_a_native_panic_is_a_metadata_error_never_a_base_exception() -> None:
    damaged = _flip(*PANICS)
    kind, value = _within_limit(
        lambda: read_manifest_entries(MemoryIO(damaged), manifest_file(damaged), decoder="polars")
    )
    assert kind == "raised" and isinstance(value, MetadataError), repr(value)
    assert "PanicException" in str(value) and PATH in str(value)
    for call in (
        lambda: read_manifest_entries(MemoryIO(damaged), manifest_file(damaged)),
        lambda: read_manifest_entry(MemoryIO(damaged), manifest_file(damaged), 5),
    ):
        kind, value = _within_limit(call)
        assert kind == "raised" and isinstance(value, IcebookError), repr(value)


def test_a_crashed_worker_is_reported_and_replaced() -> None:
    with pytest.raises(MetadataError, match=r"manifest x\.avro: the decoder process died \(exit status 3\)"):
        decode_isolated("exit", 3, data_size=0, path="x.avro", kind="manifest")
    assert read_manifest_entries(MemoryIO(CLEAN), manifest_file(CLEAN)).num_rows == 6


def test_a_worker_that_overruns_its_deadline_is_stopped() -> None:
    with decode_timeout(1.0), pytest.raises(MetadataError, match=r"did not finish within 1 s"):
        decode_isolated("sleep", 30.0, data_size=0, path="x.avro", kind="manifest")


def test_parallel_reads_share_the_pool() -> None:
    results: list[int] = []
    errors: list[BaseException] = []

    def read() -> None:
        try:
            results.append(read_manifest_entries(MemoryIO(CLEAN), manifest_file(CLEAN)).num_rows)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(LIMIT)
    assert not errors and results == [6] * 8


def test_a_listing_starts_the_workers_it_needs_together_and_none_for_manifests_it_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool = WorkerPool()  # its own pools: the shared one may have starts in flight from other tests
    try:
        pool.prestart(SETTINGS.workers + 3)  # never more than the pool's size
        assert pool.started == SETTINGS.workers
        pool.prestart(SETTINGS.workers)  # already running or starting: none more
        assert pool.started == SETTINGS.workers
    finally:
        pool.shutdown()
    # A manifest already decoded (in memory, or in the disk cache for a new store) needs no worker.
    cache = ManifestCache(tmp_path / "manifests")
    store = ManifestStore(MemoryIO(CLEAN), parse_table_metadata(v2(), file=FILE), disk_cache=cache)
    manifest = manifest_file(CLEAN)
    assert store.entries(manifest).num_rows == 6  # decoded by the shared pool
    pool = WorkerPool()
    monkeypatch.setattr(worker_pool_module, "POOL", pool)  # the store looks the pool up when it prestarts
    try:
        started = pool.started
        store.prestart_decoders([manifest])
        ManifestStore(MemoryIO(CLEAN), parse_table_metadata(v2(), file=FILE), disk_cache=cache).prestart_decoders(
            [manifest]
        )
        assert pool.started == started
        uncached = ManifestStore(MemoryIO(CLEAN), parse_table_metadata(v2(), file=FILE), disk_cache=False)
        uncached.prestart_decoders([manifest])
        assert pool.started == started + 1
    finally:
        pool.shutdown()


def test_the_pool_grows_while_callers_queue_for_its_one_worker_though_each_waits_only_briefly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two callers, each running many short tasks: with one worker, each waits one short task at a time,
    # never the growth delay, but they wait all along: a pass over many manifests must use both workers.
    monkeypatch.setenv("ICEBOOK_DECODE_WORKERS", "2")
    pool = WorkerPool()
    task = WorkerPool._GROW_AFTER / 10

    def calls() -> None:
        for _ in range(30):
            assert pool.run("sleep", task, nbytes=0) == task
            time.sleep(task / 2)  # the caller's own work on what came back: the other caller takes the worker

    try:
        threads = [threading.Thread(target=calls) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(LIMIT)
        assert not any(t.is_alive() for t in threads)
        assert pool.started == 2
        # A caller alone never queues: no worker is started for it beyond the first.
        single = WorkerPool()
        try:
            for _ in range(8):
                single.run("sleep", task, nbytes=0)
            assert single.started == 1
        finally:
            single.shutdown()
    finally:
        pool.shutdown()


def test_a_manifest_that_failed_is_not_decoded_again_by_the_same_table() -> None:
    class CountingIO(MemoryIO):
        reads = 0

        def read_bytes(self, path: str) -> bytes:
            CountingIO.reads += 1
            return super().read_bytes(path)

    damaged = CLEAN[: len(CLEAN) - 40]  # cut inside the last block
    store = ManifestStore(CountingIO(damaged), parse_table_metadata(v2(), file=FILE), disk_cache=False)
    manifest = manifest_file(damaged)
    errors = []
    for columns in (["file_path"], None, ["file_path", "record_count"]):
        with pytest.raises(MetadataError) as info:
            store.entries(manifest, columns)
        errors.append(info.value)
    assert CountingIO.reads == 1  # a narrower request failed first: every wider one fails the same way
    assert all(e is errors[0] for e in errors) and PATH in str(errors[0])


def test_a_manifest_whose_decoder_missed_its_deadline_is_tried_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A missed deadline may pass (a loaded machine, a larger ICEBOOK_DECODE_TIMEOUT): it is not kept."""
    damaged = _flip(*SPINS)

    class CountingIO(MemoryIO):
        reads = 0

        def read_bytes(self, path: str) -> bytes:
            CountingIO.reads += 1
            return super().read_bytes(path)

    store = ManifestStore(CountingIO(damaged), parse_table_metadata(v2(), file=FILE), disk_cache=False)
    monkeypatch.setattr("icebook.io.avro_entries.default_decoders", lambda: ["polars-avro"])  # the one that spins
    with decode_timeout(2.0):
        for _ in range(2):
            kind, value = _within_limit(lambda: store.entries(manifest_file(damaged)))
            assert kind == "raised" and isinstance(value, MetadataError) and value.may_pass, value
    assert CountingIO.reads == 2


def test_a_deflate_block_zlib_refuses_is_named_before_any_decoder_reads_it() -> None:
    """Found by the fuzz test: polars-avro inflated a damaged block (a back-reference before its start) into
    zero bytes inside a path, where zlib and fastavro refuse it."""
    data = manifest_bytes(6, codec="deflate")
    framing = check_framing(data, PATH, kind="manifest")
    block = framing.blocks[0]
    damaged = data[: block.offset] + b"\xff" * block.size + data[block.offset + block.size :]  # a reserved block type
    with pytest.raises(MetadataError, match=r"corrupt Avro block 0: deflate: "):
        check_deflate_blocks(damaged, check_framing(damaged, PATH, kind="manifest"), PATH, kind="manifest")
    check_deflate_blocks(data, framing, PATH, kind="manifest")  # the undamaged file passes
    kind, value = _within_limit(lambda: read_manifest_entries(MemoryIO(damaged), manifest_file(damaged)))
    assert kind == "raised" and isinstance(value, MetadataError) and "deflate" in str(value), value


def test_a_folder_named_icebook_in_the_current_directory_never_reaches_a_worker(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ``python -m`` puts the current directory first on the path: a worker started from a folder holding an
    # ``icebook`` of its own would decode with that code (or fail to start) instead of the kernel's.
    (tmp_path / "icebook" / "io").mkdir(parents=True)
    (tmp_path / "icebook" / "__init__.py").write_text("raise SystemExit('a foreign icebook was imported')\n")
    (tmp_path / "icebook" / "io" / "__init__.py").write_text("")
    monkeypatch.chdir(tmp_path)
    POOL.shutdown()  # the next read starts a worker from this directory
    table = read_manifest_entries(MemoryIO(CLEAN), manifest_file(CLEAN))
    assert table.num_rows == 6


def test_a_worker_loads_the_manifest_reader_without_polars() -> None:
    # polars-avro's native reader alone: importing polars would be half of every worker's start.
    import subprocess
    import sys

    code = (
        "import sys; from icebook.io import decode_worker as w, avro_decode as a; w._tasks(); w._preload(); "
        "print(a._native_reader() is not None, 'polars' in sys.modules, 'pandas' in sys.modules)"
    )
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run(
        [sys.executable, "-P", "-c", code], capture_output=True, text=True, timeout=LIMIT, env={"PYTHONPATH": root}
    )
    assert done.stdout.split() == ["True", "False", "False"], done.stderr
