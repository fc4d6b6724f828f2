"""Spec-defined inheritance for manifest lists and entries, one rule at a time."""

from __future__ import annotations

from icebook.spec.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
    PartitionFieldSummary,
    apply_manifest_list_defaults,
    inherit_first_row_ids,
    inherit_sequence_numbers,
    inherit_snapshot_id,
)


def _manifest(**kw: object) -> ManifestFile:
    base: dict[str, object] = dict(
        manifest_path="/t/metadata/abc-m0.avro",
        manifest_length=100,
        partition_spec_id=0,
        content=ManifestContent.DATA,
        sequence_number=7,
        min_sequence_number=3,
        added_snapshot_id=42,
        first_row_id=None,
    )
    base.update(kw)
    return ManifestFile(**base)  # type: ignore[arg-type]


def test_v1_list_defaults_are_applied_and_explained() -> None:
    raw = _manifest(content=None, sequence_number=None, min_sequence_number=None)
    m = apply_manifest_list_defaults(raw, 1)
    assert (m.content, m.sequence_number, m.min_sequence_number) == (ManifestContent.DATA, 0, 0)
    assert "use 0 when reading v1 manifest lists" in (m.explain("sequence_number") or "")
    assert m.explain("added_snapshot_id") is None
    v2 = _manifest()
    assert apply_manifest_list_defaults(v2, 2) is v2


def test_a_manifest_without_content_tracks_data_files() -> None:
    assert _manifest(content=None).effective_content == ManifestContent.DATA
    assert _manifest(content=ManifestContent.DELETES).effective_content == ManifestContent.DELETES


def test_snapshot_id_inherited_when_null() -> None:
    m = _manifest()
    assert inherit_snapshot_id(5, m) == (5, None)
    value, note = inherit_snapshot_id(None, m)
    assert value == 42 and note is not None and "Inherited when null" in note.rule


def test_sequence_numbers_inherited_only_for_added() -> None:
    m = _manifest()
    assert inherit_sequence_numbers(EntryStatus.ADDED, None, None, m, format_version=2)[:2] == (7, 7)
    assert inherit_sequence_numbers(EntryStatus.ADDED, 3, None, m, format_version=2)[:2] == (3, 7)
    # EXISTING / DELETED must carry explicit values; a null is left visible, not invented
    assert inherit_sequence_numbers(EntryStatus.EXISTING, None, None, m, format_version=2) == (None, None, ())
    assert inherit_sequence_numbers(EntryStatus.DELETED, 2, 2, m, format_version=2) == (2, 2, ())
    # v1: no sequence number columns: 0 for all files
    seq, fseq, notes = inherit_sequence_numbers(EntryStatus.EXISTING, None, None, m, format_version=1)
    assert (seq, fseq) == (0, 0) and {n.field for n in notes} == {"sequence_number", "file_sequence_number"}


def test_first_row_ids_follow_the_spec_example() -> None:
    m = _manifest(first_row_id=1000)
    values, flags = inherit_first_row_ids(
        contents=[0, 0, 1, 0, 0],
        record_counts=[10, 5, 2, 7, 1],
        first_row_ids=[None, 500, None, None, None],
        manifest=m,
    )
    # explicit 500 kept and not counted; the delete file stays null and is not counted
    assert values == (1000, 500, None, 1010, 1017)
    assert flags == (True, False, False, True, True)
    assert inherit_first_row_ids([0], [3], [None], _manifest())[0] == (None,)


def test_models_are_frozen_and_documented() -> None:
    df = DataFile(
        content=FileContent.DATA,
        file_path="s3://b/x.parquet",
        file_format="PARQUET",
        spec_id=0,
        partition={"a": 1},
        partition_field_ids={"a": 1000},
        record_count=1,
        file_size_in_bytes=10,
        lower_bounds={1: b"\x01\x00\x00\x00"},
    )
    e = ManifestEntry(status=EntryStatus.ADDED, snapshot_id=1, sequence_number=1, file_sequence_number=1, data_file=df)
    assert e.explain("sequence_number") is None
    for model in (ManifestFile, DataFile, ManifestEntry, PartitionFieldSummary):
        fields = {f for f in model.__dataclass_fields__ if f not in ("inherited", "format_version", "FIELD_DOCS")}
        fields -= {"partition_field_ids"}
        assert fields <= set(model.FIELD_DOCS), (model.__name__, fields - set(model.FIELD_DOCS))
