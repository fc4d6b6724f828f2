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
from dataclasses import dataclass
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlparse

from icebook.engines.spark_storage import installed_jars
from icebook.errors import EnvironmentProblem

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

JAR_PACKAGE = "snowpark-connect-deps-iceberg"
JAR_PACKAGE_VERSION = "1.0.2"
ICEBERG_VERSION = "1.10.2"
RUNTIME_JAR = f"iceberg-spark-runtime-3.5_2.12-{ICEBERG_VERSION}.jar"
DEFAULT_CATALOG = "lake"
SUPPORTED_JAVA = (8, 11, 17)

_lock = threading.Lock()
_session: SparkSession | None = None
_catalogs: dict[str, str] = {}


@dataclass(frozen=True, slots=True)
class JavaInfo:
    executable: str
    major: int
    version_text: str


def find_java() -> JavaInfo:
    """Locate ``java`` (JAVA_HOME first, then PATH) and read its major version.

    Raises EnvironmentProblem with the fix when there is none, or the wrong one.
    """
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
        if major not in SUPPORTED_JAVA:
            raise EnvironmentProblem(
                f"Spark 3.5 needs Java 17 (8 and 11 also work), but {exe} is Java {major}. "
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


def iceberg_runtime_jar() -> Path:
    """Path of the Iceberg 1.10.2 Spark 3.5 (Scala 2.12) runtime jar from the pinned PyPI package."""
    try:
        installed = importlib_metadata.version(JAR_PACKAGE)
    except importlib_metadata.PackageNotFoundError:
        raise EnvironmentProblem(
            f"The Iceberg runtime jar comes from the PyPI package {JAR_PACKAGE}=={JAR_PACKAGE_VERSION}, "
            f"which is not installed. Run `pip install {JAR_PACKAGE}=={JAR_PACKAGE_VERSION}`, or pass your own "
            "jar with icebook.spark.session(jar=...) or Maven coordinates with packages=[...]."
        ) from None
    if installed != JAR_PACKAGE_VERSION:
        raise EnvironmentProblem(
            f"{JAR_PACKAGE} {installed} is installed but icebook needs exactly {JAR_PACKAGE_VERSION} "
            "(1.0.3's jar lacks the shaded Jackson classes and fails on CREATE TABLE with "
            f"NoClassDefFoundError). Run `pip install {JAR_PACKAGE}=={JAR_PACKAGE_VERSION}`."
        )
    import snowpark_connect_deps_iceberg as pkg

    jar = Path(pkg.__file__).parent / "jars" / RUNTIME_JAR
    if not jar.is_file():
        raise EnvironmentProblem(f"{JAR_PACKAGE} {installed} is installed but {jar} is missing; reinstall it.")
    return jar


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
    jar: str | os.PathLike[str] | None = None,
    packages: list[str] | None = None,
    spark: Any = None,
    conf: dict[str, str] | None = None,
    progress: bool = True,
) -> SparkSession:
    """Return the one configured SparkSession, creating it on first use.

    - ``spark``: attach an existing session (a cluster, Spark Connect); icebook then only adds
      its catalog at runtime.
    - ``jar`` / ``packages``: your own Iceberg runtime jar or ``spark.jars.packages`` coordinates
      instead of the pinned PyPI jar.
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


def catalogs() -> dict[str, str]:
    """Catalog name -> warehouse location of the catalogs icebook configured."""
    return dict(_catalogs)


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


def spark_log_level() -> str:
    """The level of Spark's own log: ``ICEBOOK_SPARK_LOG`` (e.g. WARN, INFO) when asked, else ERROR."""
    return os.environ.get("ICEBOOK_SPARK_LOG", "").strip().upper() or "ERROR"


def _log_settings() -> dict[str, str]:
    """The driver's log4j2 configuration at ``spark_log_level`` from its first line: without one, Spark
    logs WARN lines (the native Hadoop library, the default level) before ``setLogLevel`` can run."""
    level = spark_log_level()
    config = Path(tempfile.gettempdir()) / f"icebook-log4j2-v2-{level.lower()}-{os.getuid()}.properties"
    if not config.is_file():  # written whole, then renamed: another kernel may read it at once
        partial = config.with_name(f"{config.name}.{os.getpid()}")
        partial.write_text(
            f"rootLogger.level = {level.lower()}\nrootLogger.appenderRef.stderr.ref = console\n"
            "appender.console.type = Console\nappender.console.name = console\nappender.console.target = SYSTEM_ERR\n"
            "appender.console.layout.type = PatternLayout\n"
            "appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex\n"
            # the shell's logger at the same level: Spark then prints no "Setting default log level" note
            f"logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer\nlogger.gateway.level = {level.lower()}\n"
            f"logger.repl.name = org.apache.spark.repl.Main\nlogger.repl.level = {level.lower()}\n"
        )
        os.replace(partial, config)
    return {"spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={config.as_uri()}"}


def _start(
    *,
    master: str | None,
    jar: str | os.PathLike[str] | None,
    packages: list[str] | None,
    conf: dict[str, str],
    progress: bool,
) -> SparkSession:
    find_java()
    conf = dict(conf)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # PySpark picks the Python of the driver for workers only when told.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise EnvironmentProblem("PySpark is not installed: `pip install 'pyspark>=3.5.8,<4'`") from None

    builder = SparkSession.builder.appName("icebook").master(
        master or os.environ.get("ICEBOOK_SPARK_MASTER", "local[2]")
    )
    # The object-store connectors and JDBC drivers installed from PyPI go on the classpath now: it is
    # fixed once the JVM starts (spark_storage says which packages ship them).
    jars = installed_jars()
    if packages:
        builder = builder.config("spark.jars.packages", ",".join(packages))
    else:
        jar_path = Path(jar) if jar else iceberg_runtime_jar()
        if not jar_path.is_file():
            raise EnvironmentProblem(f"Iceberg runtime jar not found: {jar_path}")
        jars.insert(0, str(jar_path))
    own_jars = conf.pop("spark.jars", "")
    if own_jars or jars:
        builder = builder.config("spark.jars", ",".join(j for j in (own_jars, *jars) if j))
    settings = {
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.shuffle.partitions": "4",
        "spark.default.parallelism": "2",
        "spark.driver.memory": os.environ.get("ICEBOOK_SPARK_DRIVER_MEMORY", "3g"),
        "spark.sql.adaptive.enabled": "true",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.driver.host": "127.0.0.1",
    }
    settings.update(_log_settings())
    settings.update(conf)
    for key, value in settings.items():
        builder = builder.config(key, value)
    started = time.monotonic()
    if progress:
        _progress("icebook: starting Spark with Iceberg (about 10 s)...")
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel(spark_log_level())
    if progress:
        _progress(f"icebook: Spark {session.version} ready in {time.monotonic() - started:.1f} s")
    return session
