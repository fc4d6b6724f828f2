"""Tables on Azure storage: Azurite (from npm, installed by ``make env`` into the virtualenv's ``node/``
folder) serves the Blob API on 127.0.0.1 with its well-known development account.

- PyIceberg writes ``azlake.db.events`` through a SQL catalog whose warehouse is ``abfs://lake/wh``
  (its Arrow FileIO takes the authority for the container); icebook reads it by catalog name and by URI
  through pyarrow's Azure file system. Spark's ``ADLSFileIO`` cannot address a location without an
  account, and says so in one line.
- Spark writes ``azspark.db.*`` through ``ADLSFileIO`` at ``abfs://lake@devstoreaccount1.dfs.core.windows.net``
  (Azurite's blob endpoint given as the account's connection string), through Iceberg's JDBC catalog on
  the sqlite tables of a PyIceberg SQL catalog. PyIceberg loads them with ``adlfs`` (``FsspecFileIO``);
  both engines read every snapshot, tag and branch alike, and the branch, tag, write-audit-publish,
  rollback and maintenance changes Spark commits are the ones PyIceberg then sees.
"""

from __future__ import annotations

import datetime as dt
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from _lake import catalog_env, engines_agree_everywhere, free_port, rows, stop, write_events

import icebook
from icebook.engines import spark_catalogs
from icebook.errors import StorageError

ACCOUNT = "devstoreaccount1"
# Azurite's published development key (not a secret: every Azurite has it)
ACCOUNT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
# PyIceberg's Arrow FileIO takes a location's authority as the container (the account comes from
# adls.account-name), so it cannot write container@account locations; icebook reads both forms.
WAREHOUSE = "abfs://lake/wh"
HOST = f"{ACCOUNT}.dfs.core.windows.net"
SPARK_WAREHOUSE = f"abfs://lake@{HOST}/spark"
SPARK_CATALOG = "azspark"


def _azurite() -> Path:
    exe = Path(sys.executable).resolve().parent.parent / "node" / "node_modules" / ".bin" / "azurite-blob"
    if not exe.exists():
        exe = Path(sys.prefix) / "node" / "node_modules" / ".bin" / "azurite-blob"
    if not exe.exists():
        raise AssertionError(f"azurite-blob is not installed at {exe}: run `make env` (npm install azurite)")
    return exe


class Blob:
    def __init__(self, port: int, base: Path) -> None:
        self.port = port
        self.catalog_db = base / "catalog.db"
        self.spark_db = base / "spark-catalog.db"
        self.writer: Any = None

    def props(self) -> dict[str, str]:
        """PyIceberg's Arrow FileIO settings for Azurite, one endpoint setting per service."""
        authority = f"127.0.0.1:{self.port}"
        return {
            "adls.account-name": ACCOUNT,
            "adls.account-key": ACCOUNT_KEY,
            "adls.blob-storage-authority": authority,
            "adls.dfs-storage-authority": authority,
            "adls.blob-storage-scheme": "http",
            "adls.dfs-storage-scheme": "http",
        }

    def connection_props(self) -> dict[str, str]:
        """The account's connection string, as adlfs (PyIceberg's fsspec FileIO) takes it: the
        configuration of the catalog whose tables Spark writes at container@account locations."""
        connection = (
            f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={ACCOUNT_KEY};"
            f"BlobEndpoint=http://127.0.0.1:{self.port}/{ACCOUNT};"
        )
        return {"py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO", "adls.connection-string": connection}

    def spark_catalog_props(self) -> dict[str, str]:
        return {
            "type": "sql",
            "uri": f"sqlite:///{self.spark_db}",
            "warehouse": SPARK_WAREHOUSE,
            **self.connection_props(),
        }

    def peer(self) -> Any:
        """PyIceberg's own view of Spark's catalog (a fresh client each time: nothing cached)."""
        from pyiceberg.catalog.sql import SqlCatalog

        props = {k: v for k, v in self.spark_catalog_props().items() if k != "type"}
        return SqlCatalog(SPARK_CATALOG, **props)

    def fs(self) -> Any:
        import pyarrow.fs as pafs

        return pafs.AzureFileSystem(
            account_name=ACCOUNT,
            account_key=ACCOUNT_KEY,
            blob_storage_authority=f"127.0.0.1:{self.port}",
            dfs_storage_authority=f"127.0.0.1:{self.port}",
            blob_storage_scheme="http",
            dfs_storage_scheme="http",
        )

    def keys(self, prefix: str) -> set[str]:
        """Every blob under ``prefix`` of container ``lake``, as the table's abfs locations."""
        import pyarrow.fs as pafs

        infos = self.fs().get_file_info(pafs.FileSelector(f"lake/{prefix}", recursive=True))
        return {f"abfs://lake@{HOST}/{i.path.removeprefix('lake/')}" for i in infos if i.type == pafs.FileType.File}


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
        server = Blob(port, base)
        server.fs().create_dir("lake")
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


def _spark_write(spark: Any, name: str) -> None:
    """Spark's own commits: three appends and a delete on main, a tag, a branch with one more append."""
    table = f"{SPARK_CATALOG}.{name}"
    sql = spark.sql
    sql(
        f"CREATE TABLE {table} (id bigint NOT NULL, region string, amount double) USING iceberg PARTITIONED BY (region)"
    )
    sql(f"INSERT INTO {table} VALUES (1, 'us', 1.25D), (2, 'us', 2.5D), (3, 'us', 3.75D)")
    sql(f"INSERT INTO {table} VALUES (4, 'eu', 5.0D), (5, 'eu', 6.25D)")
    sql(f"ALTER TABLE {table} CREATE TAG v2")
    sql(f"DELETE FROM {table} WHERE id = 2")
    sql(f"INSERT INTO {table} VALUES (6, 'eu', 7.5D)")
    second = sql(f"SELECT snapshot_id FROM {table}.snapshots ORDER BY committed_at").collect()[1].snapshot_id
    sql(f"ALTER TABLE {table} CREATE BRANCH side AS OF VERSION {second}")
    sql(f"INSERT INTO {table}.branch_side VALUES (7, 'apac', 8.75D)")


@pytest.fixture(scope="module")
def spark_lake(spark: Any, blob: Blob) -> Blob:
    """Tables Spark wrote through ADLSFileIO, in Spark's JDBC catalog on a PyIceberg SQL catalog's
    tables (PyIceberg creates them: icebook never lets Spark create or alter catalog tables)."""
    blob.peer().create_namespace("db")
    conf = spark_catalogs.spark_catalog_conf(SPARK_CATALOG, blob.spark_catalog_props(), fallback_warehouse=None)
    assert conf[f"spark.sql.catalog.{SPARK_CATALOG}.adls.connection-string.{HOST}"] == (
        f"http://127.0.0.1:{blob.port}/{ACCOUNT}"
    )
    for key, value in conf.items():
        spark.conf.set(key, value)
    for name in ("db.events", "db.ops", "db.maint"):
        _spark_write(spark, name)
    return blob


@pytest.fixture
def spark_catalog(spark_lake: Blob, monkeypatch: pytest.MonkeyPatch) -> str:
    return catalog_env(monkeypatch, SPARK_CATALOG, spark_lake.spark_catalog_props())


@pytest.mark.services
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


@pytest.mark.services
@pytest.mark.spark
def test_spark_refuses_a_location_without_an_account_in_one_line(spark: Any, blob: Blob, az_catalog: str) -> None:
    """``abfs://lake/wh`` names a container and no account: ADLSFileIO cannot address it."""
    t = icebook.open(f"{az_catalog}.db.events")
    for attempt in (lambda: t.read(engine="spark"), lambda: t.manage.create_branch("never")):
        with pytest.raises(StorageError) as info:
            attempt()
        message = str(info.value)
        assert "\n" not in message and "Spark's ADLSFileIO cannot address abfs://lake/wh" in message, message
        assert "abfs://<container>@<account>.dfs.core.windows.net/<path>" in message
        assert "container 'lake' and no account" in message and 'engine="arrow"' in message
    assert "never" not in blob.writer.load_table("db.events").metadata.refs
    by_uri = icebook.open(f"{WAREHOUSE}/db/events", properties=blob.props())
    with pytest.raises(StorageError, match="Spark's ADLSFileIO cannot address abfs://lake/wh/db/events"):
        by_uri.read(engine="spark")


@pytest.mark.services
@pytest.mark.spark
def test_a_table_spark_wrote_on_adls_reads_alike_in_both_engines_and_pyiceberg(
    spark: Any, spark_lake: Blob, spark_catalog: str
) -> None:
    t = icebook.open(f"{spark_catalog}.db.events")
    assert t.metadata_location.startswith(f"{SPARK_WAREHOUSE}/db/events/metadata/")
    assert set(t.refs) == {"main", "v2", "side"}
    assert [s.operation for s in t.snapshots] == ["append", "append", "overwrite", "append", "append"]
    peer = spark_lake.peer().load_table("db.events")
    engines_agree_everywhere(t, peer)
    assert sorted(t.read(at="side").column("id").to_pylist()) == [1, 2, 3, 4, 5, 7]
    assert sorted(t.read().column("id").to_pylist()) == [1, 3, 4, 5, 6]
    files = t.inspect.files()
    assert all(p.startswith(f"{SPARK_WAREHOUSE}/db/events/data/") for p in files["file_path"])
    assert set(files["file_path"]) == set(peer.inspect.files()["file_path"].to_pylist())
    # Spark read it by name through the JDBC catalog on PyIceberg's own sqlite tables
    assert t._spark_identifier() == f"{spark_catalog}.db.events"
    # by URI (no catalog): the Arrow engine, and Spark through its reading catalog, read the same files
    by_uri = icebook.open(f"{SPARK_WAREHOUSE}/db/events", properties=spark_lake.connection_props())
    assert by_uri.metadata_location == t.metadata_location
    first = t.snapshots[0].snapshot_id
    assert rows(by_uri.read(at=first, engine="spark")) == rows(by_uri.read(at=first)) == rows(t.read(at=first))


@pytest.mark.services
@pytest.mark.spark
def test_branch_tag_wap_and_rollback_on_adls_commit_through_the_catalog(
    spark: Any, spark_lake: Blob, spark_catalog: str
) -> None:
    t = icebook.open(f"{spark_catalog}.db.ops")
    first, head = t.snapshots[0].snapshot_id, t.current_snapshot.snapshot_id
    t = t.manage.create_branch("dev", at=first)
    assert spark_lake.peer().load_table("db.ops").metadata.refs["dev"].snapshot_id == first
    t = t.manage.create_tag("t1", at=first)
    assert spark_lake.peer().load_table("db.ops").metadata.refs["t1"].snapshot_id == first
    before = t.read().num_rows
    t = t.manage.wap_write("audit", "INSERT INTO {table} VALUES (100, 'us', 1.5D)")
    peer = spark_lake.peer().load_table("db.ops")
    assert peer.scan().to_arrow().num_rows == before  # main untouched
    assert peer.scan(snapshot_id=peer.metadata.refs["audit"].snapshot_id).to_arrow().num_rows == before + 1
    assert rows(t.read(at="audit", engine="spark")) == rows(t.read(at="audit"))
    t = t.manage.publish("audit")
    peer = spark_lake.peer().load_table("db.ops")
    assert peer.current_snapshot().snapshot_id == peer.metadata.refs["audit"].snapshot_id
    assert rows(peer.scan().to_arrow()) == rows(t.read()) == rows(t.read(engine="spark"))
    t = t.manage.rollback(head)
    peer = spark_lake.peer().load_table("db.ops")
    assert peer.current_snapshot().snapshot_id == head == t.current_snapshot.snapshot_id
    t = t.manage.drop_branch("dev").manage.drop_tag("t1")
    assert set(spark_lake.peer().load_table("db.ops").metadata.refs) == set(t.refs) == {"main", "v2", "side", "audit"}
    # PyIceberg writes next through adlfs; icebook's stale object commits on the catalog's newest state
    writer = spark_lake.peer().load_table("db.ops")
    writer.append(pa.table({"id": [200], "region": ["eu"], "amount": [2.0]}).cast(writer.schema().as_arrow()))
    t = t.manage.create_tag("after-append")
    peer = spark_lake.peer().load_table("db.ops")
    assert peer.metadata.refs["after-append"].snapshot_id == peer.current_snapshot().snapshot_id
    assert rows(peer.scan().to_arrow()) == rows(t.read()) == rows(t.read(engine="spark"))
    assert 200 in t.read().column("id").to_pylist()


@pytest.mark.services
@pytest.mark.spark
def test_maintenance_procedures_on_adls_match_the_previews(spark: Any, spark_lake: Blob, spark_catalog: str) -> None:
    t = icebook.open(f"{spark_catalog}.db.maint")
    # rewrite_data_files: the files Spark rewrote are the ones the preview grouped
    options = {"min-input-files": "2", "target-file-size-bytes": str(64 * 1024 * 1024)}
    planned = {f.file_path for f in t.maintenance.compaction_preview(options).rewritten_files}
    assert planned
    result = t.maintenance.rewrite_data_files(options)
    assert set(t.inspect.files()["file_path"]) - set(result.table.inspect.files()["file_path"]) == planned
    assert result.output["rewritten_data_files_count"] == len(planned)
    peer = spark_lake.peer().load_table("db.maint")
    assert peer.current_snapshot().snapshot_id == result.table.current_snapshot.snapshot_id
    assert peer.current_snapshot().summary.operation.value == "replace"
    t = result.table
    # expire_snapshots: the deleted files are the preview's, and they are gone from the store
    now = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)
    expiry = t.maintenance.expire_preview(older_than=now, retain_last=1)
    before = spark_lake.keys("spark/db/maint/")
    expired = t.maintenance.expire_snapshots(older_than=now, retain_last=1)
    after = spark_lake.keys("spark/db/maint/")
    assert before - after == {f.path for f in expiry.files} and expiry.files
    peer = spark_lake.peer().load_table("db.maint")
    assert {s.snapshot_id for s in peer.snapshots()} == {s.snapshot_id for s in expired.table.snapshots}
    assert rows(expired.table.read(engine="spark")) == rows(peer.scan().to_arrow()) == rows(expired.table.read())
    # orphans: a blob nothing references is found under the table's location (Azurite's blobs cannot be
    # aged, and Spark's remove_orphan_files refuses a cutoff under a day old, so only icebook's side runs)
    orphan = "spark/db/maint/data/region=us/orphan-00000.parquet"
    with spark_lake.fs().open_output_stream(f"lake/{orphan}") as out:
        out.write(b"not referenced")
    found = expired.table.maintenance.orphans(older_than=dt.datetime.now(dt.UTC) + dt.timedelta(seconds=5))
    assert list(found.paths) == [f"abfs://lake@{HOST}/{orphan}"]


def test_a_connection_string_gives_pyarrow_the_account_key_and_endpoint() -> None:
    from icebook.io.filesystems import azure_options

    emulator = "DefaultEndpointsProtocol=http;AccountName=a;AccountKey=k==;BlobEndpoint=http://127.0.0.1:1/a;"
    opts = azure_options({"adls.connection-string": emulator}, "c@a.dfs.core.windows.net")
    assert opts == {
        "account_name": "a",
        "account_key": "k==",
        "blob_storage_authority": "127.0.0.1:1",  # pyarrow puts the account after an address
        "dfs_storage_authority": "127.0.0.1:1",
        "blob_storage_scheme": "http",
        "dfs_storage_scheme": "http",
    }
    azure = "AccountName=acct;SharedAccessSignature=sv=1&sig=x;BlobEndpoint=https://acct.blob.core.windows.net/"
    opts = azure_options({"adls.connection-string": azure}, "c@acct.dfs.core.windows.net")
    assert opts["sas_token"] == "sv=1&sig=x" and "account_key" not in opts
    assert opts["blob_storage_authority"] == ".blob.core.windows.net"  # pyarrow puts the account before it
    assert opts["blob_storage_scheme"] == "https"
