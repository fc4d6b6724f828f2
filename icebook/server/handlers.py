"""REST endpoints of the lake browser, under ``<base_url>icebook/lake/``: behind the server's own
authentication (``@tornado.web.authenticated``: a token or login cookie) and, for anything but GET,
its XSRF check (``APIHandler``). All of them only read.

Every endpoint declares its query parameters (``Param``) and every parameter is checked by one rule
(``parse_param``): bad input is a 400 with a one-line reason, before any catalog is asked. Blocking catalog
and file reads run in a small thread pool per catalog (``CatalogPools``), each answer awaited at most
``icebook_catalog_timeout`` seconds (a tornado setting, ``ServerApp.tornado_settings``): a catalog that
hangs answers with its timeout in its own place, holds only its own pool's threads, and never slows the
others."""

from __future__ import annotations

import asyncio
import json
import queue
import re
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join

from icebook.errors import IcebookError
from icebook.io import catalogs
from icebook.server import lake_browser

CATALOG_TIMEOUT_S = 20.0
"""How long a request waits for its catalog, unless the server's ``icebook_catalog_timeout`` setting says."""
WORKERS_PER_CATALOG = 4
"""Requests one catalog may have in flight: a hanging catalog holds at most these threads."""
MAX_TEXT = 1024
MAX_COUNT = 1_000_000_000
_COUNT = re.compile(r"[0-9]{1,10}")  # ASCII digits only: str.isdigit() also accepts '²' and '٣'
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Param:
    """One query parameter of an endpoint: ``text`` (a name, a filter, a path; one of ``choices`` when it
    has them) or ``count`` (a whole number from 0 to ``MAX_COUNT``); a required one has no default."""

    name: str
    kind: Literal["text", "count"] = "text"
    default: str | int | None = None
    choices: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        return self.default is None


def parse_param(param: Param, values: list[bytes]) -> str | int:
    """The one validation rule: the parameter's value, or ``HTTPError(400)`` saying why in one line. It reads
    the raw bytes of the query (tornado's own accessors strip spaces and replace control characters)."""
    if not values:
        if param.default is None:
            raise tornado.web.HTTPError(400, f"the query parameter {param.name!r} is required")
        return param.default
    if len(values) > 1:
        raise tornado.web.HTTPError(400, f"the query parameter {param.name!r} is given {len(values)} times")
    try:
        raw = values[0].decode("utf-8")
    except UnicodeDecodeError:
        raise tornado.web.HTTPError(400, f"{param.name} is not valid UTF-8") from None
    if len(raw) > MAX_TEXT:
        raise tornado.web.HTTPError(400, f"{param.name} is longer than {MAX_TEXT} characters")
    if _CONTROL.search(raw):
        raise tornado.web.HTTPError(400, f"{param.name} contains a control character: {raw[:80]!r}")
    if param.kind == "count":
        if not _COUNT.fullmatch(raw) or int(raw) > MAX_COUNT:
            raise tornado.web.HTTPError(
                400, f"{param.name} must be a whole number from 0 to {MAX_COUNT}, not {raw[:80]!r}"
            )
        return int(raw)
    if param.required and not raw.strip():
        raise tornado.web.HTTPError(400, f"{param.name} must not be empty")
    if param.choices and raw not in param.choices:
        raise tornado.web.HTTPError(400, f"{param.name} must be one of {', '.join(param.choices)}, not {raw[:80]!r}")
    return raw


class DaemonPool:
    """At most ``workers`` daemon threads running submitted calls in order. Not a ``ThreadPoolExecutor``,
    whose threads the interpreter joins at exit: a thread stuck on a catalog that never replies would keep
    the Jupyter server from ever shutting down."""

    def __init__(self, name: str, workers: int) -> None:
        self._name, self._workers = name, workers
        self._queue: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]]] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def submit(self, work: Callable[[], Any]) -> Future[Any]:
        future: Future[Any] = Future()
        self._queue.put((future, work))
        with self._lock:
            if len(self._threads) < self._workers:
                thread = threading.Thread(target=self._run, name=f"{self._name}-{len(self._threads)}", daemon=True)
                self._threads.append(thread)
                thread.start()
        return future

    def _run(self) -> None:
        while True:
            future, work = self._queue.get()
            if not future.set_running_or_notify_cancel():
                continue  # cancelled while queued: its request has already answered
            try:
                future.set_result(work())
            except BaseException as exc:
                future.set_exception(exc)


class CatalogPools:
    """A bounded pool per configured catalog (one shared pool for paths and for names no catalog has, which
    fail without a network call)."""

    def __init__(self, workers: int = WORKERS_PER_CATALOG) -> None:
        self._workers = workers
        self._lock = threading.Lock()
        self._pools: dict[str, DaemonPool] = {}

    def pool(self, catalog: str) -> DaemonPool:
        key = catalog.lower() if catalog and _configured(catalog) else ""
        with self._lock:
            found = self._pools.get(key)
            if found is None:
                found = DaemonPool(f"icebook-lake-{key or 'local'}", self._workers)
                self._pools[key] = found
            return found


def _configured(catalog: str) -> bool:
    """Only names a catalog configuration has get their own pool: any other name cannot grow the pools."""
    try:
        names = set(catalogs.catalog_names())
    except IcebookError:
        names = set()
    return catalog.lower() in names or catalog in lake_browser.spark_catalogs()


POOLS = CatalogPools()


class _LakeHandler(APIHandler):
    params: ClassVar[tuple[Param, ...]] = ()

    def args(self) -> dict[str, Any]:
        given = self.request.query_arguments
        return {p.name: parse_param(p, given.get(p.name, [])) for p in self.params}

    async def _answer(self, catalog: str, work: Callable[[], Any], timed_out: Callable[[str], Any]) -> None:
        """``work()`` in ``catalog``'s pool; after the timeout, ``timed_out(reason)`` is the answer instead."""
        timeout = float(self.settings.get("icebook_catalog_timeout", CATALOG_TIMEOUT_S))
        future = POOLS.pool(catalog).submit(work)
        try:
            result = await asyncio.wait_for(asyncio.wrap_future(future), timeout)
        except TimeoutError:
            future.cancel()  # still queued behind hung requests: never run it
            who = f"catalog {catalog!r}" if catalog else "the file system"
            result = timed_out(f"{who} did not answer within {timeout:g} s")
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(result))


def _error(reason: str) -> dict[str, str]:
    return {"error": reason}


class CatalogsHandler(_LakeHandler):
    @tornado.web.authenticated
    async def get(self) -> None:
        await self._answer("", lake_browser.catalog_list, lambda reason: [{"name": "(configuration)", "error": reason}])


class NamespacesHandler(_LakeHandler):
    params = (Param("catalog"), Param("parent", default=""))

    @tornado.web.authenticated
    async def get(self) -> None:
        a = self.args()
        await self._answer(a["catalog"], lambda: lake_browser.namespace_list(a["catalog"], a["parent"]), _error)


class TablesHandler(_LakeHandler):
    params = (
        Param("catalog"),
        Param("namespace"),
        Param("offset", "count", 0),
        Param("limit", "count", lake_browser.PAGE),
        Param("filter", default=""),
        Param("sort", default=lake_browser.SORTS[0], choices=lake_browser.SORTS),
    )

    @tornado.web.authenticated
    async def get(self) -> None:
        a = self.args()

        def page() -> Any:
            return lake_browser.table_page(
                a["catalog"], a["namespace"], offset=a["offset"], limit=a["limit"], text=a["filter"], sort=a["sort"]
            )

        await self._answer(a["catalog"], page, _error)


class HealthHandler(_LakeHandler):
    params = (Param("table"),)

    @tornado.web.authenticated
    async def get(self) -> None:
        table = self.args()["table"]
        catalog = "" if "/" in table else table.split(".", 1)[0]  # a path is no catalog's
        await self._answer(
            catalog, lambda: lake_browser.deep_health(table), lambda r: {"identifier": table, "error": r}
        )


class LocateHandler(_LakeHandler):
    params = (Param("path"),)

    @tornado.web.authenticated
    async def get(self) -> None:
        path = self.args()["path"]
        root = str(self.settings.get("server_root_dir") or ".")
        await self._answer("", lambda: lake_browser.locate(root, path), _error)


ENDPOINTS: Mapping[str, type[_LakeHandler]] = {
    "catalogs": CatalogsHandler,
    "namespaces": NamespacesHandler,
    "tables": TablesHandler,
    "health": HealthHandler,
    "locate": LocateHandler,
}
"""Each endpoint's path under ``icebook/lake/`` and its handler (whose ``params`` describe its input)."""


def setup_handlers(web_app: Any) -> None:
    base = url_path_join(web_app.settings["base_url"], "icebook", "lake")
    web_app.add_handlers(".*$", [(url_path_join(base, path), handler) for path, handler in ENDPOINTS.items()])


__all__ = ["ENDPOINTS", "Param", "parse_param", "setup_handlers"]
