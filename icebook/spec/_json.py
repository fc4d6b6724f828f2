"""Permissive readers for the wire (JSON) level of table metadata.

Every getter names the file and the JSON path of the value it reads, so a malformed
table produces ``metadata <file>: snapshots[2].manifest-list: missing``. JSON booleans
are rejected where an integer is expected (Python's ``bool`` is an ``int``).

Values are checked against what the spec's types can hold (Appendix C gives each field's
type): an ``int`` fits 32 bits, a ``long`` 64, and a timestamp in ms must be a time Python
can show (years 1 to 9999). Nesting is bounded too, so that no later step recurses without end.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from icebook.errors import MetadataError

EMPTY_MAP: Mapping[Any, Any] = MappingProxyType({})

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
TIMESTAMP_MS = (-62_135_596_800_000, 253_402_300_799_999)
"""0001-01-01T00:00:00 to 9999-12-31T23:59:59.999 UTC, in ms from the epoch."""
MAX_NESTING = 64
"""Deepest nesting of types in a schema, and of JSON values icebook keeps as written."""

INT32_KEYS = frozenset(
    {
        "format-version",
        "last-column-id",
        "current-schema-id",
        "schema-id",
        "id",
        "element-id",
        "key-id",
        "value-id",
        "default-spec-id",
        "last-partition-id",
        "spec-id",
        "field-id",
        "source-id",
        "source-ids",
        "identifier-field-ids",
        "order-id",
        "default-sort-order-id",
        "min-snapshots-to-keep",
        "fields",
    }
)
"""Keys whose values are ``int`` in Appendix C; every other integer is a ``long``."""
TIMESTAMP_KEYS = frozenset({"timestamp-ms", "last-updated-ms"})


def check_int(value: int, key: str, *, file: str, where: str) -> int:
    """``value`` if it fits the type the spec gives ``key``; else a MetadataError naming ``where``."""
    if key in TIMESTAMP_KEYS:
        low, high = TIMESTAMP_MS
        if not low <= value <= high:
            raise MetadataError(
                file, where, f"{value} ms is not a representable time (years 1 to 9999)", kind="metadata"
            )
        return value
    low, high = INT32 if key in INT32_KEYS else INT64
    if not low <= value <= high:
        kind = "an int (32 bits)" if key in INT32_KEYS else "a long (64 bits)"
        raise MetadataError(file, where, f"{value} is out of range for {kind}", kind="metadata")
    return value


def check_depth(value: Any, *, file: str, where: str, limit: int = MAX_NESTING) -> None:
    """Reject JSON ``value`` nested deeper than ``limit`` (iteratively: a deep value must not
    exhaust the stack of the very check that bounds it)."""
    stack: list[tuple[Any, str, int]] = [(value, where, 1)]
    while stack:
        node, path, depth = stack.pop()
        if depth > limit:
            raise MetadataError(file, path, f"nested more than {limit} levels deep", kind="metadata")
        if isinstance(node, dict):
            stack.extend((v, f"{path}.{k}", depth + 1) for k, v in node.items() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, f"{path}[{i}]", depth + 1) for i, v in enumerate(node) if isinstance(v, (dict, list)))


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def join_path(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


@dataclass(frozen=True, slots=True)
class Wire:
    """Typed access to one JSON object at ``where`` inside metadata file ``file``."""

    obj: Mapping[str, Any]
    file: str
    where: str = ""

    @staticmethod
    def of(raw: Any, *, file: str, where: str) -> Wire:
        if not isinstance(raw, dict):
            raise MetadataError(file, where or None, f"expected an object, found {_kind(raw)}", kind="metadata")
        return Wire(raw, file, where)

    def path(self, key: str) -> str:
        return join_path(self.where, key)

    def error(self, key: str | None, problem: str) -> MetadataError:
        return MetadataError(self.file, self.path(key) if key else (self.where or None), problem, kind="metadata")

    def has(self, key: str) -> bool:
        return key in self.obj and self.obj[key] is not None

    def _present(self, key: str) -> Any:
        if key not in self.obj or self.obj[key] is None:
            raise self.error(key, "missing")
        return self.obj[key]

    def req_int(self, key: str) -> int:
        return self._as_int(key, self._present(key))

    def opt_int(self, key: str) -> int | None:
        return self._as_int(key, self.obj[key]) if self.has(key) else None

    def _as_int(self, key: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            # Some writers emit integral floats (e.g. 1.0); accept them, reject the rest.
            if isinstance(value, float) and value.is_integer():
                return check_int(int(value), key, file=self.file, where=self.path(key))
            raise self.error(key, f"expected an integer, found {_kind(value)} {_short(value)}")
        return check_int(value, key, file=self.file, where=self.path(key))

    def req_str(self, key: str) -> str:
        value = self._present(key)
        if not isinstance(value, str):
            raise self.error(key, f"expected a string, found {_kind(value)}")
        return value

    def opt_str(self, key: str) -> str | None:
        return self.req_str(key) if self.has(key) else None

    def req_list(self, key: str) -> list[Any]:
        value = self._present(key)
        if not isinstance(value, list):
            raise self.error(key, f"expected a list, found {_kind(value)}")
        return value

    def opt_list(self, key: str) -> list[Any] | None:
        return self.req_list(key) if self.has(key) else None

    def obj_at(self, key: str) -> Wire:
        return Wire.of(self._present(key), file=self.file, where=self.path(key))

    def int_list(self, key: str) -> tuple[int, ...]:
        items = self.req_list(key)
        out: list[int] = []
        for i, v in enumerate(items):
            if isinstance(v, bool) or not isinstance(v, int):
                raise self.error(f"{key}[{i}]", f"expected an integer, found {_kind(v)}")
            out.append(check_int(v, key, file=self.file, where=self.path(f"{key}[{i}]")))
        return tuple(out)

    def source_columns(self) -> tuple[int | None, tuple[int, ...]]:
        """``source-id`` and ``source-ids`` of a partition or sort field: v3 writes ``source-ids`` (several
        for a multi-argument transform), earlier versions ``source-id``; each implies the other for one column."""
        source_id = self.opt_int("source-id")
        source_ids = self.int_list("source-ids") if self.has("source-ids") else None
        if source_id is None and not source_ids:
            raise self.error("source-id", "missing")
        if source_ids is None:
            assert source_id is not None
            source_ids = (source_id,)
        elif source_id is None and len(source_ids) == 1:
            source_id = source_ids[0]
        return source_id, source_ids

    def str_map(self, key: str) -> Mapping[str, str] | None:
        """A string-to-string map; scalar non-string values are kept as their text."""
        if not self.has(key):
            return None
        value = self.obj[key]
        if not isinstance(value, dict):
            raise self.error(key, f"expected an object, found {_kind(value)}")
        out: dict[str, str] = {}
        for k, v in value.items():
            if isinstance(v, str):
                out[k] = v
            elif isinstance(v, bool):
                out[k] = "true" if v else "false"
            elif isinstance(v, (int, float)) or v is None:
                out[k] = "null" if v is None else str(v)
            else:
                raise self.error(f"{key}.{k}", f"expected a string, found {_kind(v)}")
        return MappingProxyType(out)

    def extras(self, known: Iterable[str]) -> Mapping[str, Any]:
        """Keys this reader does not model, kept as written so nothing is dropped."""
        known_set = set(known)
        rest = {k: v for k, v in self.obj.items() if k not in known_set}
        for k, v in rest.items():
            check_depth(v, file=self.file, where=self.path(k))
        return MappingProxyType(rest) if rest else EMPTY_MAP


def empty_map() -> Mapping[Any, Any]:
    """Default factory for mapping fields (a mappingproxy is not a valid dataclass default)."""
    return EMPTY_MAP
