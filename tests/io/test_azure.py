"""Tables on Azure Blob Storage: Azurite (from npm, installed by ``make env`` into the virtualenv's
``node/`` folder) serves the Blob API on 127.0.0.1 with its well-known development account. PyIceberg
writes a table through a SQL catalog whose warehouse is ``abfs://lake/wh``; icebook
opens it by catalog name and by URI through pyarrow's Azure file system. Azurite has no ADLS Gen2
(dfs) endpoint and no PyPI package ships Hadoop's ABFS connector, so Spark refuses in one line.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _lake import catalog_env, free_port, rows, stop, write_events

import icebook
from icebook.errors import EnvironmentProblem

pytestmark = pytest.mark.services

ACCOUNT = "devstoreaccount1"
# Azurite's published development key (not a secret: every Azurite has it)
ACCOUNT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
# PyIceberg's Arrow FileIO takes a location's authority as the container (the account comes from
# adls.account-name), so it cannot write container@account locations; icebook reads both forms.
WAREHOUSE = "abfs://lake/wh"


def _azurite() -> Path:
    exe = Path(sys.executable).resolve().parent.parent / "node" / "node_modules" / ".bin" / "azurite-blob"
    if not exe.exists():
        exe = Path(sys.prefix) / "node" / "node_modules" / ".bin" / "azurite-blob"
    if not exe.exists():
        raise AssertionError(f"azurite-blob is not installed at {exe}: run `make env` (npm install azurite)")
    return exe


class Blob:
    def __init__(self, port: int, catalog_db: Path) -> None:
        self.port = port
        self.catalog_db = catalog_db
        self.writer: Any = None

    def props(self) -> dict[str, str]:
        authority = f"127.0.0.1:{self.port}"
        return {
            "adls.account-name": ACCOUNT,
            "adls.account-key": ACCOUNT_KEY,
            "adls.blob-storage-authority": authority,
            "adls.dfs-storage-authority": authority,
            "adls.blob-storage-scheme": "http",
            "adls.dfs-storage-scheme": "http",
        }


def _wait(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"azurite exited ({proc.returncode}): {log.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"azurite did not listen on 127.0.0.1:{port}: {log.read_text()[-2000:]}")


@pytest.fixture(scope="module")
def blob(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Blob]:
    import pyarrow.fs as pafs
    from pyiceberg.catalog.sql import SqlCatalog

    port = free_port()
    base = tmp_path_factory.mktemp("azurite")
    log = base / "azurite.log"
    args = [str(_azurite()), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--location", str(base / "data")]
    args += ["--skipApiVersionCheck", "--disableTelemetry", "--silent"]
    with log.open("wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait(port, proc, log)
        server = Blob(port, base / "catalog.db")
        fs = pafs.AzureFileSystem(
            account_name=ACCOUNT,
            account_key=ACCOUNT_KEY,
            blob_storage_authority=f"127.0.0.1:{port}",
            dfs_storage_authority=f"127.0.0.1:{port}",
            blob_storage_scheme="http",
            dfs_storage_scheme="http",
        )
        fs.create_dir("lake")
        writer = SqlCatalog(
            "azlake",
            uri=f"sqlite:///{server.catalog_db}",
            warehouse=WAREHOUSE,
            **{"py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO"},
            **server.props(),
        )
        writer.create_namespace("db")
        write_events(writer)
        server.writer = writer
        yield server
    finally:
        stop(proc)


@pytest.fixture
def az_catalog(blob: Blob, monkeypatch: pytest.MonkeyPatch) -> str:
    impl = {"type": "sql", "uri": f"sqlite:///{blob.catalog_db}", "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO"}
    return catalog_env(monkeypatch, "azlake", {**impl, **blob.props()})


def test_open_tree_diff_and_read_every_snapshot_on_azure_blob(blob: Blob, az_catalog: str) -> None:
    t = icebook.open(f"{az_catalog}.db.events")
    assert t.metadata_location.startswith(f"{WAREHOUSE}/db/events/metadata/")
    peer = blob.writer.load_table("db.events")
    assert [s.operation for s in t.snapshots] == ["append", "append", "overwrite"]
    for snapshot in t.snapshots:
        assert rows(t.read(at=snapshot.snapshot_id)) == rows(peer.scan(snapshot_id=snapshot.snapshot_id).to_arrow())
    files = t.inspect.files()
    assert set(files["file_path"]) == set(peer.inspect.files()["file_path"].to_pylist())
    html = t.tree()._repr_html_()  # the manifest list and manifests read from Azurite
    assert all(path.rsplit("/", 1)[1] in html for path in files["file_path"])
    change = t.diff(t.snapshots[0].snapshot_id, t.snapshots[-1].snapshot_id)
    assert set(change.added_files["file_path"]) == set(files["file_path"]) - set(
        t.inspect.files(at=t.snapshots[0].snapshot_id)["file_path"]
    )
    by_uri = icebook.open(f"{WAREHOUSE}/db/events", properties=blob.props())
    assert by_uri.metadata_location == t.metadata_location
    assert sorted(r["id"] for r in by_uri.read().to_pylist()) == [1, 3, 4]


@pytest.mark.spark
def test_spark_without_an_abfs_connector_says_what_to_install(spark: Any, blob: Blob, az_catalog: str) -> None:
    t = icebook.open(f"{az_catalog}.db.events")
    for attempt in (lambda: t.read(engine="spark"), lambda: t.create_branch("never")):
        with pytest.raises(EnvironmentProblem) as info:
            attempt()
        message = str(info.value)
        assert "\n" not in message and "abfs://lake/" in message and "bucket 'lake' on Azure (ABFS)" in message
        assert "hadoop-azure" in message
    assert "never" not in blob.writer.load_table("db.events").metadata.refs
