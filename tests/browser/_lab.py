"""Drive a real JupyterLab in Chromium: start/stop the server, open notebooks, run cells, read outputs.

Imported by bare name (``from _lab import ...``) like ``tests/io/_spark_tables.py``: pytest's default
"prepend" import mode puts this directory on sys.path for the tests in it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from playwright.sync_api import Page
from playwright.sync_api import TimeoutError as PlaywrightTimeout

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
# Without the background-networking flags Chromium keeps dialling Google services, which on this closed
# network means a flood of failing connections (and on an open one, traffic no test asked for).
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
LOCAL_HOSTS = frozenset({"127.0.0.1"})

# Generous: the first kernel start on 2 busy cores imports ipykernel + friends cold.
KERNEL_TIMEOUT_MS = 60_000
RUN_TIMEOUT_MS = 90_000

# User-level JupyterLab settings written into the server's private settings dir. Without them JupyterLab
# pops an "official Jupyter news?" toast over the notebook and would fetch news/updates from the web.
LAB_SETTINGS: dict[str, dict[str, Any]] = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    # JupyterLab 4 renders only the cells in view by default; tests read every cell's output.
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


@dataclass
class LabServer:
    """A running ``jupyter lab`` subprocess; ``root_dir`` is what its file browser shows."""

    url: str  # http://127.0.0.1:<port>, no trailing slash
    token: str
    root_dir: Path
    log_path: Path
    process: subprocess.Popen[bytes] = field(repr=False)
    home: Path | None = None
    """The server's private Jupyter config, data and runtime dirs live under it."""
    demo_warehouse: Path | None = None
    """The warehouse its kernels open as the demo warehouse (``ICEBOOK_DEMO_WAREHOUSE`` in their environment)."""

    def jupyter_env(self) -> dict[str, str]:
        """This environment with the server's private Jupyter dirs, for a ``jupyter`` command to see what it sees."""
        assert self.home is not None
        env = {k: v for k, v in os.environ.items() if k not in ("JUPYTER_PATH", "JUPYTER_CONFIG_PATH")}
        for name, sub in (
            ("JUPYTER_CONFIG_DIR", "config"),
            ("JUPYTER_DATA_DIR", "data"),
            ("JUPYTER_RUNTIME_DIR", "runtime"),
        ):
            env[name] = str(self.home / sub)
        return env

    def api(self, method: str, path: str, body: Any = None, timeout: float = 10) -> Any:
        """Call the server's REST API (``path`` like ``/api/kernels``); returns parsed JSON or None."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    def lab_url(self, notebook: str) -> str:
        """URL opening ``notebook`` (relative to root_dir) in JupyterLab.

        ``reset`` starts from an empty workspace so notebooks opened by earlier tests are not restored.
        """
        return f"{self.url}/lab/tree/{quote(notebook)}?reset&token={self.token}"

    def shutdown_kernels(self) -> None:
        """Stop every kernel: tests share the server, and idle kernels would pile up on 2 cores."""
        for kernel in self.api("GET", "/api/kernels"):
            try:
                self.api("DELETE", f"/api/kernels/{kernel['id']}")
            except urllib.error.HTTPError as exc:  # already gone (culled or shut down by the page)
                if exc.code != 404:
                    raise

    def log_tail(self, lines: int = 40) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


@dataclass
class LabPage:
    """A fresh page plus what it reported: console errors, uncaught page errors, off-machine requests."""

    page: Page
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    blocked_requests: list[str] = field(default_factory=list)

    def assert_clean(self, ignored_console_errors: tuple[str, ...] = ()) -> None:
        """No off-machine request, no uncaught page error, and no console error except the ignored substrings.

        Pass an ignored substring only together with a comment saying why that error is harmless.
        """
        assert self.blocked_requests == [], f"requests left 127.0.0.1 (aborted): {self.blocked_requests}"
        assert self.page_errors == [], f"uncaught page errors: {self.page_errors}"
        errors = [e for e in self.console_errors if not any(ok in e for ok in ignored_console_errors)]
        assert errors == [], f"console errors: {errors}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_lab(root_dir: Path, home: Path, log_path: Path, timeout: float = 90) -> LabServer:
    """Start JupyterLab from this venv on a free 127.0.0.1 port; raise RuntimeError if it does not answer.

    ``home`` receives private Jupyter config/data/runtime/settings/workspace dirs, so the user's own
    settings, kernels and workspaces cannot leak in. The venv's share/jupyter (kernelspec ``python3``,
    the ipywidgets/anywidget lab extensions) stays on the path because jupyter_core always adds
    sys.prefix.
    """
    settings_dir = home / "lab-settings"
    for name, values in LAB_SETTINGS.items():
        target = settings_dir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(values))
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_DATA_DIR": str(home / "data"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(settings_dir),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "IPYTHONDIR": str(home / "ipython"),
        # The kernel is launched as "python" from the kernelspec; jupyter_client maps that to the
        # server's sys.executable, and PATH makes any other venv tool the kernel spawns resolve here too.
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("JUPYTER_PATH", None)
    env.pop("JUPYTER_CONFIG_PATH", None)
    port = free_port()
    token = secrets.token_hex(16)
    cmd = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        # Fail loudly instead of silently moving to another port than the one we poll.
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root_dir}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        # jupyterlab's server ships pypi/npm "extension manager" lookups; keep the UI off the network.
        "--LabApp.extension_manager=readonly",
    ]
    if os.geteuid() == 0:  # CI containers run as root; jupyter_server refuses that without the flag
        cmd.append("--allow-root")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log = log_path.open("wb")
    # Own process group so teardown can signal the server and anything it forked in one go.
    process = subprocess.Popen(cmd, cwd=root_dir, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    log.close()  # the child holds its own descriptor
    server = LabServer(
        url=f"http://127.0.0.1:{port}", token=token, root_dir=root_dir, log_path=log_path, process=process, home=home
    )
    deadline = time.monotonic() + timeout
    while True:
        if process.poll() is not None:
            raise RuntimeError(
                f"jupyter lab exited with code {process.returncode} before answering.\n"
                f"Command: {' '.join(cmd)}\nLog ({log_path}):\n{server.log_tail()}"
            )
        try:
            server.api("GET", "/api/status", timeout=2)
            return server
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > deadline:
            stop_lab(server)
            raise RuntimeError(
                f"jupyter lab did not answer {server.url}/api/status within {timeout:.0f}s.\n"
                f"Log ({log_path}):\n{server.log_tail()}"
            )
        time.sleep(0.25)


def stop_lab(server: LabServer) -> None:
    """Shut kernels down, then SIGTERM the server's process group; SIGKILL whatever is left after 15 s."""
    if server.process.poll() is None:
        # Kernels run in their own sessions (jupyter_client start_new_session), so killing the
        # server's group would orphan them; ask the server to stop them first.
        with contextlib.suppress(urllib.error.URLError, ConnectionError, TimeoutError):
            server.shutdown_kernels()
    for sig, wait in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(server.process.pid, sig)
        except ProcessLookupError:
            break
        try:
            server.process.wait(timeout=wait)
            break
        except subprocess.TimeoutExpired:
            continue


def is_local(url: str) -> bool:
    """True for requests that stay on this machine (data:/blob: URLs never hit the network)."""
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob", "about", "chrome-extension"):
        return True
    return parts.hostname in LOCAL_HOSTS


# ---------------------------------------------------------------------------------------------------------
# Page helpers. Selectors are JupyterLab 4 classes; they are collected here so a JupyterLab upgrade that
# renames one needs one fix.

KERNEL_STATUS = "#jp-main-statusbar .jp-StatusBar-TextItem"  # text: "Python 3 (ipykernel) | Idle"
NOTEBOOK = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook"
CODE_PROMPTS = f"{NOTEBOOK} .jp-CodeCell .jp-InputArea-prompt"
DIALOG = ".jp-Dialog"

# Browser-side predicate: the active notebook's kernel is idle (status bar) and no code cell is queued or
# running. Status bar text is "<kernel display name> | <status>".
_IDLE_JS = """
([statusSel, promptSel]) => {
  const status = Array.from(document.querySelectorAll(statusSel)).map(e => e.textContent || '');
  if (!status.some(t => /\\|\\s*Idle\\s*$/.test(t))) return false;
  return !Array.from(document.querySelectorAll(promptSel)).some(p => (p.textContent || '').includes('[*]'));
}
"""


def dismiss_dialogs(page: Page) -> list[str]:
    """Accept every open JupyterLab dialog (e.g. "Select Kernel", which then picks the default kernel).

    Returns the dialogs' texts so a test can assert that none was expected.
    """
    seen: list[str] = []
    dialogs = page.locator(DIALOG)
    while dialogs.count():
        dialog = dialogs.first
        seen.append(dialog.inner_text())
        accept = dialog.locator(".jp-Dialog-button.jp-mod-accept")
        if accept.count():
            accept.first.click()
        else:
            page.keyboard.press("Escape")
        dialog.wait_for(state="detached", timeout=5_000)
    return seen


def wait_for_idle(page: Page, timeout: float = KERNEL_TIMEOUT_MS) -> None:
    """Wait until the status bar says the kernel is Idle and no cell shows ``[*]``."""
    page.wait_for_function(_IDLE_JS, arg=[KERNEL_STATUS, CODE_PROMPTS], timeout=timeout, polling=100)


def open_notebook(page: Page, server: LabServer, path: str) -> list[str]:
    """Open ``path`` (relative to ``server.root_dir``) and wait until its kernel is Idle.

    Returns the texts of any dialogs that had to be dismissed on the way (normally none).
    """
    page.goto(server.lab_url(path))
    page.locator(NOTEBOOK).wait_for(timeout=KERNEL_TIMEOUT_MS)
    dismissed: list[str] = []
    deadline = time.monotonic() + KERNEL_TIMEOUT_MS / 1000
    # A kernel-selection dialog can appear after the notebook shows, so poll for either outcome.
    while True:
        dismissed += dismiss_dialogs(page)
        try:
            wait_for_idle(page, timeout=1_000)
            return dismissed
        except PlaywrightTimeout:  # keep polling (and dismissing dialogs) until our own deadline
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"kernel of {path} not Idle after {KERNEL_TIMEOUT_MS / 1000:.0f}s; status bar: "
                    f"{page.locator(KERNEL_STATUS).all_inner_texts()}"
                ) from None


def _first_prompt(page: Page) -> str:
    prompts = page.locator(CODE_PROMPTS)
    return prompts.first.inner_text() if prompts.count() else ""


def run_all_cells(page: Page, timeout: float = RUN_TIMEOUT_MS) -> None:
    """Run > Run All Cells from the menu bar, then wait until every queued cell has finished.

    "Finished" = the first code cell's prompt changed to a new number (so the run really started; a bare
    Idle check could pass before the kernel went busy), nothing shows ``[*]``, and the kernel is Idle.
    A cell that raises stops the run; the helper still returns, and the error shows in cell_outputs().
    """
    before = _first_prompt(page)
    # Exact label matches: "Run" is also a substring of Kernel-menu items such as "Restart Kernel and Run All".
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
    page.locator(
        ".lm-Menu-item:not(.lm-mod-disabled) .lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")
    ).click()
    page.wait_for_function(
        """([sel, before]) => {
             const p = document.querySelector(sel);
             const t = p ? (p.textContent || '') : '';
             return /\\[\\d+\\]/.test(t) && t !== before;
           }""",
        arg=[CODE_PROMPTS, before],
        timeout=timeout,
        polling=100,
    )
    wait_for_idle(page, timeout=timeout)


def cell_outputs(page: Page) -> list[str]:
    """Visible output text of each code cell of the active notebook, in order ("" for no output)."""
    texts: list[str] = page.eval_on_selector_all(
        f"{NOTEBOOK} .jp-CodeCell",
        """cells => cells.map(c => Array.from(c.querySelectorAll('.jp-OutputArea-output'))
                                      .map(o => o.innerText).join('\\n'))""",
    )
    return texts
