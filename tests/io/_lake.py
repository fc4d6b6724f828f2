"""What the object-store tests share: ports, an S3 server with an IAM user, catalog environment
variables, a small PyIceberg-written table, and rows compared without order."""

from __future__ import annotations

import json
import socket
import subprocess
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import pyarrow as pa
import pytest

REGION = "us-east-1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted((tuple(r.values()) for r in table.to_pylist()), key=repr)


def catalog_env(monkeypatch: pytest.MonkeyPatch, name: str, props: Mapping[str, str]) -> str:
    """Configure PyIceberg catalog ``name`` the way users do: ``PYICEBERG_CATALOG__<NAME>__<KEY>``."""
    for key, value in props.items():
        env = f"PYICEBERG_CATALOG__{name.upper()}__" + key.upper().replace(".", "__").replace("-", "_")
        monkeypatch.setenv(env, value)
    return name


@contextmanager
def moto_s3(buckets: tuple[str, ...]) -> Iterator[tuple[str, str, str]]:
    """moto's S3 server on 127.0.0.1 with ``buckets`` and an IAM user allowed everything on S3:
    yields the endpoint and that user's key and secret. Requests are not authenticated until
    ``check_credentials``. moto keeps its state and that switch per process, whatever the port, so
    both are reset on both ends."""
    import boto3
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    try:
        _reset(endpoint)
        admin = {"endpoint_url": endpoint, "aws_access_key_id": "setup", "aws_secret_access_key": "setup"}
        for bucket in buckets:
            boto3.client("s3", region_name=REGION, **admin).create_bucket(Bucket=bucket)
        iam = boto3.client("iam", region_name=REGION, **admin)
        iam.create_user(UserName="reader")
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
        iam.put_user_policy(UserName="reader", PolicyName="lake", PolicyDocument=json.dumps(policy))
        access = iam.create_access_key(UserName="reader")["AccessKey"]
        yield endpoint, access["AccessKeyId"], access["SecretAccessKey"]
    finally:
        _reset(endpoint)
        server.stop()


def _reset(endpoint: str) -> None:
    urllib.request.urlopen(urllib.request.Request(f"{endpoint}/moto-api/reset", method="POST"), timeout=10).read()
    check_credentials(endpoint, after=float("inf"))


def check_credentials(endpoint: str, *, after: float = 0) -> None:
    """From the request ``after`` on, moto checks every request's signature against IAM's keys."""
    request = urllib.request.Request(
        f"{endpoint}/moto-api/reset-auth",
        data=str(after).encode(),
        method="POST",
        headers={"Content-Type": "text/plain"},
    )
    urllib.request.urlopen(request, timeout=10).read()


def write_events(catalog: Any, name: str = "db.events") -> Any:
    """A table partitioned by region with three commits: append, append, delete."""
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import LongType, NestedField, StringType

    schema = Schema(NestedField(1, "id", LongType(), required=True), NestedField(2, "region", StringType()))
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="region"))
    t = catalog.create_table(name, schema=schema, partition_spec=spec)
    arrow = t.schema().as_arrow()
    t.append(pa.table({"id": [1, 2, 3], "region": ["us", "us", "eu"]}).cast(arrow))
    t.append(pa.table({"id": [4], "region": ["eu"]}).cast(arrow))
    t.delete("id = 2")
    return t


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def engines_agree_everywhere(table: Any, peer: Any) -> None:
    """icebook's ``table`` read by Spark equals its Arrow read and PyIceberg's ``peer`` scan at every
    snapshot, every ref and the current state."""
    for at in [*(s.snapshot_id for s in table.snapshots), *sorted(table.refs), None]:
        ours = table.read(at=at, engine="spark")
        assert rows(ours) == rows(table.read(at=at, engine="arrow")), at
        snapshot_id = table.snapshot(at).snapshot_id if at is not None else None
        assert rows(ours) == rows(peer.scan(snapshot_id=snapshot_id).to_arrow()), at
