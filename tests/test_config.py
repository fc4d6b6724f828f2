"""``ICEBOOK_*`` environment variables: read in one module, under one policy (unset or blank: the default;
a value the variable cannot use: one ``ConfigError`` naming the variable and the value)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from icebook import config
from icebook.analysis.tables.listing_size import warn_rows
from icebook.errors import ConfigError, IcebookError
from icebook.io.manifest_cache import ManifestCache
from icebook.io.worker_pool import SETTINGS, decode_timeout
from icebook.scenarios.warehouse import demo_warehouse

PACKAGE = Path(__file__).resolve().parents[1] / "icebook"
_NAME = re.compile(r"ICEBOOK_[A-Z0-9_]+")
NOT_YET_MOVED: set[str] = set()
"""Modules that still read variables of their own; each is to read them through ``icebook.config``."""


def _variables_read(path: Path) -> set[str]:
    """The ``ICEBOOK_*`` names a module that reads the environment holds as string values (not in prose)."""
    source = path.read_text()
    if "environ" not in source and "getenv" not in source:
        return set()
    constants = (n.value for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant))
    return {c for c in constants if isinstance(c, str) and _NAME.fullmatch(c)}


def test_only_the_config_module_reads_icebook_variables() -> None:
    readers = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        names = _variables_read(path)
        if names and path.name != "config.py":
            readers[path.relative_to(PACKAGE).as_posix()] = names
    assert set(readers) <= NOT_YET_MOVED, readers
    assert _variables_read(PACKAGE / "config.py") == set(config.VARIABLES)


def test_every_listed_variable_has_its_reader() -> None:
    source = (PACKAGE / "config.py").read_text()
    for name in config.VARIABLES:
        assert source.count(f'"{name}"') >= 2, f"{name} is listed but never read"


BAD_VALUES = [
    ("ICEBOOK_MANIFEST_CACHE", "sometimes", config.manifest_cache_enabled, "expected on or off"),
    ("ICEBOOK_MANIFEST_CACHE_MB", "4 GB", config.manifest_cache_max_mb, "expected a whole number of MiB"),
    ("ICEBOOK_MANIFEST_CACHE_MB", "-1", config.manifest_cache_max_mb, "at least 0"),
    ("ICEBOOK_DECODE_TIMEOUT", "soon", config.decode_timeout, "expected a number of seconds"),
    ("ICEBOOK_DECODE_TIMEOUT", "0", config.decode_timeout, "above 0"),
    ("ICEBOOK_DECODE_TIMEOUT", "inf", config.decode_timeout, "above 0"),
    ("ICEBOOK_DECODE_WORKERS", "2.5", config.decode_workers, "expected a whole number of processes"),
    ("ICEBOOK_DECODE_WORKERS", "0", config.decode_workers, "at least 1"),
    ("ICEBOOK_LISTING_WARN_ROWS", "lots", config.listing_warn_rows, "expected a whole number of rows"),
    ("ICEBOOK_SPARK_LOG", "LOUD", config.spark_log_level, "expected one of OFF, FATAL, ERROR, WARN"),
    ("ICEBOOK_SPARK_DRIVER_MEMORY", "3 gigabytes", config.spark_driver_memory, "expected a memory size"),
    ("ICEBOOK_ICEBERG_VERSION", "none", lambda: config.iceberg_version("1.12.0"), "expected a version such as 1.12.0"),
    ("ICEBOOK_ICEBERG_AWS_BUNDLE", "latest; rm -rf", lambda: config.iceberg_bundle("aws", "1.12.0"), "or none"),
]


@pytest.mark.parametrize(("name", "value", "read", "problem"), BAD_VALUES, ids=[f"{b[0]}={b[1]}" for b in BAD_VALUES])
def test_a_bad_value_is_one_error_naming_the_variable_and_the_value(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, read: object, problem: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        read()  # type: ignore[operator]
    message = str(info.value)
    assert message.startswith(f"environment variable {name}={value!r}: ") and problem in message, message
    assert "\n" not in message and isinstance(info.value, IcebookError)
    assert (info.value.name, info.value.value) == (name, value)


def test_unset_or_blank_means_the_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in config.VARIABLES:
        monkeypatch.setenv(name, "  ")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config.icebook_home() == tmp_path / ".cache" / "icebook"
    assert config.demo_warehouse() is None
    assert config.manifest_cache_enabled() is True
    assert config.manifest_cache_max_mb() == config.MANIFEST_CACHE_MB
    assert config.decode_timeout() == config.DECODE_TIMEOUT_SECONDS
    assert 1 <= config.decode_workers() <= config.DECODE_WORKERS_AT_MOST
    assert config.listing_warn_rows() == config.LISTING_WARN_ROWS
    assert config.spark_log_level() == "ERROR"
    assert config.spark_master() == "local[2]"
    assert config.spark_driver_memory() == "3g"
    assert config.iceberg_version("1.12.0") == "1.12.0" and config.iceberg_bundle("gcp", "1.11.0") == "1.11.0"


def test_good_values_are_read_as_written(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    values = {
        "ICEBOOK_HOME": "~/icebook-home",
        "ICEBOOK_MANIFEST_CACHE": "OFF",
        "ICEBOOK_MANIFEST_CACHE_MB": "128",
        "ICEBOOK_DECODE_TIMEOUT": "2.5",
        "ICEBOOK_DECODE_WORKERS": "3",
        "ICEBOOK_LISTING_WARN_ROWS": "0",
        "ICEBOOK_SPARK_LOG": "warn",
        "ICEBOOK_SPARK_MASTER": "spark://127.0.0.1:7077",
        "ICEBOOK_SPARK_DRIVER_MEMORY": "512M",
        "ICEBOOK_ICEBERG_VERSION": "1.11.0",
        "ICEBOOK_ICEBERG_AZURE_BUNDLE": "None",
        "ICEBOOK_ICEBERG_GCP_BUNDLE": "1.12.0-rc1",
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert config.icebook_home() == tmp_path / "icebook-home"
    assert config.manifest_cache_enabled() is False
    assert config.manifest_cache_max_mb() == 128
    assert config.decode_timeout() == 2.5 and config.decode_workers() == 3
    assert config.listing_warn_rows() == 0
    assert config.spark_log_level() == "WARN"
    assert config.spark_master() == "spark://127.0.0.1:7077"
    assert config.spark_driver_memory() == "512m"
    assert config.iceberg_version("1.12.0") == "1.11.0"
    assert config.iceberg_bundle("azure", "1.10.0") is None and config.iceberg_bundle("gcp", "1.11.0") == "1.12.0-rc1"


def test_the_users_of_each_variable_read_it_when_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ICEBOOK_HOME", str(tmp_path))
    monkeypatch.setenv("ICEBOOK_MANIFEST_CACHE_MB", "7")
    monkeypatch.setenv("ICEBOOK_MANIFEST_CACHE", "no")
    cache = ManifestCache.from_environment()
    assert (cache.root, cache.max_bytes, cache.enabled) == (tmp_path / "manifests", 7 << 20, False)
    monkeypatch.setenv("ICEBOOK_DECODE_TIMEOUT", "3")
    monkeypatch.setenv("ICEBOOK_DECODE_WORKERS", "2")
    assert (SETTINGS.base_seconds, SETTINGS.workers) == (3.0, 2)
    with decode_timeout(0.5):
        assert SETTINGS.base_seconds == 0.5
    assert SETTINGS.base_seconds == 3.0
    monkeypatch.setenv("ICEBOOK_LISTING_WARN_ROWS", "12")
    assert warn_rows() == 12
    monkeypatch.setenv("ICEBOOK_MANIFEST_CACHE", "maybe")
    with pytest.raises(ConfigError, match="ICEBOOK_MANIFEST_CACHE='maybe'"):
        ManifestCache.from_environment()


def test_a_demo_warehouse_that_is_not_built_is_an_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ICEBOOK_DEMO_WAREHOUSE", str(tmp_path))
    with pytest.raises(ConfigError) as info:
        demo_warehouse()
    assert str(info.value) == (
        f"environment variable ICEBOOK_DEMO_WAREHOUSE={str(tmp_path)!r}: "
        "not a built scenario warehouse (no .icebook-built.json in it)"
    )
