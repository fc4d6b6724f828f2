"""The suite's own checks work, run on a small planted suite: a test that starts a server without the
``services`` marker fails, so does one that reuses a fixture that started one, and so does one that leaves
the environment changed (``tests/_support``)."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

PLANTED = """
import os
import subprocess

import pytest


@pytest.fixture(scope="session")
def server(tmp_path_factory):
    program = tmp_path_factory.mktemp("bin") / "weed"  # named like SeaweedFS's server
    program.write_text("#!/bin/sh\\nexit 0\\n")
    program.chmod(0o755)
    subprocess.run([str(program)], check=True)
    return program


@pytest.mark.services
def test_marked_server(server):
    pass


def test_reuses_the_server_unmarked(server):
    pass


def test_starts_a_server_unmarked(tmp_path):
    program = tmp_path / "fake-gcs-server"
    program.write_text("#!/bin/sh\\nexit 0\\n")
    program.chmod(0o755)
    subprocess.run([str(program)], check=True)


def test_leaves_a_variable_behind():
    os.environ["ICEBOOK_PLANTED"] = "1"


def test_restores_what_it_sets(monkeypatch):
    monkeypatch.setenv("ICEBOOK_PLANTED_TOO", "1")
"""


def test_the_checks_fail_what_they_must(pytester: pytest.Pytester) -> None:
    pytester.makeini(
        "[pytest]\naddopts = -p no:cacheprovider\nmarkers =\n    spark: s\n    browser: b\n    services: s\n"
    )
    pytester.makeconftest(
        f'import sys\nsys.path.insert(0, {str(TESTS)!r})\npytest_plugins = ("_support.tiers", "_support.environment")\n'
    )
    pytester.makepyfile(test_planted=PLANTED)
    result = pytester.runpytest_subprocess("-rA")
    result.assert_outcomes(passed=3, failed=1, errors=2)
    result.stdout.fnmatch_lines_random(
        [
            "*test_reuses_the_server_unmarked uses server, which started services, without the marker*",
            "*test_starts_a_server_unmarked starts a server (fake-gcs-server) without the `services` marker*",
            "environment variables changed by this test or a fixture it set up, not restored: ICEBOOK_PLANTED *",
        ]
    )
