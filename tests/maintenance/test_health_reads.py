"""The health report decodes each manifest once: the plan with equality statistics, the manifests
section, the compaction preview and the delete index share one read of the snapshot's manifests."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import icebook
from icebook.analysis.store.manifests import ManifestStore
from icebook.io.manifest_cache import reset_shared_cache

pytestmark = pytest.mark.spark


@pytest.fixture
def no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A hit of the disk cache serves any request whole, which would hide a second decode."""
    monkeypatch.setenv("ICEBOOK_MANIFEST_CACHE", "off")
    reset_shared_cache()
    yield
    monkeypatch.undo()
    reset_shared_cache()


@pytest.mark.usefixtures("no_disk_cache")
@pytest.mark.parametrize("name", ["equality_deletes", "debt"])
def test_health_decodes_each_manifest_once(
    scenario_locations: dict[str, Path], monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    decodes: Counter[str] = Counter()
    decode = ManifestStore._decode

    def counted(self: ManifestStore, manifest: Any, columns: Any) -> Any:
        decodes[manifest.manifest_path] += 1
        return decode(self, manifest, columns)

    monkeypatch.setattr(ManifestStore, "_decode", counted)
    t = icebook.open(str(scenario_locations[name]))
    report = t.maintenance.health(list_files=False)
    assert report.compaction is not None and report.files.data_files
    current = {m.manifest_path for m in t.store.manifest_list(t.current_snapshot)}
    assert current and {path: decodes[path] for path in current} == dict.fromkeys(current, 1)
