"""The planners' arithmetic, checked against the reference implementation's rules without Spark
(the Spark-checked comparisons are beside it, in test_previews_spark and test_health_spark)."""

from __future__ import annotations

from pathlib import Path

import pytest

from icebook.analysis.maintenance.compaction import CandidateFile, OptionError, bin_pack, compaction_options
from icebook.analysis.maintenance.orphans import walk
from icebook.errors import IcebookError, UnsupportedFeature
from icebook.io.fileio import ArrowFileIO

MB = 1024 * 1024


def _file(name: str, size: int) -> CandidateFile:
    return CandidateFile(
        file_path=name,
        spec_id=0,
        partition="",
        file_size_in_bytes=size,
        record_count=1,
        delete_files=0,
        file_scoped_deleted_records=0,
        reasons=("too small",),
    )


def test_bin_pack_first_fit_with_one_open_bin() -> None:
    # ListPacker(10, lookback 1): a file that does not fit closes the open bin.
    files = [_file("a", 6), _file("b", 6), _file("c", 3), _file("d", 5), _file("e", 11)]
    groups = bin_pack(files, 10)
    assert [[f.file_path for f in g] for g in groups] == [["a"], ["b", "c"], ["d"], ["e"]]


def test_options_default_from_the_table_property_and_ratios() -> None:
    o = compaction_options({"write.target-file-size-bytes": str(100 * MB)})
    assert o.target_file_size_bytes == 100 * MB
    assert o.min_file_size_bytes == int(100 * MB * 0.75)
    assert o.max_file_size_bytes == int(100 * MB * 1.8)
    assert o.min_input_files == 5 and o.delete_ratio_threshold == 0.3
    assert o.delete_file_threshold == 2**31 - 1


def test_expected_output_files_keeps_or_spreads_the_remainder() -> None:
    o = compaction_options({}, {"target-file-size-bytes": 100, "min-file-size-bytes": 75, "max-file-size-bytes": 180})
    assert o.expected_output_files(50) == 1
    assert o.expected_output_files(280) == 3  # remainder 80 > min 75: its own file
    assert o.expected_output_files(205) == 2  # remainder 5 spread: 102.5 each < 110
    assert o.expected_output_files(250) == 3  # spreading 50 over 2 makes 125 > 110: keep it


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"target-file-size-bytes": 0}, "must be > 0"),
        ({"min-file-size-bytes": 600 * MB}, "must be > 'min-file-size-bytes'"),
        ({"max-file-size-bytes": 10}, "must be < 'max-file-size-bytes'"),
        ({"min-input-files": 0}, "must be > 0"),
        ({"delete-ratio-threshold": 1.5}, "must be > 0 and <= 1"),
        ({"no-such-option": 1}, "cannot use options"),
        ({"min-input-files": "five"}, "is not an integer"),
    ],
)
def test_options_the_procedure_rejects_are_rejected(options: dict[str, object], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        compaction_options({}, options)


def test_option_errors_are_icebook_errors() -> None:
    from icebook.errors import OptionError as Public

    assert Public is OptionError and issubclass(OptionError, IcebookError)


def test_max_files_to_rewrite_is_refused_rather_than_guessed() -> None:
    with pytest.raises(UnsupportedFeature, match="hash order"):
        compaction_options({}, {"max-files-to-rewrite": 3})


def test_listing_skips_hidden_names_except_partition_directories(tmp_path: Path) -> None:
    for rel in ("data/a.parquet", "data/.a.parquet.crc", "_temporary/x", "data/_p=1/b.parquet", "data/_q=1/c"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    listed = {Path(f.path).relative_to(tmp_path).as_posix() for f in walk(ArrowFileIO(), str(tmp_path), ("_p=",))}
    assert listed == {"data/a.parquet", "data/_p=1/b.parquet"}
    assert all(f.mtime_ms for f in walk(ArrowFileIO(), str(tmp_path)))
