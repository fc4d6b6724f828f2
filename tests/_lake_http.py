"""A Jupyter server with icebook's lake browser on 127.0.0.1, beside a healthy catalog, a REST catalog that
hangs (accepts connections, never replies) and one that fails halfway through its listing of tables. Shared by
``tests/test_lake_server_http.py`` and ``benchmarks/lake_load.py``; imported by bare name (``tests/`` is on
``sys.path`` for the tests, the benchmark puts it there)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NAMESPACE = "lake"
FAILING_PAGE = 5  # the failing catalog's first page of tables; the second page is a 500


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HangingCatalog:
    """A REST catalog's address whose server accepts connections and never replies."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(256)
        self.held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self.sock.accept()
                self.held.append(conn)  # held open, never read from or answered

    def close(self) -> None:
        """Let go: every held request ends in a reset, and a new one is refused (may be called again)."""
        with contextlib.suppress(OSError):  # shut down, not just closed: that wakes the accepting thread
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        for conn in self.held:
            conn.close()


class _FailingRest(BaseHTTPRequestHandler):
    """A REST catalog that lists its namespace and the first page of its tables, then fails on the second."""

    def log_message(self, *args: object) -> None:
        pass

    def _json(self, status: int, body: object) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def do_GET(self) -> None:
        path, _, query = self.path.partition("?")
        if path == "/v1/config":
            self._json(200, {"defaults": {}, "overrides": {}})
        elif path == "/v1/namespaces":
            self._json(200, {"namespaces": [[NAMESPACE]]})
        elif path == f"/v1/namespaces/{NAMESPACE}/tables" and "pageToken" not in query:
            identifiers = [{"namespace": [NAMESPACE], "name": f"t{i}"} for i in range(FAILING_PAGE)]
            self._json(200, {"identifiers": identifiers, "next-page-token": "page-2"})
        elif path == f"/v1/namespaces/{NAMESPACE}/tables":
            error = {"message": "the listing broke on its second page", "type": "ServerError", "code": 500}
            self._json(500, {"error": error})
        else:
            self._json(404, {"error": {"message": f"no {path}", "type": "NoSuchNamespaceException", "code": 404}})


@dataclass(frozen=True)
class Server:
    url: str
    token: str
    process: subprocess.Popen[bytes]
    hanging: HangingCatalog

    def get(self, path: str, timeout: float = 60) -> tuple[int, object, float]:
        """(status, parsed JSON body, seconds) of an authenticated GET."""
        request = urllib.request.Request(self.url + path, headers={"Authorization": f"token {self.token}"})
        start = time.perf_counter()
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                status, raw = response.status, response.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        return status, json.loads(raw) if raw else None, time.perf_counter() - start

    def threads(self) -> int:
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("Threads:")))


class ServerFailed(RuntimeError):
    """The Jupyter server did not start, or did not stop on SIGTERM."""


@contextlib.contextmanager
def lake_server(folder: Path, healthy: Mapping[str, str], timeout_s: float) -> Iterator[Server]:
    """The server, its catalogs ``healthy`` (PyIceberg properties), ``hanging`` and ``failing``, and its
    catalog timeout ``timeout_s``; it must stop on SIGTERM even with requests hung on the hanging catalog."""
    hanging = HangingCatalog()
    failing = ThreadingHTTPServer(("127.0.0.1", 0), _FailingRest)
    threading.Thread(target=failing.serve_forever, daemon=True).start()
    catalogs = {
        "healthy": dict(healthy),
        "hanging": {"type": "rest", "uri": hanging.uri},
        "failing": {"type": "rest", "uri": f"http://127.0.0.1:{failing.server_address[1]}"},
    }
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYICEBERG_", "JUPYTER"))}
    for name, props in catalogs.items():
        for key, value in props.items():
            env[f"PYICEBERG_CATALOG__{name.upper()}__{key.upper()}"] = value
    for name in ("home", "spark-conf", "root", "config", "data", "runtime"):
        (folder / name).mkdir()
    env.update(
        PYICEBERG_HOME=str(folder / "home"),
        SPARK_CONF_DIR=str(folder / "spark-conf"),
        JUPYTER_CONFIG_DIR=str(folder / "config"),
        JUPYTER_DATA_DIR=str(folder / "data"),
        JUPYTER_RUNTIME_DIR=str(folder / "runtime"),
        JUPYTER_NO_CONFIG="1",
        PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]),
    )
    port, token = _free_port(), secrets.token_hex(16)
    command = [
        sys.executable,
        "-m",
        "jupyter_server",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        "--ServerApp.open_browser=False",
        f"--ServerApp.root_dir={folder / 'root'}",
        f"--IdentityProvider.token={token}",
        "--ServerApp.jpserver_extensions={'icebook.server': True}",
        f"--ServerApp.tornado_settings={{'icebook_catalog_timeout': {timeout_s}}}",
        *(["--allow-root"] if os.getuid() == 0 else []),
    ]
    log_path = folder / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            found = Server(url=f"http://127.0.0.1:{port}", token=token, process=process, hanging=hanging)
            deadline = time.monotonic() + 90
            while True:
                with contextlib.suppress(OSError):
                    if found.get("/icebook/lake/catalogs", timeout=5)[0] == 200:
                        break
                if process.poll() is not None or time.monotonic() > deadline:
                    raise ServerFailed(f"the Jupyter server did not start: {log_path.read_text()[-2000:]}")
                time.sleep(0.5)
            yield found
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                raise ServerFailed("the Jupyter server did not stop within 30 s of SIGTERM") from None
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            hanging.close()
            failing.shutdown()
