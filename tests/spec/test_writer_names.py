"""Names of data, delete, deletion-vector and statistics files, split into their parts."""

from __future__ import annotations

import pytest

from icebook.spec.writer_names import parse_written_file_name

UUID = "062d0170-a006-4521-ab49-caf936d72027"


@pytest.mark.parametrize(
    ("name", "kind", "operation_id", "snapshot_id"),
    [
        (f"00000-30-{UUID}-0-00003.parquet", "task output", f"{UUID}-0", None),
        (f"00000-38-{UUID}-00001-deletes.parquet", "task output", UUID, None),
        (f"00000-10-{UUID}-00001-deletes.puffin", "task output", UUID, None),
        (f"3956668235101005755-{UUID}.stats", "table statistics", None, 3956668235101005755),
        (f"partition-stats-42-{UUID}.parquet", "partition statistics", None, 42),
        (f"writer-b-compaction-{UUID}.parquet", "other", None, None),
        (f"00000-0-{UUID}.parquet", "pyiceberg output", None, None),
    ],
)
def test_parse_written_file_name(name: str, kind: str, operation_id: str | None, snapshot_id: int | None) -> None:
    parsed = parse_written_file_name(f"s3://bucket/t/data/region=eu/{name}")
    assert (parsed.kind, parsed.operation_id, parsed.snapshot_id) == (kind, operation_id, snapshot_id)
    assert "".join(p.text for p in parsed.parts) == name
    if name.endswith("-deletes.parquet"):
        assert any(p.role == "suffix" for p in parsed.parts)


def test_a_pyiceberg_data_file_names_the_commit_that_wrote_it() -> None:
    parsed = parse_written_file_name(f"file:///t/data/00000-3-{UUID.upper()}.parquet")
    assert parsed.kind == "pyiceberg output" and parsed.write_uuid == UUID
    assert [p.role for p in parsed.parts] == ["prefix", "separator", "task_id", "separator", "write_uuid", "extension"]
    assert parse_written_file_name(f"00000-30-{UUID}-0-00003.parquet").write_uuid is None  # Spark's
