"""``icebook.spark.session(master="spark://...")`` against a real standalone Spark cluster.

The test starts a master and a worker from the installed PySpark (``bin/spark-class
org.apache.spark.deploy.master.Master`` / ``...worker.Worker``) on free ports of 127.0.0.1, runs
a time-travel read, a branch query and the metadata aggregates (``engine="spark"``: ``partitions``
at a snapshot and a branch, the health report's file measures of that table and of one with delete
files) through icebook in a separate Python
process (one SparkSession per process), and proves they ran on the worker's executor: the executor
fetched the Iceberg runtime jar into its application directory and logged the tasks it ran, among
them tasks of the aggregates' stages. The daemons are always stopped.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyspark
import pytest

from icebook.engines.spark_jars import Stack, installed_spark_version

pytestmark = [pytest.mark.spark, pytest.mark.services]

HERE = Path(__file__).parent


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _daemon(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
    with open(log, "wb") as out:
        return subprocess.Popen(
            [str(spark_class), *args], stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )


def _wait_for_text(log: Path, text: str, proc: subprocess.Popen[bytes], seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        content = log.read_text(errors="replace") if log.exists() else ""
        if text in content:
            return
        if proc.poll() is not None:
            raise AssertionError(f"{log.name}: daemon exited ({proc.returncode}):\n{content[-3000:]}")
        time.sleep(0.5)
    raise AssertionError(f"{log.name}: no {text!r} within {seconds:.0f} s:\n{log.read_text(errors='replace')[-3000:]}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    base = tmp_path_factory.mktemp("spark-cluster")
    work = base / "work"
    work.mkdir()
    master_port, master_ui, worker_port, worker_ui = _free_ports(4)
    env = {
        **os.environ,
        "SPARK_HOME": str(Path(pyspark.__file__).parent),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(base),
        "SPARK_DAEMON_MEMORY": "512m",
    }
    master_url = f"spark://127.0.0.1:{master_port}"
    master = _daemon(
        ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(master_port),
         "--webui-port", str(master_ui)],
        base / "master.log",
        env,
    )  # fmt: skip
    worker = None
    try:
        _wait_for_text(base / "master.log", "I have been elected leader", master)
        worker = _daemon(
            ["org.apache.spark.deploy.worker.Worker", master_url, "--host", "127.0.0.1", "--port", str(worker_port),
             "--webui-port", str(worker_ui), "--cores", "1", "--memory", "1g", "--work-dir", str(work)],
            base / "worker.log",
            env,
        )  # fmt: skip
        _wait_for_text(base / "worker.log", "Successfully registered with master", worker)
        yield master_url, work
    finally:
        if worker is not None:
            _stop(worker)
        _stop(master)


def test_time_travel_and_branch_query_run_on_the_clusters_executor(
    cluster: tuple[str, Path], scenario_locations: dict[str, Path], tmp_path: Path
) -> None:
    master_url, work = cluster
    out = tmp_path / "result.json"
    env = {**os.environ, "ICEBOOK_SPARK_DRIVER_MEMORY": "1g", "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    log = tmp_path / "job.log"  # a file, not a pipe: what the job said is there to show when it overruns
    with open(log, "wb") as job_log:
        try:
            job = subprocess.run(
                [
                    sys.executable,
                    str(HERE / "_cluster_job.py"),
                    master_url,
                    str(scenario_locations["events"]),
                    "audit",
                    str(out),
                    str(scenario_locations["debt"]),
                ],
                stdout=job_log,
                stderr=subprocess.STDOUT,
                timeout=600,
                env=env,
            )
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"the job overran 600 s; it said:\n{log.read_text(errors='replace')[-6000:]}"
            ) from None
    assert job.returncode == 0, log.read_text(errors="replace")[-4000:]
    result = json.loads(out.read_text())
    assert result["master"] == master_url
    for label in ("time_travel", "branch"):
        assert result[label]["spark"] == result[label]["arrow"] and result[label]["spark"], label
        assert result[label]["jobs"], f"{label}: Spark ran no job"
    assert "device" in result["branch"]["columns"]  # the branch reads with the current schema
    assert "device" not in result["time_travel"]["columns"]  # the first snapshot's schema
    assert result["branch_sql"]["n"] == len(result["branch"]["spark"]) and result["branch_sql"]["jobs"]
    runtime = Stack.from_env().runtime(installed_spark_version()).jar_name  # as Ivy names what it resolved
    assert any(jar.endswith(runtime) for jar in result["jars"].split(",")), result["jars"]
    assert any(not e.startswith(result["driver"]) for e in result["executors"]), result["executors"]
    # The worker ran an executor for this application: it fetched the Iceberg jar and ran tasks.
    app_dir = work / result["app_id"]
    assert app_dir.is_dir(), sorted(p.name for p in work.iterdir())
    executor_dirs = [d for d in app_dir.iterdir() if d.is_dir()]
    assert executor_dirs
    fetched = [p.name for d in executor_dirs for p in d.iterdir()]
    assert runtime in fetched, fetched
    stderr = "".join((d / "stderr").read_text(errors="replace") for d in executor_dirs if (d / "stderr").exists())
    assert "Running task" in stderr and "Finished task" in stderr
    # The aggregates equal the local answers, and the executor ran their stages' tasks.
    aggregates = result["aggregates"]
    for name in ("partitions_first", "partitions_branch"):
        got = aggregates[name]
        assert got["spark"] == got["local"] and got["rows"], name
        assert got["spark_dtypes"] == got["local_dtypes"], name
    for name in ("file_measures", "file_measures_deletes"):
        assert aggregates[name]["spark"] == aggregates[name]["local"] and aggregates[name]["data_files"], name
    assert aggregates["file_measures_deletes"]["delete_files"]  # the delete applicability join ran too
    assert aggregates["jobs"] and aggregates["stages"], "the aggregates ran no Spark job"
    ran = [s for s in aggregates["stages"] if f"in stage {s}.0 (TID" in stderr]
    assert ran, (aggregates["stages"], stderr[-3000:])
