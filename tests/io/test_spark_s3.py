"""Spark on a table in an S3 store: moto's server on 127.0.0.1, a PyIceberg SQL
catalog on sqlite, PyIceberg as the writer of record. Spark reaches the files through Iceberg's
``S3FileIO`` (the AWS bundle by Maven coordinates) and the catalog through Iceberg's JDBC catalog on the
same sqlite file, so every change Spark makes is seen by PyIceberg loading through the catalog, and the
other way round. moto checks every request's signature against its IAM user's keys.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from _lake import REGION, catalog_env, check_credentials, moto_s3, rows

import icebook
from icebook.commands import Context, Session, build_parser, execute, parse_cell
from icebook.engines import spark_storage
from icebook.errors import EngineError, EnvironmentProblem

pytestmark = [pytest.mark.spark, pytest.mark.services]

CATALOG = "s3spark"


class Lake:
    def __init__(self, endpoint: str, key: str, secret: str, catalog_db: Path) -> None:
        self.endpoint, self.key, self.secret, self.catalog_db = endpoint, key, secret, catalog_db

    def props(self) -> dict[str, str]:
        return {
            "s3.endpoint": self.endpoint,
            "s3.access-key-id": self.key,
            "s3.secret-access-key": self.secret,
            "s3.region": REGION,
        }

    def peer(self) -> Any:
        """PyIceberg's own view of the catalog (a fresh client each time: nothing cached)."""
        from pyiceberg.catalog.sql import SqlCatalog

        return SqlCatalog(CATALOG, uri=f"sqlite:///{self.catalog_db}", **self.props())

    def s3(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=self.key,
            aws_secret_access_key=self.secret,
            region_name=REGION,
        )

    def keys(self, bucket: str, prefix: str) -> set[str]:
        pages = self.s3().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return {f"s3://{bucket}/{o['Key']}" for page in pages for o in page.get("Contents", [])}


SCHEMA_FIELDS = (("id", "long"), ("region", "string"), ("amount", "double"))


def _write(catalog: Any, name: str) -> Any:
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.schema import Schema
    from pyiceberg.transforms import IdentityTransform
    from pyiceberg.types import DoubleType, LongType, NestedField, StringType

    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "region", StringType()),
        NestedField(3, "amount", DoubleType()),
    )
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="region"))
    t = catalog.create_table(name, schema=schema, partition_spec=spec)
    arrow = t.schema().as_arrow()

    def batch(ids: list[int], region: str) -> pa.Table:
        return pa.table({"id": ids, "region": [region] * len(ids), "amount": [i * 1.25 for i in ids]}).cast(arrow)

    t.append(batch([1, 2, 3], "us"))
    t.append(batch([4, 5], "eu"))
    t.manage_snapshots().create_tag(t.current_snapshot().snapshot_id, "v2").commit()
    t.delete("id = 2")
    t.append(batch([6], "eu"))
    t.manage_snapshots().create_branch(t.snapshots()[1].snapshot_id, "side").commit()
    t.append(batch([7], "apac"), branch="side")
    return t


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    from pyiceberg.catalog.sql import SqlCatalog

    with moto_s3(("lake",)) as (endpoint, key, secret):
        db = tmp_path_factory.mktemp("s3-spark-catalog") / "catalog.db"
        lake = Lake(endpoint, key, secret, db)
        writer = SqlCatalog(CATALOG, uri=f"sqlite:///{db}", warehouse="s3://lake/wh", **lake.props())
        writer.create_namespace("db")
        for name in ("db.events", "db.ops", "db.maint"):
            _write(writer, name)
        custom = SqlCatalog("s3custom", uri=f"sqlite:///{db}", warehouse="s3://lake/custom", **lake.props())
        custom.create_namespace("db")
        _write(custom, "db.custom")
        check_credentials(endpoint)  # from here on a request with wrong keys is refused
        yield lake


@pytest.fixture
def catalog(lake: Lake, monkeypatch: pytest.MonkeyPatch) -> str:
    return catalog_env(monkeypatch, CATALOG, {"type": "sql", "uri": f"sqlite:///{lake.catalog_db}", **lake.props()})


def _points(t: icebook.table.Table) -> list[Any]:
    return [*(s.snapshot_id for s in t.snapshots), *sorted(t.refs), None]


def test_spark_reads_every_snapshot_tag_and_branch_like_arrow_and_pyiceberg(
    spark: Any, lake: Lake, catalog: str
) -> None:
    t = icebook.open(f"{catalog}.db.events")
    assert set(t.refs) == {"main", "v2", "side"}
    peer = lake.peer().load_table("db.events")
    session = Session()
    session.put("events", t)
    parser = build_parser(Context.NOTEBOOK)
    for at in _points(t):
        ours = t.read(at=at, engine="spark")
        assert rows(ours) == rows(t.read(at=at, engine="arrow")), at
        snapshot_id = t.snapshot(at).snapshot_id if at is not None else None
        assert rows(ours) == rows(peer.scan(snapshot_id=snapshot_id).to_arrow()), at
        # %%ice: the sql command over the open table, pinned the same way
        option = ["--branch", at] if at in ("main", "side") else ["--tag", at] if at == "v2" else []
        option = option or (["--at", str(at)] if at is not None else [])
        cell = parse_cell(parser, " ".join(["--engine", "spark", *option]), "SELECT id FROM t")
        shown = execute(cell, session, Context.NOTEBOOK, parser)
        assert sorted(shown["id"].tolist()) == sorted(ours.column("id").to_pylist()), at
    # Spark read it by name through the JDBC catalog on PyIceberg's own sqlite tables
    assert t._spark_identifier() == f"{catalog}.db.events"
    assert spark.conf.get(f"spark.sql.catalog.{catalog}.type") == "jdbc"
    by_name = spark.sql(f"SELECT count(*) AS n FROM {catalog}.db.events VERSION AS OF 'side'").collect()[0].n
    assert by_name == t.read(at="side").num_rows


def test_branch_tag_wap_and_rollback_commit_through_the_catalog(spark: Any, lake: Lake, catalog: str) -> None:
    t = icebook.open(f"{catalog}.db.ops")
    first, head = t.snapshots[0].snapshot_id, t.current_snapshot.snapshot_id
    t = t.manage.create_branch("dev", at=first)
    assert lake.peer().load_table("db.ops").metadata.refs["dev"].snapshot_id == first
    t = t.manage.create_tag("t1", at=first)
    assert lake.peer().load_table("db.ops").metadata.refs["t1"].snapshot_id == first
    before = t.read().num_rows
    t = t.manage.wap_write("audit", "INSERT INTO {table} VALUES (100, 'us', 1.5)")
    peer = lake.peer().load_table("db.ops")
    assert peer.scan().to_arrow().num_rows == before  # main untouched
    assert peer.scan(snapshot_id=peer.metadata.refs["audit"].snapshot_id).to_arrow().num_rows == before + 1
    assert rows(t.read(at="audit", engine="spark")) == rows(t.read(at="audit"))
    t = t.manage.publish("audit")
    peer = lake.peer().load_table("db.ops")
    assert peer.current_snapshot().snapshot_id == peer.metadata.refs["audit"].snapshot_id
    assert sorted(r["id"] for r in peer.scan().to_arrow().to_pylist()) == sorted(r["id"] for r in t.read().to_pylist())
    t = t.manage.rollback(head)
    assert lake.peer().load_table("db.ops").current_snapshot().snapshot_id == head == t.current_snapshot.snapshot_id
    t = t.manage.drop_branch("dev").manage.drop_tag("t1")
    assert set(lake.peer().load_table("db.ops").metadata.refs) == set(t.refs) == {"main", "v2", "side", "audit"}
    # PyIceberg writes next; icebook (re-opened through the catalog) and Spark see its commit
    import pyarrow as pa_

    writer = lake.peer().load_table("db.ops")
    writer.append(pa_.table({"id": [200], "region": ["eu"], "amount": [2.0]}).cast(writer.schema().as_arrow()))
    # icebook's object is now stale: its change commits on the catalog's newest state, losing nothing
    stale = t
    t = stale.manage.create_tag("after-append")
    peer = lake.peer().load_table("db.ops")
    assert peer.metadata.refs["after-append"].snapshot_id == peer.current_snapshot().snapshot_id
    assert 200 in peer.scan().to_arrow().column("id").to_pylist()
    assert 200 in t.read(engine="spark").column("id").to_pylist() and 200 in t.read().column("id").to_pylist()


def _age(bucket: str, prefix: str, days: int) -> None:
    """Make the objects under ``prefix`` look ``days`` old (the server runs in this process)."""
    from moto.s3.models import s3_backends

    old = dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(days=days)
    for account in s3_backends.values():
        for backend in account.values():
            found = backend.buckets.get(bucket)
            if found is not None:
                for key in found.keys.values():
                    if key.name.startswith(prefix):
                        key.last_modified = old


def test_maintenance_procedures_through_the_catalog_match_the_previews(spark: Any, lake: Lake, catalog: str) -> None:
    t = icebook.open(f"{catalog}.db.maint")
    # rewrite_data_files: the files Spark rewrote are the ones the preview grouped
    options = {"min-input-files": "2", "target-file-size-bytes": str(64 * 1024 * 1024)}
    preview = t.maintenance.compaction_preview(options)
    planned = {f.file_path for f in preview.rewritten_files}
    assert planned
    result = t.maintenance.rewrite_data_files(options)
    rewritten = set(t.inspect.files()["file_path"]) - set(result.table.inspect.files()["file_path"])
    assert rewritten == planned
    assert result.output["rewritten_data_files_count"] == len(planned)
    peer = lake.peer().load_table("db.maint")
    assert peer.current_snapshot().snapshot_id == result.table.current_snapshot.snapshot_id
    assert peer.current_snapshot().summary.operation.value == "replace"
    t = result.table
    # expire_snapshots: the deleted files are the preview's, and they are gone from the store
    now = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=1)
    expiry = t.maintenance.expire_preview(older_than=now, retain_last=1)
    before = lake.keys("lake", "wh/db/maint/")
    expired = t.maintenance.expire_snapshots(older_than=now, retain_last=1)
    after = lake.keys("lake", "wh/db/maint/")
    assert before - after == {f.path for f in expiry.files} and expiry.files
    peer = lake.peer().load_table("db.maint")
    assert {s.snapshot_id for s in peer.snapshots()} == {s.snapshot_id for s in expired.table.snapshots}
    # remove_orphan_files: an orphan older than the cutoff is found by icebook and deleted by Spark
    t = expired.table
    orphan = "wh/db/maint/data/region=us/orphan-00000.parquet"
    lake.s3().put_object(Bucket="lake", Key=orphan, Body=b"not referenced")
    _age("lake", "wh/db/maint/", days=5)
    cutoff = dt.timedelta(days=3)
    found = t.maintenance.orphans(older_than=cutoff)
    assert [o.removeprefix("s3://lake/") for o in found.paths] == [orphan]
    removed = t.maintenance.remove_orphan_files(older_than=cutoff)
    assert [p.split("://", 1)[1] for p in removed.output] == [f"lake/{orphan}"]
    assert f"s3://lake/{orphan}" not in lake.keys("lake", "wh/db/maint/")
    assert rows(removed.table.read(engine="spark")) == rows(lake.peer().load_table("db.maint").scan().to_arrow())


def test_a_catalog_spark_cannot_have_reads_the_metadata_file_and_refuses_changes(
    spark: Any, lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A catalog given as a Python class (``py-catalog-impl``) has no Spark counterpart."""
    impl = {"py-catalog-impl": "pyiceberg.catalog.sql.SqlCatalog", "uri": f"sqlite:///{lake.catalog_db}"}
    catalog_env(monkeypatch, "s3custom", {**impl, **lake.props()})
    t = icebook.open("s3custom.db.custom")
    assert t._spark_identifier() is None
    for at in _points(t):
        assert rows(t.read(at=at, engine="spark")) == rows(t.read(at=at)), at
    with pytest.raises(EngineError) as info:
        t.manage.create_branch("never")
    message = str(info.value)
    assert "\n" not in message and "cannot configure a custom-type catalog in Spark" in message
    assert "spark.sql.catalog.<name>" in message


def test_a_missing_library_is_one_line_naming_its_coordinate(spark: Any) -> None:
    absent = spark_storage.Library("S3 (S3FileIO)", "org.example:no-such-bundle:1.0", "org.example.NoSuchClient")
    with pytest.raises(EnvironmentProblem) as info:
        spark_storage.require(spark, absent, needed_for="Reading s3://lake/wh/db/t")
    message = str(info.value)
    assert "\n" not in message and message.startswith("Reading s3://lake/wh/db/t needs S3 (S3FileIO) in Spark")
    assert "add org.example:no-such-bundle:1.0 to the session's spark.jars.packages" in message
    # the libraries icebook's session asks for are on its classpath
    for library in (spark_storage.s3(), spark_storage.gcs(), spark_storage.adls(), spark_storage.glue()):
        assert spark_storage.has_class(spark, library.probe_class), library.what
    for library in (spark_storage.SQLITE_JDBC, spark_storage.POSTGRES_JDBC):
        assert spark_storage.has_class(spark, library.probe_class), library.what
