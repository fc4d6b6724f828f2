"""Table metadata (spec: "Table Metadata", "Table Metadata Fields", Appendix C, Appendix E).

``parse_table_metadata`` reads the JSON object permissively (unknown keys are kept in
``extras``) into one canonical frozen ``TableMetadata`` for v1, v2 and v3. Defaults that
the spec defines for older versions are applied by the named functions below and listed
in ``TableMetadata.defaults_applied`` so a UI can say what was not written in the file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, ClassVar, Protocol, TypeVar

from icebook.errors import NotFound, UnsupportedFeature
from icebook.spec._json import EMPTY_MAP, Wire, empty_map
from icebook.spec.metadata_json import decode_metadata_json
from icebook.spec.partitioning import PartitionSpec, parse_partition_fields, parse_partition_spec
from icebook.spec.schema import Schema, parse_schema
from icebook.spec.snapshots import (
    Branch,
    EncryptedKey,
    MetadataLogEntry,
    ParentCycle,
    PartitionStatisticsFile,
    Ref,
    Snapshot,
    SnapshotLogEntry,
    StatisticsFile,
    find_parent_cycles,
    parse_encrypted_key,
    parse_metadata_log_entry,
    parse_partition_statistics_file,
    parse_ref,
    parse_snapshot,
    parse_snapshot_log_entry,
    parse_statistics_file,
    snapshot_sequence_number,
)
from icebook.spec.sort_order import UNSORTED, UNSORTED_ORDER_ID, SortOrder, parse_sort_order

SUPPORTED_FORMAT_VERSIONS = (1, 2, 3)
MAIN_BRANCH = "main"
_K = TypeVar("_K")
_V = TypeVar("_V")


def main_first(ref_name: str) -> tuple[bool, str]:
    """Sort key of ref names: the main branch first, then the others by name."""
    return ref_name != MAIN_BRANCH, ref_name


def commit_order(snapshot: Snapshot) -> tuple[int, int]:
    """Sort key of snapshots in the order they were committed: by commit time, then (for commits in the
    same millisecond) by sequence number, with the v1 default of 0."""
    return snapshot.timestamp_ms, snapshot_sequence_number(snapshot)


_KNOWN_KEYS = (
    "format-version",
    "table-uuid",
    "location",
    "last-sequence-number",
    "last-updated-ms",
    "last-column-id",
    "schema",
    "schemas",
    "current-schema-id",
    "partition-spec",
    "partition-specs",
    "default-spec-id",
    "last-partition-id",
    "properties",
    "current-snapshot-id",
    "snapshots",
    "snapshot-log",
    "metadata-log",
    "sort-orders",
    "default-sort-order-id",
    "refs",
    "statistics",
    "partition-statistics",
    "next-row-id",
    "encryption-keys",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class AppliedDefault:
    """A value that was not written in the metadata file but defined by the spec for its version."""

    field: str
    """The JSON path of the defaulted value, e.g. ``last-sequence-number`` or ``refs.main``."""
    value: str
    """The value that was applied, as text."""
    rule: str
    """The name of the function that applies the rule (its docstring quotes the spec)."""

    def __str__(self) -> str:
        return f"{self.field} = {self.value} ({self.rule})"


@dataclass(frozen=True, slots=True, kw_only=True)
class TableMetadata:
    """The table's metadata file: schemas, partition specs, sort orders, snapshots, refs and logs.

    Collections absent from the file are empty (``wire_keys`` says which keys were written);
    absent scalar fields are None unless the spec defines a default (see ``defaults_applied``).
    """

    FIELD_DOCS: ClassVar[Mapping[str, str]] = MappingProxyType(
        {
            "format_version": "format-version: the Iceberg format version of the table (1, 2 or 3).",
            "table_uuid": "table-uuid: UUID identifying the table, generated at creation (optional in v1).",
            "location": "location: the table's base location, where writers put data, manifest and metadata files.",
            "last_sequence_number": "last-sequence-number: highest assigned sequence number (v2+; 0 for v1).",
            "last_updated_ms": "last-updated-ms: when the table was last updated, in ms from the epoch.",
            "last_column_id": "last-column-id: highest assigned column id; new columns get unused ids.",
            "schemas": "schemas: every schema of the table, by schema-id (v1: the single 'schema').",
            "current_schema_id": "current-schema-id: id of the table's current schema.",
            "partition_specs": "partition-specs: every partition spec of the table, by spec-id "
            "(v1: the single 'partition-spec').",
            "default_spec_id": "default-spec-id: id of the spec writers use by default.",
            "last_partition_id": "last-partition-id: highest assigned partition field id across all specs.",
            "properties": "properties: table properties controlling reading and writing.",
            "current_snapshot_id": "current-snapshot-id: id of the current snapshot (same as the main branch); "
            "None when the table has no snapshot.",
            "snapshots": "snapshots: the valid snapshots, whose data files all exist.",
            "snapshot_log": "snapshot-log: (timestamp, snapshot id) pairs recording changes of the current snapshot.",
            "metadata_log": "metadata-log: (timestamp, file) pairs of previous metadata files.",
            "sort_orders": "sort-orders: every sort order of the table, by order-id.",
            "default_sort_order_id": "default-sort-order-id: the sort order writers use by default.",
            "refs": "refs: named snapshot references (branches and tags); there is always a main branch "
            "pointing at current-snapshot-id.",
            "statistics": "statistics: Puffin table statistics files, per snapshot.",
            "partition_statistics": "partition-statistics: partition statistics files, per snapshot.",
            "next_row_id": "next-row-id: (v3) a long higher than all assigned row ids; the next snapshot's "
            "first-row-id.",
            "encryption_keys": "encryption-keys: (v3) keys used for table encryption.",
            "extras": "Top-level keys that icebook does not model, kept as written.",
            "defaults_applied": "Values not written in the file but defined by the spec for this format version.",
            "wire_keys": "The top-level keys present in the JSON file.",
            "metadata_file": "The metadata file this was read from (not a field of the file).",
            "parent_cycles": "Loops in the snapshots' parent links (a damaged table); empty when history is sound.",
        }
    )

    format_version: int
    table_uuid: str | None
    location: str
    last_sequence_number: int
    last_updated_ms: int
    last_column_id: int
    schemas: Mapping[int, Schema]
    current_schema_id: int
    partition_specs: Mapping[int, PartitionSpec]
    default_spec_id: int
    last_partition_id: int | None
    properties: Mapping[str, str] = field(default_factory=empty_map)
    current_snapshot_id: int | None = None
    snapshots: tuple[Snapshot, ...] = ()
    snapshot_log: tuple[SnapshotLogEntry, ...] = ()
    metadata_log: tuple[MetadataLogEntry, ...] = ()
    sort_orders: Mapping[int, SortOrder] = field(default_factory=empty_map)
    default_sort_order_id: int | None = None
    refs: Mapping[str, Ref] = field(default_factory=empty_map)
    statistics: tuple[StatisticsFile, ...] = ()
    partition_statistics: tuple[PartitionStatisticsFile, ...] = ()
    next_row_id: int | None = None
    encryption_keys: tuple[EncryptedKey, ...] = ()
    extras: Mapping[str, Any] = field(default_factory=empty_map)
    defaults_applied: tuple[AppliedDefault, ...] = ()
    wire_keys: frozenset[str] = frozenset()
    metadata_file: str = field(default="", compare=False)
    """Where this was read from, so that problems found later (a parent cycle) can name the file."""
    parent_cycles: tuple[ParentCycle, ...] = ()
    """Found when the file is parsed; every walk through history raises on them, lineage shows them."""
    _snapshot_index: Mapping[int, Snapshot] = field(init=False, repr=False, compare=False)
    _cycle_of: Mapping[int, ParentCycle] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_snapshot_index", MappingProxyType({s.snapshot_id: s for s in self.snapshots}))
        cycle_of = {sid: c for c in self.parent_cycles for sid in c.snapshot_ids}
        object.__setattr__(self, "_cycle_of", MappingProxyType(cycle_of))

    def parent_cycle(self, snapshot_id: int) -> ParentCycle | None:
        """The loop of parent links this snapshot is on, if any."""
        return self._cycle_of.get(snapshot_id)

    def schema_by_id(self, schema_id: int) -> Schema:
        return _lookup(self.schemas, schema_id, f"schema {schema_id}")

    def current_schema(self) -> Schema:
        return self.schema_by_id(self.current_schema_id)

    def spec_by_id(self, spec_id: int) -> PartitionSpec:
        return _lookup(self.partition_specs, spec_id, f"partition spec {spec_id}")

    def default_spec(self) -> PartitionSpec:
        return self.spec_by_id(self.default_spec_id)

    def sort_order_by_id(self, order_id: int) -> SortOrder:
        """The sort order with this id; id 0 is the reserved unsorted order even when not listed."""
        if order_id in self.sort_orders:
            return self.sort_orders[order_id]
        if order_id == UNSORTED_ORDER_ID:
            return UNSORTED
        raise NotFound(f"sort order {order_id}", available=self.sort_orders)

    def default_sort_order(self) -> SortOrder | None:
        """None when the file has no ``default-sort-order-id`` (possible in v1)."""
        if self.default_sort_order_id is None:
            return None
        return self.sort_order_by_id(self.default_sort_order_id)

    def snapshot_by_id(self, snapshot_id: int) -> Snapshot:
        return _lookup(self._snapshot_index, snapshot_id, f"snapshot {snapshot_id}")

    def find_snapshot(self, snapshot_id: int | None) -> Snapshot | None:
        """The snapshot with this id, or None when there is none (expired, or never existed)."""
        return None if snapshot_id is None else self._snapshot_index.get(snapshot_id)

    def current_snapshot(self) -> Snapshot | None:
        return None if self.current_snapshot_id is None else self.snapshot_by_id(self.current_snapshot_id)

    def ref(self, name: str) -> Ref:
        return _lookup(self.refs, name, f"branch or tag {name!r}")


def _lookup(items: Mapping[_K, _V], key: _K, what: str) -> _V:
    """``items[key]``, or a ``NotFound`` naming ``what`` and listing the keys there are."""
    try:
        return items[key]
    except KeyError:
        raise NotFound(what, available=items) from None


# ---------------------------------------------------------------- spec-defined defaults


def v1_last_sequence_number() -> int:
    """Spec (Appendix E, "Reading v1 metadata for v2"): table metadata field
    ``last-sequence-number`` must default to 0."""
    return 0


def v1_schemas(w: Wire) -> tuple[dict[int, Schema], int, list[AppliedDefault]]:
    """Read a v1 table's schemas and current schema id.

    Spec ("Table Metadata Fields"): v1 writes the current schema in the deprecated ``schema``
    field; ``schemas`` and ``current-schema-id`` are optional in v1 and preferred when present.
    Without ``schemas``, ``schema`` is the table's only schema and the current one. A v1 schema
    may lack ``schema-id``; it is then read as id 0, as the reference implementation does.
    """
    notes: list[AppliedDefault] = []
    if w.has("schemas"):
        schemas = _schemas_list(w, default_id=0)
        current = w.opt_int("current-schema-id")
        if current is None:
            if not w.has("schema"):
                raise w.error("current-schema-id", "missing")
            current = parse_schema(w.obj["schema"], file=w.file, where="schema", default_schema_id=0).schema_id
            notes.append(AppliedDefault(field="current-schema-id", value=str(current), rule="v1_schemas"))
        return schemas, current, notes
    if not w.has("schema"):
        raise w.error("schemas", "missing (v1 needs 'schema' or 'schemas')")
    raw_id = w.obj_at("schema").opt_int("schema-id")
    schema = parse_schema(w.obj["schema"], file=w.file, where="schema", default_schema_id=0)
    if raw_id is None:
        notes.append(AppliedDefault(field="schema.schema-id", value="0", rule="v1_schemas"))
    notes.append(AppliedDefault(field="schemas", value=f"[schema {schema.schema_id}]", rule="v1_schemas"))
    notes.append(AppliedDefault(field="current-schema-id", value=str(schema.schema_id), rule="v1_schemas"))
    return {schema.schema_id: schema}, schema.schema_id, notes


def v1_partition_specs(w: Wire) -> tuple[dict[int, PartitionSpec], int, list[AppliedDefault]]:
    """Read a v1 table's partition specs and default spec id.

    Spec ("Table Metadata Fields", Appendix C): v1 writes the current spec as only its fields in
    the deprecated ``partition-spec``; ``partition-specs`` and ``default-spec-id`` are optional in
    v1 and preferred when present. Without them, ``partition-spec`` is read as spec 0, the default.
    Missing partition field ids get the v1 ids (see ``assign_v1_partition_field_ids``).
    """
    notes: list[AppliedDefault] = []
    if w.has("partition-specs"):
        specs = _specs_list(w, format_version=1)
        default = w.opt_int("default-spec-id")
        if default is None:
            if len(specs) != 1:
                raise w.error("default-spec-id", "missing")
            default = next(iter(specs))
            notes.append(AppliedDefault(field="default-spec-id", value=str(default), rule="v1_partition_specs"))
        return specs, default, notes
    if not w.has("partition-spec"):
        raise w.error("partition-specs", "missing (v1 needs 'partition-spec' or 'partition-specs')")
    fields = parse_partition_fields(w.obj["partition-spec"], file=w.file, where="partition-spec", format_version=1)
    spec_id = w.opt_int("default-spec-id")
    spec_id = 0 if spec_id is None else spec_id
    notes.append(AppliedDefault(field="partition-specs", value=f"[spec {spec_id}]", rule="v1_partition_specs"))
    if not w.has("default-spec-id"):
        notes.append(AppliedDefault(field="default-spec-id", value="0", rule="v1_partition_specs"))
    return {spec_id: PartitionSpec(spec_id=spec_id, fields=fields)}, spec_id, notes


def no_current_snapshot(value: int | None) -> int | None:
    """Spec (Appendix F, "Assignment of Snapshot IDs and current-snapshot-id"): Java writes -1 for
    "no current snapshot" in v1 and v2 and treats it as omitted/null; readers may accept -1 as null."""
    return None if value == -1 else value


def _check_sequence_numbers(w: Wire, snapshots: tuple[Snapshot, ...]) -> None:
    """A snapshot lacks ``sequence-number`` only when committed before the table was upgraded from v1: never
    after its parent had one (a key damaged would otherwise read as the v1 default, 0)."""
    numbered = {s.snapshot_id for s in snapshots if s.sequence_number is not None}
    for i, s in enumerate(snapshots):
        if s.sequence_number is None and s.parent_snapshot_id in numbered:
            raise w.error(
                f"snapshots[{i}].sequence-number",
                f"missing, though its parent {s.parent_snapshot_id} has one (only snapshots from before an upgrade "
                "from v1 lack it)",
            )


def implied_main_branch(current_snapshot_id: int | None, refs: Mapping[str, Ref]) -> Branch | None:
    """Spec ("Table Metadata Fields", refs): there is always a ``main`` branch reference pointing to
    ``current-snapshot-id`` even if the ``refs`` map is null. Returns that branch when ``refs`` does
    not contain ``main`` and there is a current snapshot (refs do not exist in v1 at all)."""
    if MAIN_BRANCH in refs or current_snapshot_id is None:
        return None
    return Branch(snapshot_id=current_snapshot_id, implied=True)


# ---------------------------------------------------------------- parsing


def _by_unique_id(w: Wire, key: str, id_key: str, items: Sequence[_V], id_of: Callable[[_V], int]) -> dict[int, _V]:
    """``items``, parsed from the list at ``key``, by their ids (``id_key``); a second one with an id is an error."""
    out: dict[int, _V] = {}
    for i, item in enumerate(items):
        item_id = id_of(item)
        if item_id in out:
            raise w.error(f"{key}[{i}].{id_key}", f"duplicate {id_key.removesuffix('-id')} id {item_id}")
        out[item_id] = item
    return out


def _schemas_list(w: Wire, *, default_id: int | None) -> dict[int, Schema]:
    schemas = [
        parse_schema(raw, file=w.file, where=f"schemas[{i}]", default_schema_id=default_id)
        for i, raw in enumerate(w.req_list("schemas"))
    ]
    return _by_unique_id(w, "schemas", "schema-id", schemas, lambda s: s.schema_id)


def _specs_list(w: Wire, *, format_version: int) -> dict[int, PartitionSpec]:
    specs = [
        parse_partition_spec(raw, file=w.file, where=f"partition-specs[{i}]", format_version=format_version)
        for i, raw in enumerate(w.req_list("partition-specs"))
    ]
    return _by_unique_id(w, "partition-specs", "spec-id", specs, lambda s: s.spec_id)


def _objects(w: Wire, key: str, parse: Any, **kw: Any) -> tuple[Any, ...]:
    items = w.opt_list(key) or []
    return tuple(parse(raw, file=w.file, where=f"{key}[{i}]", **kw) for i, raw in enumerate(items))


def _format_version(w: Wire) -> int:
    version = w.req_int("format-version")
    if version not in SUPPORTED_FORMAT_VERSIONS:
        raise UnsupportedFeature(
            f"metadata {w.file}: format-version {version} is not supported (icebook reads versions 1, 2 and 3)"
        )
    return version


def parse_table_metadata(obj: Any, *, file: str) -> TableMetadata:
    """Parse a decoded metadata JSON object into ``TableMetadata``.

    Raises ``UnsupportedFeature`` for a format version other than 1-3 and ``MetadataError``
    (naming ``file`` and the field) for missing required fields, wrong types, and ids that
    point nowhere (current schema/spec/snapshot, refs).
    """
    w = Wire.of(obj, file=file, where="")
    version = _format_version(w)
    v2 = version >= 2
    defaults: list[AppliedDefault] = []

    def required_from_v2(key: str) -> None:
        if v2 and not w.has(key):
            raise w.error(key, "missing")

    for key in ("table-uuid", "last-sequence-number", "last-partition-id", "sort-orders", "default-sort-order-id"):
        required_from_v2(key)
    if version >= 3 and not w.has("next-row-id"):
        raise w.error("next-row-id", "missing")

    if v2:
        schemas = _schemas_list(w, default_id=None)
        current_schema_id = w.req_int("current-schema-id")
        specs = _specs_list(w, format_version=version)
        default_spec_id = w.req_int("default-spec-id")
        last_seq = w.req_int("last-sequence-number")
    else:
        schemas, current_schema_id, notes = v1_schemas(w)
        defaults.extend(notes)
        specs, default_spec_id, notes = v1_partition_specs(w)
        defaults.extend(notes)
        seq = w.opt_int("last-sequence-number")
        if seq is None:
            seq = v1_last_sequence_number()
            defaults.append(AppliedDefault(field="last-sequence-number", value="0", rule="v1_last_sequence_number"))
        last_seq = seq
    for i, spec in enumerate(specs.values()):
        where = f"partition-specs[{i}].fields" if w.has("partition-specs") else "partition-spec"
        for j, pf in enumerate(spec.fields):
            if pf.field_id_defaulted:
                defaults.append(
                    AppliedDefault(
                        field=f"{where}[{j}].field-id",
                        value=str(pf.field_id),
                        rule="assign_v1_partition_field_ids",
                    )
                )
    if current_schema_id not in schemas:
        raise w.error("current-schema-id", f"schema {current_schema_id} is not in schemas {sorted(schemas)}")
    if default_spec_id not in specs:
        raise w.error("default-spec-id", f"spec {default_spec_id} is not in partition-specs {sorted(specs)}")

    sort_orders: dict[int, SortOrder] = {}
    for i, raw in enumerate(w.opt_list("sort-orders") or []):
        so = parse_sort_order(raw, file=file, where=f"sort-orders[{i}]")
        sort_orders[so.order_id] = so
    default_sort_order_id = w.opt_int("default-sort-order-id")
    if (
        default_sort_order_id is not None
        and default_sort_order_id not in sort_orders
        and default_sort_order_id != UNSORTED_ORDER_ID
    ):
        raise w.error("default-sort-order-id", f"sort order {default_sort_order_id} is not in sort-orders")

    snapshots: tuple[Snapshot, ...] = _objects(w, "snapshots", parse_snapshot, format_version=version)
    ids = _by_unique_id(w, "snapshots", "snapshot-id", snapshots, lambda s: s.snapshot_id).keys()
    _check_sequence_numbers(w, snapshots)

    raw_current = w.opt_int("current-snapshot-id")
    current = no_current_snapshot(raw_current)
    if raw_current == -1:
        defaults.append(AppliedDefault(field="current-snapshot-id", value="None (-1)", rule="no_current_snapshot"))
    if current is not None and current not in ids:
        raise w.error("current-snapshot-id", f"snapshot {current} is not in snapshots")

    refs: dict[str, Ref] = {}
    if w.has("refs"):
        rw = w.obj_at("refs")
        for name, raw in rw.obj.items():
            ref = parse_ref(raw, file=file, where=rw.path(name))
            if ref.snapshot_id not in ids:
                raise rw.error(
                    f"{name}.snapshot-id", f"ref {name!r} points to snapshot {ref.snapshot_id}, not in snapshots"
                )
            refs[name] = ref
    main = implied_main_branch(current, refs)
    if main is not None:
        refs = {MAIN_BRANCH: main, **refs}
        defaults.append(AppliedDefault(field="refs.main", value=f"branch -> {current}", rule="implied_main_branch"))
    elif MAIN_BRANCH in refs and current is not None and refs[MAIN_BRANCH].snapshot_id != current:
        raise w.error(
            "current-snapshot-id",
            f"{current} is not the main branch's snapshot {refs[MAIN_BRANCH].snapshot_id} (they must be the same)",
        )

    return TableMetadata(
        format_version=version,
        table_uuid=w.opt_str("table-uuid"),
        location=w.req_str("location"),
        last_sequence_number=last_seq,
        last_updated_ms=w.req_int("last-updated-ms"),
        last_column_id=w.req_int("last-column-id"),
        schemas=MappingProxyType(schemas),
        current_schema_id=current_schema_id,
        partition_specs=MappingProxyType(specs),
        default_spec_id=default_spec_id,
        last_partition_id=w.opt_int("last-partition-id"),
        properties=w.str_map("properties") or EMPTY_MAP,
        current_snapshot_id=current,
        snapshots=snapshots,
        snapshot_log=_objects(w, "snapshot-log", parse_snapshot_log_entry),
        metadata_log=_objects(w, "metadata-log", parse_metadata_log_entry),
        sort_orders=MappingProxyType(sort_orders),
        default_sort_order_id=default_sort_order_id,
        refs=MappingProxyType(refs),
        statistics=_objects(w, "statistics", parse_statistics_file),
        partition_statistics=_objects(w, "partition-statistics", parse_partition_statistics_file),
        next_row_id=w.opt_int("next-row-id"),
        encryption_keys=_objects(w, "encryption-keys", parse_encrypted_key),
        extras=w.extras(_KNOWN_KEYS),
        defaults_applied=tuple(defaults),
        wire_keys=frozenset(w.obj),
        metadata_file=file,
        parent_cycles=find_parent_cycles(snapshots, file=file),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class TableState:
    """What one metadata file says is current, without the history it carries: the current schema,
    default partition spec and sort order, the properties, and which snapshots it knows (spec: "Table
    Metadata Fields"). Timelines read it from every earlier file of the metadata log, where parsing each
    file's whole snapshot list again would cost far more than these few fields."""

    file: str | None
    format_version: int
    last_updated_ms: int
    current_schema_id: int
    default_spec_id: int
    default_sort_order_id: int | None
    properties: Mapping[str, str]
    snapshot_ids: frozenset[int]
    previous_files: int
    """Entries of its metadata log: 0 only in a table's first metadata file."""

    def knows(self, snapshot_id: int) -> bool:
        return snapshot_id in self.snapshot_ids


class _SnapshotIdOf(Protocol):
    @property
    def snapshot_id(self) -> int: ...


class StateSource(Protocol):
    """What ``TableState`` is read from: a fully parsed metadata file, or a decoder of just these fields."""

    @property
    def format_version(self) -> int: ...
    @property
    def last_updated_ms(self) -> int: ...
    @property
    def current_schema_id(self) -> int: ...
    @property
    def default_spec_id(self) -> int: ...
    @property
    def default_sort_order_id(self) -> int | None: ...
    @property
    def properties(self) -> Mapping[str, str]: ...
    @property
    def snapshots(self) -> Sequence[_SnapshotIdOf]: ...
    @property
    def metadata_log(self) -> Sequence[object]: ...


def table_state(metadata: StateSource, file: str | None = None) -> TableState:
    """The ``TableState`` of a metadata file."""
    return TableState(
        file=file,
        format_version=metadata.format_version,
        last_updated_ms=metadata.last_updated_ms,
        current_schema_id=metadata.current_schema_id,
        default_spec_id=metadata.default_spec_id,
        default_sort_order_id=metadata.default_sort_order_id,
        properties=metadata.properties,
        snapshot_ids=frozenset(s.snapshot_id for s in metadata.snapshots),
        previous_files=len(metadata.metadata_log),
    )


# ---------------------------------------------------------------- bytes -> metadata


def parse_metadata_json(data: bytes, *, file: str) -> TableMetadata:
    """Decode a metadata file's bytes (gzip detected by its magic bytes 1f 8b, whatever the
    name says) and parse it. Undecodable content raises ``MetadataError`` naming ``file``."""
    return parse_table_metadata(decode_metadata_json(data, file=file), file=file)


__all__ = [
    "MAIN_BRANCH",
    "SUPPORTED_FORMAT_VERSIONS",
    "AppliedDefault",
    "TableMetadata",
    "TableState",
    "commit_order",
    "implied_main_branch",
    "main_first",
    "no_current_snapshot",
    "parse_metadata_json",
    "parse_table_metadata",
    "table_state",
    "v1_last_sequence_number",
    "v1_partition_specs",
    "v1_schemas",
]
