"""Opening a table and its first view import only what they use: a new process shows a table without
pandas, pyarrow.compute, polars, an analysis, an engine or a decoder (the warm start stays short)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

HEAVY = (
    "pandas",
    "polars",
    "pyarrow.compute",
    "pyspark",
    "icebook.analysis.scan.planner",
    "icebook.analysis.history.changes",
    "icebook.analysis.history.timelapse",
    "icebook.analysis.maintenance.health",
    "icebook.analysis.store.manifests",
    "icebook.engines.spark_engine",
    "icebook.io.worker_pool",
)

PROGRAM = """
import json, sys
{shell}
import icebook
table = icebook.open(sys.argv[1])
shown = {show}
print(json.dumps({{"shown": len(shown), "heavy": [m for m in sys.argv[2:] if m in sys.modules]}}))
"""


def _run(location: Path, shell: str, show: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    program = PROGRAM.format(shell=shell, show=show)
    done = subprocess.run(
        [sys.executable, "-c", program, str(location), *HEAVY], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_opening_and_showing_a_table_imports_nothing_heavy(scenario_locations: dict[str, Path]) -> None:
    result = _run(scenario_locations["events"], "", "table._repr_html_()")
    assert result["shown"] > 0 and result["heavy"] == []


def test_in_ipython_too(scenario_locations: dict[str, Path]) -> None:
    shell = "from IPython.core.interactiveshell import InteractiveShell\nip = InteractiveShell.instance()"
    result = _run(scenario_locations["events"], shell, "ip.display_formatter.format(table)[0]['text/html']")
    assert result["shown"] > 0 and result["heavy"] == []


def test_what_is_deferred_still_loads_when_used(scenario_locations: dict[str, Path]) -> None:
    result = _run(scenario_locations["events"], "", "table.inspect.files().to_string() + repr(table.lineage())")
    assert result["shown"] > 0 and {"pandas", "icebook.analysis.store.manifests"} <= set(result["heavy"])


def test_a_warm_listing_decodes_nothing(scenario_locations: dict[str, Path], tmp_path: Path) -> None:
    """A new process listing a table whose listing is in the disk cache reads no manifest list or manifest:
    it imports no Avro decoder and starts no decode worker. Its Arrow form imports no pandas either, nor the
    decoders' modules and their worker pool (the warm start: ``benchmarks/warm_start.py``)."""
    program = """
import json, sys
import icebook
table = icebook.open(sys.argv[1])
if sys.argv[2] == "frame":
    from icebook.io.worker_pool import POOL
    rows, workers = len(table.inspect.files()), POOL.started
else:
    rows, workers = sum(batch.num_rows for batch in table.inspect.batches.files()), 0
heavy = ("fastavro", "polars", "pandas", "icebook.io.avro_decode", "icebook.io.avro_list", "icebook.io.worker_pool")
print(json.dumps({"rows": rows, "heavy": [m for m in heavy if m in sys.modules], "workers": workers}))
"""
    env = {
        **os.environ,
        "PYTHONPATH": str(Path(__file__).resolve().parents[1]),
        "ICEBOOK_HOME": str(tmp_path),
        "ICEBOOK_MANIFEST_CACHE": "on",
    }
    runs = []
    for form in ("frame", "frame", "batches"):  # the first fills the cache
        done = subprocess.run(
            [sys.executable, "-c", program, str(scenario_locations["events"]), form],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    cold, warm, arrow = runs
    assert cold["rows"] == warm["rows"] > 0 and cold["workers"] > 0
    assert warm == {"rows": cold["rows"], "heavy": ["pandas", "icebook.io.worker_pool"], "workers": 0}
    assert arrow == {"rows": cold["rows"], "heavy": [], "workers": 0}
