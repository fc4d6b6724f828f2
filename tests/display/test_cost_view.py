"""The query cost's map from files to row groups: the one map (``file_map``) equals the cost's frame, the text
fits the terminal's width (100 columns when there is no terminal), the static HTML escapes what the files
say, and the live widget pages its files and filters them to those with a row group skipped. And the chart
of where a table's bytes are (``t.storage()``)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pandas as pd
import pytest
from _support.cost_table import write_cost_table

from icebook.display.charts import MAX_STORAGE_PARTITIONS, STORAGE_COLORS, storage_chart, storage_frame
from icebook.display.cost_render import TEXT_WIDTH, cost_text, file_map
from icebook.display.cost_view import PAGE, CostWidget, StorageView
from icebook.display.registry import render_html, render_widget
from icebook.text import byte_size

HOSTILE = "<img src=x onerror=alert(2)>"


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return write_cost_table(tmp_path_factory.mktemp("cost_view"))


@pytest.fixture(scope="module")
def skipping(table: Any) -> Any:
    """A cost with row groups both read and skipped (the first snapshot's ids 0-49 are one row group)."""
    cost = table.query_cost("qty > 90", at=table.snapshots[0].snapshot_id)
    assert cost.row_groups["kept"].any() and not cost.row_groups["kept"].all()
    return cost


def _many_row_groups(cost: Any, groups: int, path: str = "file:///wh/data/many.parquet") -> Any:
    """``cost`` with one more file of ``groups`` row groups, every third one skipped."""
    extra = pd.DataFrame(
        {
            "file_path": path,
            "file_format": "PARQUET",
            "row_group": range(groups),
            "rows": 10,
            "kept": [i % 3 != 0 for i in range(groups)],
            "reason": [f"id < 5: row group stats lower bound id = {i}" for i in range(groups)],
            "bytes_read": [0 if i % 3 == 0 else 100 for i in range(groups)],
            "total_bytes": 120,
        }
    )
    frame = pd.concat([cost.row_groups, extra.astype(cost.row_groups.dtypes.to_dict())], ignore_index=True)
    return dataclasses.replace(cost, row_groups=frame)


def test_the_map_is_the_cost_frame_file_by_file(skipping: Any) -> None:
    files = file_map(skipping)
    rows = skipping.row_groups
    assert [f["path"] for f in files] == list(dict.fromkeys(rows["file_path"]))
    for f in files:
        mine = rows[rows["file_path"] == f["path"]]
        assert [g["row_group"] for g in f["groups"]] == list(mine["row_group"].astype(int))
        assert [g["kept"] for g in f["groups"]] == list(mine["kept"])
        assert [g["reason"] for g in f["groups"]] == list(mine["reason"])
        assert f["bytes_read"] == int(mine["bytes_read"].sum()) and f["skipped"] == int((~mine["kept"]).sum())
    assert sum(f["bytes_read"] for f in files) == skipping.totals["bytes_read"]
    skipped = next(g for f in files for g in f["groups"] if not g["kept"])
    assert skipped["label"].startswith(f"row group {skipped['row_group']}: ") and skipped["reason"] in skipped["label"]


def test_the_text_fits_100_columns_and_marks_every_row_group(skipping: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # no terminal: the text is TEXT_WIDTH wide
    cost = _many_row_groups(skipping, 300)
    text = cost_text(cost)
    assert max(len(line) for line in text.splitlines()) <= TEXT_WIDTH == 100
    many = next(line for line in text.splitlines() if "many.parquet" in line)
    marks = many.split("[", 1)[1].split("]", 1)[0]
    shown, _, rest = marks.partition("…+")
    assert shown == "".join("R" if i % 3 else "." for i in range(len(shown))) and len(shown) + int(rest) == 300
    for f in file_map(skipping):
        line = next(line for line in text.splitlines() if f["name"][:12] in line and "[" in line)
        assert "".join("R" if g["kept"] else "." for g in f["groups"]) in line
    assert "lower bound id = 0" in text  # the skipped row groups' reasons are listed
    monkeypatch.setenv("COLUMNS", "72")
    assert max(len(line) for line in cost_text(cost).splitlines()) <= 72


def test_what_the_files_say_is_escaped_in_html_and_kept_as_text_in_the_widget(skipping: Any) -> None:
    rows = skipping.row_groups.copy()
    rows.loc[~rows["kept"], "reason"] = HOSTILE
    rows["file_path"] = rows["file_path"] + "/" + HOSTILE.replace("/", "")
    cost = dataclasses.replace(skipping, row_groups=rows)
    html = render_html(cost)
    assert "<img" not in html and "&lt;img src=x onerror=alert(2)&gt;" in html
    widget = CostWidget(cost)
    reasons = {g["reason"] for f in widget.files for g in f["groups"] if not g["kept"]}
    assert reasons == {HOSTILE}  # text, drawn by the module with textContent
    assert "<img" not in widget._repr_mimebundle_()[0]["text/html"]


def test_the_widget_pages_files_and_shows_only_those_skipping(skipping: Any) -> None:
    widget = render_widget(skipping)
    assert isinstance(widget, CostWidget) and widget.summary == skipping.summary()
    everything = file_map(skipping)
    assert widget.files == everything[:PAGE] and widget.matching == len(everything)
    widget.only_skipping = True
    assert widget.files == [f for f in everything if f["skipped"]] and widget.matching == len(widget.files) > 0
    widget.only_skipping = False
    many = _many_row_groups(skipping, 2)
    wide = CostWidget(many, limit=1)
    assert len(wide.files) == 1 and wide.matching == len(file_map(many)) > 1
    wide.limit = 2
    assert [f["path"] for f in wide.files] == [f["path"] for f in file_map(many)[:2]]


# ---------------------------------------------------------------------- where the bytes are: the chart


@pytest.fixture(scope="module")
def storage(table: Any) -> Any:
    return table.storage()


def test_the_storage_chart_draws_every_category_and_partition(storage: Any) -> None:
    frame, unit = storage_frame(storage)
    assert list(frame["category"]) == list(storage.categories["category"])
    assert [round(a * unit[0]) for a in frame["amount"]] == list(storage.categories["bytes"])
    assert set(frame["kind"]) <= set(STORAGE_COLORS.domain) and "data" in set(frame["kind"])
    chart = storage_chart(storage)
    assert chart.vega["$schema"].endswith("vega/v5.json")
    svg = chart.to_svg()
    for category, size in zip(frame["category"], frame["size"], strict=True):
        assert f">{category}<" in svg and f">{size}<" in svg
    assert f"Bytes under the table's location: {byte_size(storage.bytes)}" in svg
    _categories, by_partition = chart.chart.vconcat
    drawn = by_partition.data
    assert int(drawn["bytes"].sum()) == int(storage.by_partition["bytes"].sum())
    assert set(drawn["partition"]) == set(storage.by_partition["partition"].astype(str))


def test_the_partitions_past_twenty_are_summed_into_one_bar(storage: Any) -> None:
    many = pd.DataFrame(
        {
            "partition": [f"p={i}" for i in range(30)],
            "category": "data",
            "files": 1,
            "bytes": [100 + i for i in range(30)],
        }
    )
    chart = storage_chart(dataclasses.replace(storage, by_partition=many))
    drawn = chart.chart.vconcat[1].data
    assert len(drawn) == MAX_STORAGE_PARTITIONS and int(drawn["bytes"].sum()) == int(many["bytes"].sum())
    assert "(11 other partitions)" in set(drawn["partition"]) and "p=29" in set(drawn["partition"])
    assert "p=0" not in set(drawn["partition"])  # the smallest are summed


def test_storage_shows_its_report_above_its_chart(storage: Any) -> None:
    view = render_widget(storage)
    assert isinstance(view, StorageView)
    html, output = view.children
    assert html.value == render_html(storage)
    assert output.outputs[0]["data"]["application/vnd.vega.v5+json"] == storage_chart(storage).vega
