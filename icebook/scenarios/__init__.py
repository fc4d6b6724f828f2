"""Scenario tables: named, versioned scripts that build Iceberg tables with Spark.

They make the demo warehouse, the test fixtures and the material of the teaching notebooks.
"""

from __future__ import annotations

from icebook.scenarios.concurrent_writes import CONCURRENT_WRITES
from icebook.scenarios.debt import DEBT
from icebook.scenarios.defaults_v3 import DEFAULTS_V3
from icebook.scenarios.dv_lifecycle_v3 import DV_LIFECYCLE_V3
from icebook.scenarios.dv_v3 import DV_V3
from icebook.scenarios.equality_deletes import EQUALITY_DELETES
from icebook.scenarios.events import EVENTS
from icebook.scenarios.exact_values import EXACT_VALUES
from icebook.scenarios.file_formats import FILE_FORMATS
from icebook.scenarios.geo_v3 import GEO_V3
from icebook.scenarios.growth import GROWTH
from icebook.scenarios.history import HISTORY
from icebook.scenarios.hostile import HOSTILE
from icebook.scenarios.legacy_v1 import LEGACY_V1
from icebook.scenarios.lineage_v3 import LINEAGE_V3
from icebook.scenarios.orders_cow import ORDERS_COW
from icebook.scenarios.partition_transforms import TRANSFORMS, VOID_V1
from icebook.scenarios.scenario import Claims, Scenario, Step
from icebook.scenarios.schema_evolution import SCHEMA_EVOLUTION
from icebook.scenarios.sorting import SORT_ORDER
from icebook.scenarios.types_v3 import TYPES_V3
from icebook.scenarios.upgrade_v3 import UPGRADE_V3
from icebook.scenarios.variant_v3 import VARIANT_V3

SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        EVENTS,
        ORDERS_COW,
        LEGACY_V1,
        DV_V3,
        EQUALITY_DELETES,
        FILE_FORMATS,
        HOSTILE,
        DEBT,
        CONCURRENT_WRITES,
        SCHEMA_EVOLUTION,
        TRANSFORMS,
        VOID_V1,
        SORT_ORDER,
        HISTORY,
        GROWTH,
        EXACT_VALUES,
        DV_LIFECYCLE_V3,
        UPGRADE_V3,
        LINEAGE_V3,
        VARIANT_V3,
        GEO_V3,
        DEFAULTS_V3,
        TYPES_V3,
    )
}

__all__ = ["SCENARIOS", "Claims", "Scenario", "Step"]
