"""Every ``ICEBOOK_*`` environment variable icebook reads, read here, under one policy.

Unset or blank means the default. Any other value must be one the variable can use; if not, the read raises
``ConfigError`` naming the variable and the value (``environment variable ICEBOOK_X='...': ...``). Nothing
falls back to the default silently or passes a bad value on.

Each variable is read when it is needed, not at import, so a bad value stops only what uses it. The readers
(``path``, ``switch``, ``whole_number``, ``seconds``, ``choice``, ``memory``, ``version``, ``text``) are the vocabulary:
a new variable is one small function below built on one of them, and is listed in ``VARIABLES``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from icebook.errors import ConfigError

MANIFEST_CACHE_MB = 4096
DECODE_TIMEOUT_SECONDS = 20.0
DECODE_WORKERS_AT_MOST = 4
LISTING_WARN_ROWS = 5_000_000
LOG_LEVELS = ("OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL")
SPARK_LOG_LEVEL = "ERROR"
SPARK_MASTER = "local[2]"
SPARK_DRIVER_MEMORY = "3g"

VARIABLES: dict[str, str] = {
    "ICEBOOK_HOME": "where icebook keeps caches and built warehouses (default ~/.cache/icebook)",
    "ICEBOOK_DEMO_WAREHOUSE": "a built scenario warehouse to use as the demo warehouse",
    "ICEBOOK_MANIFEST_CACHE": "on or off: the disk cache of decoded manifests (default on)",
    "ICEBOOK_MANIFEST_CACHE_MB": f"the manifest cache's size cap in MiB (default {MANIFEST_CACHE_MB})",
    "ICEBOOK_DECODE_TIMEOUT": f"seconds a decode may take besides its per-MiB allowance (default {DECODE_TIMEOUT_SECONDS:g})",
    "ICEBOOK_DECODE_WORKERS": f"decoder processes at most (default the CPU count, at most {DECODE_WORKERS_AT_MOST})",
    "ICEBOOK_LISTING_WARN_ROWS": f"rows above which a listing warns before it is built (default {LISTING_WARN_ROWS:,})",
    "ICEBOOK_SPARK_LOG": f"Spark's own log level, one of {', '.join(LOG_LEVELS)} (default {SPARK_LOG_LEVEL})",
    "ICEBOOK_SPARK_MASTER": f"the master of the Spark session icebook starts (default {SPARK_MASTER})",
    "ICEBOOK_SPARK_DRIVER_MEMORY": f"the driver memory of the Spark session icebook starts (default {SPARK_DRIVER_MEMORY})",
    "ICEBOOK_ICEBERG_VERSION": "the version of the Iceberg runtime Spark is given",
    "ICEBOOK_ICEBERG_AWS_BUNDLE": "the version of Iceberg's AWS bundle Spark is given, or none",
    "ICEBOOK_ICEBERG_GCP_BUNDLE": "the version of Iceberg's GCP bundle Spark is given, or none",
    "ICEBOOK_ICEBERG_AZURE_BUNDLE": "the version of Iceberg's Azure bundle Spark is given, or none",
}
"""Name -> what it sets: every variable this module reads."""

_ON = frozenset({"1", "on", "true", "yes"})
_OFF = frozenset({"0", "off", "false", "no"})
_BUNDLES = {
    "aws": "ICEBOOK_ICEBERG_AWS_BUNDLE",
    "gcp": "ICEBOOK_ICEBERG_GCP_BUNDLE",
    "azure": "ICEBOOK_ICEBERG_AZURE_BUNDLE",
}
_VERSION = re.compile(r"[0-9]+(\.[0-9]+){1,3}([.-][A-Za-z0-9.]+)?")
_MEMORY = re.compile(r"[1-9][0-9]*[kmgt]?", re.IGNORECASE)


def _raw(name: str) -> str | None:
    """The variable's value, stripped; None when it is unset or blank."""
    value = os.environ.get(name)
    return value.strip() if value is not None and value.strip() else None


# ---------------------------------------------------------------------------------------------- readers


def text(name: str, default: str) -> str:
    """Free text (e.g. a Spark master URL)."""
    return _raw(name) or default


def path(name: str) -> Path | None:
    """A path, ``~`` expanded; None when unset."""
    raw = _raw(name)
    return Path(raw).expanduser() if raw is not None else None


def switch(name: str, default: bool) -> bool:
    """on/off, true/false, yes/no, 1/0 (any case)."""
    raw = _raw(name)
    if raw is None:
        return default
    word = raw.lower()
    if word in _ON or word in _OFF:
        return word in _ON
    raise ConfigError(name, raw, "expected on or off (also true/false, yes/no, 1/0)")


def whole_number(name: str, default: int, *, minimum: int = 0, unit: str = "") -> int:
    """A whole number, at least ``minimum``."""
    raw = _raw(name)
    if raw is None:
        return default
    what = f"a whole number of {unit}" if unit else "a whole number"
    if not re.fullmatch(r"[+-]?[0-9]+", raw):
        raise ConfigError(name, raw, f"expected {what}")
    value = int(raw)
    if value < minimum:
        raise ConfigError(name, raw, f"expected {what}, at least {minimum}")
    return value


def seconds(name: str, default: float) -> float:
    """A positive, finite number of seconds."""
    raw = _raw(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(name, raw, "expected a number of seconds") from None
    if not 0 < value < float("inf"):
        raise ConfigError(name, raw, "expected a number of seconds above 0")
    return value


def choice(name: str, default: str, choices: Iterable[str]) -> str:
    """One of ``choices`` (any case), upper-cased."""
    raw = _raw(name)
    if raw is None:
        return default
    allowed = tuple(choices)
    if raw.upper() not in allowed:
        raise ConfigError(name, raw, f"expected one of {', '.join(allowed)}")
    return raw.upper()


def memory(name: str, default: str) -> str:
    """A JVM memory size: a whole number with an optional k, m, g or t (``512m``, ``3g``)."""
    raw = _raw(name)
    if raw is None:
        return default
    if not _MEMORY.fullmatch(raw):
        raise ConfigError(name, raw, "expected a memory size such as 512m or 3g")
    return raw.lower()


def version(name: str, default: str | None, *, optional: bool = False) -> str | None:
    """A version such as ``1.12.0``; when ``optional``, ``none`` too (None: leave the artifact out)."""
    raw = _raw(name)
    if raw is None:
        return default
    if optional and raw.lower() == "none":
        return None
    if not _VERSION.fullmatch(raw):
        raise ConfigError(name, raw, "expected a version such as 1.12.0" + (", or none" if optional else ""))
    return raw


# ---------------------------------------------------------------------------------------------- variables


def icebook_home() -> Path:
    """Where icebook keeps caches and built warehouses: ``$ICEBOOK_HOME``, else ``~/.cache/icebook``."""
    return path("ICEBOOK_HOME") or Path.home() / ".cache" / "icebook"


def demo_warehouse() -> Path | None:
    """``$ICEBOOK_DEMO_WAREHOUSE``: a built scenario warehouse used as the demo one (the test suite points it
    at its own); None when unset. That it holds a finished build is checked where it is used."""
    return path("ICEBOOK_DEMO_WAREHOUSE")


def manifest_cache_enabled() -> bool:
    return switch("ICEBOOK_MANIFEST_CACHE", True)


def manifest_cache_max_mb() -> int:
    return whole_number("ICEBOOK_MANIFEST_CACHE_MB", MANIFEST_CACHE_MB, unit="MiB")


def decode_timeout() -> float:
    """Seconds a decode may take before its per-MiB allowance."""
    return seconds("ICEBOOK_DECODE_TIMEOUT", DECODE_TIMEOUT_SECONDS)


def decode_workers() -> int:
    """Decoder processes at most: ``ICEBOOK_DECODE_WORKERS``, else the CPU count up to 4."""
    return whole_number(
        "ICEBOOK_DECODE_WORKERS", min(DECODE_WORKERS_AT_MOST, os.cpu_count() or 1), minimum=1, unit="processes"
    )


def listing_warn_rows() -> int:
    """Listings of more rows than this warn before they are built as a DataFrame."""
    return whole_number("ICEBOOK_LISTING_WARN_ROWS", LISTING_WARN_ROWS, unit="rows")


def spark_log_level() -> str:
    """Spark's own log level: ``ICEBOOK_SPARK_LOG`` (e.g. WARN, INFO) when asked, else ERROR."""
    return choice("ICEBOOK_SPARK_LOG", SPARK_LOG_LEVEL, LOG_LEVELS)


def spark_master() -> str:
    return text("ICEBOOK_SPARK_MASTER", SPARK_MASTER)


def spark_driver_memory() -> str:
    return memory("ICEBOOK_SPARK_DRIVER_MEMORY", SPARK_DRIVER_MEMORY)


def iceberg_version(default: str) -> str:
    """The Iceberg runtime's version: ``ICEBOOK_ICEBERG_VERSION``, else ``default`` (``engines/spark_jars.py``
    is the home of the defaults)."""
    return version("ICEBOOK_ICEBERG_VERSION", default) or default


def iceberg_bundle(cloud: str, default: str | None) -> str | None:
    """The version of Iceberg's bundle for ``cloud`` (aws, gcp, azure): ``ICEBOOK_ICEBERG_<CLOUD>_BUNDLE``,
    else ``default``; None when set to ``none`` (the bundle left out)."""
    return version(_BUNDLES[cloud], default, optional=True)
