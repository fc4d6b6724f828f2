"""What a table directory holds on disk, to show that reading (or a dry run) wrote nothing into it."""

from __future__ import annotations

from pathlib import Path


def file_states(root: Path) -> dict[Path, tuple[int, int]]:
    """Every file and directory under ``root``, with its modification time (ns) and size."""
    return {p: (p.stat().st_mtime_ns, p.stat().st_size) for p in root.rglob("*")}
