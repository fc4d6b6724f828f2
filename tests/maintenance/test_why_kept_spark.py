"""``why_kept`` against what Spark's procedures really do, on copies of scenario tables.

For each file ``expire_preview`` keeps, the preview's own arguments do not delete it, and the call its
``removed_by`` names (after dropping the refs it says to drop) does. An orphan's ``removed_by`` is a
``remove_orphan_files`` call that deletes it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _copies import age_files, files_on_disk, relocate_table

import icebook
from icebook.analysis.maintenance.why_kept import Removal
from icebook.engines import spark_maintenance
from icebook.engines.spark_engine import writable_identifier
from icebook.errors import NotFound
from icebook.table import Table

CASES = [
    ("debt", None),  # main keeps its live files; the stale tag goes by itself
    ("events", 1),  # a branch keeping its own 2 snapshots and a year-long tag: drop them first
]


def _location(t: Table) -> Path:
    return Path(t.location.removeprefix("file:"))


@pytest.mark.spark
@pytest.mark.parametrize(("name", "retain_last"), CASES, ids=[c[0] for c in CASES])
def test_removed_by_deletes_each_file_the_preview_keeps(
    spark: Any,
    copy_of: Callable[[str], Table],
    scenario_locations: dict[str, Path],
    tmp_path: Path,
    name: str,
    retain_last: int | None,
) -> None:
    t = copy_of(name)
    snapshots = t.snapshots
    older_than = snapshots[len(snapshots) // 2].timestamp_ms + 1
    preview = t.maintenance.expire_preview(older_than=older_than, retain_last=retain_last)
    kept = preview.kept_files()
    removals: dict[str, Removal] = dict(zip(kept["file_path"], kept["removal"], strict=True))
    assert removals, f"{name}: the preview should keep files"
    assert not {f.path for f in preview.files} & set(removals)
    # A file no call can delete says what must happen first; a live file of main is one.
    live = {f for f in t.inspect.files()["file_path"]}
    for path, removal in removals.items():
        assert removal.procedure is not None or removal.first, path
        if path in live:
            assert removal.procedure is None and "commit on main" in removal.text(), path
    # One file of each removal: the single-file answer agrees, judged by the same arguments.
    groups: dict[tuple[Any, ...], set[str]] = defaultdict(set)
    for path, removal in removals.items():
        if removal.procedure == "expire_snapshots":
            groups[(tuple(sorted(removal.args.items())), removal.drop_refs)].add(path)
    assert groups, f"{name}: some kept file should have a call that deletes it"
    for paths in groups.values():
        path = sorted(paths)[0]
        why = t.maintenance.why_kept(path, older_than=older_than, retain_last=retain_last)
        assert why.removed_by == removals[path] and not why.deleted_now and len(why.keepers)

    # The preview's own arguments delete none of them.
    before = files_on_disk(_location(t))
    t.maintenance.expire_snapshots(older_than=older_than, retain_last=retain_last)
    assert not (before - files_on_disk(_location(t))) & set(removals)

    # Each removal, on a fresh copy: drop the refs it names, run the call; its files are gone.
    for i, ((args, drop_refs), paths) in enumerate(sorted(groups.items(), key=str)):
        copy = relocate_table(scenario_locations[name], tmp_path / f"wh{i}" / "db" / name)
        moved = {str(copy) + p[len(str(_location(t))) :] for p in paths}
        assert moved <= files_on_disk(copy)
        identifier = writable_identifier(str(copy), None)
        refs = icebook.open(str(copy)).refs
        for ref in drop_refs:
            spark.sql(f"ALTER TABLE {identifier} DROP {refs[ref].type.upper()} `{ref}`")
        given = dict(args)
        spark_maintenance.expire_snapshots(
            identifier, older_than_ms=given["older_than"], retain_last=given.get("retain_last")
        )
        assert not moved & files_on_disk(copy), (args, drop_refs)


@pytest.mark.spark
def test_an_orphan_is_removed_by_the_call_its_answer_names(spark: Any, copy_of: Callable[[str], Table]) -> None:
    t = copy_of("debt")
    root = _location(t)
    stray = root / "data" / "stray.parquet"
    stray.write_bytes(b"referenced by nothing")
    age_files(root, days=2)
    why = t.maintenance.why_kept(str(stray))
    assert why.kind == "orphan" and not len(why.keepers)
    removal = why.removed_by
    assert removal.procedure == "remove_orphan_files" and not removal.first
    assert removal.args["older_than"] == stray.stat().st_mtime_ns // 1_000_000 + 1
    identifier = writable_identifier(t.location, None)
    spark_maintenance.remove_orphan_files(identifier, older_than_ms=removal.args["older_than"])
    assert not stray.exists()


@pytest.mark.spark
def test_metadata_files_and_missing_paths(spark: Any, tables_by_name: dict[str, Table]) -> None:
    t = tables_by_name["debt"]
    current = t.maintenance.why_kept(t.metadata_location)
    assert current.kind == "metadata file" and current.removed_by.procedure is None
    assert "write.metadata.previous-versions-max" in current.removed_by.text()
    manifest_list = t.current_snapshot.manifest_list
    head = t.maintenance.why_kept(manifest_list)
    assert head.kind == "manifest list" and list(head.keepers["snapshot_id"]) == [t.current_snapshot.snapshot_id]
    assert head.removed_by.procedure is None
    with pytest.raises(NotFound, match="no file of table"):
        t.maintenance.why_kept(t.location + "/data/never-written.parquet")


@pytest.mark.spark
def test_icebook_why_prints_it(
    spark: Any, scenario_locations: dict[str, Path], tables_by_name: dict[str, Table]
) -> None:
    import io

    from icebook.cli import main

    t = tables_by_name["debt"]
    live = t.inspect.files()["file_path"].iloc[0]
    out = io.StringIO()
    assert main(["why", str(scenario_locations["debt"]), live], out=out) == 0
    printed = out.getvalue()
    assert "removed by:" in printed and "commit on main" in printed and "head of branch 'main'" in printed
