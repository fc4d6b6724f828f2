"""The snapshot DAG: parent links, branches and tags, the main ancestry, and what fell off it.

Spec ("Snapshots"): each snapshot names its ``parent-snapshot-id``; ("Snapshot References")
branches and tags point at snapshots, and a branch's history is its snapshot's ancestry.
The current snapshot's ancestry is the main branch's history; a snapshot on no ref's
ancestry is unreachable (a rollback or ``set-current-snapshot`` left it behind) and is
removed by the next ``expire_snapshots``. Expiring can also remove a parent while keeping
its child, so a ``parent-snapshot-id`` may point to nothing.

Cherry-picking and write-audit-publish leave their trace in the summary (reference
implementation's SnapshotSummary): ``source-snapshot-id`` (the picked snapshot),
``published-wap-id`` (a staged WAP snapshot that was published) and ``wap.id`` (staged).
"""

from __future__ import annotations

import bisect
import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import pandas as pd

from icebook.analysis._frames import attribute_frame, frame, utc_timestamp
from icebook.analysis.ancestry import ancestor_ids
from icebook.analysis.resolve import snapshot_id_from_text
from icebook.spec.metadata import TableMetadata, commit_order, main_first
from icebook.spec.snapshots import Branch, Snapshot

SOURCE_SNAPSHOT_ID = "source-snapshot-id"
PUBLISHED_WAP_ID = "published-wap-id"
WAP_ID = "wap.id"


@dataclass(frozen=True, slots=True, kw_only=True)
class LineageNode:
    """One snapshot in the DAG, with everything the graph needs to say about it."""

    snapshot: Snapshot
    branches: tuple[str, ...]
    """Branches whose head is this snapshot."""
    tags: tuple[str, ...]
    """Tags on this snapshot."""
    on_main_ancestry: bool
    """In the current snapshot's ancestry (Spark's ``history.is_current_ancestor``)."""
    children: tuple[int, ...]
    parent_expired: bool
    """The snapshot names a parent that is no longer in the metadata (expired)."""
    parent_cycle: tuple[int, ...] = ()
    """The loop of parent links this snapshot is on (a damaged table), else empty."""
    span: tuple[int, int] = field(default=(0, 0), repr=False, compare=False)
    """Where this snapshot's descendants are in a walk of the parent tree (``RefHeads``): refs whose head
    is in the span have this snapshot in their ancestry."""
    heads: RefHeads | None = field(default=None, repr=False, compare=False)
    reached_past_cycle: tuple[str, ...] = field(default=(), repr=False, compare=False)
    """Refs reaching this snapshot from a part of the history that hangs off a parent loop (no walk
    from a root gets there, so those refs' ancestries are walked one by one, stopping at the loop)."""

    @property
    def reachable_from(self) -> tuple[str, ...]:
        """Refs whose ancestry contains this snapshot; empty means unreachable."""
        spanned = self.heads.within(self.span) if self.heads is not None else ()
        return branch_order([*spanned, *self.reached_past_cycle]) if self.reached_past_cycle else spanned

    @property
    def snapshot_id(self) -> int:
        return self.snapshot.snapshot_id

    @property
    def parent_id(self) -> int | None:
        return self.snapshot.parent_snapshot_id

    @property
    def refs(self) -> tuple[str, ...]:
        return self.branches + self.tags

    @property
    def reachable(self) -> bool:
        return self.heads.any_within(self.span) if self.heads is not None else False

    @property
    def cherry_picked_from(self) -> int | None:
        raw = (self.snapshot.summary or {}).get(SOURCE_SNAPSHOT_ID)
        return None if raw is None else snapshot_id_from_text(raw)

    @property
    def published_wap_id(self) -> str | None:
        return (self.snapshot.summary or {}).get(PUBLISHED_WAP_ID)

    @property
    def wap_id(self) -> str | None:
        return (self.snapshot.summary or {}).get(WAP_ID)


class Relation(enum.StrEnum):
    """How two snapshots relate through parent links."""

    SAME = "same"
    A_BEFORE_B = "a_before_b"
    """a is an ancestor of b."""
    B_BEFORE_A = "b_before_a"
    DIVERGED = "diverged"
    """They share a common ancestor (e.g. main and a branch)."""
    UNRELATED = "unrelated"
    """No common ancestor is left (e.g. expired)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryPath:
    """How two snapshots relate through parent links. ``a_side``/``b_side`` are the commits after the
    common ancestor leading to a and to b, oldest first."""

    a: int | None
    b: int | None
    relation: Relation
    common_ancestor: int | None
    a_side: tuple[Snapshot, ...]
    b_side: tuple[Snapshot, ...]

    def frame(self) -> pd.DataFrame:
        """The commits on both sides: side (a or b), snapshot_id, operation, committed_at."""
        rows = [
            {
                "side": side,
                "snapshot_id": s.snapshot_id,
                "parent_id": s.parent_snapshot_id,
                "operation": s.operation,
                "committed_at": utc_timestamp(s.timestamp_ms),
            }
            for side, snaps in (("a", self.a_side), ("b", self.b_side))
            for s in snaps
        ]
        return frame(
            rows, ["side", "snapshot_id", "parent_id", "operation", "committed_at"], ints=("snapshot_id", "parent_id")
        )


def history_path(metadata: TableMetadata, a: int | None, b: int | None) -> HistoryPath:
    """Walk parents from both snapshots to relate them (the operations between them)."""
    known = {s.snapshot_id: s for s in metadata.snapshots}
    anc_a, anc_b = ancestor_ids(metadata, a), ancestor_ids(metadata, b)

    def side(chain: tuple[int, ...], stop: int | None) -> tuple[Snapshot, ...]:
        out = []
        for sid in chain:
            if sid == stop:
                break
            out.append(known[sid])
        return tuple(reversed(out))

    def path(relation: Relation, common: int | None) -> HistoryPath:
        # A side whose snapshot is the common ancestor is empty: its walk stops at once.
        a_side, b_side = side(anc_a, common), side(anc_b, common)
        return HistoryPath(a=a, b=b, relation=relation, common_ancestor=common, a_side=a_side, b_side=b_side)

    if a == b:
        return path(Relation.SAME, a)
    if a is not None and a in anc_b:
        return path(Relation.A_BEFORE_B, a)
    if b is not None and b in anc_a:
        return path(Relation.B_BEFORE_A, b)
    set_a = set(anc_a)
    common = next((sid for sid in anc_b if sid in set_a), None)
    return path(Relation.DIVERGED if common is not None else Relation.UNRELATED, common)


@dataclass(frozen=True, slots=True, kw_only=True)
class Lineage:
    """The snapshot DAG of one table (``t.lineage()``)."""

    nodes: Mapping[int, LineageNode]
    """Snapshot id -> node, in commit order (oldest first)."""
    main_ancestry: tuple[int, ...]
    """The current snapshot and its ancestors, newest first."""
    refs: Mapping[str, str]
    """Ref name -> 'branch' or 'tag'."""
    metadata: TableMetadata = field(repr=False, compare=False)

    @property
    def unreachable(self) -> tuple[int, ...]:
        """Snapshots on no ref's ancestry (left behind by a rollback; expiring removes them)."""
        return tuple(sid for sid, n in self.nodes.items() if not n.reachable)

    @property
    def expired_parents(self) -> tuple[int, ...]:
        """Parent ids that snapshots name but that are no longer in the metadata."""
        return tuple(sorted({n.parent_id for n in self.nodes.values() if n.parent_expired and n.parent_id is not None}))

    @property
    def cherry_picked(self) -> Mapping[int, int]:
        """Snapshot id -> the snapshot it was cherry-picked from."""
        return {sid: n.cherry_picked_from for sid, n in self.nodes.items() if n.cherry_picked_from is not None}

    @property
    def published(self) -> Mapping[int, str]:
        """Snapshot id -> the WAP id it published."""
        return {sid: n.published_wap_id for sid, n in self.nodes.items() if n.published_wap_id is not None}

    def ancestors(self, snapshot_id: int) -> tuple[int, ...]:
        """The snapshot and its ancestors still present, newest first (a parent loop is walked once:
        the graph shows a damaged history, its nodes carry ``parent_cycle``)."""
        return ancestor_ids(self.metadata, snapshot_id, stop_at_cycle=True)

    def common_ancestor(self, a: int, b: int) -> int | None:
        seen = set(self.ancestors(a))
        return next((sid for sid in self.ancestors(b) if sid in seen), None)

    def to_pandas(self) -> pd.DataFrame:
        """One row per snapshot, in commit order."""
        return attribute_frame(
            self.nodes.values(),
            _COLUMNS,
            ints=("snapshot_id", "parent_id", "sequence_number", "cherry_picked_from"),
            derived={
                "committed_at": lambda n: utc_timestamp(n.snapshot.timestamp_ms),
                "operation": lambda n: n.snapshot.operation,
                "sequence_number": lambda n: n.snapshot.sequence_number,
                "refs": lambda n: list(n.refs),
            },
        )

    def __repr__(self) -> str:
        return f"<Lineage {len(self.nodes)} snapshots, refs {sorted(self.refs)}, {len(self.unreachable)} unreachable>"


_COLUMNS = (
    "snapshot_id",
    "parent_id",
    "committed_at",
    "operation",
    "sequence_number",
    "refs",
    "on_main_ancestry",
    "reachable",
    "cherry_picked_from",
    "published_wap_id",
    "parent_expired",
    "wap_id",
)


class RefHeads:
    """The refs' heads by their place in a depth-first walk of the parent tree: a snapshot's
    descendants occupy one contiguous span of that walk, so the refs whose ancestry contains it are
    those whose head is in its span (found by bisection, with no ancestry walked per ref)."""

    def __init__(self, places: list[tuple[int, str]]) -> None:
        ordered = sorted(places)
        self.places = [p for p, _ in ordered]
        self.names = [n for _, n in ordered]

    def any_within(self, span: tuple[int, int]) -> bool:
        i = bisect.bisect_left(self.places, span[0])
        return i < len(self.places) and self.places[i] < span[1]

    def within(self, span: tuple[int, int]) -> tuple[str, ...]:
        lo, hi = bisect.bisect_left(self.places, span[0]), bisect.bisect_left(self.places, span[1])
        return branch_order(self.names[lo:hi])


def branch_order(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(names, key=main_first))


def _spans(roots: list[int], children: Mapping[int, list[int]]) -> dict[int, tuple[int, int]]:
    """(first, past-the-last) place of each snapshot's subtree in a depth-first walk from ``roots``."""
    spans: dict[int, tuple[int, int]] = {}
    clock = 0
    for root in roots:
        stack: list[tuple[int, bool]] = [(root, False)]
        start: dict[int, int] = {}
        while stack:
            sid, done = stack.pop()
            if done:
                spans[sid] = (start.pop(sid), clock)
                continue
            start[sid] = clock
            clock += 1
            stack.append((sid, True))
            stack.extend((child, False) for child in reversed(children.get(sid, ())))
    return spans


def lineage(metadata: TableMetadata) -> Lineage:
    """Build the DAG of ``metadata``'s snapshots (no file is read); linear in the number of snapshots."""
    snaps = sorted(metadata.snapshots, key=commit_order)
    known = {s.snapshot_id for s in snaps}
    # The graph shows a damaged history instead of refusing it: a parent loop ends the walk where it closes.
    main = ancestor_ids(metadata, metadata.current_snapshot_id, stop_at_cycle=True)
    main_set = set(main)
    children: dict[int, list[int]] = {}
    roots: list[int] = []
    for s in snaps:
        if s.parent_snapshot_id is not None:
            children.setdefault(s.parent_snapshot_id, []).append(s.snapshot_id)
        if s.parent_snapshot_id is None or s.parent_snapshot_id not in known:
            roots.append(s.snapshot_id)
    spans = _spans(roots, children)
    places: list[tuple[int, str]] = []
    past_cycle: dict[int, list[str]] = {}
    heads: dict[int, list[str]] = {}
    tags: dict[int, list[str]] = {}
    for name, ref in metadata.refs.items():
        (heads if isinstance(ref, Branch) else tags).setdefault(ref.snapshot_id, []).append(name)
        if ref.snapshot_id in spans:
            places.append((spans[ref.snapshot_id][0], name))
        elif ref.snapshot_id in known:  # not reached from a root: its parents run into a loop
            for sid in ancestor_ids(metadata, ref.snapshot_id, stop_at_cycle=True):
                past_cycle.setdefault(sid, []).append(name)
    index = RefHeads(places)
    nodes = {
        s.snapshot_id: LineageNode(
            snapshot=s,
            branches=branch_order(heads.get(s.snapshot_id, [])),
            tags=tuple(sorted(tags.get(s.snapshot_id, []))),
            on_main_ancestry=s.snapshot_id in main_set,
            children=tuple(children.get(s.snapshot_id, [])),
            parent_expired=s.parent_snapshot_id is not None and s.parent_snapshot_id not in known,
            parent_cycle=cycle.snapshot_ids if (cycle := metadata.parent_cycle(s.snapshot_id)) else (),
            span=spans.get(s.snapshot_id, (0, 0)),
            heads=index,
            reached_past_cycle=tuple(past_cycle.get(s.snapshot_id, ())),
        )
        for s in snaps
    }
    return Lineage(
        nodes=MappingProxyType(nodes),
        main_ancestry=main,
        refs=MappingProxyType({name: ref.type for name, ref in metadata.refs.items()}),
        metadata=metadata,
    )
