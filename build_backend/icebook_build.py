"""icebook's build backend: setuptools, after building the lake browser's JupyterLab extension when needed.

The wheel carries the built extension (``labextension/dist``) as data files. A clean clone has no ``dist``,
so building a wheel or an sdist from one first runs ``jlpm install`` and ``jlpm build`` in ``labextension/``
(JupyterLab, which brings ``jlpm`` and the core packages the extension shares, is then asked for as a build
requirement). An sdist carries ``dist`` and not the TypeScript sources, so a wheel built from an sdist needs no
Node. Editable installs skip data files (``make env`` links ``dist`` into the environment), so they build nothing.

The extension is built here, before setuptools is called, because setuptools expands the data-files patterns
when it reads ``pyproject.toml``: a step inside setuptools' own commands would run too late.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (every hook not redefined below is setuptools' own)

EXTENSION = Path("labextension")
BUILT = EXTENSION / "dist" / "package.json"
JUPYTERLAB = "jupyterlab>=4.2,<5"
SOURCES = ("package.json", "yarn.lock", "tsconfig.json", "install.json", ".yarnrc.yml", "src", "style")


def _sources() -> list[Path]:
    """The extension's sources present here: none in an sdist, which carries only the built extension."""
    found: list[Path] = []
    for name in SOURCES:
        path = EXTENSION / name
        if path.is_dir():
            found.extend(p for p in path.rglob("*") if p.is_file())
        elif path.is_file():
            found.append(path)
    return found


def _needs_build() -> bool:
    """True when the built extension is missing or older than one of its sources."""
    if not BUILT.is_file():
        if not (EXTENSION / "package.json").is_file():
            raise SystemExit(f"icebook: neither the lake browser's built extension ({BUILT}) nor its sources are here")
        return True
    built = BUILT.stat().st_mtime
    return any(p.stat().st_mtime > built for p in _sources())


def _node() -> str:
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        raise SystemExit(
            "icebook: building the lake browser extension from source needs Node.js (>= 18) on PATH "
            "(apt-get install nodejs, or build from an sdist, which carries the built extension)"
        )
    return node


def _build_extension() -> None:
    """``jlpm install`` and ``jlpm build`` in ``labextension/``, with this environment's JupyterLab."""
    _node()
    bin_dir = str(Path(sys.executable).parent)
    path = os.pathsep.join([bin_dir, os.environ.get("PATH", os.defpath)])
    jlpm = shutil.which("jlpm", path=path)
    try:
        import jupyterlab
    except ImportError:
        jupyterlab = None  # type: ignore[assignment]
    if jlpm is None or jupyterlab is None:
        raise SystemExit(f"icebook: building the lake browser extension needs {JUPYTERLAB} in the build environment")
    env = {
        **os.environ,
        "PATH": path,
        # The extension shares JupyterLab's core packages: build-labextension reads them from its staging folder.
        "JUPYTERLAB_STAGING": str(Path(jupyterlab.__file__).parent / "staging"),
    }
    for step in (["install", "--immutable"], ["build"]):
        print(f"icebook: jlpm {' '.join(step)} (in {EXTENSION}/)", file=sys.stderr, flush=True)
        done = subprocess.run([jlpm, *step], cwd=EXTENSION, env=env, check=False)
        if done.returncode != 0:
            raise SystemExit(f"icebook: `jlpm {' '.join(step)}` in {EXTENSION}/ failed (exit {done.returncode})")
    if not BUILT.is_file():
        raise SystemExit(f"icebook: `jlpm build` in {EXTENSION}/ did not write {BUILT}")


def _requires() -> list[str]:
    if not _needs_build():
        return []
    _node()  # before JupyterLab is downloaded for nothing
    return [JUPYTERLAB]


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    return [*_requires(), *_setuptools.get_requires_for_build_wheel(config_settings)]


def get_requires_for_build_sdist(config_settings: dict[str, Any] | None = None) -> list[str]:
    return [*_requires(), *_setuptools.get_requires_for_build_sdist(config_settings)]


def build_wheel(
    wheel_directory: str, config_settings: dict[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    if _needs_build():
        _build_extension()
    return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_sdist(sdist_directory: str, config_settings: dict[str, Any] | None = None) -> str:
    if _needs_build():
        _build_extension()
    return _setuptools.build_sdist(sdist_directory, config_settings)
