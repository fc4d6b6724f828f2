"""The lake browser's server under load: a real Jupyter server on 127.0.0.1 with a SQL catalog of N tables
(metadata only, as ``lake_browser.py`` builds them), a REST catalog that hangs (accepts connections, never
replies) and one that fails on the second page of its listing; C concurrent clients each send R requests,
mixed over the healthy catalog's pages, namespaces and tables' health and the two bad catalogs.

Prints requests per second and the p50/p99 latency per kind of request, and the server's threads and
resident memory before and after. Checks what the server promises: every healthy request answers within
the catalog timeout, the hanging catalog's requests report its timeout, the failing one's its error, no 500.

    python benchmarks/lake_load.py [--tables 1000] [--clients 20] [--requests 25] [--timeout 20]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

import lake_browser  # noqa: E402  (after the path tweak, so the script runs from any directory)
from _lake_http import NAMESPACE, Server, lake_server  # noqa: E402

KINDS = ("page", "page", "page", "namespaces", "health", "hanging", "failing")


def _path(kind: str, rng: random.Random, tables: int) -> str:
    if kind == "page":
        return f"/icebook/lake/tables?catalog=healthy&namespace={NAMESPACE}&offset={rng.randrange(tables)}&limit=100"
    if kind == "namespaces":
        return "/icebook/lake/namespaces?catalog=healthy"
    if kind == "health":
        return f"/icebook/lake/health?table=healthy.{NAMESPACE}.table_{rng.randrange(tables):05d}"
    if kind == "hanging":
        return f"/icebook/lake/tables?catalog=hanging&namespace={NAMESPACE}"
    return f"/icebook/lake/tables?catalog=failing&namespace={NAMESPACE}"


def _memory(server: Server) -> tuple[int, float]:
    """(threads, resident MiB) of the server process."""
    fields = dict(
        line.split(":", 1)
        for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines()
        if ":" in line
    )
    return int(fields["Threads"]), int(fields["VmRSS"].split()[0]) / 1024


def _check(kind: str, status: int, body: object, seconds: float, timeout: float) -> None:
    assert status == 200 and isinstance(body, dict), (kind, status, body)
    if kind == "hanging":
        assert body["error"] == f"catalog 'hanging' did not answer within {timeout:g} s", body
    elif kind == "failing":
        assert "catalog 'failing'" in body["error"] and "second page" in body["error"], body
    elif kind == "health":  # these tables are metadata only: the deep health names the missing manifest list
        assert "manifest list" in body["error"] and "not found" in body["error"], body
        assert seconds < timeout, (kind, seconds)
    else:
        assert body.get("error") is None, (kind, body)
        assert seconds < timeout, (kind, seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tables", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--requests", type=int, default=25, help="per client")
    parser.add_argument("--timeout", type=float, default=20.0, help="the server's catalog timeout, seconds")
    args = parser.parse_args()
    rng = random.Random(1)
    plan = [
        [(kind, _path(kind, rng, args.tables)) for kind in rng.choices(KINDS, k=args.requests)]
        for _ in range(args.clients)
    ]

    with tempfile.TemporaryDirectory(prefix="icebook-lake-load-") as tmp:
        folder = Path(tmp)
        (folder / "healthy").mkdir()
        started = time.perf_counter()
        properties = lake_browser.build(folder / "healthy", args.tables, "healthy")
        print(f"built {args.tables} tables (metadata only) in {time.perf_counter() - started:.1f} s")
        with lake_server(folder, properties, args.timeout) as server:
            threads_before, rss_before = _memory(server)

            def client(calls: list[tuple[str, str]]) -> list[tuple[str, int, object, float]]:
                return [(kind, *server.get(path, timeout=args.timeout * 10)) for kind, path in calls]

            started = time.perf_counter()
            with ThreadPoolExecutor(max_workers=args.clients) as pool:
                answers = [a for done in pool.map(client, plan) for a in done]
            elapsed = time.perf_counter() - started
            threads_after, rss_after = _memory(server)

    print(
        f"{len(answers)} requests from {args.clients} clients in {elapsed:.1f} s: {len(answers) / elapsed:.1f} requests/s"
    )
    for kind in sorted(set(KINDS)):
        times = sorted(s for k, _, _, s in answers if k == kind)
        if times:
            p99 = times[min(len(times) - 1, int(len(times) * 0.99))]
            print(f"  {kind:<10} {len(times):>4} requests  p50 {times[len(times) // 2]:.3f} s  p99 {p99:.3f} s")
    print(
        f"server: {threads_before} threads, {rss_before:.0f} MiB resident before; "
        f"{threads_after} threads, {rss_after:.0f} MiB after"
    )
    for kind, status, body, seconds in answers:
        _check(kind, status, body, seconds, args.timeout)
    print("every healthy request answered within the timeout; the hanging and failing catalogs said so; no 500")


if __name__ == "__main__":
    main()
