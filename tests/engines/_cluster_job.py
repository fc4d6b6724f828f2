"""Run in its own process by ``test_cluster.py`` (one SparkSession per process, and the suite's
own session is local): connect icebook to a standalone cluster, read a table at a snapshot id
(time travel) and at a branch through Spark, compute the metadata aggregates (``partitions``, the
health report's file measures, on the table and on a table with delete files) with ``engine="spark"``
next to the local answers, and report what ran where as JSON.

Usage: python _cluster_job.py MASTER_URL TABLE_DIR BRANCH OUT_JSON DELETES_TABLE_DIR
"""

from __future__ import annotations

import json
import sys
from typing import Any


def main(master: str, table_dir: str, branch: str, out: str, deletes_dir: str) -> None:
    import icebook

    spark = icebook.spark.session(
        master=master,
        conf={"spark.executor.memory": "768m", "spark.cores.max": "1", "spark.executor.cores": "1"},
        progress=False,
    )
    sc = spark.sparkContext
    t = icebook.open(table_dir)
    first = t.snapshots[0].snapshot_id
    results: dict[str, Any] = {"master": sc.master, "app_id": sc.applicationId}
    for label, at in (("time_travel", first), ("branch", branch)):
        sc.setJobGroup(label, f"icebook {label} read")
        spark_rows = t.read(at=at, engine="spark")
        arrow_rows = t.read(at=at, engine="arrow")
        results[label] = {
            "at": at,
            "spark": sorted(map(repr, spark_rows.to_pylist())),
            "arrow": sorted(map(repr, arrow_rows.to_pylist())),
            "columns": spark_rows.column_names,
            "jobs": list(sc.statusTracker().getJobIdsForGroup(label)),
        }
    sc.setJobGroup("branch_sql", "icebook branch query")
    counted = t.sql("SELECT count(*) AS n FROM t", at=branch)
    results["branch_sql"] = {
        "n": int(counted["n"][0]),
        "jobs": list(sc.statusTracker().getJobIdsForGroup("branch_sql")),
    }
    results["aggregates"] = _aggregates(t, icebook.open(deletes_dir), sc, branch)
    infos = sc._jsc.sc().statusTracker().getExecutorInfos()  # the driver and every executor
    results["executors"] = sorted(f"{e.host()}:{e.port()}" for e in infos)
    results["driver"] = f"{sc.getConf().get('spark.driver.host')}:{sc.getConf().get('spark.driver.port')}"
    results["jars"] = sc.getConf().get("spark.jars")
    with open(out, "w") as f:
        json.dump(results, f)
    spark.stop()


def _aggregates(t: Any, with_deletes: Any, sc: Any, branch: str) -> dict[str, Any]:
    """The Spark route's aggregates and the local ones (compared by the test), with the Spark stages
    that computed them."""
    sc.setJobGroup("aggregates", "icebook metadata aggregates")
    first = t.snapshots[0].snapshot_id
    spark = {
        "partitions_first": t.inspect.partitions(first, engine="spark"),
        "partitions_branch": t.inspect.partitions(branch, engine="spark"),
        "file_measures": t.maintenance.file_measures(engine="spark"),
        "file_measures_deletes": with_deletes.maintenance.file_measures(engine="spark"),
    }
    jobs = list(sc.statusTracker().getJobIdsForGroup("aggregates"))
    local = {
        "partitions_first": t.inspect.partitions(first),
        "partitions_branch": t.inspect.partitions(branch),
        "file_measures": t.maintenance.file_measures(),
        "file_measures_deletes": with_deletes.maintenance.file_measures(),
    }
    out: dict[str, Any] = {}
    for name, value in spark.items():
        ours = local[name]
        if name.startswith("partitions"):
            out[name] = {
                "spark": value.to_json(orient="split", date_format="iso"),
                "local": ours.to_json(orient="split", date_format="iso"),
                "spark_dtypes": [str(d) for d in value.dtypes],
                "local_dtypes": [str(d) for d in ours.dtypes],
                "rows": len(value),
            }
        else:
            out[name] = {
                "spark": repr(value),
                "local": repr(ours),
                "data_files": value.data_files,
                "delete_files": value.delete_files,
            }
    stages = [
        s for j in jobs for s in (sc.statusTracker().getJobInfo(j).stageIds if sc.statusTracker().getJobInfo(j) else ())
    ]
    out["jobs"] = jobs
    out["stages"] = sorted(stages)
    return out


if __name__ == "__main__":
    main(*sys.argv[1:6])
