"""Decoding untrusted bytes in worker processes, with a deadline.

Tables are untrusted input. The columnar Avro decoder is native code: on some corrupt bytes
it spins forever in a thread no signal stops, or panics with ``pyo3_runtime.PanicException``,
a ``BaseException`` that passes every ``except Exception``. So no decoder ever sees a table's
bytes in the kernel's own process: a small pool of worker processes
(``python -m icebook.io.decode_worker``) does the decoding, and the kernel waits for each
reply until a deadline that grows with the input's size. A worker that misses its deadline
or dies is killed and replaced; the caller gets a ``MetadataError`` naming the file.

Workers are started with ``subprocess`` (fork + exec), never ``multiprocessing``: forking a
kernel that runs a JVM bridge and native thread pools is unsafe, and the spawn method would
re-run a user's script that lacks a ``__main__`` guard. See ``docs/ARCHITECTURE.md``,
"Decoding untrusted files".
"""

from __future__ import annotations

import atexit
import io
import os
import pickle
import select
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

from icebook import config
from icebook.errors import EnvironmentProblem, MetadataError

_HEADER_SIZE = 8
_MiB = 1024 * 1024
_MAX_BUFFERS = 64  # out-of-band buffers in one reply (a manifest's decode sends one)
_PIPE_BYTES = 1 << 20  # a larger pipe: a decoded manifest's megabytes cross in fewer reads
_STARTUP_SECONDS = 120.0  # a cold start imports pyarrow and the Avro reader, slow on a loaded 2-core machine
_ALLOWED_GLOBALS = {
    ("builtins", "bytearray"),
    ("datetime", "date"),
    ("datetime", "datetime"),
    ("datetime", "time"),
    ("datetime", "timedelta"),
    ("datetime", "timezone"),
    ("decimal", "Decimal"),
    ("uuid", "UUID"),
}


class _ReplyUnpickler(pickle.Unpickler):
    """Replies carry plain values only: a worker that decoded hostile bytes gets no say in what
    the kernel imports or calls."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _ALLOWED_GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"unexpected {module}.{name} in a worker reply")


class DecodeSettings:
    """How long a decode may take: ``base_seconds`` plus some seconds per MiB of input.

    The columnar decoder reads tens of MiB a second, fastavro's records a few; both allowances
    leave room for a machine busy with other work, since stopping a valid decode is worse than
    waiting for a hung one. ``base_seconds`` and ``workers`` (the pool size) are read from the environment
    when used (``config.decode_timeout``, ``config.decode_workers``); ``decode_timeout`` overrides the first.
    """

    COLUMNAR_SECONDS_PER_MIB = 2.0
    RECORDS_SECONDS_PER_MIB = 20.0

    def __init__(self) -> None:
        self._base_seconds: float | None = None

    @property
    def base_seconds(self) -> float:
        return self._base_seconds if self._base_seconds is not None else config.decode_timeout()

    @property
    def workers(self) -> int:
        return config.decode_workers()

    def timeout_for(self, nbytes: int, *, seconds_per_mib: float) -> float:
        return self.base_seconds + seconds_per_mib * nbytes / _MiB


SETTINGS = DecodeSettings()


@contextmanager
def decode_timeout(base_seconds: float) -> Iterator[None]:
    """Temporarily change the base decode deadline (tests use a short one to exercise hangs)."""
    old = SETTINGS._base_seconds
    SETTINGS._base_seconds = base_seconds
    try:
        yield
    finally:
        SETTINGS._base_seconds = old


class WorkerFailed(Exception):
    """A worker missed its deadline, died, or could not decode; ``str()`` says which.

    ``worker_lost`` is True when the worker process is unusable afterwards (killed, dead, or
    out of step with the protocol) and must be replaced.
    """

    def __init__(self, message: str, *, worker_lost: bool = True) -> None:
        super().__init__(message)
        self.worker_lost = worker_lost


class _Worker:
    def __init__(self) -> None:
        # Kept open for the worker's life (closed in kill()): its tail explains a crash.
        self.stderr: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        env = dict(os.environ)
        package_root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
        self.proc = subprocess.Popen(
            # -P: the worker imports the kernel's icebook, never an ``icebook`` folder in the current directory
            [sys.executable, "-P", "-m", "icebook.io.decode_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=env,
            close_fds=True,
            start_new_session=True,  # a Ctrl-C in a terminal is for the user's process, not the workers
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        with suppress(AttributeError, OSError):  # Linux only (F_SETPIPE_SZ); elsewhere the default size
            import fcntl

            for pipe in (self.proc.stdin, self.proc.stdout):
                fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
        self._in = self.proc.stdin
        self._out = self.proc.stdout.raw if hasattr(self.proc.stdout, "raw") else self.proc.stdout
        os.set_blocking(self._out.fileno(), False)  # a read takes what the pipe holds; select() waits
        self._unread = bytearray()  # read off the pipe, not yet taken by ``_read_exact``

    def wait_ready(self) -> None:
        """Wait for the worker's "ready" (its imports done); EnvironmentProblem when it never comes."""
        try:
            status, _ = self._receive(time.monotonic() + _STARTUP_SECONDS)
        except WorkerFailed as exc:
            self.kill()
            raise EnvironmentProblem(f"the decoder worker process did not start: {exc}{self.stderr_tail()}") from None
        if status != "ready":
            self.kill()
            raise EnvironmentProblem(f"the decoder worker process did not start (said {status!r})")

    def stderr_tail(self) -> str:
        try:
            self.stderr.seek(0, io.SEEK_END)
            size = self.stderr.tell()
            self.stderr.seek(max(0, size - 2000))
            text = self.stderr.read().decode("utf-8", errors="replace").strip()
        except (OSError, ValueError):
            return ""
        return f"; its last output: {text[-500:]}" if text else ""

    def call(self, name: str, args: tuple[Any, ...], timeout: float) -> Any:
        payload = pickle.dumps((name, args, max(60.0, 4 * timeout)), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            # One write: a request that fits the pipe crosses in one system call.
            self._in.write(len(payload).to_bytes(_HEADER_SIZE, "little") + payload)
            self._in.flush()
        except (BrokenPipeError, OSError):
            raise WorkerFailed(f"the decoder process died ({self._exit_text()})") from None
        status, value = self._receive(time.monotonic() + timeout, timeout)
        if status == "ok":
            return value
        raise WorkerFailed(str(value)[:1000], worker_lost=False)

    def _receive(self, deadline: float, timeout: float | None = None) -> tuple[str, Any]:
        header = self._read_exact(_HEADER_SIZE, deadline, timeout)
        payload = self._read_exact(int.from_bytes(header, "little"), deadline, timeout)
        count = int.from_bytes(self._read_exact(_HEADER_SIZE, deadline, timeout), "little")
        if count > _MAX_BUFFERS:
            raise WorkerFailed(f"malformed reply from the decoder process ({count} buffers)")
        # Out-of-band buffers (a manifest's Arrow IPC bytes): read once, into the memory the kernel keeps.
        buffers = [
            self._read_exact(
                int.from_bytes(self._read_exact(_HEADER_SIZE, deadline, timeout), "little"), deadline, timeout
            )
            for _ in range(count)
        ]
        try:
            message = _ReplyUnpickler(io.BytesIO(payload), buffers=buffers).load()
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as exc:
            raise WorkerFailed(f"unreadable reply from the decoder process: {exc}") from None
        if not (isinstance(message, tuple) and len(message) == 2 and isinstance(message[0], str)):
            raise WorkerFailed("malformed reply from the decoder process")
        return message[0], message[1]

    def _read_exact(self, n: int, deadline: float, timeout: float | None) -> bytearray:
        """The next ``n`` bytes of the reply. Each read takes everything the pipe holds (a reply's five parts
        usually arrive in one), and only an empty pipe waits in ``select``: every read lets go of the GIL,
        and taking it back waits for the kernel's busy threads (a listing's checks, an aggregate's
        reduction) for up to the interpreter's switch interval, while the worker waits for its next task."""
        fd = self._out.fileno()
        while len(self._unread) < n:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                waited = f"{timeout:.0f} s" if timeout is not None else "its start-up time"
                raise WorkerFailed(f"decoding did not finish within {waited} (the decoder was stopped)")
            try:
                chunk = os.read(fd, _PIPE_BYTES)  # never more than the pipe holds: no buffer of n bytes per read
            except BlockingIOError:
                select.select([fd], [], [], remaining)
                continue
            if not chunk:
                raise WorkerFailed(f"the decoder process died ({self._exit_text()}){self.stderr_tail()}")
            self._unread += chunk
        if len(self._unread) == n:  # the usual case, a reply's last part: handed over, not copied
            taken, self._unread = self._unread, bytearray()
            return taken
        taken = self._unread[:n]
        del self._unread[:n]
        return taken

    def _exit_text(self) -> str:
        code = self.proc.poll()
        if code is None:
            try:
                code = self.proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                return "no exit status"
        return f"killed by signal {-code}" if code < 0 else f"exit status {code}"

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        with suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        for stream in (self._in, self.proc.stdout, self.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass


class WorkerPool:
    """Up to ``SETTINGS.workers`` decoder processes, started on demand and reused.

    A worker starts in the background (its imports take a few tenths of a second): callers wait for
    the first one that is free, whether it was busy or starting. One start is in flight at a time, and
    another worker starts only when callers have waited ``_GROW_AFTER`` seconds in all since the last one: a
    plan that decodes two small manifests is done by one worker sooner than two workers can start on a busy
    machine, while a listing of hundreds of manifests still grows the pool to its size (and a caller that
    knows it will use every worker starts them together: ``prestart``).
    """

    _GROW_AFTER = 0.1

    def __init__(self) -> None:
        self._idle: list[_Worker] = []
        self._busy = 0
        self._starting = 0
        self._start_error: BaseException | None = None
        self._generation = 0  # bumped by shutdown(): a start in flight then ends its worker
        self._waited = 0.0  # seconds callers have waited for a worker since the last start
        self._cond = threading.Condition()
        self.started = 0
        """Worker processes started so far (tests check that a hung one was replaced)."""

    def prestart(self, count: int = 1) -> None:
        """Start workers in the background until ``count`` (at most the pool's size) run or are starting, so
        that their imports overlap the caller's own work (reading a manifest list, pruning) before the first
        decode. A caller that knows it will keep ``count`` workers busy (a listing of many manifests) asks for
        them at once, rather than growing the pool one start at a time."""
        with self._cond:
            for _ in range(min(count, SETTINGS.workers) - (len(self._idle) + self._busy + self._starting)):
                self._launch()

    def _launch(self) -> None:
        """Start one worker on a thread that waits for its "ready"; called holding ``_cond``."""
        self._starting += 1
        self.started += 1
        self._waited = 0.0
        threading.Thread(target=self._start_one, args=(self._generation,), daemon=True).start()

    def _start_one(self, generation: int) -> None:
        worker: _Worker | None = None
        try:
            worker = _Worker()
            worker.wait_ready()
        except BaseException as exc:  # handed to a waiting caller, never lost on this thread
            with self._cond:
                self._starting -= 1
                self._start_error = exc
                self._cond.notify_all()
            return
        with self._cond:
            self._starting -= 1
            self._start_error = None
            if generation == self._generation:
                self._idle.append(worker)
                worker = None
            self._cond.notify_all()
        if worker is not None:
            worker.kill()  # the pool was shut down while this one started

    def _acquire(self) -> _Worker:
        """A free worker, waiting for one; grows the pool as the class says. Waiting counts only while every
        worker is busy and none is starting: a pass over thousands of manifests keeps callers waiting one
        short decode at a time, never long each, and must not stay at one worker."""
        with self._cond:
            since: float | None = None
            while True:
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive():
                        self._busy += 1
                        return worker
                    worker.kill()
                if self._start_error is not None and not (self._busy or self._starting):
                    error, self._start_error = self._start_error, None
                    raise error
                now = time.monotonic()
                if since is not None and not self._starting:
                    self._waited += now - since
                since = now
                room = self._busy + self._starting < SETTINGS.workers
                if room and not self._starting and (not self._busy or self._waited >= self._GROW_AFTER):
                    self._launch()
                self._cond.wait(self._GROW_AFTER if room and self._busy and not self._starting else None)

    def _release(self, worker: _Worker | None) -> None:
        with self._cond:
            self._busy -= 1
            if worker is not None:
                self._idle.append(worker)
            self._cond.notify_all()

    def run(self, name: str, *args: Any, nbytes: int, columnar: bool = False) -> Any:
        """``TASKS[name](*args)`` in a worker, allowed ``SETTINGS.timeout_for(nbytes)`` seconds
        (``columnar``: the task runs the fast columnar decoder, so a shorter allowance per MiB).

        Raises ``WorkerFailed`` when the task raised, the worker died, or the deadline passed
        (the worker is then killed and a fresh one takes its place on the next call).
        """
        worker = self._acquire()
        try:
            rate = SETTINGS.COLUMNAR_SECONDS_PER_MIB if columnar else SETTINGS.RECORDS_SECONDS_PER_MIB
            result = worker.call(name, args, SETTINGS.timeout_for(nbytes, seconds_per_mib=rate))
        except WorkerFailed as exc:
            if exc.worker_lost:
                worker.kill()
                self._release(None)
            else:
                self._release(worker)
            raise
        except BaseException:
            # Interrupted mid-conversation (Ctrl-C in a notebook): the worker's state is unknown.
            worker.kill()
            self._release(None)
            raise
        self._release(worker)
        return result

    def shutdown(self) -> None:
        """Stop the idle workers (busy ones stop when their callers finish or time out, starting ones
        when they are ready)."""
        with self._cond:
            self._generation += 1
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.kill()


POOL = WorkerPool()
atexit.register(POOL.shutdown)


def decode_isolated(name: str, *args: Any, data_size: int, path: str, kind: str, columnar: bool = False) -> Any:
    """Run decoder task ``name`` in a worker; any failure is a MetadataError naming ``path``."""
    try:
        return POOL.run(name, *args, nbytes=data_size, columnar=columnar)
    except WorkerFailed as exc:
        error = MetadataError(path, None, str(exc), kind=kind)
        error.may_pass = exc.worker_lost  # a deadline or a dead worker, not the content
        raise error from None


__all__ = ["POOL", "SETTINGS", "WorkerFailed", "WorkerPool", "decode_isolated", "decode_timeout"]
