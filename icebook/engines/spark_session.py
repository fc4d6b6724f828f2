"""The one local Spark session, configured for Iceberg.

Facts that shape this module:
- ``getOrCreate()`` takes ~10 s on 2 cores, and a second call returns the same session and
  ignores static settings; after ``stop()`` a new session in the same process cannot load a
  jar (the JVM classpath is fixed). So the Iceberg jar goes on the first session, and we
  start at most one.
- Catalogs are runtime settings, so more can be added to a running session.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from icebook import config
from icebook.engines import spark_jars
from icebook.errors import EnvironmentProblem, IcebookError, one_line

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_CATALOG = "lake"

_lock = threading.Lock()
_session: SparkSession | None = None
_catalogs: dict[str, str] = {}


@dataclass(frozen=True, slots=True)
class JavaInfo:
    executable: str
    major: int
    version_text: str


def find_java(spark_version: str | None = None) -> JavaInfo:
    """Locate ``java`` (JAVA_HOME first, then PATH) and read its major version.

    Raises EnvironmentProblem with the fix when there is none, or one that cannot run this Spark with
    Iceberg (``spark_jars.JAVA_FOR_SPARK``).
    """
    version = spark_version or spark_jars.installed_spark_version()
    supported = spark_jars.JAVA_FOR_SPARK.get(spark_jars.spark_minor(version)[0], (17,))
    candidates: list[str] = []
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidates.append(str(Path(java_home) / "bin" / "java"))
    on_path = shutil.which("java")
    if on_path:
        candidates.append(on_path)
    for exe in candidates:
        if not Path(exe).exists():
            continue
        try:
            out = subprocess.run([exe, "-version"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        text = (out.stderr or out.stdout).strip()
        major = parse_java_major(text)
        if major is None:
            continue
        if major not in supported:
            raise EnvironmentProblem(
                f"Spark {version} with Iceberg needs Java {' or '.join(map(str, supported))}, but {exe} is Java {major}. "
                "Install Java 17 (Debian/Ubuntu: `apt-get install -y openjdk-17-jre-headless`; "
                "macOS: `brew install openjdk@17`) and point JAVA_HOME at it."
            )
        return JavaInfo(executable=exe, major=major, version_text=text.splitlines()[0])
    raise EnvironmentProblem(
        "No Java runtime found (checked JAVA_HOME and PATH). Spark needs Java 17: "
        "install it (Debian/Ubuntu: `apt-get install -y openjdk-17-jre-headless`; "
        "macOS: `brew install openjdk@17`; conda: `conda install openjdk=17`) "
        "and make sure `java -version` works or JAVA_HOME is set."
    )


def parse_java_major(version_output: str) -> int | None:
    """'openjdk version "17.0.15"' -> 17; 'java version "1.8.0_392"' -> 8."""
    m = re.search(r'version "(\d+)(?:\.(\d+))?', version_output)
    if not m:
        return None
    first = int(m.group(1))
    if first == 1 and m.group(2):
        return int(m.group(2))
    return first


def check_writable(directory: str | os.PathLike[str]) -> Path:
    """Create ``directory`` if needed and prove we can write there, or say why not."""
    path = Path(directory).expanduser()
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".icebook-write-check-"):
            pass
    except OSError as exc:
        raise EnvironmentProblem(
            f"The warehouse path {path} is not writable ({exc.strerror or exc}). "
            "Choose another with ICEBOOK_HOME=/some/dir or warehouse=..."
        ) from None
    return path


def _catalog_conf(name: str, warehouse: str) -> dict[str, str]:
    prefix = f"spark.sql.catalog.{name}"
    return {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "hadoop",
        f"{prefix}.warehouse": warehouse,
    }


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def get_session(
    *,
    warehouse: str | os.PathLike[str] | None = None,
    catalog: str = DEFAULT_CATALOG,
    master: str | None = None,
    jar: str | os.PathLike[str] | list[str | os.PathLike[str]] | None = None,
    packages: list[str] | None = None,
    spark: Any = None,
    conf: dict[str, str] | None = None,
    progress: bool = True,
) -> SparkSession:
    """Return the one configured SparkSession, creating it on first use.

    - ``spark``: attach an existing session (a cluster, Spark Connect); icebook then only adds
      its catalog at runtime.
    - ``packages``: Maven coordinates instead of icebook's (``spark_jars.Stack``: the Iceberg runtime that
      matches the installed pyspark, the cloud bundles and the JDBC drivers); your ``spark.jars.packages``,
      ``spark.jars.repositories``, ``spark.jars.ivy`` and ``spark.jars.ivySettings`` (in ``conf``,
      ``spark-defaults.conf`` or ``PYSPARK_SUBMIT_ARGS``) are honoured.
    - ``jar``: jar paths instead of any resolution (an air-gapped machine without a local repository).
    - ``warehouse``: root of the Hadoop catalog named ``catalog``; catalogs added later go
      through ``add_catalog``.
    """
    global _session
    with _lock:
        if spark is not None:
            _session = spark
        if _session is None:
            _session = _start(master=master, jar=jar, packages=packages, conf=conf or {}, progress=progress)
        if warehouse is not None:
            add_catalog(catalog, warehouse)
        return _session


def add_catalog(name: str, warehouse: str | os.PathLike[str]) -> None:
    """Add (or re-point) a Hadoop catalog on the running session; a runtime setting."""
    if _session is None:
        raise EnvironmentProblem("no Spark session yet: call icebook.spark.session() first")
    location = str(check_writable(warehouse).resolve())
    if _catalogs.get(name) == location:
        return
    for key, value in _catalog_conf(name, location).items():
        _session.conf.set(key, value)
    _catalogs[name] = location


def active_session() -> SparkSession | None:
    """The session icebook started or was given, or None; never starts one."""
    return _session


INTERNAL_CATALOG_PREFIX = "icebook_"
"""The prefix of the catalogs icebook adds for itself (writing a table opened by path, reading one on an
object store): they are no one's to name, so listings for people leave them out."""


def catalogs() -> dict[str, str]:
    """Catalog name -> warehouse location of the catalogs icebook configured."""
    return dict(_catalogs)


def user_catalogs() -> dict[str, str]:
    """``catalogs()`` without icebook's own (``INTERNAL_CATALOG_PREFIX``): the ones a person named."""
    return {name: root for name, root in _catalogs.items() if not name.startswith(INTERNAL_CATALOG_PREFIX)}


def session_running() -> bool:
    """Whether the one session has been started (or attached) in this process."""
    return _session is not None


@dataclass(frozen=True, slots=True)
class ConfiguredCatalog:
    """An Iceberg catalog a Spark session has by configuration: ``type`` as configured ("hadoop", "hive",
    "rest", ...; "" when unset), ``warehouse`` as configured, ``source`` where the setting was read."""

    name: str
    type: str
    warehouse: str
    source: str

    def local_warehouse(self) -> Path | None:
        """The warehouse as a local directory when it is a path or a ``file:`` URI, else None."""
        if not self.warehouse.startswith("file:"):
            return Path(self.warehouse).expanduser() if self.warehouse and ":" not in self.warehouse else None
        uri = urlparse(self.warehouse)
        return Path(unquote(uri.path)) if uri.netloc in ("", "localhost") and uri.path.startswith("/") else None


_ICEBERG_CATALOG_CLASSES = ("org.apache.iceberg.spark.SparkCatalog", "org.apache.iceberg.spark.SparkSessionCatalog")


def _spark_defaults_file() -> Path | None:
    """The ``spark-defaults.conf`` a session started now reads: ``$SPARK_CONF_DIR``'s, else
    ``$SPARK_HOME/conf``'s, else the installed pyspark's own conf dir (pyspark's default SPARK_HOME)."""
    directories: list[Path] = []
    if os.environ.get("SPARK_CONF_DIR"):
        directories.append(Path(os.environ["SPARK_CONF_DIR"]))
    elif os.environ.get("SPARK_HOME"):
        directories.append(Path(os.environ["SPARK_HOME"]) / "conf")
    else:
        try:
            import pyspark

            directories.append(Path(pyspark.__file__).parent / "conf")
        except ImportError:
            pass
    for directory in directories:
        if (directory / "spark-defaults.conf").is_file():
            return directory / "spark-defaults.conf"
    return None


def _startup_settings() -> list[tuple[str, str, str]]:
    """(key, value, source) of the settings a session started now begins with, later ones winning:
    ``spark-defaults.conf`` (``key value`` or ``key=value`` lines), then ``--conf`` in ``PYSPARK_SUBMIT_ARGS``."""
    found: list[tuple[str, str, str]] = []
    defaults = _spark_defaults_file()
    if defaults is not None:
        try:
            lines = defaults.read_text(errors="replace").splitlines()
        except OSError:
            lines = []
        for line in lines:
            line = line.strip()
            if line and not line.startswith("#"):
                key, *rest = re.split(r"\s*[=:\s]\s*", line, maxsplit=1)  # Java properties' separators
                found.append((key, "".join(rest).strip(), str(defaults)))
    try:
        words = shlex.split(os.environ.get("PYSPARK_SUBMIT_ARGS", ""))
    except ValueError:  # an unbalanced quote: Spark would refuse it too
        words = []
    for flag, setting in itertools.pairwise(words):
        if flag in ("--conf", "-c") and "=" in setting:
            name, value = setting.split("=", 1)
            found.append((name.strip(), value.strip(), "PYSPARK_SUBMIT_ARGS"))
    return found


def configured_catalogs() -> dict[str, ConfiguredCatalog]:
    """The Iceberg catalogs a session started now would have from Spark's configuration, without
    starting one, then the Hadoop catalogs icebook added to this process's running session (which win)."""
    classes: dict[str, str] = {}
    options: dict[tuple[str, str], str] = {}
    sources: dict[str, str] = {}
    for key, value, source in _startup_settings():
        match = re.fullmatch(r"spark\.sql\.catalog\.([^.]+)(?:\.(type|warehouse))?", key)
        if match is None:
            continue
        name, option = match.groups()
        if option is None:
            classes[name] = value
            sources[name] = source
        else:
            options[(name, option)] = value
    found = {
        name: ConfiguredCatalog(
            name=name,
            type=options.get((name, "type"), ""),
            warehouse=options.get((name, "warehouse"), ""),
            source=sources[name],
        )
        for name, cls in classes.items()
        if cls in _ICEBERG_CATALOG_CLASSES
    }
    for name, warehouse in _catalogs.items() if session_running() else ():
        found[name] = ConfiguredCatalog(name=name, type="hadoop", warehouse=warehouse, source="this session")
    return found


def catalog_configured_for_startup(name: str) -> bool:
    """Whether a session started now would know catalog ``name``: it is set in ``PYSPARK_SUBMIT_ARGS``
    or the ``spark-defaults.conf`` Spark reads (``SPARK_CONF_DIR``, ``SPARK_HOME/conf``, pyspark's own)."""
    key = f"spark.sql.catalog.{name}"
    return any(setting == key for setting, _value, _source in _startup_settings())


def _log_settings() -> dict[str, str]:
    """The driver's log4j2 configuration at ``spark_log_level`` from its first line: without one, Spark
    logs WARN lines (the native Hadoop library, the default level) before ``setLogLevel`` can run."""
    level = config.spark_log_level()
    properties = Path(tempfile.gettempdir()) / f"icebook-log4j2-v2-{level.lower()}-{os.getuid()}.properties"
    if not properties.is_file():  # written whole, then renamed: another kernel may read it at once
        partial = properties.with_name(f"{properties.name}.{os.getpid()}")
        partial.write_text(
            f"rootLogger.level = {level.lower()}\nrootLogger.appenderRef.stderr.ref = console\n"
            "appender.console.type = Console\nappender.console.name = console\nappender.console.target = SYSTEM_ERR\n"
            "appender.console.layout.type = PatternLayout\n"
            "appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex\n"
            # the shell's logger at the same level: Spark then prints no "Setting default log level" note
            f"logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer\nlogger.gateway.level = {level.lower()}\n"
            f"logger.repl.name = org.apache.spark.repl.Main\nlogger.repl.level = {level.lower()}\n"
        )
        os.replace(partial, properties)
    return {"spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={properties.as_uri()}"}


def _start(
    *,
    master: str | None,
    jar: str | os.PathLike[str] | list[str | os.PathLike[str]] | None,
    packages: list[str] | None,
    conf: dict[str, str],
    progress: bool,
) -> SparkSession:
    version = spark_jars.installed_spark_version()
    find_java(version)
    conf = dict(conf)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # PySpark picks the Python of the driver for workers only when told.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise EnvironmentProblem("PySpark is not installed: `pip install 'pyspark>=4.1,<4.2'`") from None

    builder = SparkSession.builder.appName("icebook").master(master or config.spark_master())
    startup = {key: value for key, value, _source in _startup_settings()} | conf
    own_jars = [j for j in conf.pop("spark.jars", "").split(",") if j]
    wanted: list[spark_jars.Coordinate] = []
    if jar is not None:  # jars by path: no resolution at all (an air-gapped machine)
        own_jars += [str(p) for p in spark_jars.jar_paths(jar)]
    else:
        own = (
            [spark_jars.Coordinate.parse(p) for p in packages]
            if packages
            else spark_jars.Stack.from_env().packages(version)
        )
        wanted = spark_jars.merge_packages(own, startup.get("spark.jars.packages", ""))
        conf["spark.jars.packages"] = ",".join(map(str, wanted))
    if own_jars:
        conf["spark.jars"] = ",".join(own_jars)
    settings = {
        "spark.sql.extensions": spark_jars.EXTENSIONS,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "4",
        "spark.default.parallelism": "2",
        "spark.driver.memory": config.spark_driver_memory(),
        "spark.sql.adaptive.enabled": "true",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.host": "127.0.0.1",
        # v3's GEOMETRY and GEOGRAPHY columns; a setting Spark 3.5 ignores
        "spark.sql.geospatial.enabled": "true",
    }
    settings.update(_log_settings())
    settings.update(conf)
    for key, value in settings.items():
        builder = builder.config(key, value)
    ivy = spark_jars.ivy_home(startup, version)
    total, fetched = spark_jars.announce(wanted, startup, ivy)
    started = time.monotonic()
    if progress:
        _progress(
            spark_jars.describe(fetched, total, ivy)
            if fetched
            else f"icebook: starting Spark {version} with Iceberg (about 10 s)..."
        )
    with _download_progress(ivy, total, enabled=progress and total > 0):
        try:
            session = builder.getOrCreate()
        except Exception as exc:
            raise _start_failure(exc, wanted, startup, ivy) from None
    session.sparkContext.setLogLevel(config.spark_log_level())
    if progress:
        _progress(f"icebook: Spark {session.version} ready in {time.monotonic() - started:.1f} s")
    return session


@contextmanager
def _download_progress(ivy: Path, total: int, *, enabled: bool) -> Iterator[None]:
    """A progress bar of the bytes Ivy writes into its cache while Spark starts (first start only)."""
    if not enabled:
        yield
        return
    from tqdm.auto import tqdm

    base = spark_jars.cache_size(ivy)
    done = threading.Event()
    bar = tqdm(
        total=total, unit="B", unit_scale=True, unit_divisor=1024, desc="icebook: fetching jars", file=sys.stderr
    )

    def watch() -> None:  # until the downloads are in: the JVM then starts without a bar standing still
        while bar.n < total and not done.wait(0.5):
            bar.n = min(total, max(0, spark_jars.cache_size(ivy) - base))
            bar.refresh()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
        bar.n = min(total, max(0, spark_jars.cache_size(ivy) - base))
        bar.close()


def _start_failure(
    exc: Exception, wanted: list[spark_jars.Coordinate], settings: dict[str, str], ivy: Path
) -> IcebookError:
    """Why the JVM did not start, in one line: a coordinate Ivy could not fetch (naming the repository),
    else Spark's own error in one line."""
    for coordinate in spark_jars.missing(wanted, ivy):
        return EnvironmentProblem(
            f"Spark could not fetch {coordinate}: {spark_jars.why_not_fetched(coordinate, settings)}"
        )
    return EnvironmentProblem(f"Spark did not start: {one_line(exc)}")
