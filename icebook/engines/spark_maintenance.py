"""Table maintenance through Iceberg's Spark procedures: ``expire_snapshots``, ``remove_orphan_files``,
``rewrite_data_files``, ``rewrite_manifests`` and ``rewrite_position_delete_files``.

These change a table (and delete files), so they run only when a user calls them. Each function
takes a catalog identifier (``catalog.db.table``), runs one ``CALL`` and returns the procedure's
result rows as dictionaries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from icebook.engines.spark_engine import spark_errors
from icebook.engines.spark_session import get_session
from icebook.text import spark_call, spark_string, spark_timestamp


def options_sql(options: Mapping[str, Any]) -> str:
    """``map('k', 'v', ...)`` for a procedure's ``options`` argument."""
    pairs = ", ".join(f"{spark_string(str(k))}, {spark_string(str(v))}" for k, v in options.items())
    return f"map({pairs})"


def call(identifier: str, procedure: str, args: Mapping[str, str]) -> list[dict[str, Any]]:
    """Run one procedure and return its output rows."""
    spark = get_session()
    statement = spark_call(identifier, procedure, args.items())
    with spark_errors(f"running {statement[:200]!r}"):
        rows = spark.sql(statement).collect()
        spark.sql(f"REFRESH TABLE {identifier}")
    return [r.asDict(recursive=True) for r in rows]


def expire_snapshots(
    identifier: str,
    *,
    older_than_ms: int | None = None,
    retain_last: int | None = None,
    snapshot_ids: tuple[int, ...] = (),
) -> dict[str, Any]:
    args: dict[str, str] = {}
    if older_than_ms is not None:
        args["older_than"] = spark_timestamp(older_than_ms)
    if retain_last is not None:
        args["retain_last"] = str(int(retain_last))
    if snapshot_ids:
        args["snapshot_ids"] = "array(" + ", ".join(str(int(s)) for s in snapshot_ids) + ")"
    rows = call(identifier, "expire_snapshots", args)
    return rows[0] if rows else {}


def remove_orphan_files(
    identifier: str,
    *,
    older_than_ms: int | None = None,
    location: str | None = None,
    dry_run: bool = False,
    prefix_listing: bool = False,
) -> list[str]:
    """The orphan files found (and, unless ``dry_run``, deleted). ``prefix_listing``: list through the
    table's FileIO rather than Hadoop's file systems, which serve no object store in icebook's sessions."""
    args: dict[str, str] = {"prefix_listing": "true"} if prefix_listing else {}
    if older_than_ms is not None:
        args["older_than"] = spark_timestamp(older_than_ms)
    if location is not None:
        args["location"] = spark_string(location)
    if dry_run:
        args["dry_run"] = "true"
    return [str(r["orphan_file_location"]) for r in call(identifier, "remove_orphan_files", args)]


def rewrite_data_files(
    identifier: str, *, options: Mapping[str, Any] | None = None, where: str | None = None
) -> dict[str, Any]:
    args: dict[str, str] = {"strategy": "'binpack'"}
    if options:
        args["options"] = options_sql(options)
    if where:
        args["where"] = spark_string(where)
    rows = call(identifier, "rewrite_data_files", args)
    return rows[0] if rows else {}


def rewrite_manifests(identifier: str, *, use_caching: bool | None = None) -> dict[str, Any]:
    args: dict[str, str] = {}
    if use_caching is not None:
        args["use_caching"] = "true" if use_caching else "false"
    rows = call(identifier, "rewrite_manifests", args)
    return rows[0] if rows else {}


def rewrite_position_delete_files(identifier: str, *, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
    args: dict[str, str] = {}
    if options:
        args["options"] = options_sql(options)
    rows = call(identifier, "rewrite_position_delete_files", args)
    return rows[0] if rows else {}


__all__ = [
    "call",
    "expire_snapshots",
    "options_sql",
    "remove_orphan_files",
    "rewrite_data_files",
    "rewrite_manifests",
    "rewrite_position_delete_files",
]
