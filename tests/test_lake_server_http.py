"""The lake browser's endpoints over HTTP, in a real Jupyter server on 127.0.0.1: every parameter of every
endpoint fuzzed from the endpoints' own declarations (zero 500s, bad input a one-line 400), and many
concurrent clients against a healthy catalog, one that hangs and one that fails halfway through a listing."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from _lake_http import NAMESPACE, Server, ServerFailed, lake_server
from _support.sized_tables import by_bytes, create_sized_tables

from icebook.server.handlers import ENDPOINTS, MAX_COUNT, MAX_TEXT, Param

pytestmark = pytest.mark.services  # a Jupyter server and catalog servers on 127.0.0.1

TABLES = 24
TIMEOUT_S = 3.0
PATIENT_TIMEOUT_S = 900.0
"""A catalog timeout beyond any test's run: the hanging catalog's requests stay hung until the test lets go."""


def _healthy_catalog(folder: Path) -> dict[str, str]:
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import LongType, NestedField, StringType

    folder.mkdir()
    props = {"uri": f"sqlite:///{folder / 'catalog.db'}", "warehouse": (folder / "warehouse").as_uri()}
    catalog = SqlCatalog("healthy", **props)
    catalog.create_namespace(NAMESPACE)
    schema = Schema(
        NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType(), required=False)
    )
    for i in range(TABLES):
        catalog.create_table(f"{NAMESPACE}.table_{i:02d}", schema)
    create_sized_tables(catalog, SIZED)
    return {"type": "sql", **props}


SIZED = "sized"
"""A namespace of tables of different sizes (``_support.sized_tables``)."""


@pytest.fixture(scope="module")
def lake_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("lake-server")


@pytest.fixture(scope="module")
def healthy(lake_folder: Path) -> dict[str, str]:
    return _healthy_catalog(lake_folder / "healthy")


def _running(folder: Path, healthy: dict[str, str], timeout_s: float) -> Iterator[Server]:
    folder.mkdir()
    try:
        with lake_server(folder, healthy, timeout_s) as running:
            yield running
    except ServerFailed as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="module")
def server(lake_folder: Path, healthy: dict[str, str]) -> Iterator[Server]:
    yield from _running(lake_folder / "server", healthy, TIMEOUT_S)


@pytest.fixture(scope="module")
def patient_server(lake_folder: Path, healthy: dict[str, str]) -> Iterator[Server]:
    yield from _running(lake_folder / "patient-server", healthy, PATIENT_TIMEOUT_S)


# Values a parameter might be sent: digits that are not ASCII digits, signs, exponents, huge numbers, control
# characters, markup, traversal, dots that make no identifier, unpaired and odd Unicode.
ODD_VALUES = (
    "", " ", "²", "٣", "１", "-1", "+1", "1e3", "0x10", " 1", "1 ", "1.0", str(MAX_COUNT + 1), "9" * 40,
    "\x00", "\n", "a\tb", "\x7f", "a" * (MAX_TEXT + 1), "<script>alert(1)</script>", "../../etc/passwd", "/", "..",
    ".", "lake..x", "lake.", ".lake", "%", "é", "😀", "null", "[]", "'", '"', "\\", "healthy", "hanging.lake",
    "failing", "healthy.lake.table_00", f"{NAMESPACE}", "NaN", "0", "500",
)  # fmt: skip
RAW_VALUES = ("%ff", "%c3%28", "%ed%a0%80")  # invalid UTF-8 in the query string itself


def _valid(param: Param) -> str:
    """A well-formed value for ``param``, on the healthy catalog."""
    if param.kind == "count":
        return "0" if param.name == "offset" else "10"
    if param.choices:
        return param.choices[-1]
    return {"catalog": "healthy", "namespace": NAMESPACE, "table": "healthy.lake.table_00", "path": "x"}.get(
        param.name, ""
    )


def _queries(seed: int) -> Iterator[tuple[str, str]]:
    """(endpoint, query string) cases derived from every endpoint's declared parameters: each parameter
    missing, repeated, and given every odd value with the others well-formed; then random mixtures."""
    rng = random.Random(seed)
    for path, handler in ENDPOINTS.items():
        params = handler.params
        valid = {p.name: quote(_valid(p), safe="") for p in params}
        yield path, "&".join(f"{k}={v}" for k, v in valid.items())
        for param in params:
            others = [f"{k}={v}" for k, v in valid.items() if k != param.name]
            yield path, "&".join(others)
            yield path, "&".join([*others, f"{param.name}={valid[param.name]}", f"{param.name}={valid[param.name]}"])
            for value in ODD_VALUES:
                yield path, "&".join([*others, f"{param.name}={quote(value, safe='')}"])
            for raw in RAW_VALUES:
                yield path, "&".join([*others, f"{param.name}={raw}"])
        for _ in range(20):
            mixed = {p.name: quote(rng.choice((*ODD_VALUES, _valid(p))), safe="") for p in params if rng.random() < 0.9}
            yield path, "&".join(f"{k}={v}" for k, v in mixed.items())


@pytest.mark.parametrize("seed", [0, 1])
def test_every_parameter_of_every_endpoint_fuzzed_gives_no_500(server: Server, seed: int) -> None:
    statuses: dict[int, int] = {}
    for path, query in _queries(seed):
        status, body, _ = server.get(f"/icebook/lake/{path}?{query}")
        statuses[status] = statuses.get(status, 0) + 1
        assert status in (200, 400), (path, query, status, body)
        assert isinstance(body, (dict, list)), (path, query, body)
        if status == 400:
            assert isinstance(body, dict)
            message = str(body.get("message", ""))
            assert message and "\n" not in message and "Traceback" not in message, (path, query, body)
    print(f"seed {seed}: responses by status {dict(sorted(statuses.items()))}")
    assert statuses[400] > 100 and statuses[200] > 10


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("catalog=healthy&namespace=lake&offset=%C2%B2", "offset must be a whole number"),
        ("catalog=healthy&namespace=lake&limit=-1", "limit must be a whole number"),
        ("catalog=healthy&namespace=lake&limit=1&limit=2", "'limit' is given 2 times"),
        ("catalog=healthy", "'namespace' is required"),
        ("catalog=%20&namespace=lake", "catalog must not be empty"),
        ("catalog=healthy&namespace=la%00ke", "namespace contains a control character"),
        ("catalog=healthy&namespace=lake&sort=size", "sort must be one of name, bytes, not 'size'"),
        ("catalog=healthy&namespace=lake&sort=", "sort must be one of name, bytes, not ''"),
    ],
)
def test_bad_input_is_a_400_with_its_reason(server: Server, query: str, reason: str) -> None:
    status, body, _ = server.get(f"/icebook/lake/tables?{query}")
    assert status == 400 and isinstance(body, dict) and reason in body["message"], body


def test_many_clients_while_one_catalog_hangs_and_one_fails_halfway(server: Server) -> None:
    """20 clients, 8 requests each, spread over the healthy catalog's pages, namespaces and tables' health,
    the hanging catalog and the failing one: the healthy answers are all whole, the hanging catalog's
    requests report its timeout, the failing one's its error; the server's threads stay bounded. (That a hung
    catalog delays no other request is the next test's; the times are printed, and measured by
    ``benchmarks/lake_load.py``.)"""
    rng = random.Random(7)
    kinds = ("page", "page", "namespaces", "health", "hanging-tables", "hanging-namespaces", "failing-tables")
    plan = [[rng.choice(kinds) for _ in range(8)] for _ in range(20)]
    paths = {
        "page": lambda: (
            f"/icebook/lake/tables?catalog=healthy&namespace={NAMESPACE}&offset={rng.randrange(TABLES)}&limit=5"
        ),
        "namespaces": lambda: "/icebook/lake/namespaces?catalog=healthy",
        "health": lambda: f"/icebook/lake/health?table=healthy.{NAMESPACE}.table_{rng.randrange(TABLES):02d}",
        "hanging-tables": lambda: f"/icebook/lake/tables?catalog=hanging&namespace={NAMESPACE}",
        "hanging-namespaces": lambda: "/icebook/lake/namespaces?catalog=hanging",
        "failing-tables": lambda: f"/icebook/lake/tables?catalog=failing&namespace={NAMESPACE}",
    }
    requests = [[(kind, paths[kind]()) for kind in client] for client in plan]

    def client(calls: list[tuple[str, str]]) -> list[tuple[str, int, object, float]]:
        return [(kind, *server.get(path, timeout=TIMEOUT_S * 10)) for kind, path in calls]

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=len(requests)) as pool:
        answers = [a for client_answers in pool.map(client, requests) for a in client_answers]
    elapsed = time.perf_counter() - start
    by_kind: dict[str, list[float]] = {}
    for kind, status, body, seconds in answers:
        by_kind.setdefault(kind, []).append(seconds)
        assert status == 200 and isinstance(body, dict), (kind, status, body)
        if kind in ("page", "namespaces", "health"):
            assert "error" not in body or body["error"] is None, (kind, body)
        elif kind.startswith("hanging"):
            assert body["error"] == f"catalog 'hanging' did not answer within {TIMEOUT_S:g} s", body
        else:
            assert "catalog 'failing'" in body["error"] and "the listing broke on its second page" in body["error"], (
                body
            )
    assert {kind for kind, *_ in answers} == set(paths)
    for kind, seconds in sorted(by_kind.items()):
        ordered = sorted(seconds)
        print(f"{kind}: {len(ordered)} requests, p50 {ordered[len(ordered) // 2]:.3f} s, max {ordered[-1]:.3f} s")
    print(f"{len(answers)} requests by 20 clients in {elapsed:.1f} s; server threads: {server.threads()}")
    # Hung requests hold only the hanging catalog's own pool: the threads stay bounded.
    assert server.threads() < 80
    # And the healthy catalog still answers whole afterwards.
    status, body, _ = server.get(f"/icebook/lake/tables?catalog=healthy&namespace={NAMESPACE}&limit=500")
    assert status == 200 and isinstance(body, dict) and body["total"] == TABLES


def test_requests_to_a_hung_catalog_delay_no_other_request(patient_server: Server) -> None:
    """While the hanging catalog holds requests (its timeout here is far beyond the test), 20 clients'
    requests to the healthy catalog are all answered, whole, and the hung ones are still waiting: an order of
    events, not a time. Let go, each hung request ends with the hanging catalog's own error."""
    server = patient_server
    hung_paths = [
        f"/icebook/lake/tables?catalog=hanging&namespace={NAMESPACE}",
        "/icebook/lake/namespaces?catalog=hanging",
    ] * 4
    healthy_paths = [
        f"/icebook/lake/tables?catalog=healthy&namespace={NAMESPACE}&offset={i % TABLES}&limit=5" for i in range(80)
    ] + [f"/icebook/lake/health?table=healthy.{NAMESPACE}.table_{i % TABLES:02d}" for i in range(40)]
    with ThreadPoolExecutor(max_workers=len(hung_paths) + 20) as pool:
        hung = [pool.submit(server.get, path, PATIENT_TIMEOUT_S * 2) for path in hung_paths]
        deadline = time.monotonic() + 120  # a guard against a hang, not a measure
        while not server.hanging.held and not any(f.done() for f in hung) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.hanging.held and not any(f.done() for f in hung), "no request reached the hanging catalog"
        answers = list(pool.map(lambda path: server.get(path, PATIENT_TIMEOUT_S), healthy_paths))
        assert all(status == 200 and isinstance(body, dict) for status, body, _ in answers), answers
        assert all(body.get("error") is None for _, body, _ in answers if isinstance(body, dict)), answers
        assert not any(f.done() for f in hung), [f.result() for f in hung if f.done()]
        server.hanging.close()
        ended = [f.result() for f in hung]
    for status, body, _ in ended:
        assert status == 200 and isinstance(body, dict) and "catalog 'hanging'" in str(body.get("error")), body


def test_tables_sorted_by_live_bytes_page_by_page(server: Server, lake_folder: Path) -> None:
    """Sorted by bytes: the largest first by the files' own sizes, unknown bytes after with why, in one line;
    pages cut from that one order."""
    query = f"/icebook/lake/tables?catalog=healthy&namespace={SIZED}&sort=bytes"
    status, whole, _ = server.get(query)
    assert status == 200 and isinstance(whole, dict), whole
    tables = whole["tables"]
    names = [t["name"] for t in tables]
    catalog = _healthy(lake_folder)
    sized, expected = by_bytes(catalog, SIZED)
    assert names == [*sized, "lost", "unsized"], names
    assert {t["name"]: int(t["bytes"]) for t in tables[:5]} == expected
    lost, unsized = tables[5], tables[6]
    assert lost["bytes"] is None and lost["badge"] == "error" and lost["bytes_error"] is None  # its error says why
    assert "00098-lost.metadata.json" in lost["error"] and "\n" not in lost["error"], lost
    assert unsized["bytes"] is None and unsized["error"] is None
    assert (
        unsized["bytes_error"].startswith("bytes unknown: snapshot ") and "total-files-size" in unsized["bytes_error"]
    )
    pages = []
    for offset in range(0, len(tables), 3):
        status, page, _ = server.get(f"{query}&offset={offset}&limit=3")
        assert status == 200 and isinstance(page, dict) and page["total"] == len(tables)
        pages += [t["name"] for t in page["tables"]]
    assert pages == names
    status, by_name, _ = server.get(query.replace("sort=bytes", "sort=name"))
    assert status == 200 and isinstance(by_name, dict)
    assert [t["name"] for t in by_name["tables"]] == sorted(names)
    status, filtered, _ = server.get(query + "&filter=M")
    assert status == 200 and isinstance(filtered, dict)
    assert [t["name"] for t in filtered["tables"]] == [n for n in sized if "m" in n]


def _healthy(lake_folder: Path) -> Any:
    """The healthy catalog, as this process opens it (its tables are the server's)."""
    from pyiceberg.catalog.sql import SqlCatalog

    folder = lake_folder / "healthy"
    return SqlCatalog("healthy", uri=f"sqlite:///{folder / 'catalog.db'}", warehouse=(folder / "warehouse").as_uri())


def test_pages_sorted_by_bytes_keep_the_first_pages_order_and_a_first_page_reads_afresh(
    server: Server, lake_folder: Path
) -> None:
    import pyarrow as pa

    catalog = _healthy(lake_folder)
    create_sized_tables(catalog, "growing")
    order, _sizes = by_bytes(catalog, "growing")
    query = "/icebook/lake/tables?catalog=healthy&namespace=growing&sort=bytes&limit=2"
    status, first, _ = server.get(query)
    assert status == 200 and isinstance(first, dict), first
    names = [t["name"] for t in first["tables"]]
    # The smallest table with rows grows past the largest while the pages are read.
    grown = catalog.load_table("growing.small")
    rows = 20_000
    grown.append(pa.table({"id": pa.array(range(rows), pa.int64()), "name": [f"row {i}" for i in range(rows)]},
                          schema=grown.schema().as_arrow()))  # fmt: skip
    for offset in range(2, first["total"], 2):
        status, page, _ = server.get(f"{query}&offset={offset}")
        assert status == 200 and isinstance(page, dict), page
        names += [t["name"] for t in page["tables"]]
    assert names == [*order, "lost", "unsized"]  # every table once, in the first page's order
    status, again, _ = server.get(query)
    assert status == 200 and isinstance(again, dict)
    assert [t["name"] for t in again["tables"]] == ["small", order[0]]  # read afresh
