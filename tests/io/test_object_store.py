"""Tables on an S3-compatible object store: moto's server on 127.0.0.1, holding tables that
PyIceberg wrote through a SQL catalog, read back by icebook through the catalog and by URI.

The server enforces credentials after setup (moto's IAM authentication), so wrong keys are
refused as real S3 would refuse them. Rows are compared with PyIceberg's own scan and with the rows
the test wrote; Spark on S3 is tested in test_spark_s3.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from _lake import REGION, check_credentials, moto_s3

import icebook
from icebook.errors import CatalogError, NotFound, StorageError, UnsupportedFeature
from icebook.io.filesystems import azure_options, gcs_options, hdfs_options, s3_options, split_location


def _rows(table: pa.Table) -> list[tuple[Any, ...]]:
    return sorted((tuple(r.values()) for r in table.to_pylist()), key=repr)


class Lake:
    """The endpoint, the reader's credentials, and what was written."""

    def __init__(self, endpoint: str, key: str, secret: str, catalog_db: Path) -> None:
        self.endpoint = endpoint
        self.key = key
        self.secret = secret
        self.catalog_db = catalog_db
        self.writer: Any = None

    def props(self, **overrides: str) -> dict[str, str]:
        props = {
            "s3.endpoint": self.endpoint,
            "s3.access-key-id": self.key,
            "s3.secret-access-key": self.secret,
            "s3.region": REGION,
        }
        props.update(overrides)
        return props


def _write_tables(catalog: Any, s3a_catalog: Any) -> None:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType

    catalog.create_namespace("db")
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "region", StringType()),
        NestedField(3, "amount", DoubleType()),
    )
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="region"))
    t = catalog.create_table("db.events", schema=schema, partition_spec=spec)
    arrow = t.schema().as_arrow()

    def rows(ids: list[int], region: str) -> pa.Table:
        return pa.table({"id": ids, "region": [region] * len(ids), "amount": [i * 1.25 for i in ids]}).cast(arrow)

    t.append(rows([1, 2, 3], "us"))
    t.append(rows([4, 5], "eu"))
    t.delete("id = 2")
    t.append(rows([6], "eu"))
    fragile = catalog.create_table("db.fragile", schema=schema, partition_spec=spec)
    fragile.append(rows([7, 8], "us"))
    s3a_catalog.create_namespace("db")
    legacy = s3a_catalog.create_table("db.spark_style", schema=schema)
    legacy.append(rows([9, 10], "apac"))


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    from pyiceberg.catalog.sql import SqlCatalog

    with moto_s3(("lake",)) as (endpoint, key, secret):
        db = tmp_path_factory.mktemp("s3-catalog") / "catalog.db"
        lake = Lake(endpoint, key, secret, db)
        props = {"type": "sql", "uri": f"sqlite:///{db}", **lake.props()}
        writer = SqlCatalog("s3lake", warehouse="s3://lake/wh", **props)
        s3a_writer = SqlCatalog("s3alake", warehouse="s3a://lake/s3a-wh", **props)
        _write_tables(writer, s3a_writer)
        lake.writer = writer
        check_credentials(endpoint)
        yield lake


@pytest.fixture
def s3_catalog(lake: Lake, monkeypatch: pytest.MonkeyPatch) -> str:
    """A PyIceberg catalog named s3lake, configured only through PYICEBERG_CATALOG__* variables."""
    monkeypatch.setenv("PYICEBERG_CATALOG__S3LAKE__TYPE", "sql")
    monkeypatch.setenv("PYICEBERG_CATALOG__S3LAKE__URI", f"sqlite:///{lake.catalog_db}")
    monkeypatch.setenv("PYICEBERG_CATALOG__S3LAKE__S3__ENDPOINT", lake.endpoint)
    monkeypatch.setenv("PYICEBERG_CATALOG__S3LAKE__S3__ACCESS_KEY_ID", lake.key)
    monkeypatch.setenv("PYICEBERG_CATALOG__S3LAKE__S3__SECRET_ACCESS_KEY", lake.secret)
    monkeypatch.setenv("PYICEBERG_CATALOG__S3LAKE__S3__REGION", REGION)
    return "s3lake"


@pytest.mark.services
def test_open_by_catalog_name_reads_every_snapshot(lake: Lake, s3_catalog: str) -> None:
    t = icebook.open(f"{s3_catalog}.db.events")
    assert t.identifier == "s3lake.db.events"
    assert t.metadata_location.startswith("s3://lake/wh/db/events/metadata/")
    assert [s.operation for s in t.snapshots] == ["append", "append", "overwrite", "append"]
    peer = lake.writer.load_table("db.events")
    for snapshot in t.snapshots:
        ours = t.read(at=snapshot.snapshot_id)
        theirs = peer.scan(snapshot_id=snapshot.snapshot_id).to_arrow()
        assert _rows(ours) == _rows(theirs), snapshot.snapshot_id
    assert sorted(r["id"] for r in t.read().to_pylist()) == [1, 3, 4, 5, 6]
    same = icebook.open("db.events", catalog=s3_catalog)
    assert same.metadata_location == t.metadata_location


@pytest.mark.services
def test_tree_inspect_diff_explain_on_the_object_store(lake: Lake, s3_catalog: str) -> None:
    t = icebook.open(f"{s3_catalog}.db.events")
    peer = lake.writer.load_table("db.events").inspect  # PyIceberg's metadata tables, as a peer
    first, last = t.snapshots[0], t.snapshots[-1]
    files = t.inspect.files()
    assert all(p.startswith("s3://lake/wh/db/events/data/") for p in files["file_path"])
    assert set(files["file_path"]) == set(peer.files()["file_path"].to_pylist())
    assert sorted(files["record_count"]) == sorted(peer.files()["record_count"].to_pylist())
    assert set(t.inspect.manifests()["path"]) == set(peer.manifests()["path"].to_pylist())
    assert len(t.inspect.entries()) == peer.entries().num_rows
    assert list(t.inspect.snapshots()["snapshot_id"]) == peer.snapshots()["snapshot_id"].to_pylist()
    assert len(t.inspect.history()) == 4 and len(t.inspect.all_manifests()) >= len(t.inspect.manifests())
    assert sorted(t.inspect.partitions()["record_count"]) == sorted(peer.partitions()["record_count"].to_pylist())
    change = t.diff(first.snapshot_id, last.snapshot_id)
    assert set(change.added_files["file_path"]) == set(files["file_path"]) - set(
        t.inspect.files(at=first.snapshot_id)["file_path"]
    )
    plan = t.scan(filter="region = 'eu'")
    assert len(plan.tasks) == 2 and "region" in str(plan.explain())
    assert sorted(r["id"] for r in t.read(filter="region = 'eu'").to_pylist()) == [4, 5, 6]
    html = t.tree()._repr_html_()  # the static tree reads the manifest list and manifests from S3
    assert all(path.rsplit("/", 1)[1] in html for path in files["file_path"])
    assert len(t.lineage().main_ancestry) == 4
    assert t.evolution() is not None


@pytest.mark.services
def test_open_by_uri_with_properties_and_s3a(lake: Lake, s3_catalog: str) -> None:
    by_name = icebook.open(f"{s3_catalog}.db.events")
    by_uri = icebook.open("s3://lake/wh/db/events", properties=lake.props())
    assert by_uri.metadata_location == by_name.metadata_location  # no version hint: the newest NNNNN- file
    assert _rows(by_uri.read()) == _rows(by_name.read())
    # s3a:// (what Spark's Hadoop FileIO writes): the same store, through pyarrow's S3 file system
    spark_style = icebook.open("s3a://lake/s3a-wh/db/spark_style", properties=lake.props())
    assert spark_style.metadata_location.startswith("s3a://lake/s3a-wh/db/spark_style/metadata/")
    assert all(p.startswith("s3a://") for p in spark_style.inspect.files()["file_path"])
    assert sorted(r["id"] for r in spark_style.read().to_pylist()) == [9, 10]
    # s3n:// is the same store again
    assert icebook.open("s3n://lake/s3a-wh/db/spark_style", properties=lake.props()).snapshots


@pytest.mark.services
def test_environment_credentials(lake: Lake, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", lake.key)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", lake.secret)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_ENDPOINT_URL", lake.endpoint)
    t = icebook.open("s3://lake/wh/db/events")
    assert sorted(r["id"] for r in t.read().to_pylist()) == [1, 3, 4, 5, 6]


@pytest.mark.services
def test_wrong_credentials_one_line_naming_bucket_and_key(lake: Lake) -> None:
    for bad in (lake.props(**{"s3.secret-access-key": "wrong"}), lake.props(**{"s3.access-key-id": "AKIANOBODY"})):
        with pytest.raises(StorageError) as info:
            icebook.open("s3://lake/wh/db/events", properties=bad)
        message = str(info.value)
        assert "\n" not in message
        assert "bucket 'lake'" in message and "key 'wh/db/events" in message and "access denied" in message


@pytest.mark.services
def test_wrong_credentials_through_the_catalog(s3_catalog: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYICEBERG_CATALOG__S3LAKE__S3__SECRET_ACCESS_KEY", "wrong")
    with pytest.raises(CatalogError) as info:
        icebook.open(f"{s3_catalog}.db.events")
    message = str(info.value)
    assert "\n" not in message and message.startswith("catalog 's3lake' at sqlite:")
    assert "bucket 'lake'" in message and "ACCESS_DENIED" in message


@pytest.mark.services
def test_missing_bucket_and_missing_file(lake: Lake, s3_catalog: str) -> None:
    with pytest.raises(NotFound) as info:
        icebook.open("s3://no-such-bucket/wh/db/events", properties=lake.props())
    assert "bucket 'no-such-bucket' does not exist" in str(info.value) and "\n" not in str(info.value)
    t = icebook.open(f"{s3_catalog}.db.fragile")
    victim = t.inspect.files()["file_path"][0]
    import boto3

    client = boto3.client(
        "s3",
        endpoint_url=lake.endpoint,
        aws_access_key_id=lake.key,
        aws_secret_access_key=lake.secret,
        region_name=REGION,
    )
    loc = split_location(victim)
    client.delete_object(Bucket=loc.bucket, Key=loc.key)
    with pytest.raises(NotFound) as missing:
        t.read()  # nothing partial: the whole read fails, naming the file
    assert victim in str(missing.value) and "nothing was returned" in str(missing.value)


def test_a_scheme_nothing_handles(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedFeature, match=r"no filesystem for 'nosuchfs://'.*s3://, s3a://"):
        icebook.open("nosuchfs://bucket/db/table")


def test_other_stores_take_icebergs_property_names() -> None:
    s3 = s3_options(
        {
            "s3.endpoint": "https://minio:9000",
            "client.access-key-id": "k",
            "client.secret-access-key": "s",
            "client.region": "eu-west-1",
            "s3.session-token": "t",
            "s3.force-virtual-addressing": "true",
        },
        "bucket",
    )
    assert s3 == {
        "endpoint_override": "minio:9000",
        "scheme": "https",
        "access_key": "k",
        "secret_key": "s",
        "session_token": "t",
        "region": "eu-west-1",
        "force_virtual_addressing": True,
    }
    gcs = gcs_options({"gcs.oauth2.token": "tok", "gcs.project-id": "p", "gcs.service.host": "http://127.0.0.1:4443"})
    assert gcs["access_token"] == "tok" and gcs["project_id"] == "p" and gcs["scheme"] == "http"
    azure = azure_options({"adls.account-key": "a2V5"}, "container@acct.dfs.core.windows.net")
    assert azure == {"account_name": "acct", "account_key": "a2V5"}
    assert hdfs_options({"hdfs.user": "etl"}, "namenode:8020") == {"host": "namenode", "port": 8020, "user": "etl"}
    loc = split_location("abfss://container@acct.dfs.core.windows.net/wh/db/t")
    assert (loc.scheme, loc.bucket, loc.key) == ("abfss", "container", "wh/db/t")
