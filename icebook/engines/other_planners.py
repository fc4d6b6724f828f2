"""The data files other planners plan for a filtered read: PyIceberg's ``plan_files`` and the scan Spark's
Iceberg source plans (``Table.compare_plans`` sets them beside icebook's own plan).

Spark's files are those of the tasks its scan hands to executors: the ``BatchScanExec`` of the filtered
read's physical plan, its input partitions and their Iceberg task groups, as planned by Iceberg's own
planner in the session with the filters Spark pushed down. Nothing is read beyond the metadata.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime, time
from decimal import Decimal, InvalidOperation
from typing import Any

from icebook.analysis.expr import nodes
from icebook.analysis.expr.nodes import Expr, visitor
from icebook.analysis.scan.planner import ScanPlan
from icebook.errors import one_line
from icebook.spec.types import TIMESTAMP_NS, TIMESTAMPTZ_NS, DecimalType
from icebook.spec.values import to_python_object


def pyiceberg_planned(metadata_location: str, properties: Mapping[str, str], snapshot_id: int, bound: Expr) -> set[str]:
    """Paths of the data files PyIceberg's ``plan_files`` plans for ``bound`` at ``snapshot_id``."""
    from pyiceberg.table import StaticTable

    table = StaticTable.from_metadata(metadata_location, properties=dict(properties))
    scan = table.scan(row_filter=to_pyiceberg(bound), snapshot_id=snapshot_id, case_sensitive=True)
    return {task.file.file_path for task in scan.plan_files()}


def _value(value: Any, ref: nodes.Ref) -> Any:
    """A physical value as PyIceberg's literals take it: dates, times and timestamps as ISO text (which it
    parses to its own types), nanosecond timestamps as their integer, the rest as they are."""
    t = ref.type
    if t in (TIMESTAMP_NS, TIMESTAMPTZ_NS):
        return value
    if isinstance(t, DecimalType) and isinstance(value, Decimal):
        # PyIceberg takes a decimal literal only at the column's scale: 0.2 as 0.20, the same value
        try:
            scaled = value.quantize(Decimal(1).scaleb(-t.scale))
        except InvalidOperation:  # more digits than a decimal context holds: PyIceberg then says why
            return value
        return scaled if scaled == value else value
    converted = to_python_object(value, t) if t is not None else value
    return converted.isoformat() if isinstance(converted, (date, datetime, time)) else converted


@visitor()
def to_pyiceberg(expr: Expr) -> Any:
    """A bound icebook expression as a PyIceberg ``BooleanExpression`` over the same column names."""
    raise AssertionError  # never runs: see ``visitor``


@to_pyiceberg.register
def _(expr: nodes.AlwaysTrue) -> Any:
    from pyiceberg.expressions import AlwaysTrue

    return AlwaysTrue()


@to_pyiceberg.register
def _(expr: nodes.AlwaysFalse) -> Any:
    from pyiceberg.expressions import AlwaysFalse

    return AlwaysFalse()


@to_pyiceberg.register
def _(expr: nodes.And) -> Any:
    from pyiceberg.expressions import And

    return And(to_pyiceberg(expr.left), to_pyiceberg(expr.right))


@to_pyiceberg.register
def _(expr: nodes.Or) -> Any:
    from pyiceberg.expressions import Or

    return Or(to_pyiceberg(expr.left), to_pyiceberg(expr.right))


@to_pyiceberg.register
def _(expr: nodes.Not) -> Any:
    from pyiceberg.expressions import Not

    return Not(to_pyiceberg(expr.child))


@to_pyiceberg.register
def _(expr: nodes.Compare) -> Any:
    from pyiceberg import expressions as e

    op = {
        "=": e.EqualTo,
        "!=": e.NotEqualTo,
        "<": e.LessThan,
        "<=": e.LessThanOrEqual,
        ">": e.GreaterThan,
        ">=": e.GreaterThanOrEqual,
    }[expr.op]
    return op(expr.ref.name, _value(expr.value, expr.ref))


@to_pyiceberg.register
def _(expr: nodes.In) -> Any:
    from pyiceberg import expressions as e

    values = {_value(v, expr.ref) for v in expr.values}
    make: Any = e.NotIn if expr.negated else e.In  # its typed signature hides the (name, values) form
    return make(expr.ref.name, values)


@to_pyiceberg.register
def _(expr: nodes.Unary) -> Any:
    from pyiceberg import expressions as e

    op = {"is_null": e.IsNull, "not_null": e.NotNull, "is_nan": e.IsNaN, "not_nan": e.NotNaN}[expr.op]
    return op(expr.ref.name)


@to_pyiceberg.register
def _(expr: nodes.StartsWith) -> Any:
    from pyiceberg import expressions as e

    make: Any = e.NotStartsWith if expr.negated else e.StartsWith
    return make(expr.ref.name, expr.prefix)


def spark_planned(df: Any) -> set[str]:
    """Paths of the data files the Iceberg scan of Spark DataFrame ``df`` (a filtered read) plans."""
    jvm = df.sparkSession._jvm
    plan = df._jdf.queryExecution().executedPlan()
    if plan.getClass().getSimpleName() == "AdaptiveSparkPlanExec":
        plan = plan.executedPlan()
    scans = [
        leaf
        for leaf in jvm.scala.jdk.javaapi.CollectionConverters.asJava(plan.collectLeaves())
        if leaf.getClass().getSimpleName() == "BatchScanExec"
    ]
    if len(scans) > 1:
        raise ValueError(f"expected one Iceberg batch scan in Spark's plan, found {len(scans)}")
    paths: set[str] = set()
    if not scans:  # the optimizer proved the filter false (``id is null`` on a required column): no scan at all
        return paths
    for partition in jvm.scala.jdk.javaapi.CollectionConverters.asJava(scans[0].inputPartitions()):
        for task in partition.taskGroup().tasks().toArray():  # a Java collection py4j does not iterate
            paths.add(str(task.file().location()))
    return paths


def other_plans(table: Any, at: Any, filter: Any, plan: ScanPlan) -> dict[str, set[str] | str]:
    """The files Spark and PyIceberg plan for ``filter`` at ``at`` (``table``: an ``icebook.Table``), or
    for a planner that cannot run, why, in one line."""
    from icebook.engines import spark_engine

    out: dict[str, set[str] | str] = {}
    properties = getattr(table.fileio, "properties", {})
    try:
        out["spark"] = spark_planned(
            spark_engine.dataframe(
                table.metadata_location, table.spark_point(at), identifier=table._spark_identifier()
            ).where(filter if isinstance(filter, str) and filter.strip() else str(plan.filter))
        )
    except Exception as exc:  # any failure of the JVM or the session is this planner's answer, not an error
        out["spark"] = one_line(exc)
    try:
        out["pyiceberg"] = pyiceberg_planned(table.metadata_location, properties, plan.snapshot_id, plan.filter)
    except Exception as exc:  # PyIceberg raises its own types (unsupported types, transforms, filesystems)
        out["pyiceberg"] = one_line(exc)
    return out


__all__ = ["other_plans", "pyiceberg_planned", "spark_planned", "to_pyiceberg"]
