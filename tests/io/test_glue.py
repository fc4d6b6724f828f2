"""A Glue catalog: moto's server on 127.0.0.1 serves both Glue (``glue.endpoint``) and S3, and checks
every request's signature against its IAM users' keys. PyIceberg's Glue catalog writes a table; icebook
opens it by name; Spark has the same catalog, configured by icebook from the same PyIceberg
configuration (Iceberg's ``GlueCatalog`` with the AWS bundle by Maven coordinates, files through
``S3FileIO``), reads every snapshot and commits a branch and a write-audit-publish that PyIceberg sees.

PyIceberg and Java share ``glue.endpoint``, ``glue.id`` and ``glue.skip-archive``; PyIceberg's
``glue.region`` is Java's ``client.region``. Java has no property for Glue's static keys: its Glue
client takes them from AWS's default chain, here the JVM's ``aws.accessKeyId`` and
``aws.secretAccessKey`` system properties (as ``-Daws.accessKeyId=...`` would set them).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from _lake import REGION, catalog_env, check_credentials, engines_agree_everywhere, moto_s3, rows, write_events

import icebook

pytestmark = pytest.mark.services

CATALOG = "gluelake"
WAREHOUSE = "s3://lake/glue"


class Glue:
    def __init__(self, endpoint: str, key: str, secret: str) -> None:
        self.endpoint, self.key, self.secret = endpoint, key, secret

    def props(self) -> dict[str, str]:
        """The PyIceberg Glue catalog's configuration: its Glue client's and its S3 FileIO's."""
        return {
            "glue.endpoint": self.endpoint,
            "glue.region": REGION,
            "glue.access-key-id": self.key,
            "glue.secret-access-key": self.secret,
            "s3.endpoint": self.endpoint,
            "s3.access-key-id": self.key,
            "s3.secret-access-key": self.secret,
            "warehouse": WAREHOUSE,
        }

    def peer(self) -> Any:
        """PyIceberg's own view of the catalog (a fresh client each time: nothing cached)."""
        from pyiceberg.catalog.glue import GlueCatalog

        return GlueCatalog(CATALOG, **self.props())


@pytest.fixture(scope="module")
def glue() -> Iterator[Glue]:
    import boto3

    with moto_s3(("lake",)) as (endpoint, _, _):
        # a user allowed Glue as well as S3 (moto_s3's reader is allowed S3 only)
        admin = {"endpoint_url": endpoint, "aws_access_key_id": "setup", "aws_secret_access_key": "setup"}
        iam = boto3.client("iam", region_name=REGION, **admin)
        iam.create_user(UserName="glue-writer")
        allowed = {"Effect": "Allow", "Action": ["s3:*", "glue:*"], "Resource": "*"}
        policy = {"Version": "2012-10-17", "Statement": [allowed]}
        iam.put_user_policy(UserName="glue-writer", PolicyName="lake", PolicyDocument=json.dumps(policy))
        access = iam.create_access_key(UserName="glue-writer")["AccessKey"]
        server = Glue(endpoint, access["AccessKeyId"], access["SecretAccessKey"])
        writer = server.peer()
        writer.create_namespace("db")
        t = write_events(writer)
        t.manage_snapshots().create_tag(t.snapshots()[0].snapshot_id, "first").commit()
        check_credentials(endpoint)  # from here on a request with wrong keys is refused
        yield server


@pytest.fixture
def glue_catalog(glue: Glue, monkeypatch: pytest.MonkeyPatch) -> str:
    return catalog_env(monkeypatch, CATALOG, {"type": "glue", **glue.props()})


@pytest.fixture
def java_credentials(spark: Any, glue: Glue) -> Iterator[None]:
    """The keys Java's Glue client finds in AWS's default chain, for this test only."""
    system = spark._jvm.java.lang.System
    system.setProperty("aws.accessKeyId", glue.key)
    system.setProperty("aws.secretAccessKey", glue.secret)
    try:
        yield
    finally:
        system.clearProperty("aws.accessKeyId")
        system.clearProperty("aws.secretAccessKey")


def test_icebook_opens_a_glue_table_by_name(glue: Glue, glue_catalog: str) -> None:
    t = icebook.open(f"{glue_catalog}.db.events")
    assert t.metadata_location.startswith(f"{WAREHOUSE}/db.db/events/metadata/")
    assert set(t.refs) == {"main", "first"}
    peer = glue.peer().load_table("db.events")
    assert t.metadata_location == peer.metadata_location
    for snapshot in t.snapshots:
        assert rows(t.read(at=snapshot.snapshot_id)) == rows(peer.scan(snapshot_id=snapshot.snapshot_id).to_arrow())


@pytest.mark.spark
def test_spark_reads_every_snapshot_and_branches_through_glue(
    spark: Any, glue: Glue, glue_catalog: str, java_credentials: None
) -> None:
    t = icebook.open(f"{glue_catalog}.db.events")
    peer = glue.peer().load_table("db.events")
    engines_agree_everywhere(t, peer)
    # Spark has the catalog under the same name, from the same configuration
    assert t._spark_identifier() == f"{glue_catalog}.db.events"
    prefix = f"spark.sql.catalog.{glue_catalog}"
    assert spark.conf.get(f"{prefix}.type") == "glue"
    assert spark.conf.get(f"{prefix}.glue.endpoint") == glue.endpoint
    assert spark.conf.get(f"{prefix}.client.region") == REGION  # PyIceberg's glue.region
    assert spark.conf.get(f"{prefix}.s3.endpoint") == glue.endpoint
    # a branch and a write-audit-publish Spark commits through Glue are PyIceberg's to see
    first = t.snapshots[0].snapshot_id
    t = t.manage.create_branch("dev", at=first)
    assert glue.peer().load_table("db.events").metadata.refs["dev"].snapshot_id == first
    assert rows(t.read(at="dev", engine="spark")) == rows(t.read(at="dev")) == rows(t.read(at=first))
    before = t.read().num_rows
    t = t.manage.wap_write("audit", "INSERT INTO {table} VALUES (100, 'us')")
    current = glue.peer().load_table("db.events")
    assert current.scan().to_arrow().num_rows == before  # main untouched
    audit = current.metadata.refs["audit"].snapshot_id
    assert rows(current.scan(snapshot_id=audit).to_arrow()) == rows(t.read(at="audit", engine="spark"))
    assert 100 in t.read(at="audit").column("id").to_pylist()
    t = t.manage.publish("audit")
    current = glue.peer().load_table("db.events")
    assert current.current_snapshot().snapshot_id == audit == t.current_snapshot.snapshot_id
    assert rows(current.scan().to_arrow()) == rows(t.read()) == rows(t.read(engine="spark"))
    assert set(current.metadata.refs) == set(t.refs) == {"main", "first", "dev", "audit"}
