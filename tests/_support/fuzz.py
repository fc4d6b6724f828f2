"""The fuzz test's tools: a FileIO serving one damaged file, answers compared view by view, and what a damaged
file's bytes still say when read by a decoder other than icebook's (to tell free text from a wrong answer)."""

from __future__ import annotations

import io
import json
import struct
from collections.abc import Iterator
from typing import Any

import fastavro
import numpy as np
import pandas as pd
import pyarrow as pa

from icebook.io.fileio import ArrowFileIO


class DamagedFileIO(ArrowFileIO):
    """Serves ``data`` in place of the file at ``path``; every other file as it is on disk. Being a subclass,
    it also keeps the damaged decode out of the shared on-disk manifest cache (used for plain FileIOs only)."""

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


def plain(value: Any) -> Any:
    """Cells of a pandas frame as plain Python (numpy arrays as lists), so repr() compares them whole."""
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def frame(df: pd.DataFrame) -> str:
    """A frame's whole content as one string (column names, every cell, dtypes)."""
    return repr((list(df.columns), [str(t) for t in df.dtypes], plain(df.to_dict(orient="list"))))


def same(a: Any, b: Any) -> bool:
    if isinstance(a, pa.Table) and isinstance(b, pa.Table):
        return a.equals(b)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


# ------------------------------------------------------------------------------------ what the bytes say


def changed_paths(a: Any, b: Any, prefix: str = "") -> Iterator[str]:
    """The paths (``snapshots[2].summary.total-records``) where two parsed documents differ, leaf by leaf."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() | b.keys(), key=str):
            where = f"{prefix}.{key}" if prefix else str(key)
            if key not in a or key not in b:
                yield where
            else:
                yield from changed_paths(a[key], b[key], where)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            yield from changed_paths(x, y, f"{prefix}[{i}]")
    elif a != b or type(a) is not type(b):
        yield prefix or "<document>"


def _json(data: bytes) -> Any:
    return json.loads(data.decode("utf-8"))


def _avro(data: bytes) -> Any:
    reader = fastavro.reader(io.BytesIO(data))
    meta = {k: v.decode("utf-8", "replace") if isinstance(v, bytes) else v for k, v in reader.metadata.items()}
    return {"header": meta, "records": list(reader)}


def _puffin(data: bytes) -> Any:
    """The footer's JSON and every blob's bytes as the footer places them (the blobs carry their own CRC)."""
    if data[:4] != b"PFA1" or data[-4:] != b"PFA1":
        raise ValueError("no Puffin magic")
    (payload_size,) = struct.unpack("<i", data[-12:-8])
    footer = _json(data[-12 - payload_size : -12])
    blobs = [data[b["offset"] : b["offset"] + b["length"]] for b in footer.get("blobs", [])]
    return {"footer": footer, "blobs": blobs}


READERS = {"metadata json": _json, "manifest list": _avro, "manifest": _avro, "puffin file": _puffin}


def what_changed(kind: str, clean: bytes, damaged: bytes) -> tuple[str, ...] | None:
    """Where the damaged file's content differs from the clean one as another decoder reads it (fastavro, json),
    or None when that decoder cannot read the damaged file at all."""
    read = READERS[kind]
    try:
        after = read(damaged)
    except Exception:
        return None
    return tuple(changed_paths(read(clean), after))


def first_difference(a: Any, b: Any, width: int = 160) -> str:
    """Where two answers first differ, shortly (for the failure message)."""
    if isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b):
        for x, y in zip(a, b, strict=True):
            if not same(x, y):
                return first_difference(x, y, width)
    left, right = str(a), str(b)
    at = next((i for i, (x, y) in enumerate(zip(left, right, strict=False)) if x != y), min(len(left), len(right)))
    start = max(0, at - width // 2)
    return f"{left[start : at + width // 2]!r} -> {right[start : at + width // 2]!r}"


def names_the_file(answer: Any, baseline: Any, path: str) -> bool:
    """Whether ``answer`` has a line the baseline lacks naming the file at ``path``: a view that answers with
    a visible mark (a note, a finding) of the file it could not read."""
    name = path.rsplit("/", 1)[-1]
    before = set(str(baseline).splitlines())
    return any(name in line and line not in before for line in str(answer).splitlines())
