"""The decoder worker process: ``python -m icebook.io.decode_worker``.

It reads requests from stdin and writes replies to stdout, each a pickle behind an 8-byte
length. A request names a task of ``TASKS`` and its arguments; the reply is
``("ok", result)`` or ``("error", message)``, and is followed by the out-of-band buffers its pickle
refers to (``pickle.PickleBuffer``: a decoded manifest's Arrow IPC bytes), each behind its 8-byte length
after an 8-byte count, so that they are written straight from Arrow's memory and read straight into the
kernel's. Whatever a decoder does with hostile bytes
(spin forever, panic, exhaust memory, crash) happens here, where the kernel can time it out
and kill it (see ``icebook.io.worker_pool``).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import resource
import struct
import sys
from collections.abc import Callable
from typing import Any, BinaryIO

HEADER = struct.Struct("<Q")
READY = "ready"


def _tasks() -> dict[str, Callable[..., Any]]:
    from icebook.io import avro_decode, list_decode

    return {
        "manifest_columns": avro_decode.manifest_columns,
        "list_columns": list_decode.list_columns,
        "avro_records": avro_decode.avro_records,
        "manifest_entry_record": avro_decode.manifest_entry_record,
        "sleep": avro_decode.sleep,
        "exit": avro_decode.exit_now,
    }


def write_message(out: BinaryIO, message: Any) -> None:
    buffers: list[pickle.PickleBuffer] = []
    payload = pickle.dumps(message, protocol=5, buffer_callback=buffers.append)
    out.write(HEADER.pack(len(payload)))
    out.write(payload)
    out.write(HEADER.pack(len(buffers)))
    for buffer in buffers:
        raw = buffer.raw()
        out.write(HEADER.pack(raw.nbytes))
        out.write(raw)
    out.flush()


def _read_exact(source: BinaryIO, n: int) -> bytes | None:
    buf = bytearray(n)
    view = memoryview(buf)
    got = 0
    while got < n:
        k = source.readinto(view[got:])  # type: ignore[attr-defined]
        if not k:
            return None
        got += k
    return bytes(buf)


def _limit_core_dumps() -> None:
    # A decoder killed for using too much CPU must not leave core files behind.
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def cpu_budget(seconds: float) -> None:
    """Let this process use ``seconds`` more CPU time before the OS kills it (SIGXCPU).

    The kernel times every task out by the wall clock; this bound also holds when the kernel
    itself is gone, so an orphaned worker spinning in native code cannot run forever.
    """
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = used.ru_utime + used.ru_stime
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = int(spent + seconds) + 1
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def _preload() -> None:
    """Load the fast decoder before saying ready, so the first manifest is not slower than the rest."""
    from icebook.io import avro_decode

    avro_decode.preload()


class _WithoutPandas:
    """Decoders return Arrow IPC and never use pandas, but pyarrow imports it (a fifth of a second) on the
    first compute call or ``to_numpy`` when it can: here it cannot, and pyarrow then works without it."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname.partition(".")[0] == "pandas":
            raise ModuleNotFoundError("pandas is not used by the decoder process", name=fullname)
        return None


def main() -> None:
    # The protocol owns the real stdout; anything a library prints goes to stderr instead.
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    source = sys.stdin.buffer
    _limit_core_dumps()
    sys.meta_path.insert(0, _WithoutPandas())
    tasks = _tasks()
    _preload()
    write_message(out, (READY, os.getpid()))
    while True:
        header = _read_exact(source, HEADER.size)
        if header is None:
            return  # the kernel closed the pipe: exit quietly
        (length,) = HEADER.unpack(header)
        payload = _read_exact(source, length)
        if payload is None:
            return
        name, args, cpu_seconds = pickle.loads(payload)
        cpu_budget(cpu_seconds)
        try:
            reply: tuple[str, Any] = ("ok", tasks[name](*args))
        except BaseException as exc:
            reply = ("error", f"{type(exc).__name__}: {exc}")
        write_message(out, reply)


if __name__ == "__main__":
    main()
