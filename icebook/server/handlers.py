"""REST endpoints of the lake browser, under ``<base_url>icebook/lake/``: behind the server's own
authentication (``@tornado.web.authenticated``: a token or login cookie) and, for anything but GET,
its XSRF check (``APIHandler``). All of them only read. Blocking catalog and file reads run in a
thread so the server keeps answering."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join

from icebook.server import lake_browser


class _LakeHandler(APIHandler):
    async def _answer(self, work: Callable[[], Any]) -> None:
        result = await asyncio.get_running_loop().run_in_executor(None, work)
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(result))

    def _int(self, name: str, default: int) -> int:
        raw = self.get_query_argument(name, str(default))
        if not raw.isdigit():
            raise tornado.web.HTTPError(400, f"{name} must be a whole number, not {raw!r}")
        return int(raw)


class CatalogsHandler(_LakeHandler):
    @tornado.web.authenticated
    async def get(self) -> None:
        await self._answer(lake_browser.catalog_list)


class NamespacesHandler(_LakeHandler):
    @tornado.web.authenticated
    async def get(self) -> None:
        catalog = self.get_query_argument("catalog")
        parent = self.get_query_argument("parent", "")
        await self._answer(lambda: lake_browser.namespace_list(catalog, parent))


class TablesHandler(_LakeHandler):
    @tornado.web.authenticated
    async def get(self) -> None:
        catalog = self.get_query_argument("catalog")
        namespace = self.get_query_argument("namespace")
        offset, limit = self._int("offset", 0), self._int("limit", lake_browser.PAGE)
        text = self.get_query_argument("filter", "")
        await self._answer(lambda: lake_browser.table_page(catalog, namespace, offset=offset, limit=limit, text=text))


class HealthHandler(_LakeHandler):
    @tornado.web.authenticated
    async def get(self) -> None:
        table = self.get_query_argument("table")
        await self._answer(lambda: lake_browser.deep_health(table))


class LocateHandler(_LakeHandler):
    @tornado.web.authenticated
    async def get(self) -> None:
        path = self.get_query_argument("path")
        root = str(self.settings.get("server_root_dir") or ".")
        await self._answer(lambda: lake_browser.locate(root, path))


def setup_handlers(web_app: Any) -> None:
    base = url_path_join(web_app.settings["base_url"], "icebook", "lake")
    web_app.add_handlers(
        ".*$",
        [
            (url_path_join(base, "catalogs"), CatalogsHandler),
            (url_path_join(base, "namespaces"), NamespacesHandler),
            (url_path_join(base, "tables"), TablesHandler),
            (url_path_join(base, "health"), HealthHandler),
            (url_path_join(base, "locate"), LocateHandler),
        ],
    )


__all__ = ["setup_handlers"]
