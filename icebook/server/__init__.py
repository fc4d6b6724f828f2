"""The Jupyter server extension behind the lake browser (the "Iceberg" sidebar of JupyterLab).

Enabled by ``jupyter_server_config.d/icebook.json`` (installed with the package); its REST endpoints
are in ``icebook.server.handlers``. Everything here only reads catalogs and tables.
"""

from __future__ import annotations

from typing import Any


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "icebook.server"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from icebook.server.handlers import setup_handlers

    setup_handlers(serverapp.web_app)
    serverapp.log.info("icebook: lake browser endpoints at %sicebook/lake/", serverapp.web_app.settings["base_url"])


__all__ = ["_jupyter_server_extension_points", "_load_jupyter_server_extension"]
