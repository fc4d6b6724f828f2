"""``Table.storage``: every file under the location in exactly one category, and each category's files equal
to sets computed independently: a listing of the directory (``os.walk``) and PyIceberg's own metadata tables
(``files`` at each ref, ``all_files``, ``all_manifests``, ``metadata_log_entries``, ``snapshots``).

The table is written by PyIceberg into a temporary SQL catalog: appends, an overwrite, a tag, a branch, a
delete (files only history keeps), a stray file (an orphan) and a hidden checksum file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import icebook

MAX_AGE = "history.expire.max-snapshot-age-ms"


def _local(path: str) -> str:
    return path.removeprefix("file://")


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, Path]:
    from pyiceberg.catalog.sql import SqlCatalog

    root = tmp_path_factory.mktemp("storage")
    catalog = SqlCatalog("c", uri=f"sqlite:///{root / 'c.db'}", warehouse=(root / "wh").as_uri())
    catalog.create_namespace("db")
    rows = pa.table({"id": pa.array(range(100), pa.int64()), "r": pa.array([["us", "eu"][i % 2] for i in range(100)])})
    t = catalog.create_table("db.t", rows.schema)
    with t.update_spec() as update:
        update.add_identity("r")
    t = catalog.load_table("db.t")
    t.append(rows.slice(0, 50))
    t.append(rows.slice(50))
    t.manage_snapshots().create_tag(t.current_snapshot().snapshot_id, "v1").commit()
    t.overwrite(rows.slice(0, 10))
    t.manage_snapshots().create_branch(t.current_snapshot().snapshot_id, "dev").commit()
    t.append(rows.slice(20, 30))
    t.delete("id >= 20")  # the append's files: only history keeps them now
    t.append(rows.slice(30, 40))
    location = Path(_local(t.location()))
    (location / "data" / "stray.parquet").write_bytes(b"x" * 100)
    (location / "data" / ".stray.parquet.crc").write_bytes(b"x" * 10)
    return t, location


def _listing(location: Path) -> dict[str, int]:
    return {str(Path(d) / name): (Path(d) / name).stat().st_size for d, _, names in os.walk(location) for name in names}


def _paths(frame: Any, column: str = "file_path") -> set[str]:
    return {_local(p) for p in frame.to_pandas()[column]}


def _category(storage: Any, category: str) -> set[str]:
    return {_local(p) for p in storage.files.loc[storage.files["category"] == category, "file_path"]}


def test_categories_cover_the_location_once_and_match_pyiceberg(tables: tuple[Any, Path]) -> None:
    py, location = tables
    t = icebook.open(_local(py.metadata_location))
    s = t.storage()
    listed = _listing(location)
    files = s.files.assign(file_path=s.files["file_path"].map(_local))
    assert sorted(files["file_path"]) == sorted(listed)  # every file exactly once
    assert dict(zip(files["file_path"], files["bytes"], strict=True)) == listed
    sums = files.groupby("category")["bytes"].sum()
    assert {
        r.category: r.bytes for r in s.categories.groupby("category", as_index=False)["bytes"].sum().itertuples()
    } == {k: int(v) for k, v in sums.items()}
    assert "unclassified" not in set(s.categories["category"])

    inspect = py.inspect
    main = _paths(inspect.data_files())
    refs = {n: _paths(inspect.files(snapshot_id=r.snapshot_id)) for n, r in py.metadata.refs.items() if n != "main"}
    every = _paths(inspect.all_files())
    assert _category(s, "data") == main
    assert _category(s, "other refs") == set().union(*refs.values()) - main
    history = every - main - set().union(*refs.values())
    assert history and _category(s, "history: retained") == history
    assert _category(s, "metadata: manifests") == _paths(inspect.all_manifests(), "path")
    lists = {_local(x) for x in inspect.snapshots().to_pandas()["manifest_list"]}
    assert _category(s, "metadata: manifest lists") == lists
    logged = {_local(x) for x in inspect.metadata_log_entries().to_pandas()["file"]}
    assert _category(s, "metadata: metadata files") == logged
    assert _category(s, "orphans") == {str(location / "data" / "stray.parquet")}
    assert _category(s, "hidden files") == {str(location / "data" / ".stray.parquet.crc")}
    tag = s.categories[s.categories["detail"].str.contains("tag 'v1'")]
    assert len(tag) == 1 and "branch 'dev'" not in tag["detail"].iloc[0]
    retained = s.categories.loc[s.categories["category"] == "history: retained", "detail"].iloc[0]
    assert f"{MAX_AGE}=432000000" in retained and "until at least" in retained

    by_partition = s.by_partition.groupby("category")["bytes"].sum()
    for category in ("data", "other refs", "history: retained"):
        assert int(by_partition[category]) == int(sums[category])
    assert set(s.by_partition["partition"]) == {"r=us", "r=eu"}


def test_history_the_table_retention_expires_now(tables: tuple[Any, Path]) -> None:
    """With a max snapshot age of 1 ms, expiry keeps only the refs' heads (one snapshot each, the default
    minimum): every file only history keeps goes now."""
    py, _ = tables
    with py.transaction() as tx:
        tx.set_properties({MAX_AGE: "1"})
    t = icebook.open(_local(py.metadata_location))
    s = t.storage()
    inspect = py.inspect
    heads = set().union(*(_paths(inspect.files(snapshot_id=r.snapshot_id)) for r in py.metadata.refs.values()))
    history = _paths(inspect.all_files()) - heads
    assert history and _category(s, "history: expires now") == history
    assert "history: retained" not in set(s.categories["category"])
    detail = s.categories.loc[s.categories["category"] == "history: expires now", "detail"].iloc[0]
    assert "expire_snapshots deletes them now" in detail and f"{MAX_AGE} (1 ms)" in detail


def test_storage_at_a_tag_counts_the_tags_files_as_live(tables: tuple[Any, Path]) -> None:
    py, _ = tables
    t = icebook.open(_local(py.metadata_location))
    s = t.storage(at="v1")
    assert _category(s, "data") == _paths(py.inspect.files(snapshot_id=py.metadata.refs["v1"].snapshot_id))
    assert s.snapshot_id == py.metadata.refs["v1"].snapshot_id


def test_namespace_rollup_most_bytes_first(tables: tuple[Any, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    from pyiceberg.catalog.sql import SqlCatalog

    from icebook.cli import main
    from icebook.commands import Context, Session, build_parser, execute, parse

    _, location = tables
    root = location.parent.parent.parent  # <root>/wh/db/t
    props = {"type": "sql", "uri": f"sqlite:///{root / 'c.db'}", "warehouse": (root / "wh").as_uri()}
    catalog = SqlCatalog("c", **props)
    if not catalog.table_exists("db.small"):
        small = catalog.create_table("db.small", pa.schema([pa.field("x", pa.int64())]))
        small.append(pa.table({"x": pa.array([1], pa.int64())}))
    for key, value in props.items():
        monkeypatch.setenv(f"PYICEBERG_CATALOG__C__{key.upper()}", value)
    parser = build_parser(Context.NOTEBOOK)
    rollup = execute(parse(parser, "storage c.db"), Session(), Context.NOTEBOOK, parser)
    assert list(rollup["table"]) == ["c.db.t", "c.db.small"]
    for row in rollup.itertuples():
        s = icebook.open(row.table).storage()
        assert row.bytes == s.bytes and row.files == int(s.categories["files"].sum())
        assert row.data == int(s.categories.loc[s.categories["category"] == "data", "bytes"].sum())
        assert row.error is None
    history_and_more = ["data", "deletes", "other refs", "history", "metadata", "orphans", "hidden files"]
    assert (rollup[history_and_more].sum(axis=1) == rollup["bytes"]).all()
    out = __import__("io").StringIO()
    assert main(["storage", "c.db"], out=out) == 0 and "c.db.small" in out.getvalue()
