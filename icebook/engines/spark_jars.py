"""Iceberg for Spark by Maven coordinates: the one home of the Iceberg version, of every artifact icebook
asks Spark for, and of where Spark's Ivy keeps them.

Users add Iceberg to Spark the way Spark takes any library: ``spark.jars.packages``, resolved by Spark's
own Ivy from Maven Central (or the mirror of ``spark.jars.repositories`` / ``spark.jars.ivySettings``)
into its cache, once. The runtime jar carries Iceberg's FileIOs (``S3FileIO``, ``GCSFileIO``,
``ADLSFileIO``) but not the cloud SDKs they call: those come in Iceberg's cloud bundles, whose versions
are settings of their own, because a bundle only has to carry an SDK the runtime's FileIO can call.

Settings (each ``ICEBOOK_*`` variable, when set, must be a version like ``1.12.0`` or ``none`` to leave
that bundle out):
- ``ICEBOOK_ICEBERG_VERSION``: the runtime's version (default ``1.12.0``);
- ``ICEBOOK_ICEBERG_AWS_BUNDLE``, ``ICEBOOK_ICEBERG_GCP_BUNDLE``, ``ICEBOOK_ICEBERG_AZURE_BUNDLE``:
  each bundle's version (defaults: the newest served to this project's machines).
"""

from __future__ import annotations

import os
import re
import sys
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from pathlib import Path

from icebook import config
from icebook.errors import EnvironmentProblem, OptionError
from icebook.text import byte_size

ICEBERG_VERSION = "1.12.0"
BUNDLE_VERSIONS: Mapping[str, str] = {"aws": "1.12.0", "gcp": "1.11.0", "azure": "1.10.0"}
"""Each cloud bundle's default: the newest that Maven Central serves this project's machines."""
RUNTIME_SUFFIXES: Mapping[tuple[int, int], str] = {(3, 5): "3.5_2.12", (4, 0): "4.0_2.13", (4, 1): "4.1_2.13"}
"""Spark minor version -> the suffix of its Iceberg runtime (Spark line and Scala version)."""
JAVA_FOR_SPARK: Mapping[int, tuple[int, ...]] = {3: (17,), 4: (17, 21)}
"""Java versions that run both Spark (by major version) and Iceberg 1.12, which needs Java 17."""
SQLITE_JDBC = "org.xerial:sqlite-jdbc:3.50.3.0"
POSTGRES_JDBC = "org.postgresql:postgresql:42.7.14"
EXTENSIONS = "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
MAVEN_CENTRAL = "https://repo1.maven.org/maven2"


@dataclass(frozen=True, slots=True, order=True)
class Coordinate:
    """A Maven artifact, ``group:artifact:version``."""

    group: str
    artifact: str
    version: str

    @classmethod
    def parse(cls, text: str) -> Coordinate:
        parts = text.strip().split(":")
        if len(parts) != 3 or not all(parts):
            raise OptionError(f"{text!r} is not a Maven coordinate (group:artifact:version)")
        return cls(*parts)

    def __str__(self) -> str:
        return f"{self.group}:{self.artifact}:{self.version}"

    @property
    def key(self) -> str:
        """``group:artifact``: two coordinates with one key are one library in two versions."""
        return f"{self.group}:{self.artifact}"

    @property
    def jar_name(self) -> str:
        """The file Spark's Ivy copies the resolved jar to (``<ivy>/jars/``)."""
        return f"{self.group}_{self.artifact}-{self.version}.jar"

    def url(self, repository: str) -> str:
        """The jar's address in a Maven-layout repository."""
        return f"{repository.rstrip('/')}/{self.group.replace('.', '/')}/{self.artifact}/{self.version}/{self.artifact}-{self.version}.jar"


@dataclass(frozen=True, slots=True)
class Stack:
    """The versions icebook asks Spark for: the Iceberg runtime and each cloud bundle (None: left out)."""

    iceberg: str = ICEBERG_VERSION
    bundles: Mapping[str, str | None] = field(default_factory=lambda: dict(BUNDLE_VERSIONS))

    @classmethod
    def from_env(cls) -> Stack:
        """The defaults with each ``ICEBOOK_ICEBERG_*`` setting applied (``icebook.config`` reads them; a bad
        value raises its ConfigError naming the variable)."""
        bundles = {cloud: config.iceberg_bundle(cloud, default) for cloud, default in BUNDLE_VERSIONS.items()}
        return cls(iceberg=config.iceberg_version(ICEBERG_VERSION), bundles=bundles)

    def runtime(self, spark_version: str) -> Coordinate:
        """The Iceberg runtime for this Spark (``3.5`` -> ``iceberg-spark-runtime-3.5_2.12``)."""
        suffix = RUNTIME_SUFFIXES.get(spark_minor(spark_version))
        if suffix is None:
            lines = ", ".join(f"{a}.{b}" for a, b in RUNTIME_SUFFIXES)
            raise EnvironmentProblem(
                f"Iceberg {self.iceberg} has Spark runtimes for Spark {lines}, but pyspark {spark_version} is "
                "installed: `pip install 'pyspark>=4.1,<4.2'` (or 3.5), or pass your own jar with "
                "icebook.spark.session(jar=...)"
            )
        return Coordinate("org.apache.iceberg", f"iceberg-spark-runtime-{suffix}", self.iceberg)

    def bundle_coordinates(self) -> list[Coordinate]:
        return [
            Coordinate("org.apache.iceberg", f"iceberg-{cloud}-bundle", version)
            for cloud, version in self.bundles.items()
            if version
        ]

    def packages(self, spark_version: str) -> list[Coordinate]:
        """Everything a session icebook starts asks for: the runtime, the cloud bundles (the FileIOs of
        S3, GCS and ADLS, and Glue's client) and the JDBC drivers of SQL catalogs."""
        return [
            self.runtime(spark_version),
            *self.bundle_coordinates(),
            Coordinate.parse(SQLITE_JDBC),
            Coordinate.parse(POSTGRES_JDBC),
        ]


def spark_minor(version: str) -> tuple[int, int]:
    """``4.1.4`` -> (4, 1); (0, 0) when it is not a version."""
    match = re.match(r"(\d+)\.(\d+)", version)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def installed_spark_version() -> str:
    """The installed pyspark's version, read without importing it."""
    try:
        return importlib_metadata.version("pyspark")
    except importlib_metadata.PackageNotFoundError:
        raise EnvironmentProblem("PySpark is not installed: `pip install 'pyspark>=4.1,<4.2'`") from None


def merge_packages(own: Iterable[Coordinate], users: str) -> list[Coordinate]:
    """The user's ``spark.jars.packages`` first, then icebook's for every library the user did not name
    (the user's version wins)."""
    theirs = [Coordinate.parse(p) for p in users.split(",") if p.strip()]
    named = {c.key for c in theirs}
    return [*theirs, *(c for c in own if c.key not in named)]


def ivy_home(settings: Mapping[str, str], spark_version: str) -> Path:
    """Where Spark's Ivy keeps what it resolved: ``spark.jars.ivy``, else Spark's default (``~/.ivy2.5.2``
    from Spark 4, ``~/.ivy2`` before)."""
    configured = settings.get("spark.jars.ivy", "").strip()
    if configured:
        return Path(configured).expanduser()
    return Path.home() / (".ivy2.5.2" if spark_minor(spark_version) >= (4, 0) else ".ivy2")


def missing(coordinates: Iterable[Coordinate], ivy: Path) -> list[Coordinate]:
    """The coordinates whose jar Spark's Ivy has not resolved yet (a first start downloads them)."""
    return [c for c in coordinates if not (ivy / "jars" / c.jar_name).is_file()]


def repositories(settings: Mapping[str, str]) -> list[str]:
    """The Maven repositories Spark tries for packages: ``spark.jars.repositories``, then Maven Central."""
    extra = [r.strip() for r in settings.get("spark.jars.repositories", "").split(",") if r.strip()]
    return [*extra, MAVEN_CENTRAL]


@dataclass(frozen=True, slots=True)
class Probe:
    """What a repository said of one coordinate: its size in bytes, or why it could not be had."""

    coordinate: Coordinate
    repository: str
    size: int | None
    problem: str = ""


def probe(coordinate: Coordinate, repository: str, *, timeout: float = 10.0) -> Probe:
    """Ask a repository for the jar's size (a HEAD request; a ``file:`` repository is looked at on disk)."""
    url = coordinate.url(repository)
    if url.startswith("file:"):
        path = Path(urllib.request.url2pathname(url.removeprefix("file:")))
        if path.is_file():
            return Probe(coordinate, repository, path.stat().st_size)
        return Probe(coordinate, repository, None, f"no {path}")
    request = urllib.request.Request(url, method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            length = response.headers.get("Content-Length")
            return Probe(coordinate, repository, int(length) if length and length.isdigit() else 0)
    except urllib.error.HTTPError as exc:
        reason = "not found there" if exc.code == 404 else f"HTTP {exc.code} {exc.reason}"
        return Probe(coordinate, repository, None, reason)
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return Probe(coordinate, repository, None, f"unreachable ({getattr(exc, 'reason', None) or exc})")


def first_source(coordinate: Coordinate, repos: list[str]) -> Probe:
    """The first repository that serves the coordinate, or the last refusal (naming each repository)."""
    refusals: list[str] = []
    for repository in repos:
        found = probe(coordinate, repository)
        if found.size is not None:
            return found
        refusals.append(f"{repository}: {found.problem}")
    return Probe(coordinate, repos[-1] if repos else "", None, "; ".join(refusals))


def why_not_fetched(coordinate: Coordinate, settings: Mapping[str, str]) -> str:
    """Why Ivy did not fetch ``coordinate``, said of where it looked: the resolvers of the user's
    ``spark.jars.ivySettings`` (icebook does not read that file), else each repository Spark tried."""
    ivy_settings = settings.get("spark.jars.ivySettings", "").strip()
    if ivy_settings:
        return f"the resolvers of {ivy_settings} (spark.jars.ivySettings) do not have it"
    found = first_source(coordinate, repositories(settings))
    return found.problem if found.size is None else f"{found.repository} has it, but Ivy did not fetch it"


def announce(wanted: list[Coordinate], settings: Mapping[str, str], ivy: Path) -> tuple[int, list[Probe]]:
    """Before a first start: which jars Spark will fetch, from where and how large, or one line naming
    the repository and coordinate that cannot be had (EnvironmentProblem). Returns the total size.
    With ``spark.jars.ivySettings`` the user's Ivy file says where to look: icebook does not guess."""
    absent = missing(wanted, ivy)
    if not absent or settings.get("spark.jars.ivySettings"):
        return 0, []
    repos = repositories(settings)
    found = [first_source(c, repos) for c in absent]
    for item in found:
        if item.size is None:
            raise EnvironmentProblem(
                f"Spark cannot fetch {item.coordinate}: {item.problem}. Point spark.jars.repositories (or "
                "spark.jars.ivySettings) at a repository that has it, or pass the jars with "
                "icebook.spark.session(jar=[...])"
            )
    total = sum(item.size or 0 for item in found)
    return total, found


def describe(found: list[Probe], total: int, ivy: Path) -> str:
    """The first-start line: what is fetched, how large, where to."""
    parts = ", ".join(f"{p.coordinate} ({byte_size(p.size or 0)})" for p in found)
    return f"icebook: first start: Spark fetches {byte_size(total)} once into {ivy}: {parts}"


def cache_size(ivy: Path) -> int:
    """Bytes under Ivy's download cache (watched while a first start downloads)."""
    total = 0
    for root, _dirs, files in os.walk(ivy / "cache"):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                continue
    return total


def runtime_jar() -> Path:
    """The Iceberg runtime jar Spark's Ivy resolved for the installed pyspark (compiling against it)."""
    version = installed_spark_version()
    coordinate = Stack.from_env().runtime(version)
    path = ivy_home({}, version) / "jars" / coordinate.jar_name
    if not path.is_file():
        raise EnvironmentProblem(
            f"{coordinate} is not fetched yet: start Spark once (`python -m icebook.engines.spark_jars`)"
        )
    return path


def jar_paths(jar: str | os.PathLike[str] | Iterable[str | os.PathLike[str]]) -> list[Path]:
    """``jar=`` as a list of existing files (an air-gapped start names every jar it needs)."""
    items = [jar] if isinstance(jar, str | os.PathLike) else list(jar)
    paths = [Path(p).expanduser() for p in items]
    for path in paths:
        if not path.is_file():
            raise EnvironmentProblem(f"jar not found: {path}")
    return paths


if __name__ == "__main__":  # `python -m icebook.engines.spark_jars`: fetch ahead (make env, Binder)
    from icebook.engines.spark_session import get_session

    session = get_session(progress=True)
    print(f"icebook: Spark {session.version} has {', '.join(map(str, Stack.from_env().packages(session.version)))}")
    session.stop()
    sys.exit(0)


__all__ = [
    "BUNDLE_VERSIONS",
    "EXTENSIONS",
    "ICEBERG_VERSION",
    "POSTGRES_JDBC",
    "RUNTIME_SUFFIXES",
    "SQLITE_JDBC",
    "Coordinate",
    "Stack",
    "announce",
    "installed_spark_version",
    "ivy_home",
    "merge_packages",
    "missing",
    "runtime_jar",
]
