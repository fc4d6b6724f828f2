"""One rule shows an error as one line (``errors.one_line``): the command line, ``%ice``, the widgets, the lake
browser and the messages that quote another library's error all use it."""

from __future__ import annotations

import io

import pytest

from icebook.cli import main
from icebook.display._base import error_html
from icebook.errors import ONE_LINE_LIMIT, MetadataError, NotFound, one_line


@pytest.mark.parametrize(
    ("exc", "line"),
    [
        (NotFound("no table x", available=["a", "b"]), "no table x; available: a, b"),
        (MetadataError("/t/m.avro", "entry 3", "malformed"), "file /t/m.avro: entry 3: malformed"),
        (ValueError("bad\n  at Foo.bar(Foo.java:1)"), "ValueError: bad"),
        (KeyError("name"), "KeyError: 'name'"),
        (OSError("\n\n  first   real\tline  \nsecond"), "OSError: first real line"),
        (RuntimeError(), "RuntimeError"),
        (NotFound(""), "NotFound"),
    ],
)
def test_one_line(exc: BaseException, line: str) -> None:
    assert one_line(exc) == line


def test_a_long_message_is_cut_at_the_limit() -> None:
    text = one_line(ValueError("x" * 10_000))
    assert len(text) == ONE_LINE_LIMIT and text.startswith("ValueError: xxx") and text.endswith("...")


def test_the_command_line_shows_the_line_after_its_name(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["files", "/definitely/not/a/table"], out=io.StringIO())
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and err.startswith("icebook: ") and "/definitely/not/a/table" in err


def test_a_view_that_fails_shows_the_line_escaped() -> None:
    assert error_html(ValueError("<b>\nmore")) == '<div class="icebook ib-error">ValueError: &lt;b&gt;</div>'
