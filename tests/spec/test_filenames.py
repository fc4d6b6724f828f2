"""File-name conventions: metadata files, manifest lists, manifests, and commit linking."""

from __future__ import annotations

import pytest

from icebook.spec.filenames import (
    ManifestListName,
    ManifestName,
    MetadataFileName,
    UnknownFileName,
    link_commits,
    parse_file_name,
    parse_manifest_list_name,
    parse_metadata_file_name,
)

META_UUID = "25005c05-834d-4650-a529-410eabcb12d6"
COMMIT = "fc6cefef-bfb2-4c11-a105-205785bcb5ac"
OTHER = "0a1b2c3d-0000-4000-8000-000000000001"


@pytest.mark.parametrize(
    ("name", "style", "version", "uuid", "gz"),
    [
        (f"00000-{META_UUID}.metadata.json", "versioned", 0, META_UUID, False),
        (f"00012-{META_UUID}.gz.metadata.json", "versioned", 12, META_UUID, True),
        (f"00012-{META_UUID}.metadata.json.gz", "versioned", 12, META_UUID, True),
        (f"123456-{META_UUID}.metadata.json", "versioned", 123456, META_UUID, False),
        ("v1.metadata.json", "hadoop", 1, None, False),
        ("v17.gz.metadata.json", "hadoop", 17, None, True),
        ("v17.metadata.json.gz", "hadoop", 17, None, True),
    ],
)
def test_metadata_file_names(name: str, style: str, version: int, uuid: str | None, gz: bool) -> None:
    parsed = parse_file_name(f"s3://b/t/metadata/{name}")
    assert isinstance(parsed, MetadataFileName)
    assert (parsed.style, parsed.version, parsed.uuid, parsed.gzip) == (style, version, uuid, gz)
    assert parsed.name == name and parsed.path == f"s3://b/t/metadata/{name}"
    assert "".join(p.text for p in parsed.parts) == name
    assert "version" in {p.role for p in parsed.parts}


@pytest.mark.parametrize(
    "name",
    [
        "v1.gz.metadata.json.gz",
        f"0001-{META_UUID}.metadata.json",  # fewer than 5 digits: not %05d
        f"00001-{META_UUID}.json",
        "vX.metadata.json",
        "00001-not-a-uuid.metadata.json",
    ],
)
def test_not_metadata_file_names(name: str) -> None:
    assert parse_metadata_file_name(name) is None
    assert isinstance(parse_file_name(name), UnknownFileName)


def test_manifest_list_name() -> None:
    name = f"snap-1081867561747206961-1-{COMMIT}.avro"
    parsed = parse_file_name(f"/wh/t/metadata/{name}")
    assert isinstance(parsed, ManifestListName)
    assert (parsed.snapshot_id, parsed.attempt, parsed.commit_uuid) == (1081867561747206961, 1, COMMIT)
    assert "".join(p.text for p in parsed.parts) == name
    roles = [p.role for p in parsed.parts]
    assert roles == ["prefix", "snapshot_id", "separator", "attempt", "separator", "commit_uuid", "extension"]
    assert all(p.meaning for p in parsed.parts if p.role != "separator")


def test_manifest_name() -> None:
    name = f"{COMMIT}-m12.avro"
    parsed = parse_file_name(name)
    assert isinstance(parsed, ManifestName)
    assert (parsed.commit_uuid, parsed.index) == (COMMIT, 12)
    assert "".join(p.text for p in parsed.parts) == name


def test_upper_case_uuid_is_normalised() -> None:
    parsed = parse_manifest_list_name(f"snap-1-1-{COMMIT.upper()}.avro")
    assert parsed is not None and parsed.commit_uuid == COMMIT


@pytest.mark.parametrize(
    ("name", "note"),
    [
        (f"optimized-m-{COMMIT}.avro", "rewrite"),
        ("version-hint.text", "Hadoop"),
        ("whatever.avro", "Avro"),
        ("30.stats", "Puffin"),
        ("README", "not a recognised"),
    ],
)
def test_unknown_names(name: str, note: str) -> None:
    parsed = parse_file_name(name)
    assert isinstance(parsed, UnknownFileName)
    assert note in parsed.note
    assert parsed.parts[0].text == name


def test_link_commits_groups_and_retries() -> None:
    lists = [
        f"/m/snap-100-1-{COMMIT}.avro",
        f"/m/snap-200-1-{OTHER}.avro",
        f"/m/snap-200-2-{OTHER}.avro",
        "/m/not-a-list.avro",
    ]
    manifests = [
        f"/m/{COMMIT}-m1.avro",
        f"/m/{COMMIT}-m0.avro",
        f"/m/{OTHER}-m0.avro",
        f"/m/optimized-m-{OTHER}.avro",
        f"/m/{COMMIT}-m0.avro",  # listed twice: counted once
    ]
    links = link_commits(lists, manifests)
    first = links.commits[COMMIT]
    assert [m.index for m in first.manifests] == [0, 1]
    assert first.snapshot_ids == (100,) and not first.retried and first.max_attempt == 1
    second = links.commits[OTHER]
    assert second.retried and second.max_attempt == 2 and second.snapshot_ids == (200,)
    assert [ml.attempt for ml in second.manifest_lists] == [1, 2]
    assert links.retried == (second,)
    assert links.unrecognized == ("/m/not-a-list.avro", f"/m/optimized-m-{OTHER}.avro")
    assert links.commit_of(f"{COMMIT}-m1.avro") is first
    assert links.commit_of("README") is None


def test_single_retried_attempt_and_orphan_manifests() -> None:
    orphan = "11111111-2222-4333-8444-555555555555"
    links = link_commits([f"snap-7-3-{COMMIT}.avro"], [f"{orphan}-m0.avro"])
    assert links.commits[COMMIT].retried  # attempt 3 without the earlier lists still shows a retry
    assert links.commits[orphan].manifest_lists == () and not links.commits[orphan].retried
    assert links.commits[orphan].max_attempt is None
