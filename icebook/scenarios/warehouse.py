"""Build scenario tables into a warehouse directory, once, cached by a hash of the scenario code.

Hadoop-catalog tables record absolute paths, so a warehouse is built in place: a marker file
written last says the build finished; a directory without it is a broken build and is rebuilt.
A file lock keeps two processes (a test run and a notebook) from building the same one at once.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from icebook import config
from icebook.engines.spark_jars import ICEBERG_VERSION, installed_spark_version
from icebook.engines.spark_session import check_writable, get_session
from icebook.errors import ConfigError, EngineError, NotFound
from icebook.io.progress import progress_bar
from icebook.scenarios import SCENARIOS, Scenario

MARKER = ".icebook-built.json"
WAREHOUSE_KINDS = ("demo", "test")
"""The warehouses people build by name: ``demo`` for people, ``test`` for the test suite."""
CATALOG = "lake"
NAMESPACE = "db"


def source_hash(folder: Path, version: str) -> str:
    """Hash of ``version`` and the Python sources directly in ``folder`` (names and bytes), for a build's name."""
    digest = hashlib.sha256(version.encode())
    for source in sorted(folder.glob("*.py")):
        digest.update(source.name.encode())
        digest.update(source.read_bytes())
    return digest.hexdigest()[:12]


def scenario_hash() -> str:
    """Hash of the scenario sources and the Iceberg version: a change to either rebuilds."""
    return source_hash(Path(__file__).parent, ICEBERG_VERSION)


def warehouse_path(kind: str = "demo") -> Path:
    """The cached warehouse for ``kind`` ("demo" for people, "test" for the test suite)."""
    return config.icebook_home() / f"{kind}-warehouse-{scenario_hash()}"


def table_location(warehouse: Path, name: str) -> Path:
    return warehouse / NAMESPACE / name


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def read_marker(warehouse: Path) -> dict[str, Any] | None:
    marker = warehouse / MARKER
    if not marker.is_file():
        return None
    try:
        data: dict[str, Any] = json.loads(marker.read_text())
    except (OSError, ValueError):
        return None
    return data


def buildable(spark_version: str | None = None) -> list[str]:
    """The scenarios the installed Spark (or ``spark_version``) can build, in their order."""
    version = spark_version or installed_spark_version()
    return [name for name, scenario in SCENARIOS.items() if scenario.builds_on(version)]


def ensure_warehouse(kind: str = "demo", names: Iterable[str] | None = None, *, progress: bool = True) -> Path:
    """Return a warehouse holding the named scenarios (by default all the installed Spark can build),
    building it if needed."""
    warehouse = warehouse_path(kind)
    check_writable(warehouse.parent)
    return cached_build(
        warehouse,
        names or buildable(),
        SCENARIOS,
        lambda root, scenarios: build_warehouse(root, scenarios, progress=progress),
        what="scenario",
        kind=kind,
    )


def cached_build(
    root: Path,
    names: Iterable[str] | None,
    scenarios: Mapping[str, Scenario],
    build: Callable[[Path, list[Scenario]], object],
    *,
    what: str,
    kind: str,
) -> Path:
    """``root`` once it holds the named ``scenarios`` (all by default). A build whose marker lacks one is
    rebuilt whole by ``build``, under a file lock; then builds of ``kind`` from older code are removed."""
    wanted = sorted(names or scenarios)
    unknown = [n for n in wanted if n not in scenarios]
    if unknown:
        raise NotFound(f"unknown {what} {unknown[0]!r}", available=sorted(scenarios))
    with _locked(root):
        marker = read_marker(root)
        if marker and set(wanted) <= set(marker.get("scenarios", {})):
            return root
        if root.exists():
            shutil.rmtree(root)
        build(root, [scenarios[n] for n in wanted])
    _prune_stale(kind, keep=root)
    return root


def _prune_stale(kind: str, *, keep: Path) -> None:
    """Remove warehouses of ``kind`` built from older scenario code (they are caches, never shared)."""
    for old in keep.parent.glob(f"{kind}-warehouse-*"):
        if old != keep and old.is_dir() and old.name != keep.name:
            shutil.rmtree(old, ignore_errors=True)
            old.with_name(old.name + ".lock").unlink(missing_ok=True)


def build_warehouse(warehouse: Path, scenarios: list[Scenario], *, progress: bool = True) -> dict[str, Any]:
    """Run every step of every scenario with Spark into ``warehouse``; write the marker last."""
    check_writable(warehouse)
    spark = get_session(warehouse=warehouse, catalog=CATALOG, progress=progress)
    total = sum(len(s.steps) for s in scenarios)
    started = time.monotonic()
    record: dict[str, Any] = {"hash": scenario_hash(), "iceberg": ICEBERG_VERSION, "scenarios": {}}
    bar = _progress_bar(total, progress)
    try:
        for scenario in scenarios:
            spark.sql(f"DROP TABLE IF EXISTS {scenario.table}")
            steps: list[dict[str, str]] = []
            for step in scenario.steps:
                bar.set_description(f"{scenario.name}: {step.narrative[:60]}")
                outcome = None
                try:
                    if step.action is not None:
                        outcome = step.action(spark, scenario.table)
                        # the action committed through its own handle: Spark's cached table must not be reused
                        if scenario.spark_reads:
                            spark.sql(f"REFRESH TABLE {scenario.table}")
                    else:
                        spark.sql(scenario.sql(step))
                except Exception as exc:  # Spark raises many exception types; report the step
                    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    raise EngineError(
                        f"scenario {scenario.name}, step {len(steps) + 1} ({step.narrative}): {first}"
                    ) from exc
                done = scenario.sql(step) if step.action is None else f"python: {step.action.__name__}"
                steps.append({"narrative": step.narrative, "sql": done})
                if outcome:
                    steps[-1]["outcome"] = outcome
                bar.update(1)
            record["scenarios"][scenario.name] = {
                "version": scenario.version,
                "title": scenario.title,
                "table": scenario.table,
                "location": str(table_location(warehouse, scenario.name)),
                "steps": steps,
            }
    finally:
        bar.close()
    record["seconds"] = round(time.monotonic() - started, 1)
    (warehouse / MARKER).write_text(json.dumps(record, indent=2))
    return record


def _progress_bar(total: int, enabled: bool) -> Any:
    """A bar of scenario steps, shown only when ``enabled`` and someone watches (``progress_wanted``)."""
    bar = progress_bar(total, unit="step") if enabled else None
    if bar is None:
        from tqdm.auto import tqdm

        return tqdm(total=total, disable=True)
    return bar


def demo_warehouse() -> Path:
    """The demo warehouse: ``$ICEBOOK_DEMO_WAREHOUSE`` when set (the test suite points it at its own; it must
    name a finished build), else the cached demo build, made on first use."""
    override = config.demo_warehouse()
    if override is None:
        return ensure_warehouse("demo")
    if read_marker(override) is None:
        raise ConfigError(
            "ICEBOOK_DEMO_WAREHOUSE", str(override), f"not a built scenario warehouse (no {MARKER} in it)"
        )
    return override


def demo_table(name: str = "events") -> str:
    """Location of a demo scenario table, building the demo warehouse on first use."""
    if name not in SCENARIOS:
        raise NotFound(f"unknown demo table {name!r}", available=sorted(SCENARIOS))
    return str(table_location(demo_warehouse(), name))


def built_steps(name: str) -> list[dict[str, str]]:
    """The steps of demo scenario ``name`` as they were built: ``narrative``, ``sql`` and, for steps
    that report one, ``outcome`` (e.g. the error a losing writer got from the Java API)."""
    marker = read_marker(demo_warehouse()) or {}
    built = marker.get("scenarios", {}).get(name)
    if built is None:
        raise NotFound(f"scenario {name!r} is not in the demo warehouse", available=sorted(marker.get("scenarios", {})))
    steps: list[dict[str, str]] = built["steps"]
    return steps


def main(argv: list[str] | None = None) -> int:
    """``python -m icebook.scenarios.warehouse [demo|test]``: build a warehouse and print its path."""
    parser = argparse.ArgumentParser(prog="python -m icebook.scenarios.warehouse", description="Build a warehouse.")
    parser.add_argument("kind", nargs="?", default="demo", choices=WAREHOUSE_KINDS, help="which (default: demo)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    print(ensure_warehouse(args.kind))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
