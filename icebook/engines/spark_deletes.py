"""Which delete files apply to which data files, as Spark SQL over the ``entries`` metadata table: the
delete index's rules (``analysis/scan/delete_index.py``) joined and aggregated on Spark's executors, so
only one row per partition reaches the driver.

The rules, as the local plan's reference tasks apply them:
- deletion vectors: by ``referenced_data_file``, same spec and partition, data seq <= DV seq;
- position delete files: same spec and partition, data seq <= delete seq, within the file they
  reference and their ``file_path`` bounds, unless a deletion vector applies to the data file;
- equality delete files: same spec and partition (any data file when the delete's spec is
  unpartitioned), data seq < delete seq, unless the column statistics of one equality field prove
  that no row of one equals a row of the other (the statistics rule of the reference implementation).
Null partition values are equal to each other (``<=>``); a missing bound or count rules nothing out.
"""

from __future__ import annotations

from icebook.spec.metadata import TableMetadata
from icebook.spec.schema import DELETE_FILE_PATH_ID
from icebook.spec.types import UUID, GeoType, IcebergType, Primitive, PrimitiveType, is_primitive

APPLICABILITY = ("delete_records", "files_with_deletes", "equality_deletes_applying", "dangling_deletes")


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _bound(side: str, fid: int, name: str, which: str, t: IcebergType) -> str:
    """A bound of ``side`` as the local statistics compare it: from the readable metrics (Spark's typed
    value); a uuid's raw 16 bytes (Iceberg's readable metrics fail on uuid columns, and big-endian bytes
    order as the local comparison does); none for geospatial types; a NaN bound says nothing."""
    if isinstance(t, GeoType):
        return "NULL"
    if t == UUID:
        return f"{side}.{'lows' if which == 'lower_bound' else 'highs'}[{fid}]"
    value = f"{side}.m.{_quote(name)}.{which}"
    if isinstance(t, PrimitiveType) and t.name in (Primitive.FLOAT, Primitive.DOUBLE):
        return f"(CASE WHEN isnan({value}) THEN NULL ELSE {value} END)"
    return value


def _disjoint(metadata: TableMetadata, equality_ids: list[int]) -> str:
    """SQL true when the statistics of one equality field of delete ``x`` rule out data file ``d``."""
    schema = metadata.current_schema()
    rules = []
    for fid in sorted(set(equality_ids)):
        field = schema.find_field(fid)
        name = schema.find_column_name(fid)
        if field is None or name is None or not is_primitive(field.type):  # no statistics for nested types
            continue
        required = "true" if field.required else "false"
        optional = "false" if field.required else "true"
        d_no_null = f"(coalesce(d.nulls[{fid}] = 0, false) OR {required})"
        x_no_null = f"(coalesce(x.nulls[{fid}] = 0, false) OR {required})"
        d_all_null = f"(coalesce(d.nulls[{fid}] = d.vals[{fid}], false) AND {optional})"
        x_all_null = f"(coalesce(x.nulls[{fid}] = x.vals[{fid}], false) AND {optional})"
        d_lo, d_hi = (_bound("d", fid, name, w, field.type) for w in ("lower_bound", "upper_bound"))
        x_lo, x_hi = (_bound("x", fid, name, w, field.type) for w in ("lower_bound", "upper_bound"))
        # Either comparison unknown: nothing is ruled out (not SQL's three-valued OR).
        apart = (
            f"(CASE WHEN {d_lo} IS NULL OR {d_hi} IS NULL OR {x_lo} IS NULL OR {x_hi} IS NULL THEN false "
            f"ELSE ({d_lo} > {x_hi} OR {x_lo} > {d_hi}) END)"
        )
        rules.append(
            f"(array_contains(x.eq_ids, {fid}) AND NOT (NOT {d_no_null} AND NOT {x_no_null}) "
            f"AND (({d_all_null} AND {x_no_null}) OR ({x_all_null} AND {d_no_null}) OR {apart}))"
        )
    return " OR ".join(rules) or "false"


def applicability_sql(metadata: TableMetadata, partitioned: bool, equality_ids: list[int]) -> str:
    """Per (spec, partition): the four applicability measures of the health report's files section."""
    part = "f.partition" if partitioned else "CAST(NULL AS INT)"
    global_specs = [sid for sid, spec in metadata.partition_specs.items() if spec.is_unpartitioned]
    is_global = f"x.spec_id IN ({', '.join(map(str, global_specs))})" if global_specs else "false"
    same_partition = "d.spec_id = x.spec_id AND d.part <=> x.part"
    group = "spec_id, part" if partitioned else "spec_id"
    out = "spec_id, part AS partition" if partitioned else "spec_id"
    return f"""
    WITH live AS (
        SELECT coalesce(sequence_number, 0) AS seq, data_file AS f, readable_metrics AS m
        FROM {{entries}} WHERE status <> 2),
    data AS (
        SELECT seq, f.file_path AS path, f.spec_id AS spec_id, {part} AS part,
            f.null_value_counts AS nulls, f.value_counts AS vals, f.lower_bounds AS lows,
            f.upper_bounds AS highs, m
        FROM live WHERE f.content = 0),
    dels AS (
        SELECT seq, f.content AS content, upper(f.file_format) = 'PUFFIN' AS puffin, f.file_path AS path,
            concat(f.file_path, '#', coalesce(cast(f.content_offset AS STRING), 'None')) AS dkey,
            f.spec_id AS spec_id, {part} AS part, f.record_count AS records, f.referenced_data_file AS ref,
            cast(f.lower_bounds[{DELETE_FILE_PATH_ID}] AS STRING) AS path_lo,
            cast(f.upper_bounds[{DELETE_FILE_PATH_ID}] AS STRING) AS path_hi,
            f.equality_ids AS eq_ids, f.null_value_counts AS nulls, f.value_counts AS vals,
            f.lower_bounds AS lows, f.upper_bounds AS highs, m
        FROM live WHERE f.content <> 0),
    dv AS (
        SELECT d.path AS data_path, d.spec_id, d.part, x.path AS delete_path, x.content
        FROM data d JOIN dels x
        ON x.content = 1 AND x.puffin AND x.ref = d.path AND {same_partition} AND d.seq <= x.seq),
    pos AS (
        SELECT d.path AS data_path, d.spec_id, d.part, x.path AS delete_path, x.content
        FROM data d JOIN dels x
        ON x.content = 1 AND NOT x.puffin AND {same_partition} AND d.seq <= x.seq
            AND (x.ref IS NULL OR x.ref = d.path)
            AND NOT coalesce(d.path < x.path_lo, false) AND NOT coalesce(d.path > x.path_hi, false)
        WHERE d.path NOT IN (SELECT data_path FROM dv)),
    eq AS (
        SELECT d.path AS data_path, d.spec_id, d.part, x.path AS delete_path, x.content
        FROM data d JOIN dels x
        ON x.content = 2 AND ({is_global} OR ({same_partition})) AND d.seq < x.seq
        WHERE NOT ({_disjoint(metadata, equality_ids)})),
    applied AS (SELECT * FROM dv UNION ALL SELECT * FROM pos UNION ALL SELECT * FROM eq),
    anywhere AS (SELECT DISTINCT delete_path FROM applied),
    own AS (
        SELECT spec_id, part, content, path, max(records) AS records FROM dels GROUP BY spec_id, part, content, path, dkey),
    data_side AS (
        SELECT spec_id, part, count(DISTINCT data_path) AS files_with_deletes,
            count(DISTINCT CASE WHEN content = 2 THEN delete_path END) AS equality_deletes_applying,
            0L AS delete_records, 0L AS dangling_deletes
        FROM applied GROUP BY spec_id, part),
    delete_side AS (
        SELECT o.spec_id, o.part, 0L AS files_with_deletes, 0L AS equality_deletes_applying,
            coalesce(sum(CASE WHEN a.delete_path IS NOT NULL THEN o.records END), 0) AS delete_records,
            count_if(o.content = 1 AND a.delete_path IS NULL) AS dangling_deletes
        FROM own o LEFT JOIN anywhere a ON o.path = a.delete_path GROUP BY o.spec_id, o.part)
    SELECT {out}, sum(files_with_deletes) AS files_with_deletes,
        sum(equality_deletes_applying) AS equality_deletes_applying,
        sum(delete_records) AS delete_records, sum(dangling_deletes) AS dangling_deletes
    FROM (SELECT * FROM data_side UNION ALL SELECT * FROM delete_side) GROUP BY {group}"""


def equality_ids_sql() -> str:
    """The field ids any live equality delete file names (a handful of rows)."""
    return (
        "SELECT DISTINCT id FROM (SELECT explode(data_file.equality_ids) AS id FROM {entries} "
        "WHERE status <> 2 AND data_file.content = 2)"
    )


__all__ = ["APPLICABILITY", "applicability_sql", "equality_ids_sql"]
