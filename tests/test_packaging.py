"""Packaging promises: binder pins what pyproject pins, widgets ship in the wheel, clear environment errors."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
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
    assert "snowpark-connect-deps-iceberg==1.0.2" in binder
    assert "openjdk-17" in (ROOT / "binder" / "apt.txt").read_text()
    assert (ROOT / "binder" / "runtime.txt").read_text().strip() == "python-3.11"
    post_build = (ROOT / "binder" / "postBuild").read_text()
    assert "set -e" in post_build and "icebook.scenarios.build demo" in post_build


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel pip builds from this checkout, built once for the tests that look inside it."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(out),
            str(ROOT),
        ],
        check=True,
    )
    return next(out.glob("icebook-*.whl"))


def test_wheel_ships_widgets_and_console_script(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for asset in (ROOT / "widgets").iterdir():
        if asset.suffix in {".js", ".css"}:
            assert f"icebook/widgets/{asset.name}" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "icebook = icebook.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_no_java_says_which_and_how(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EnvironmentProblem, match=r"Java 17.*apt-get install -y openjdk-17-jre-headless"):
        spark_session.find_java()


def test_wrong_java_version_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "java"
    fake.write_text("#!/bin/sh\necho 'openjdk version \"21.0.2\" 2024-01-16' >&2\n")
    fake.chmod(0o755)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EnvironmentProblem, match=r"is Java 21"):
        spark_session.find_java()


@pytest.mark.parametrize(
    ("text", "major"),
    [('openjdk version "17.0.15" 2025-04-15', 17), ('java version "1.8.0_392"', 8), ("garbage", None)],
)
def test_parse_java_major(text: str, major: int | None) -> None:
    assert spark_session.parse_java_major(text) == major


def test_wrong_jar_package_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spark_session.importlib_metadata, "version", lambda name: "1.0.3")
    with pytest.raises(EnvironmentProblem, match=r"1\.0\.3 is installed but icebook needs exactly 1\.0\.2"):
        spark_session.iceberg_runtime_jar()


def test_missing_jar_package(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> str:
        raise spark_session.importlib_metadata.PackageNotFoundError(name)

    monkeypatch.setattr(spark_session.importlib_metadata, "version", missing)
    with pytest.raises(EnvironmentProblem, match=r"pip install snowpark-connect-deps-iceberg==1\.0\.2"):
        spark_session.iceberg_runtime_jar()


def test_pinned_jar_is_the_iceberg_1_10_2_runtime() -> None:
    jar = spark_session.iceberg_runtime_jar()
    assert jar.name == "iceberg-spark-runtime-3.5_2.12-1.10.2.jar" and jar.stat().st_size > 10_000_000


def test_unwritable_warehouse(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(EnvironmentProblem, match=r"a-file/warehouse is not writable"):
        spark_session.check_writable(blocker / "warehouse")


def test_wheel_ships_the_lake_browser(wheel: Path) -> None:
    """The prebuilt JupyterLab extension and the config enabling the server extension are in the wheel, where
    pip puts them under share/jupyter and etc/jupyter (so `pip install` needs no Node)."""
    built = ROOT / "labextension" / "dist"
    if not (built / "package.json").exists():
        pytest.fail("the lake browser extension is not built: run `make labextension`", pytrace=False)
    names = set(zipfile.ZipFile(wheel).namelist())
    data = "icebook-0.1.0.data/data/"
    extension = f"{data}share/jupyter/labextensions/icebook-lake-browser/"
    assert f"{extension}package.json" in names and f"{extension}install.json" in names
    for asset in (built / "static").iterdir():
        assert f"{extension}static/{asset.name}" in names
    assert any(n.startswith(f"{extension}static/remoteEntry.") for n in names)
    assert f"{data}etc/jupyter/jupyter_server_config.d/icebook.json" in names
    assert "icebook/server/handlers.py" in names
