"""A snapshot's ancestry: the walk up ``parent-snapshot-id`` links (spec: "Snapshots").

Every history question (main's history, a branch's history, the path between two snapshots,
whether a snapshot is reachable) walks the same chain, so it is walked here only. The walk stops
at a parent that is no longer in the metadata (expiring snapshots may remove a parent and keep
its child). A chain that comes back to a snapshot it already passed is a corrupt metadata file.
"""

from __future__ import annotations

from icebook.errors import MetadataError
from icebook.spec.metadata import TableMetadata
from icebook.spec.snapshots import Snapshot


def ancestry(metadata: TableMetadata, snapshot_id: int | None, *, stop_at_cycle: bool = False) -> tuple[Snapshot, ...]:
    """The snapshot ``snapshot_id`` and its ancestors still in ``metadata``, newest first.

    Empty when ``snapshot_id`` is None or not in the metadata. A parent cycle raises
    ``MetadataError`` naming the metadata file, the snapshot whose parent closes the cycle and
    the ids around it; with ``stop_at_cycle`` (the lineage graph, which shows the damage) the walk
    ends where the cycle closes instead.
    """
    chain: list[Snapshot] = []
    position: dict[int, int] = {}
    snapshot = metadata.find_snapshot(snapshot_id)
    while snapshot is not None:
        if snapshot.snapshot_id in position:
            if stop_at_cycle:
                break
            cycle = [s.snapshot_id for s in chain[position[snapshot.snapshot_id] :]] + [snapshot.snapshot_id]
            last = chain[-1]
            index = next(i for i, s in enumerate(metadata.snapshots) if s.snapshot_id == last.snapshot_id)
            raise MetadataError(
                metadata.metadata_file or "(metadata file unknown)",
                f"snapshots[{index}].parent-snapshot-id",
                "the parent links form a cycle: " + " -> ".join(str(i) for i in cycle),
                kind="metadata",
            )
        position[snapshot.snapshot_id] = len(chain)
        chain.append(snapshot)
        snapshot = metadata.find_snapshot(snapshot.parent_snapshot_id)
    return tuple(chain)


def ancestor_ids(metadata: TableMetadata, snapshot_id: int | None, *, stop_at_cycle: bool = False) -> tuple[int, ...]:
    """The ids of ``ancestry(metadata, snapshot_id)``."""
    return tuple(s.snapshot_id for s in ancestry(metadata, snapshot_id, stop_at_cycle=stop_at_cycle))


__all__ = ["ancestor_ids", "ancestry"]
