"""Starting Spark with no network: Iceberg from a local Maven repository, from jar paths, and the one line a
start says when a coordinate cannot be had.

Each start runs in its own process (one JVM per process, and the shared session must not be it), with
every proxy setting pointed at a closed port: a request that leaves the machine is refused at once. The
local repository is built from what Spark's Ivy already fetched for the installed pyspark (``make env``
and ``make test-spark35`` fetch it ahead): the runtime's POM and jar in Maven's layout.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from icebook.engines import spark_jars
from icebook.engines.spark_jars import Coordinate

pytestmark = pytest.mark.spark

# Runs in the child: start Spark as asked, write a small table and read it back through icebook's Spark
# engine and its Arrow engine; prints one JSON line (or the IcebookError the start raised).
CHILD = textwrap.dedent(
    """
    import json, sys
    import icebook
    from icebook.engines.spark_session import get_session
    from icebook.errors import IcebookError

    args = json.loads(sys.argv[1])
    try:
        spark = get_session(warehouse=args["warehouse"], catalog="lake", progress=False, **args["start"])
    except IcebookError as exc:
        print(json.dumps({"error": str(exc), "kind": type(exc).__name__}))
        sys.exit(0)
    spark.sql("CREATE TABLE lake.db.t (id BIGINT, name STRING) USING iceberg")
    spark.sql("INSERT INTO lake.db.t VALUES (1, 'a'), (2, 'b'), (3, NULL)")
    table = icebook.open(args["warehouse"] + "/db/t")
    rows = {engine: sorted(table.read(engine=engine).to_pylist(), key=lambda r: r["id"]) for engine in ("spark", "arrow")}
    jars = spark.sparkContext.getConf().get("spark.jars", "")
    print(json.dumps({"spark": spark.version, "rows": rows, "jars": jars}))
    """
)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(tmp_path: Path, start: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """Run CHILD in a fresh process with every way out of the machine closed; (its answer, its stderr)."""
    port = _closed_port()
    proxy = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy", "no_proxy")}
    env |= {"http_proxy": proxy, "https_proxy": proxy, "HTTP_PROXY": proxy, "HTTPS_PROXY": proxy}
    env["JAVA_TOOL_OPTIONS"] = " ".join(
        f"-D{scheme}.proxyHost=127.0.0.1 -D{scheme}.proxyPort={port}" for scheme in ("http", "https")
    )
    warehouse = tmp_path / "wh"
    warehouse.mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps({"warehouse": str(warehouse), "start": start})],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0 and lines, f"exit {done.returncode}\n{done.stdout}\n{done.stderr[-4000:]}"
    return json.loads(lines[-1]), done.stderr


def _runtime() -> Coordinate:
    return spark_jars.Stack.from_env().runtime(spark_jars.installed_spark_version())


def _cached(coordinate: Coordinate) -> tuple[Path, Path]:
    """The runtime's POM and jar in the Ivy cache of the installed Spark (fetched ahead, never here)."""
    cache = spark_jars.ivy_home({}, spark_jars.installed_spark_version()) / "cache" / coordinate.group
    pom = cache / coordinate.artifact / f"ivy-{coordinate.version}.xml.original"
    jar = cache / coordinate.artifact / "jars" / f"{coordinate.artifact}-{coordinate.version}.jar"
    if not (pom.is_file() and jar.is_file()):
        raise AssertionError(f"{coordinate} is not in {cache}: fetch it first (`python -m icebook.engines.spark_jars`)")
    return pom, jar


def _local_repository(root: Path, coordinate: Coordinate) -> str:
    """A Maven-layout repository holding ``coordinate``'s POM and jar; its ``file:`` URI."""
    pom, jar = _cached(coordinate)
    folder = root / coordinate.group.replace(".", "/") / coordinate.artifact / coordinate.version
    folder.mkdir(parents=True)
    shutil.copyfile(pom, folder / f"{coordinate.artifact}-{coordinate.version}.pom")
    (folder / f"{coordinate.artifact}-{coordinate.version}.jar").symlink_to(jar)
    return root.as_uri()


def _ivy_settings(path: Path, repository: str) -> Path:
    """An Ivy settings file whose one resolver is ``repository`` (a company mirror, or a local copy)."""
    path.write_text(
        '<ivysettings>\n  <settings defaultResolver="only"/>\n  <resolvers>\n'
        f'    <ibiblio name="only" m2compatible="true" root="{repository}"/>\n  </resolvers>\n</ivysettings>\n'
    )
    return path


EXPECTED = [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}, {"id": 3, "name": None}]


@pytest.mark.parametrize("setting", ["spark.jars.ivySettings", "spark.jars.repositories"])
def test_an_offline_start_resolves_from_a_local_repository(tmp_path: Path, setting: str) -> None:
    runtime = _runtime()
    repository = _local_repository(tmp_path / "repo", runtime)
    ivy = tmp_path / "ivy"  # empty: nothing resolved before
    conf = {"spark.jars.ivy": str(ivy)}
    if setting == "spark.jars.ivySettings":  # the repository is Ivy's only resolver
        conf[setting] = str(_ivy_settings(tmp_path / "ivysettings.xml", repository))
        resolver = "only"
    else:  # Spark's own resolvers first (Maven Central refused by the closed proxy), then the repository
        conf[setting] = repository
        resolver = "repo-1"
    answer, log = _start(tmp_path, {"packages": [str(runtime)], "conf": conf})
    assert answer["spark"] == spark_jars.installed_spark_version()
    assert answer["rows"] == {"spark": EXPECTED, "arrow": EXPECTED}
    # Ivy resolved the runtime from the local repository into the empty Ivy home
    assert f"found {runtime.group}#{runtime.artifact};{runtime.version} in {resolver}" in log
    assert (ivy / "jars" / runtime.jar_name).is_file()
    assert runtime.jar_name in answer["jars"]


def test_a_start_from_jar_paths_resolves_nothing(tmp_path: Path) -> None:
    runtime = _runtime()
    _pom, jar = _cached(runtime)
    ivy = tmp_path / "ivy"
    answer, log = _start(tmp_path, {"jar": [str(jar)], "conf": {"spark.jars.ivy": str(ivy)}})
    assert answer["spark"] == spark_jars.installed_spark_version()
    assert answer["rows"] == {"spark": EXPECTED, "arrow": EXPECTED}
    assert str(jar) in answer["jars"].split(",")
    assert not ivy.exists(), "a start from jar paths asked Ivy for something"
    assert "resolving dependencies" not in log


def _unfetchable(runtime: Coordinate) -> Coordinate:
    return Coordinate(runtime.group, runtime.artifact, "0.0.404")


def test_an_unfetchable_coordinate_is_one_line_naming_it_and_the_repositories(tmp_path: Path) -> None:
    wanted = _unfetchable(_runtime())
    empty = tmp_path / "empty-repo"
    empty.mkdir()
    answer, log = _start(
        tmp_path,
        {
            "packages": [str(wanted)],
            "conf": {"spark.jars.ivy": str(tmp_path / "ivy"), "spark.jars.repositories": empty.as_uri()},
        },
    )
    assert answer["kind"] == "EnvironmentProblem"
    message = answer["error"]
    assert "\n" not in message
    assert message.startswith(f"Spark cannot fetch {wanted}: {empty.as_uri()}: no {empty}/")
    assert f"{spark_jars.MAVEN_CENTRAL}: unreachable" in message  # the proxy refused: nothing left the machine
    assert "resolving dependencies" not in log  # said before a JVM was started for nothing


def test_an_unfetchable_coordinate_through_ivy_settings_names_the_settings_file(tmp_path: Path) -> None:
    wanted = _unfetchable(_runtime())
    empty = tmp_path / "empty-repo"
    empty.mkdir()
    settings = _ivy_settings(tmp_path / "ivysettings.xml", empty.as_uri())
    answer, log = _start(
        tmp_path,
        {
            "packages": [str(wanted)],
            "conf": {"spark.jars.ivy": str(tmp_path / "ivy"), "spark.jars.ivySettings": str(settings)},
        },
    )
    assert answer["kind"] == "EnvironmentProblem"
    message = answer["error"]
    assert "\n" not in message
    assert message.startswith(f"Spark could not fetch {wanted}")
    assert str(settings) in message
    assert "resolving dependencies" in log and "repo1.maven.org" not in log  # Ivy asked the settings' resolver only
