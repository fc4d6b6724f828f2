"""Sort orders (spec: "Sorting", Appendix C "Sort Orders").

A sort order is an id and a list of sort fields (transform of source column(s), direction,
null order). Order id 0 is reserved for the unsorted order.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, ClassVar

from icebook.spec._json import Wire, empty_map
from icebook.spec.transforms import Transform, parse_transform

UNSORTED_ORDER_ID = 0
"""Order id 0 is reserved for the unsorted order (spec: "Sorting")."""

_FIELD_KEYS = ("transform", "source-id", "source-ids", "direction", "null-order")
_ORDER_KEYS = ("order-id", "fields")


class SortDirection(StrEnum):
    """Sort direction: ``asc`` or ``desc``."""

    ASC = "asc"
    DESC = "desc"


class NullOrder(StrEnum):
    """Where nulls sort: ``nulls-first`` or ``nulls-last``."""

    NULLS_FIRST = "nulls-first"
    NULLS_LAST = "nulls-last"


@dataclass(frozen=True, slots=True, kw_only=True)
class SortField:
    """One field of a sort order (spec: "Sorting")."""

    FIELD_DOCS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "transform": "transform: produces the values to sort on from the source column(s) "
            "(same transforms as partitioning).",
            "source_id": "source-id: id of the source column (None when only source-ids is written).",
            "source_ids": "source-ids: ids of all source columns (v3); (source-id,) for single-argument transforms.",
            "direction": "direction: asc or desc.",
            "null_order": "null-order: nulls-first or nulls-last.",
            "extras": "Keys of the sort field JSON that icebook does not model, kept as written.",
        }
    )

    transform: Transform
    source_id: int | None
    source_ids: tuple[int, ...]
    direction: SortDirection
    null_order: NullOrder
    extras: Mapping[str, Any] = field(default_factory=empty_map)


@dataclass(frozen=True, slots=True, kw_only=True)
class SortOrder:
    """A sort order: how data is sorted within files (spec: "Sorting"); id 0 is unsorted."""

    FIELD_DOCS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "order_id": "order-id: id of this sort order; data and delete files refer to it in manifests.",
            "fields": "fields: sort fields, applied in order.",
            "extras": "Keys of the sort order JSON that icebook does not model, kept as written.",
        }
    )

    order_id: int
    fields: tuple[SortField, ...] = ()
    extras: Mapping[str, Any] = field(default_factory=empty_map)

    @property
    def is_unsorted(self) -> bool:
        return not self.fields

    def __str__(self) -> str:
        if not self.fields:
            return f"sort order {self.order_id}: unsorted"
        inner = ", ".join(
            f"{f.transform}({','.join(map(str, f.source_ids))}) {f.direction} {f.null_order}" for f in self.fields
        )
        return f"sort order {self.order_id}: [{inner}]"


UNSORTED = SortOrder(order_id=UNSORTED_ORDER_ID)


def parse_sort_field(raw: Any, *, file: str, where: str) -> SortField:
    w = Wire.of(raw, file=file, where=where)
    source_id, source_ids = w.source_columns()
    direction_text = w.req_str("direction")
    null_text = w.req_str("null-order")
    try:
        direction = SortDirection(direction_text)
    except ValueError:
        raise w.error("direction", f"expected 'asc' or 'desc', found {direction_text!r}") from None
    try:
        null_order = NullOrder(null_text)
    except ValueError:
        raise w.error("null-order", f"expected 'nulls-first' or 'nulls-last', found {null_text!r}") from None
    return SortField(
        transform=parse_transform(w.req_str("transform")),
        source_id=source_id,
        source_ids=source_ids,
        direction=direction,
        null_order=null_order,
        extras=w.extras(_FIELD_KEYS),
    )


def parse_sort_order(raw: Any, *, file: str, where: str = "sort-order") -> SortOrder:
    """Parse a sort order object (Appendix C)."""
    w = Wire.of(raw, file=file, where=where)
    fields = tuple(
        parse_sort_field(f, file=file, where=f"{w.path('fields')}[{i}]") for i, f in enumerate(w.req_list("fields"))
    )
    return SortOrder(order_id=w.req_int("order-id"), fields=fields, extras=w.extras(_ORDER_KEYS))


__all__ = [
    "UNSORTED",
    "UNSORTED_ORDER_ID",
    "NullOrder",
    "SortDirection",
    "SortField",
    "SortOrder",
    "parse_sort_field",
    "parse_sort_order",
]
