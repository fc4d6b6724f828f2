"""Iceberg by Maven coordinates: which artifacts a session asks for, the settings that change them, and
what a first start says (no JVM: the coordinates, the settings and the repositories themselves)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

import icebook.spark
from icebook.engines import spark_jars
from icebook.engines.spark_jars import Coordinate, Stack
from icebook.errors import EnvironmentProblem, OptionError


@pytest.mark.parametrize(
    ("spark", "runtime"),
    [
        ("4.1.4", "iceberg-spark-runtime-4.1_2.13"),
        ("4.0.1", "iceberg-spark-runtime-4.0_2.13"),
        ("3.5.9", "iceberg-spark-runtime-3.5_2.12"),
    ],
)
def test_the_runtime_matches_the_installed_spark(spark: str, runtime: str) -> None:
    coordinate = Stack().runtime(spark)
    assert str(coordinate) == f"org.apache.iceberg:{runtime}:1.12.0"
    assert coordinate.jar_name == f"org.apache.iceberg_{runtime}-1.12.0.jar"


def test_a_spark_without_a_runtime_says_which_exist() -> None:
    with pytest.raises(EnvironmentProblem, match=r"runtimes for Spark 3\.5, 4\.0, 4\.1, but pyspark 3\.4\.1"):
        Stack().runtime("3.4.1")


def test_a_session_asks_for_the_runtime_the_bundles_and_the_jdbc_drivers() -> None:
    assert [str(c) for c in Stack().packages("4.1.4")] == [
        "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0",
        "org.apache.iceberg:iceberg-aws-bundle:1.12.0",
        "org.apache.iceberg:iceberg-gcp-bundle:1.11.0",
        "org.apache.iceberg:iceberg-azure-bundle:1.10.0",
        "org.xerial:sqlite-jdbc:3.50.3.0",
        "org.postgresql:postgresql:42.7.14",
    ]
    assert icebook.spark.packages() == [str(c) for c in Stack.from_env().packages(spark_jars.installed_spark_version())]


def test_each_version_is_its_own_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ICEBOOK_ICEBERG_VERSION", "1.11.0")
    monkeypatch.setenv("ICEBOOK_ICEBERG_GCP_BUNDLE", "1.12.0")
    monkeypatch.setenv("ICEBOOK_ICEBERG_AZURE_BUNDLE", "none")
    stack = Stack.from_env()
    assert [str(c) for c in stack.packages("3.5.9")][:3] == [
        "org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.11.0",
        "org.apache.iceberg:iceberg-aws-bundle:1.12.0",
        "org.apache.iceberg:iceberg-gcp-bundle:1.12.0",
    ]
    assert not any("azure" in str(c) for c in stack.packages("3.5.9"))
    monkeypatch.delenv("ICEBOOK_ICEBERG_AZURE_BUNDLE")
    for variable, value in (("ICEBOOK_ICEBERG_VERSION", "none"), ("ICEBOOK_ICEBERG_AWS_BUNDLE", "latest; rm -rf")):
        monkeypatch.setenv(variable, value)
        with pytest.raises(OptionError, match=rf"{variable}='{value}'.*a version such as 1\.12\.0"):
            Stack.from_env()
        monkeypatch.delenv(variable)


def test_the_users_packages_come_first_and_win() -> None:
    own = Stack().packages("4.1.4")
    merged = spark_jars.merge_packages(own, "org.xerial:sqlite-jdbc:3.46.0.0, com.example:udfs:2.0")
    assert [str(c) for c in merged[:2]] == ["org.xerial:sqlite-jdbc:3.46.0.0", "com.example:udfs:2.0"]
    assert sum(c.key == "org.xerial:sqlite-jdbc" for c in merged) == 1 and len(merged) == len(own) + 1
    with pytest.raises(OptionError, match="not a Maven coordinate"):
        spark_jars.merge_packages(own, "just-a-name")


def test_ivy_home_follows_spark_and_the_users_setting(tmp_path: Path) -> None:
    assert spark_jars.ivy_home({}, "4.1.4") == Path.home() / ".ivy2.5.2"
    assert spark_jars.ivy_home({}, "3.5.9") == Path.home() / ".ivy2"
    assert spark_jars.ivy_home({"spark.jars.ivy": str(tmp_path)}, "4.1.4") == tmp_path


def _local_repository(root: Path, coordinates: list[Coordinate]) -> str:
    for c in coordinates:
        path = Path(c.url(str(root)))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * 2048)
    return root.as_uri()


def test_a_first_start_says_what_it_fetches_and_how_large(tmp_path: Path) -> None:
    wanted = Stack().packages("4.1.4")[:2]
    repository = _local_repository(tmp_path / "m2", wanted)
    ivy = tmp_path / "ivy"
    total, found = spark_jars.announce(wanted, {"spark.jars.repositories": repository}, ivy)
    assert total == 4096 and [p.repository for p in found] == [repository, repository]
    line = spark_jars.describe(found, total, ivy)
    assert line.startswith(f"icebook: first start: Spark fetches 4.0 KiB once into {ivy}: ")
    assert "org.apache.iceberg:iceberg-aws-bundle:1.12.0 (2.0 KiB)" in line
    # once resolved into Ivy's jars/ there is nothing to announce
    (ivy / "jars").mkdir(parents=True)
    for c in wanted:
        (ivy / "jars" / c.jar_name).write_bytes(b"jar")
    assert spark_jars.announce(wanted, {"spark.jars.repositories": repository}, ivy) == (0, [])


@pytest.fixture()
def refusing_repository() -> Iterator[str]:
    """A Maven repository on 127.0.0.1 that has nothing (every request is a 404)."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self) -> None:
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/maven2"
    finally:
        server.shutdown()


def test_a_coordinate_no_repository_has_is_one_line_naming_each(tmp_path: Path, refusing_repository: str) -> None:
    wanted = [Coordinate("org.apache.iceberg", "iceberg-spark-runtime-4.1_2.13", "9.9.9")]
    first = spark_jars.first_source(wanted[0], [refusing_repository, "http://127.0.0.1:9/closed"])
    assert first.size is None
    assert f"{refusing_repository}: not found there" in first.problem
    assert "http://127.0.0.1:9/closed: unreachable" in first.problem
    with pytest.raises(EnvironmentProblem) as caught:
        spark_jars.announce(wanted, {"spark.jars.repositories": refusing_repository}, tmp_path / "ivy")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("Spark cannot fetch org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:9.9.9: ")
    assert f"{refusing_repository}: not found there" in message


def test_an_ivy_settings_file_is_the_users_word(tmp_path: Path) -> None:
    """With spark.jars.ivySettings, Ivy looks where that file says: icebook neither probes nor guesses."""
    wanted = [Coordinate("com.example", "nowhere", "1.0")]
    settings = {"spark.jars.ivySettings": str(tmp_path / "ivysettings.xml")}
    assert spark_jars.announce(wanted, settings, tmp_path / "ivy") == (0, [])


def test_jar_paths_must_exist(tmp_path: Path) -> None:
    jar = tmp_path / "iceberg.jar"
    jar.write_bytes(b"PK")
    assert spark_jars.jar_paths(jar) == [jar]
    assert spark_jars.jar_paths([str(jar)]) == [jar]
    with pytest.raises(EnvironmentProblem, match=r"jar not found: .*missing\.jar"):
        spark_jars.jar_paths([jar, tmp_path / "missing.jar"])
