"""Branch, tag and snapshot operations, as Iceberg's Spark SQL extensions and stored procedures.

These are the only places icebook changes a table, and only when the user asks for it.
Each function takes a catalog identifier (``catalog.db.table``) and runs one statement.
"""

from __future__ import annotations

import datetime as _dt

from icebook.engines.spark_engine import get_session, retention_sql, run, spark_errors
from icebook.text import spark_call, spark_string, spark_timestamp


def _as_of(snapshot_id: int | None) -> str:
    return f" AS OF VERSION {int(snapshot_id)}" if snapshot_id is not None else ""


def _ref_age(retain_ms: int | _dt.timedelta | None) -> str:
    """``RETAIN <ref age>`` of a branch or tag (``max-ref-age-ms``), nothing when not given."""
    return f" RETAIN {retention_sql(retain_ms)}" if retain_ms is not None else ""


def _branch_retention(
    retain_ms: int | _dt.timedelta | None,
    min_snapshots_to_keep: int | None,
    max_snapshot_age_ms: int | _dt.timedelta | None,
) -> str:
    """``RETAIN <ref age> WITH SNAPSHOT RETENTION [<n> SNAPSHOTS] [<age>]`` (spec: "Snapshot Retention Policy")."""
    out = _ref_age(retain_ms)
    if min_snapshots_to_keep is not None or max_snapshot_age_ms is not None:
        out += " WITH SNAPSHOT RETENTION"
        if min_snapshots_to_keep is not None:
            out += f" {int(min_snapshots_to_keep)} SNAPSHOTS"
        if max_snapshot_age_ms is not None:
            out += f" {retention_sql(max_snapshot_age_ms)}"
    return out


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _create_ref(identifier: str, kind: str, name: str, snapshot_id: int | None, replace: bool, retention: str) -> None:
    """``CREATE`` (or ``REPLACE``) ``BRANCH``/``TAG`` ``name`` at a snapshot (default: current) with its
    retention clause: the one statement of both kinds of ref."""
    verb = "REPLACE" if replace else "CREATE"
    run(f"ALTER TABLE {identifier} {verb} {kind} {_quote(name)}{_as_of(snapshot_id)}{retention}")


def _drop_ref(identifier: str, kind: str, name: str) -> None:
    run(f"ALTER TABLE {identifier} DROP {kind} {_quote(name)}")


def create_branch(
    identifier: str,
    name: str,
    snapshot_id: int | None = None,
    *,
    replace: bool = False,
    retain_ms: int | _dt.timedelta | None = None,
    min_snapshots_to_keep: int | None = None,
    max_snapshot_age_ms: int | _dt.timedelta | None = None,
) -> None:
    retention = _branch_retention(retain_ms, min_snapshots_to_keep, max_snapshot_age_ms)
    _create_ref(identifier, "BRANCH", name, snapshot_id, replace, retention)


def drop_branch(identifier: str, name: str) -> None:
    _drop_ref(identifier, "BRANCH", name)


def create_tag(
    identifier: str,
    name: str,
    snapshot_id: int | None = None,
    *,
    replace: bool = False,
    retain_ms: int | _dt.timedelta | None = None,
) -> None:
    _create_ref(identifier, "TAG", name, snapshot_id, replace, _ref_age(retain_ms))


def drop_tag(identifier: str, name: str) -> None:
    _drop_ref(identifier, "TAG", name)


def fast_forward(identifier: str, branch: str, to: str) -> None:
    run(spark_call(identifier, "fast_forward", [("branch", spark_string(branch)), ("to", spark_string(to))]))


def cherry_pick(identifier: str, snapshot_id: int) -> None:
    run(spark_call(identifier, "cherrypick_snapshot", [("snapshot_id", str(int(snapshot_id)))]))


def rollback_to_snapshot(identifier: str, snapshot_id: int) -> None:
    run(spark_call(identifier, "rollback_to_snapshot", [("snapshot_id", str(int(snapshot_id)))]))


def rollback_to_time(identifier: str, when_ms: int) -> None:
    run(spark_call(identifier, "rollback_to_timestamp", [("timestamp", spark_timestamp(when_ms))]))


def set_current_snapshot(identifier: str, snapshot_id: int) -> None:
    run(spark_call(identifier, "set_current_snapshot", [("snapshot_id", str(int(snapshot_id)))]))


def enable_wap(identifier: str) -> None:
    run(f"ALTER TABLE {identifier} SET TBLPROPERTIES ('write.wap.enabled'='true')")


def copy_table(identifier: str, source_location: str, target_location: str) -> int:
    """Copy a table to ``target_location`` (Iceberg's ``rewrite_table_path`` procedure): metadata files,
    manifest lists, manifests and position deletes are rewritten to name the new location, then every
    file is copied. Tables record absolute paths, so copying the directory alone would leave the copy
    pointing at the original's files. Returns the number of files copied. The source is only read.
    """
    import tempfile
    from pathlib import Path

    import pyarrow.fs as pafs

    source = source_location.removeprefix("file:").rstrip("/")
    target = target_location.removeprefix("file:").rstrip("/")
    with tempfile.TemporaryDirectory(prefix="icebook-copy-") as staging:
        paths = {"source_prefix": source, "target_prefix": target, "staging_location": staging}
        statement = spark_call(identifier, "rewrite_table_path", [(k, spark_string(v)) for k, v in paths.items()])
        with spark_errors(f"copying {identifier} to {target}"):
            listing = Path(str(get_session().sql(statement).collect()[0].file_list_location).removeprefix("file:"))
        # The file list is a CSV of "source,target" lines: one file, or a folder of part files.
        parts = sorted(p for p in listing.rglob("*") if p.is_file()) if listing.is_dir() else [listing]
        pairs = [
            line.split(",", 1)
            for part in parts
            if not part.name.startswith((".", "_"))
            for line in part.read_text().splitlines()
            if line.strip()
        ]
        for src, dst in pairs:
            src_path, dst_path = src.removeprefix("file:"), dst.removeprefix("file:")
            if "://" not in dst_path:
                Path(dst_path).parent.mkdir(parents=True, exist_ok=True)
            pafs.copy_files(src_path, dst_path)
    return len(pairs)
