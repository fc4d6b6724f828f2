"""The column-wise forms of maintenance rules against their plain definitions: first-fit packing with a
look-back of one bin as runs over sizes, and orphan path keys as ``urlparse`` reads them."""

from __future__ import annotations

import random
from urllib.parse import urlparse

import numpy as np
import pyarrow as pa

from icebook.analysis.maintenance.binpack import pack_runs
from icebook.analysis.maintenance.orphans import path_keys


def _first_fit_one_bin(weights: list[int], capacity: int) -> list[list[int]]:
    """The reference implementation's ListPacker(capacity, 1, false), item by item."""
    bins: list[tuple[list[int], list[int]]] = []
    out: list[list[int]] = []
    for index, weight in enumerate(weights):
        target = next((b for b in bins if b[1][0] + weight <= capacity), None)
        if target is not None:
            target[0].append(index)
            target[1][0] += weight
            continue
        bins.append(([index], [weight]))
        if len(bins) > 1:
            out.append(bins.pop(0)[0])
    out.extend(b[0] for b in bins)
    return out


def test_pack_runs_are_the_bins_of_first_fit_with_one_open_bin() -> None:
    rng = random.Random(7)
    cases = [([], 10), ([11], 10), ([10, 0, 0, 10], 10), ([3, 3, 3, 3, 3], 6), ([12, 1, 12, 1, 1], 10)]
    cases += [([rng.randint(0, 40) for _ in range(rng.randint(1, 60))], rng.randint(1, 60)) for _ in range(300)]
    for weights, capacity in cases:
        runs = pack_runs(np.array(weights, dtype=np.int64), capacity)
        assert [list(range(s, e)) for s, e in runs] == _first_fit_one_bin(weights, capacity), (weights, capacity)


def _urlparse_key(path: str) -> tuple[str | None, str | None, str]:
    parsed = urlparse(path)
    if not parsed.scheme or len(parsed.scheme) == 1:
        return None, None, path
    scheme = {"s3n": "s3", "s3a": "s3"}.get(parsed.scheme, parsed.scheme)
    return scheme, parsed.netloc or None, parsed.path


def test_path_keys_read_paths_as_urlparse_does() -> None:
    paths = [
        "/warehouse/db/t/data/a.parquet",
        "s3://bucket/db/t/data/a.parquet",
        "S3A://Bucket/db/t/x",
        "s3n://bucket/p",
        "file:/tmp/t/x",
        "file:///tmp/t/x",
        "C:\\warehouse\\t",
        "c:/warehouse/t",
        "gs://bucket",
        "abfss://container@account.dfs.core.windows.net/t/data/f.parquet",
        "hdfs://namenode:8020/t/a?version=1#frag",
        "http://host/t;params/f",
        "x://",
        "a name with spaces/f.parquet",
        " s3://leading-space/f",
        "s3://b/tab\there",
        "1a://not-a-scheme/f",
        "a+b.c-d://host/p",
        "/path/with:colon/f",
        "",
    ]
    scheme, authority, path = path_keys(pa.array(paths, pa.string()))
    got = list(zip(scheme.to_pylist(), authority.to_pylist(), path.to_pylist(), strict=True))
    assert got == [_urlparse_key(p) for p in paths]
    assert got[1] == ("s3", "bucket", "/db/t/data/a.parquet") and got[0] == (None, None, paths[0])
