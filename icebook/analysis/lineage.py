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

import datetime as _dt
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import pandas as pd

from icebook.analysis import _html
from icebook.analysis._frames import frame
from icebook.analysis.inspect import current_ancestry
from icebook.errors import NotFound
from icebook.spec.metadata import MAIN_BRANCH, TableMetadata
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
    reachable_from: tuple[str, ...]
    """Refs whose ancestry contains this snapshot; empty means unreachable."""
    children: tuple[int, ...]
    parent_expired: bool
    """The snapshot names a parent that is no longer in the metadata (expired)."""
    parent_cycle: tuple[int, ...] = ()
    """The loop of parent links this snapshot is on (a damaged table), else empty."""

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
        return bool(self.reachable_from)

    @property
    def cherry_picked_from(self) -> int | None:
        raw = (self.snapshot.summary or {}).get(SOURCE_SNAPSHOT_ID)
        return int(raw) if raw is not None and raw.lstrip("-").isdigit() else None

    @property
    def published_wap_id(self) -> str | None:
        return (self.snapshot.summary or {}).get(PUBLISHED_WAP_ID)

    @property
    def wap_id(self) -> str | None:
        return (self.snapshot.summary or {}).get(WAP_ID)

    def labels(self) -> list[str]:
        return [*self.branches, *(f"tag: {t}" for t in self.tags)]


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryPath:
    """How two snapshots relate through parent links.

    ``relation``: ``same``; ``a_before_b`` (a is an ancestor of b); ``b_before_a``; ``diverged``
    (they share a common ancestor, e.g. main and a branch); ``unrelated`` (no common ancestor is
    left, e.g. expired). ``a_side``/``b_side`` are the commits after the common ancestor leading
    to a and to b, oldest first.
    """

    a: int | None
    b: int | None
    relation: str
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
                "committed_at": pd.Timestamp(s.timestamp_ms, unit="ms", tz="UTC"),
            }
            for side, snaps in (("a", self.a_side), ("b", self.b_side))
            for s in snaps
        ]
        return frame(
            rows, ["side", "snapshot_id", "parent_id", "operation", "committed_at"], ints=("snapshot_id", "parent_id")
        )

    def describe(self) -> str:
        def ops(snaps: tuple[Snapshot, ...]) -> str:
            return ", ".join(f"{s.operation} {s.snapshot_id}" for s in snaps) or "nothing"

        if self.relation == "same":
            return "same snapshot"
        if self.relation == "a_before_b":
            return f"{len(self.b_side)} commit(s) from a to b: {ops(self.b_side)}"
        if self.relation == "b_before_a":
            return f"b is an ancestor of a ({len(self.a_side)} commit(s) back): {ops(self.a_side)}"
        if self.relation == "diverged":
            return f"diverged at {self.common_ancestor}: a side {ops(self.a_side)}; b side {ops(self.b_side)}"
        return "no common ancestor left (expired, or separate histories)"


def ancestry(metadata: TableMetadata, snapshot_id: int | None) -> list[int]:
    """``snapshot_id`` and its ancestors that still exist, newest first."""
    return [] if snapshot_id is None else current_ancestry(metadata, snapshot_id)


def history_path(metadata: TableMetadata, a: int | None, b: int | None) -> HistoryPath:
    """Walk parents from both snapshots to relate them (the operations between them)."""
    known = {s.snapshot_id: s for s in metadata.snapshots}
    anc_a, anc_b = ancestry(metadata, a), ancestry(metadata, b)

    def side(chain: list[int], stop: int | None) -> tuple[Snapshot, ...]:
        out = []
        for sid in chain:
            if sid == stop:
                break
            out.append(known[sid])
        return tuple(reversed(out))

    if a == b:
        return HistoryPath(a=a, b=b, relation="same", common_ancestor=a, a_side=(), b_side=())
    if a is not None and a in anc_b:
        return HistoryPath(a=a, b=b, relation="a_before_b", common_ancestor=a, a_side=(), b_side=side(anc_b, a))
    if b is not None and b in anc_a:
        return HistoryPath(a=a, b=b, relation="b_before_a", common_ancestor=b, a_side=side(anc_a, b), b_side=())
    set_a = set(anc_a)
    common = next((sid for sid in anc_b if sid in set_a), None)
    if common is None:
        return HistoryPath(
            a=a, b=b, relation="unrelated", common_ancestor=None, a_side=side(anc_a, None), b_side=side(anc_b, None)
        )
    return HistoryPath(
        a=a, b=b, relation="diverged", common_ancestor=common, a_side=side(anc_a, common), b_side=side(anc_b, common)
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Lineage:
    """The snapshot DAG of one table (``t.lineage()``)."""

    nodes: Mapping[int, LineageNode]
    """Snapshot id -> node, in commit order (oldest first)."""
    main_ancestry: tuple[int, ...]
    """The current snapshot and its ancestors, newest first."""
    refs: Mapping[str, str]
    """Ref name -> 'branch' or 'tag'."""

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
        """The snapshot and its ancestors still present, newest first."""
        out: list[int] = []
        cursor: int | None = snapshot_id
        while cursor is not None and cursor in self.nodes and cursor not in out:
            out.append(cursor)
            cursor = self.nodes[cursor].parent_id
        return tuple(out)

    def common_ancestor(self, a: int, b: int) -> int | None:
        seen = set(self.ancestors(a))
        return next((sid for sid in self.ancestors(b) if sid in seen), None)

    def to_pandas(self) -> pd.DataFrame:
        """One row per snapshot, in commit order."""
        rows = [
            {
                "snapshot_id": n.snapshot_id,
                "parent_id": n.parent_id,
                "committed_at": pd.Timestamp(n.snapshot.timestamp_ms, unit="ms", tz="UTC"),
                "operation": n.snapshot.operation,
                "sequence_number": n.snapshot.sequence_number,
                "refs": list(n.refs),
                "on_main_ancestry": n.on_main_ancestry,
                "reachable": n.reachable,
                "cherry_picked_from": n.cherry_picked_from,
                "published_wap_id": n.published_wap_id,
                "parent_expired": n.parent_expired,
                "wap_id": n.wap_id,
            }
            for n in self.nodes.values()
        ]
        return frame(rows, _COLUMNS, ints=("snapshot_id", "parent_id", "sequence_number", "cherry_picked_from"))

    def graph_lines(self) -> list[tuple[str, LineageNode | None]]:
        """(graph prefix, node) rows, newest first, like ``git log --graph``; node None for a joint row."""
        order = sorted(
            self.nodes.values(), key=lambda n: (n.snapshot.timestamp_ms, n.snapshot.sequence_number or 0), reverse=True
        )
        cols: list[int | None] = []
        out: list[tuple[str, LineageNode | None]] = []
        for node in order:
            sid = node.snapshot_id
            waiting = [i for i, c in enumerate(cols) if c == sid]
            if len(waiting) > 1:
                # Several lines (branches) meet at this snapshot: draw them joining, then drop the extras.
                keep = waiting[0]
                chars = [" "] * (2 * len(cols))
                for i in range(len(cols)):
                    chars[2 * i - 1 if i in waiting[1:] else 2 * i] = "/" if i in waiting[1:] else "|"
                out.append(("".join(chars).rstrip(), None))
                cols = [c for i, c in enumerate(cols) if i not in waiting[1:]]
                idx = keep
            elif waiting:
                idx = waiting[0]
            else:
                cols.append(sid)
                idx = len(cols) - 1
            out.append(("".join("* " if i == idx else "| " for i in range(len(cols))), node))
            parent = node.parent_id if node.parent_id in self.nodes else None
            if parent is None:
                del cols[idx]
            else:
                cols[idx] = parent
        return out

    def __repr__(self) -> str:
        lines = [f"Lineage: {len(self.nodes)} snapshots, refs {sorted(self.refs)}"]
        for prefix, node in self.graph_lines():
            lines.append(prefix if node is None else f"{prefix.rstrip()} {_line(node)}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        rows: list[tuple[object, ...]] = []
        colors: list[str | None] = []
        for prefix, node in self.graph_lines():
            if node is None:
                rows.append((_graph_cell(prefix), "", "", "", "", ""))
                colors.append(None)
                continue
            notes = _notes(node)
            rows.append(
                (
                    _graph_cell(prefix),
                    node.snapshot_id,
                    node.snapshot.operation or "",
                    _when(node.snapshot.timestamp_ms),
                    ", ".join(node.labels()),
                    "; ".join(notes),
                )
            )
            colors.append(None if node.reachable else _html.MUTED)
        return _html.box(
            _html.heading(f"Lineage: {len(self.nodes)} snapshots"),
            _html.table(["graph", "snapshot", "operation", "committed at", "refs", "notes"], rows, row_colors=colors),
            _html.muted("grey rows: not reachable from any branch or tag"),
        )


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


def _graph_cell(prefix: str) -> _html.Markup:
    return _html.Markup(f'<span style="white-space:pre">{_html.esc(prefix)}</span>')


def _when(ms: int) -> str:
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.UTC).strftime("%Y-%m-%d %H:%M:%S")


def _notes(node: LineageNode) -> list[str]:
    notes = []
    if not node.reachable:
        notes.append("unreachable")
    if node.parent_expired:
        notes.append(f"parent {node.parent_id} expired")
    if node.parent_cycle:
        loop = " -> ".join(str(i) for i in (*node.parent_cycle, node.parent_cycle[0]))
        notes.append(f"DAMAGED: parent links loop {loop}")
    if node.cherry_picked_from is not None:
        notes.append(f"cherry-picked from {node.cherry_picked_from}")
    if node.published_wap_id is not None:
        notes.append(f"published WAP {node.published_wap_id}")
    if node.wap_id is not None:
        notes.append(f"staged WAP {node.wap_id}")
    return notes


def _line(node: LineageNode) -> str:
    labels = node.labels()
    text = f"{node.snapshot_id} {node.snapshot.operation or '?'} seq={node.snapshot.sequence_number}"
    text += f" {_when(node.snapshot.timestamp_ms)}"
    if labels:
        text += f" ({', '.join(labels)})"
    notes = _notes(node)
    if notes:
        text += f" [{'; '.join(notes)}]"
    return text


def _ancestry_through_cycles(metadata: TableMetadata, snapshot_id: int | None) -> list[int]:
    """Ancestors newest first, stopping where a (damaged) loop of parent links comes round again:
    the graph shows the loop, where every other walk through history reports it as an error."""
    out: list[int] = []
    seen: set[int] = set()
    cursor = snapshot_id
    while cursor is not None and cursor not in seen:
        try:
            snapshot = metadata.snapshot_by_id(cursor)
        except NotFound:
            break
        out.append(cursor)
        seen.add(cursor)
        cursor = snapshot.parent_snapshot_id
    return out


def lineage(metadata: TableMetadata) -> Lineage:
    """Build the DAG of ``metadata``'s snapshots (no file is read)."""
    snaps = sorted(metadata.snapshots, key=lambda s: (s.timestamp_ms, s.sequence_number or 0))
    known = {s.snapshot_id for s in snaps}
    main = tuple(_ancestry_through_cycles(metadata, metadata.current_snapshot_id))
    main_set = set(main)
    reachable: dict[int, list[str]] = {}
    for name, ref in metadata.refs.items():
        for sid in _ancestry_through_cycles(metadata, ref.snapshot_id):
            reachable.setdefault(sid, []).append(name)
    heads: dict[int, list[str]] = {}
    tags: dict[int, list[str]] = {}
    for name, ref in metadata.refs.items():
        (heads if isinstance(ref, Branch) else tags).setdefault(ref.snapshot_id, []).append(name)
    children: dict[int, list[int]] = {}
    for s in snaps:
        if s.parent_snapshot_id is not None:
            children.setdefault(s.parent_snapshot_id, []).append(s.snapshot_id)

    def branch_order(names: list[str]) -> tuple[str, ...]:
        return tuple(sorted(names, key=lambda n: (n != MAIN_BRANCH, n)))

    nodes = {
        s.snapshot_id: LineageNode(
            snapshot=s,
            branches=branch_order(heads.get(s.snapshot_id, [])),
            tags=tuple(sorted(tags.get(s.snapshot_id, []))),
            on_main_ancestry=s.snapshot_id in main_set,
            reachable_from=branch_order(reachable.get(s.snapshot_id, [])),
            children=tuple(children.get(s.snapshot_id, [])),
            parent_expired=s.parent_snapshot_id is not None and s.parent_snapshot_id not in known,
            parent_cycle=cycle.snapshot_ids if (cycle := metadata.parent_cycle(s.snapshot_id)) else (),
        )
        for s in snaps
    }
    return Lineage(
        nodes=MappingProxyType(nodes),
        main_ancestry=main,
        refs=MappingProxyType({name: ref.type for name, ref in metadata.refs.items()}),
    )
