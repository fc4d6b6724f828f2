"""The Table facade: binds a table's metadata to a FileIO and delegates to analyses and engines."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from icebook.analysis.engine_choice import Engine, EngineName
from icebook.analysis.resolve import At, AtRef, AtSnapshot, parse_at, read_schema, resolve_snapshot
from icebook.display.formatters import register_formatters
from icebook.display.registry import register, render_html
from icebook.errors import EngineError, NotFound
from icebook.io.fileio import FileIO
from icebook.spec.filenames import parse_metadata_file_name
from icebook.spec.metadata import TableMetadata, commit_order
from icebook.spec.schema import Schema
from icebook.spec.snapshots import Branch, Ref, Snapshot
from icebook.table.table_lookup import FoundTable, find_table
from icebook.table.table_maintenance import TableMaintenance
from icebook.table.table_manage import TableManage

# Opening a table and its first view import only the above; each analysis, engine and view is imported
# by the method that uses it (pandas, pyarrow.compute and polars load with them).
if TYPE_CHECKING:
    import pyarrow as pa

    from icebook.analysis._frames import Output
    from icebook.analysis.cost.compare_plans import PlanComparison
    from icebook.analysis.cost.query_cost import QueryCost
    from icebook.analysis.cost.storage import Storage
    from icebook.analysis.history.diff import SnapshotDiff
    from icebook.analysis.history.evolution import Evolution
    from icebook.analysis.history.lineage import Lineage
    from icebook.analysis.history.timelapse import Timelapse
    from icebook.analysis.scan.planner import ScanPlan
    from icebook.analysis.scan.summary import ScanSummary
    from icebook.analysis.store.manifests import ManifestStore
    from icebook.analysis.tables.inspector import Inspector
    from icebook.analysis.v3.inspection import V3Inspection
    from icebook.engines import arrow_sql, spark_engine
    from icebook.engines.spark_aggregates import SparkMetadataTables


class Table:
    """One Iceberg table as of one metadata file. It reads only; its other concerns are objects of their own:
    ``t.inspect`` (the metadata tables), ``t.maintenance`` (health, previews, and the procedures that change
    the table through Spark) and ``t.manage`` (branches, tags, the current snapshot, write-audit-publish and
    copies, changed through Spark). Every change is asked for by name and returns a table re-opened."""

    def __init__(
        self,
        metadata: TableMetadata,
        metadata_location: str,
        fileio: FileIO,
        *,
        identifier: str | None = None,
        catalog_kind: Literal["pyiceberg", "spark"] | None = None,
    ) -> None:
        self.identifier = identifier
        """The catalog name (``catalog.db.table``) when opened by name, else None."""
        self.catalog_kind = catalog_kind
        """Who resolved ``identifier``: a PyIceberg-configured catalog or Spark's session catalog."""
        self.metadata = metadata
        self.metadata_location = metadata_location
        self.fileio = fileio
        register_formatters()  # inside IPython, results display richly even without %load_ext icebook

    @cached_property
    def store(self) -> ManifestStore:
        """Reads and caches this table's manifest lists and manifests (immutable, so cached by path);
        made on first use, so that opening a table imports no decoder."""
        from icebook.analysis.store.manifests import ManifestStore

        return ManifestStore(self.fileio, self.metadata)

    @property
    def location(self) -> str:
        return self.metadata.location

    @property
    def format_version(self) -> int:
        return self.metadata.format_version

    @property
    def snapshots(self) -> tuple[Snapshot, ...]:
        """Every valid snapshot, in commit order."""
        return tuple(sorted(self.metadata.snapshots, key=commit_order))

    @property
    def current_snapshot(self) -> Snapshot | None:
        return self.metadata.current_snapshot()

    @property
    def refs(self) -> Mapping[str, Ref]:
        return self.metadata.refs

    def snapshot(self, at: At) -> Snapshot:
        """The snapshot for a snapshot id, branch or tag name, or a point in time (as of, on main)."""
        snapshot = resolve_snapshot(self.metadata, at)
        if snapshot is None:
            raise NotFound(f"table {self.location} has no snapshot yet")
        return snapshot

    @cached_property
    def inspect(self) -> Inspector:
        """Spark-shaped metadata tables: ``t.inspect.files()``, ``t.inspect.snapshots()``, ..."""
        from icebook.analysis.tables.inspector import Inspector

        return Inspector(self, spark_partitions=self._spark_partitions)

    @property
    def maintenance(self) -> TableMaintenance:
        """Health, maintenance previews and Spark's procedures: ``t.maintenance.health()``,
        ``t.maintenance.expire_preview(...)`` then ``t.maintenance.expire_snapshots(...)``, ..."""
        return TableMaintenance(self)

    @property
    def manage(self) -> TableManage:
        """Changes to refs and the current snapshot through Spark, each returning the table re-opened:
        ``t.manage.create_branch(...)``, ``t.manage.rollback(...)``, ``t.manage.wap_write(...)`` then
        ``t.manage.publish(...)``, ``t.manage.copy_to(...)``, ..."""
        return TableManage(self)

    def _spark_metadata_tables(self, snapshot: Snapshot | None) -> SparkMetadataTables:
        from icebook.engines.spark_aggregates import SparkMetadataTables

        return SparkMetadataTables(
            location=self.location,
            metadata_location=self.metadata_location,
            properties=getattr(self.fileio, "properties", {}),
            snapshot_id=snapshot.snapshot_id if snapshot is not None else None,
        )

    def _spark_partitions(self, snapshot: Snapshot | None) -> pa.Table:
        from icebook.engines import spark_aggregates

        return spark_aggregates.partitions(self.metadata, self._spark_metadata_tables(snapshot))

    # ------------------------------------------------------------------ history analyses

    def diff(self, a: At, b: At = None) -> SnapshotDiff:
        """What changed from ``a`` to ``b`` (default: current): manifests, files, partitions, schema,
        specs, sort orders, properties. Reads only the manifests the two snapshots do not share."""
        from icebook.analysis.history.diff import diff

        return diff(self, a, b)

    def lineage(self) -> Lineage:
        """The snapshot graph: parents, branches and tags, main's ancestry, unreachable snapshots."""
        from icebook.analysis.history.lineage import lineage

        return lineage(self.metadata)

    def evolution(self) -> Evolution:
        """Schema, partition spec and sort order timelines aligned with snapshots."""
        from icebook.analysis.history.evolution import evolution

        return evolution(self)

    def timelapse(
        self, ref: str | None = None, since: At = None, until: At = None, *, manifests: bool = True
    ) -> Timelapse:
        """The table replayed: one frame per snapshot in commit order (every snapshot, or ``ref``'s
        ancestry), with totals, what each commit changed, and the per-partition state at each frame;
        ``manifests=False``: from the manifest lists' counts only."""
        from icebook.analysis.history.timelapse import timelapse

        lapse = timelapse(self, ref, since, until, manifests=manifests)
        return dataclasses.replace(lapse, source=self)

    # ------------------------------------------------------------------ reading through an engine

    def read_schema(self, at: At = None) -> Schema:
        """The schema a read at ``at`` returns, by Spark's rule (``analysis.resolve.read_schema``): the
        current schema for the current state and for a branch (main included), the snapshot's own
        schema for a snapshot id, a tag or a time."""
        return read_schema(self.metadata, at)

    def _spark_identifier(self) -> str | None:
        """The name Spark reads this table by, when Spark's session has its catalog; else None (Spark
        then reads the exact metadata file icebook opened)."""
        return self._spark_target()[0]

    def _spark_target(self) -> tuple[str | None, str]:
        """Prepares Spark for this table's store; the name Spark reads it by (or None) and, when None
        for a catalog table, why Spark cannot have its catalog."""
        from icebook.engines import spark_engine

        found: tuple[str | None, str] = (None, "")
        if self.identifier is not None and self.catalog_kind == "pyiceberg":
            found = spark_engine.catalog_identifier(self.identifier, self.location)
        elif self.identifier is not None and spark_engine.has_catalog(self.identifier.split(".", 1)[0]):
            found = (self.identifier, "")
        if found[0] is None:  # Spark reads the exact metadata file icebook opened
            spark_engine.prepare_table(self.location, self.metadata_location, getattr(self.fileio, "properties", {}))
        else:
            spark_engine.probe_by_name(found[0], self.location, self.metadata_location)
        return found

    def spark_point(self, at: At = None) -> spark_engine.SparkPoint:
        """How Spark pins ``at``; None pins this object's current state, so reads are repeatable.
        Unknown ids, refs and times raise NotFound (listing what exists) before Spark starts."""
        from icebook.engines import spark_engine

        point = parse_at(at, self.refs)
        if point is None:
            current = self.current_snapshot
            if self._spark_identifier() is None or current is None:
                return spark_engine.SparkPoint()  # the metadata file icebook opened pins the state
            if self.read_schema(current.snapshot_id) != self.read_schema():
                return spark_engine.SparkPoint()  # a pinned id would read the snapshot's older schema
            return spark_engine.SparkPoint(snapshot_id=current.snapshot_id)
        snapshot = self.snapshot(point)
        if isinstance(point, AtRef):
            ref = self.refs[point.name]
            return (
                spark_engine.SparkPoint(branch=point.name)
                if isinstance(ref, Branch)
                else spark_engine.SparkPoint(tag=point.name)
            )
        if isinstance(point, AtSnapshot):
            return spark_engine.SparkPoint(snapshot_id=snapshot.snapshot_id)
        return spark_engine.SparkPoint(as_of_timestamp_ms=point.timestamp_ms)

    def read(
        self, at: At = None, filter: str | None = None, columns: list[str] | None = None, engine: EngineName = "arrow"
    ) -> pa.Table:
        """Rows of the table at ``at`` as Arrow: ``engine="arrow"`` (no JVM; applies position, equality and
        deletion-vector deletes, projects by field id) or ``engine="spark"`` (the local Spark session).
        ``columns`` may name the row-lineage metadata columns ``_row_id`` and ``_last_updated_sequence_number``
        of a v3 table, as Spark selects them."""
        from icebook.engines import arrow as arrow_engine
        from icebook.engines import spark_engine

        if Engine.named(engine) == Engine.SPARK:
            from icebook.engines.arrow_lineage import split_columns

            split_columns(self.metadata, self.read_schema(at), columns)  # no row lineage before v3: one error
            point = self.spark_point(at)
            return spark_engine.read(
                self.metadata_location, point, identifier=self._spark_identifier(), filter=filter, columns=columns
            )
        return arrow_engine.read(self, self.snapshot(at), filter, columns, schema=self.read_schema(at))

    def scan(self, at: At = None, filter: Any = None, columns: list[str] | None = None) -> ScanPlan:
        """The scan plan: which manifests and files are read or skipped and why, and which delete
        files apply to each data file (by the spec's sequence-number rules). ``plan.explain()``."""
        from icebook.analysis.scan.planner import plan_scan

        return plan_scan(self, self.snapshot(at), filter, columns, schema=self.read_schema(at))

    def scan_summary(self, at: At = None, filter: Any = None) -> ScanSummary:
        """The scan plan's totals (files and bytes to read, records, delete files, manifests kept and skipped),
        computed manifest by manifest without keeping the plan's files: for tables too large to plan whole."""
        from icebook.analysis.scan.summary import summarize_scan

        return summarize_scan(self, self.snapshot(at), filter, schema=self.read_schema(at))

    def query_cost(self, filter: Any = None, columns: list[str] | None = None, at: At = None) -> QueryCost:
        """The scan plan and, for each Parquet data file it keeps, the row groups a reader skips by their
        statistics and why, and the bytes of the projected column chunks it reads (``.row_groups``)."""
        from icebook.analysis.cost.query_cost import query_cost

        return query_cost(self, self.snapshot(at), filter, columns, schema=self.read_schema(at))

    def compare_plans(self, filter: Any, at: At = None) -> PlanComparison:
        """The data files icebook, Spark (Iceberg's planner in the session) and PyIceberg (``plan_files``) plan
        for ``filter`` at ``at``: one row per live data file, each difference explained (``.files``)."""
        from icebook.analysis.cost.compare_plans import compare_plans
        from icebook.engines.other_planners import other_plans

        plan, everything = self.scan(at, filter), self.scan(at)
        return compare_plans(plan, everything, other_plans(self, at, filter, plan))

    def storage(self, at: At = None) -> Storage:
        """Every file under the table's location, once, by what keeps it: live data and deletes (at ``at``,
        default main's current state), other branches and tags, retained history, metadata, orphans;
        ``.categories`` (``category``, ``files``, ``bytes``, ``detail``) and ``.by_partition``."""
        from icebook.analysis.cost.storage import storage

        current = self.current_snapshot if at is None else self.snapshot(at)
        return storage(self, current)

    def v3(self, at: At = None) -> V3Inspection:
        """The v3 inspector at ``at`` (default: current): each live data file's deletion vector (Puffin blob,
        cardinality, deleted positions as ranges), row-id ranges per snapshot and per data file with the spec's
        rules checked, default values and what a reader takes for each older file, variant shredding per file
        and geo bounds as boxes. Sections: ``.deletion_vectors``, ``.row_lineage``, ``.defaults``,
        ``.variants``, ``.geo``; ``.findings``."""
        from icebook.analysis.v3.inspection import inspect_v3

        snapshot = self.current_snapshot if at is None else self.snapshot(at)
        return inspect_v3(self, snapshot, self.read_schema(at))

    def changes(self, a: At, b: At = None, *, identifier_columns: list[str] | None = None) -> Any:
        """Rows inserted and deleted after ``a`` up to ``b`` (default: current), as pandas with
        ``_change_type``, ``_change_ordinal`` and ``_commit_snapshot_id``, like Spark's changelog view.
        Works on merge-on-read tables (position and equality deletes, deletion vectors) too."""
        from icebook.analysis.history.changes import changes
        from icebook.engines import arrow as arrow_engine

        start = None if a is None else self.snapshot(a)
        return changes(
            self, start, self.snapshot(b), read=arrow_engine.read_live_rows, identifier_columns=identifier_columns
        )

    def sql(
        self,
        query: str,
        at: At = None,
        *,
        engine: EngineName = "spark",
        as_spark: bool = False,
        output: Output = "pandas",
    ) -> Any:
        """SQL with this table bound as the view ``t``, pinned to ``at``. ``output``: ``"pandas"`` (every
        column a ``pd.ArrowDtype``, so values keep their Iceberg types), ``"arrow"`` or ``"polars"``; the
        same from both engines, columns named as Spark names them. ``as_spark``: the Spark DataFrame.

        ``engine="spark"``: Spark SQL. ``engine="arrow"``: polars SQL over a lazy scan of the table (no
        JVM) that reads only the columns the query uses and only the files its filters can match.
        A query may name ``_row_id`` and ``_last_updated_sequence_number`` (v3), which ``*`` leaves out."""
        from icebook.analysis._frames import query_result
        from icebook.engines import spark_engine, sql_lineage

        # A query naming _row_id or _last_updated_sequence_number (v3) reads them through t, as Spark on the table.
        query, lineage = sql_lineage.prepare(query, self.metadata, self.read_schema(at))
        if Engine.named(engine) == Engine.ARROW:
            from icebook.engines import arrow_sql  # polars: imported when first used

            return query_result(arrow_sql.sql({"t": self.sql_source(at, lineage=lineage)}, query), output)
        result = spark_engine.sql(
            self.metadata_location,
            query,
            self.spark_point(at),
            identifier=self._spark_identifier(),
            as_spark=as_spark,
            lineage=lineage,
        )
        return result if as_spark else query_result(result, output)

    def sql_source(self, at: At = None, *, lineage: Sequence[str] = ()) -> arrow_sql.SqlSource:
        """The Arrow engine's SQL source for the table at ``at``: a read at ``at`` (with the row-lineage
        columns ``lineage``) of what a query asks for, and its rows' schema."""
        from icebook.engines import arrow_sql

        return arrow_sql.scan_source(self, self.snapshot(at), schema=self.read_schema(at), lineage=lineage)

    def lazy(self, at: At = None, *, row_lineage: bool = False) -> Any:
        """The table at ``at`` as a polars ``LazyFrame`` read by the Arrow engine: projections and
        filters of the query are pushed into the scan (pruned by partition values and column stats).
        ``row_lineage``: with ``_row_id`` and ``_last_updated_sequence_number`` after the table's columns
        (v3; read only when selected)."""
        from icebook.engines.arrow_lineage import lineage_columns

        lineage = lineage_columns(self.metadata, self.read_schema(at)) if row_lineage else ()
        return self.sql_source(at, lineage=lineage).lazy()

    # ------------------------------------------------------------------ what t.manage and t.maintenance change through

    def _writable(self) -> str:
        """The name Spark changes this table through: its catalog's, else (a table opened by path in a Hadoop
        layout) a catalog named after its warehouse; EngineError when Spark cannot have the table's catalog."""
        from icebook.engines import spark_engine

        identifier, why = self._spark_target()
        if identifier is not None:
            return identifier
        parsed = parse_metadata_file_name(self.metadata_location)
        if parsed is None or parsed.style != "hadoop" or self.identifier is not None:
            raise EngineError(
                f"cannot change {self.identifier or self.location} through Spark: "
                f"{why or f'its metadata file {self.metadata_location} belongs to a catalog Spark does not have'}; "
                "configure that catalog in Spark (icebook.spark.session(conf={'spark.sql.catalog.<name>': ...})) "
                "and open the table by that name"
            )
        return spark_engine.writable_identifier(self.location, None)

    def reopen(self) -> Table:
        """This table at its newest metadata (after a change made by anyone)."""
        if self.identifier is not None:
            return Table._from(find_table(self.identifier))
        return Table._from(find_table(self.location, fileio=self.fileio))

    @classmethod
    def _from(cls, found: FoundTable) -> Table:
        return cls(
            found.metadata,
            found.metadata_location,
            found.fileio,
            identifier=found.identifier,
            catalog_kind=found.catalog_kind,
        )

    # ------------------------------------------------------------------ notebook views

    def tree(self, at: At = None) -> Any:
        """The metadata -> manifest list -> manifests -> files tree as a widget; children load on
        expand, in pages. Saved notebooks keep a static <details> version."""
        from icebook.display import tree_widget

        return tree_widget(self, at)

    def explore(self) -> Any:
        """The workbench: snapshot graph and tree, diff, evolution, time-travel queries and charts."""
        from icebook.display import explore

        return explore(self)

    def _repr_html_(self) -> str:
        return render_html(self)

    def __repr__(self) -> str:
        current = self.metadata.current_snapshot_id
        return (
            f"<icebook.Table {self.location} v{self.format_version}, {len(self.metadata.snapshots)} snapshots, "
            f"current {current}, refs {sorted(self.refs)}>"
        )


# How a Table is shown; registered here because the display layer cannot import this one.
def _table_html(table: Table) -> str:
    from icebook.display.summary_render import table_html

    return table_html(table)


register(Table, text=repr, html=_table_html)
