"""The suite's own checks work, run on a small planted suite: a test that starts a server, a JVM or a browser
without its marker fails (by its program's path, through the shell or ``os.system``, moto in-process), so does
one that reuses a fixture that started one, and so does one that leaves the environment changed
(``tests/_support``); a marked one passes."""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

PLANTED = """
import os
import shutil
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


def _program(folder, name):
    program = folder / name
    program.write_text("#!/bin/sh\\nexit 0\\n")
    program.chmod(0o755)
    return program


def _native(folder, name):  # a native program, as a JVM is (a script named java is a stand-in)
    program = folder / name
    shutil.copy("/bin/true", program)
    return program


@pytest.mark.spark
def test_runs_java_marked(tmp_path):
    subprocess.run([str(_native(tmp_path, "java")), "-version"], check=True)


def test_runs_java_by_its_path_unmarked(tmp_path):
    subprocess.run([str(_native(tmp_path, "java")), "-version"], check=True)


def test_runs_a_stand_in_java_unmarked(tmp_path):
    subprocess.run([str(_program(tmp_path, "java")), "-version"], check=True)


def test_runs_a_jupyter_server_unmarked(tmp_path):
    subprocess.run([str(_program(tmp_path, "jupyter")), "server", "--port=0"], check=True)


def test_starts_a_server_through_the_shell_unmarked(tmp_path):
    _program(tmp_path, "weed")
    subprocess.run(f"cd {tmp_path} && ./weed mini", shell=True, check=True)


def test_drives_a_browser_through_os_system_unmarked(tmp_path):
    os.system(f"{_program(tmp_path, 'chromium')} --headless")


def test_starts_moto_unmarked():
    from moto.server import ThreadedMotoServer

    ThreadedMotoServer(port=0).start()


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
    result.assert_outcomes(passed=5, failed=6, errors=2)
    result.stdout.fnmatch_lines_random(
        [
            "*test_reuses_the_server_unmarked uses server, which started services, without the marker*",
            "*test_starts_a_server_unmarked starts a server (fake-gcs-server) without the `services` marker*",
            "*test_runs_java_by_its_path_unmarked starts a JVM (java) without the `spark` marker*",
            "*test_runs_a_jupyter_server_unmarked starts a server (jupyter server) without the `services` marker*",
            "*test_starts_a_server_through_the_shell_unmarked starts a server (weed) without the `services` marker*",
            "*test_drives_a_browser_through_os_system_unmarked starts a browser (chromium) without the `browser` *",
            "*test_starts_moto_unmarked starts a server (moto) without the `services` marker*",
            "environment variables changed by this test or a fixture it set up, not restored: ICEBOOK_PLANTED *",
        ]
    )
