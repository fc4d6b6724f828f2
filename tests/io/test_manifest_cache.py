"""The disk cache of decoded manifests: identical to the cold decode on every scenario table, corrupt or
truncated entries detected and rebuilt, least recently used entries evicted past the cap, off when asked,
never a write into a table's directory, and ``icebook cache info|clear``."""

from __future__ import annotations

import io
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest

import icebook
import icebook.table
from icebook.analysis.store.manifests import ManifestStore
from icebook.cli import main as cli
from icebook.io import manifest_cache
from icebook.io.manifest_cache import MAGIC, ManifestCache, reset_shared_cache, shared_cache
from icebook.scenarios import SCENARIOS


def _tree(location: Path) -> dict[str, int]:
    return {str(p): p.stat().st_mtime_ns for p in location.rglob("*")}


@pytest.mark.spark
@pytest.mark.parametrize("name", list(SCENARIOS))
def test_cached_manifests_equal_the_cold_decode(scenario_locations: dict[str, Path], tmp_path: Path, name: str) -> None:
    location = scenario_locations[name]
    before = _tree(location)
    t = icebook.open(location)
    cache = ManifestCache(tmp_path / "manifests")
    cold = ManifestStore(t.fileio, t.metadata, disk_cache=False)
    writing = ManifestStore(t.fileio, t.metadata, disk_cache=cache)
    reading = ManifestStore(t.fileio, t.metadata, disk_cache=cache)
    manifests = {m.manifest_path: m for s in t.snapshots for m in t.store.manifest_list(s)}
    assert manifests
    for m in manifests.values():
        writing.entries(m)
    assert cache.misses == len(manifests) and cache.hits == 0
    for m in manifests.values():
        assert reading.entries(m).equals(cold.entries(m)), m.manifest_path
    assert cache.hits == len(manifests) and cache.rejected == 0
    assert cache.info().entries == len(manifests)
    assert _tree(location) == before  # nothing written into the table's directory


@pytest.mark.spark
def test_files_listing_identical_with_and_without_the_cache(
    scenario_locations: dict[str, Path], tmp_path: Path
) -> None:
    """Every snapshot's listing, through the cache of manifests and then of whole listings, equals the cold
    read; the second pass reads each listing as one entry."""
    for name in SCENARIOS:
        t = icebook.open(scenario_locations[name])
        t.store.disk_cache = None
        snapshots = [s.snapshot_id for s in t.snapshots if s.manifest_list is not None]
        cold = {sid: t.inspect.files(at=sid) for sid in snapshots}
        cache = ManifestCache(tmp_path / name)
        for attempt in range(2):  # the first fills the cache, the second reads it
            warm = icebook.open(scenario_locations[name])
            warm.store.disk_cache = cache
            hits = cache.hits
            for sid in snapshots:
                assert warm.inspect.files(at=sid).equals(cold[sid]), (name, sid)
            if attempt == 1:
                assert cache.hits - hits == len(snapshots), name  # one entry per listing
                assert warm.store.reads == 0, name  # no manifest decoded or even loaded
        assert cache.rejected == 0, name


@pytest.mark.spark
@pytest.mark.parametrize("damage", ["flip a byte", "truncate"])
def test_a_damaged_listing_is_detected_and_rebuilt(
    scenario_locations: dict[str, Path], tmp_path: Path, damage: str
) -> None:
    location = scenario_locations["events"]
    t = icebook.open(location)
    t.store.disk_cache = None
    expected = t.inspect.files()
    cache = ManifestCache(tmp_path / "manifests")
    filling = icebook.open(location)
    filling.store.disk_cache = cache
    for m in filling.store.manifest_list(filling.current_snapshot):  # type: ignore[arg-type]
        filling.store.entries(m)
    manifest_entries = set((tmp_path / "manifests").rglob("*.arrow"))
    filling.inspect.files()
    (listing,) = set((tmp_path / "manifests").rglob("*.arrow")) - manifest_entries
    data = bytearray(listing.read_bytes())
    if damage == "flip a byte":
        data[len(data) // 2] ^= 0x5A
    else:
        data = data[: len(data) - 100]
    listing.write_bytes(bytes(data))

    warm = icebook.open(location)
    warm.store.disk_cache = cache
    assert warm.inspect.files().equals(expected)  # built again, not trusted
    assert cache.rejected == 1
    assert listing.read_bytes() != bytes(data)  # rebuilt
    again = icebook.open(location)
    again.store.disk_cache = cache
    assert again.inspect.files().equals(expected) and cache.rejected == 1 and again.store.reads == 0


def test_a_listing_is_served_without_its_manifest_list_until_a_manifest_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cached listing is found by its manifest list's identity alone (the list is not decoded), and is
    not served once one of its manifests has another modification time (rewritten in place)."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import synthetic_table

    location = synthetic_table.build(3000, tmp_path / "table", files_per_manifest=1000)
    cache = ManifestCache(tmp_path / "cache")

    def opened() -> icebook.table.Table:
        t = icebook.open(location)
        t.store.disk_cache = cache
        return t

    expected = opened().inspect.files()
    warm = opened()
    assert warm.inspect.files().equals(expected)
    assert warm.store.reads == 0 and not warm.store._lists  # neither a manifest nor the list decoded
    manifest = Path(warm.store.manifest_list(warm.current_snapshot)[-1].manifest_path)  # type: ignore[arg-type]
    status = manifest.stat()
    os.utime(manifest, ns=(status.st_atime_ns, status.st_mtime_ns + 1_000_000))
    again = opened()
    assert again.inspect.files().equals(expected)
    assert again.store.reads > 0  # built again from the manifests
    last = opened()
    assert last.inspect.files().equals(expected) and last.store.reads == 0  # and stored again


def _one_entry(tmp_path: Path, scenario_locations: dict[str, Path]) -> tuple[ManifestCache, ManifestStore, Path]:
    t = icebook.open(scenario_locations["events"])
    cache = ManifestCache(tmp_path / "manifests")
    store = ManifestStore(t.fileio, t.metadata, disk_cache=cache)
    manifest = t.store.manifest_list(t.current_snapshot)[0]  # type: ignore[arg-type]
    store.entries(manifest)
    (entry,) = (tmp_path / "manifests").rglob("*.arrow")
    return cache, ManifestStore(t.fileio, t.metadata, disk_cache=cache), entry


@pytest.mark.spark
@pytest.mark.parametrize(
    "damage",
    ["flip a byte", "truncate", "empty", "not an entry"],
)
def test_a_damaged_entry_is_detected_and_rebuilt(
    scenario_locations: dict[str, Path], tmp_path: Path, damage: str
) -> None:
    cache, store, entry = _one_entry(tmp_path, scenario_locations)
    data = bytearray(entry.read_bytes())
    if damage == "flip a byte":
        data[len(data) // 2] ^= 0x5A
    elif damage == "truncate":
        data = data[: len(data) - 100]
    elif damage == "empty":
        data = bytearray()
    else:
        data = bytearray(b"PAR1" + bytes(data[len(MAGIC) :]))
    entry.write_bytes(bytes(data))
    t = icebook.open(scenario_locations["events"])
    manifest = t.store.manifest_list(t.current_snapshot)[0]  # type: ignore[arg-type]
    cold = ManifestStore(t.fileio, t.metadata, disk_cache=False).entries(manifest)

    assert store.entries(manifest).equals(cold)  # decoded again, not trusted
    assert cache.rejected == 1
    assert entry.read_bytes() != bytes(data)  # rebuilt
    again = ManifestStore(t.fileio, t.metadata, disk_cache=cache).entries(manifest)
    assert again.equals(cold) and cache.rejected == 1


def _checked_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[ManifestCache, Path, pa.Table]:
    """An entry loaded once (every byte checked, the check stamped) with stamps trusted at once: the margin
    that waits out a file system's timestamp tick is the only thing set aside here."""
    monkeypatch.setattr(manifest_cache, "STAMP_MARGIN_NS", 0)
    cache = ManifestCache(tmp_path / "m")
    table = pa.table({"x": pa.array(range(100_000), pa.int64()), "s": pa.array([str(i) for i in range(100_000)])})
    cache.put("a" * 64, table)
    time.sleep(0.05)  # past the file system clock's tick of the entry's write
    assert cache.get("a" * 64).equals(table)  # type: ignore[union-attr]
    return cache, cache._path("a" * 64), table


def test_a_checked_entry_is_not_hashed_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache, _, table = _checked_entry(tmp_path, monkeypatch)
    hashed: list[int] = []
    real = manifest_cache._checksum
    monkeypatch.setattr(manifest_cache, "_checksum", lambda data: hashed.append(data.size) or real(data))
    assert cache.get("a" * 64).equals(table)  # type: ignore[union-attr]
    assert hashed == [] and cache.hits == 2 and cache.rejected == 0


@pytest.mark.parametrize("damage", ["flip a byte in place", "truncate", "replace with an altered copy", "append"])
def test_a_checked_entry_damaged_later_is_detected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    cache, entry, _ = _checked_entry(tmp_path, monkeypatch)
    time.sleep(0.05)  # the damage comes a tick after the check, as any later write does
    data = bytearray(entry.read_bytes())
    middle = len(data) // 2
    if damage == "flip a byte in place":
        with open(entry, "r+b") as fh:
            fh.seek(middle)
            fh.write(bytes([data[middle] ^ 0x5A]))
    elif damage == "truncate":
        os.truncate(entry, len(data) - 100)
    elif damage == "replace with an altered copy":
        data[middle] ^= 0x5A
        altered = entry.with_name("altered")
        altered.write_bytes(bytes(data))
        os.replace(altered, entry)
    else:
        with open(entry, "ab") as fh:
            fh.write(b"\0" * 16)
    assert cache.get("a" * 64) is None  # never served
    assert cache.rejected == 1 and not entry.exists() and not entry.with_suffix(manifest_cache.STAMP_SUFFIX).exists()


def test_a_stamp_written_within_the_margin_is_not_trusted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Right after an entry is written, a check cannot tell a later write in the same clock tick from none:
    every load then hashes every byte until the margin has passed."""
    cache = ManifestCache(tmp_path / "m")
    table = pa.table({"x": pa.array(range(1000), pa.int64())})
    cache.put("b" * 64, table)
    hashed: list[int] = []
    real = manifest_cache._checksum
    monkeypatch.setattr(manifest_cache, "_checksum", lambda data: hashed.append(data.size) or real(data))
    for _ in range(2):
        assert cache.get("b" * 64).equals(table)  # type: ignore[union-attr]
    assert len(hashed) == 2


def test_least_recently_used_entries_go_past_the_cap(tmp_path: Path) -> None:
    cache = ManifestCache(tmp_path / "m", max_bytes=10 << 20)
    big = pa.table({"x": pa.array(range(300_000), pa.int64())})  # about 2.3 MiB per entry
    for i in range(4):
        cache.put(f"{i:064x}", big)
        entry = cache._path(f"{i:064x}")
        os.utime(entry, ns=(1_000_000_000 * (i + 1), 1_000_000_000 * (i + 1)))
    assert cache.info().entries == 4
    assert cache.get(f"{0:064x}") is not None  # used: now the most recent (its stamp's time)
    cache.put(f"{9:064x}", big)
    left = {p.stem for p in (tmp_path / "m").rglob("*.arrow")}
    assert f"{0:064x}" in left and f"{1:064x}" not in left
    assert cache.info().bytes <= cache.max_bytes


@pytest.mark.spark
def test_off_switch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, scenario_locations: dict[str, Path]) -> None:
    monkeypatch.setenv("ICEBOOK_HOME", str(tmp_path))
    monkeypatch.setenv("ICEBOOK_MANIFEST_CACHE", "off")
    reset_shared_cache()
    try:
        t = icebook.open(scenario_locations["events"])
        t.inspect.files()
        assert not shared_cache().enabled
        assert not (tmp_path / "manifests").exists()
    finally:
        reset_shared_cache()


@pytest.fixture()
def private_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    monkeypatch.setenv("ICEBOOK_HOME", str(tmp_path))
    monkeypatch.delenv("ICEBOOK_MANIFEST_CACHE", raising=False)
    reset_shared_cache()
    yield tmp_path
    reset_shared_cache()


@pytest.mark.spark
def test_cache_info_and_clear_commands(private_home: Path, scenario_locations: dict[str, Path]) -> None:
    icebook.open(scenario_locations["events"]).inspect.files()
    entries = len(list((private_home / "manifests").rglob("*.arrow")))
    assert entries > 0
    out = io.StringIO()
    assert cli(["cache", "info"], out=out) == 0
    text = out.getvalue()
    assert "manifest cache: on" in text and f"entries:  {entries:,}" in text and str(private_home) in text
    out = io.StringIO()
    assert cli(["cache", "clear"], out=out) == 0
    assert f"{entries} entries deleted" in out.getvalue()
    assert not list((private_home / "manifests").rglob("*.arrow"))


@pytest.mark.spark
def test_only_the_plain_fileio_uses_the_cache_by_default(scenario_locations: dict[str, Path]) -> None:
    from icebook.io.fileio import ArrowFileIO
    from icebook.table.opening import open_table

    class Serving(ArrowFileIO):  # a FileIO of one's own may serve other bytes under a path
        pass

    assert icebook.open(scenario_locations["events"]).store.disk_cache is shared_cache()
    assert open_table(str(scenario_locations["events"]), fileio=Serving()).store.disk_cache is None
