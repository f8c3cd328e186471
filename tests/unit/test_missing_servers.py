"""A run that lacks a server or tool its targets need says so and fails, unless skips are allowed.

Each case runs pytest in a subprocess on a tiny selection: the pgbouncer target with a ``PATH`` that
has no ``pgbouncer`` (nothing is started: the nodes stop at that check), and Piccolo on a PostgreSQL
URL where nothing listens. See ``tests/conftest.py`` and the README's "Missing servers and tools".
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.harness import free_port

ROOT = Path(__file__).resolve().parent.parent.parent
PGBOUNCER_TESTS = "tests/scaling/test_pgbouncer.py"
INSTALL = "apt-get install -y pgbouncer"
ON_PGBOUNCER = {"LISTING_BACKENDS": "sqlalchemy", "LISTING_DATABASES": "pgbouncer"}


def _readme_samples() -> list[list[str]]:
    """The lines of each ``text`` block of the README's "Missing servers and tools": real output, checked here."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Missing servers and tools", 1)[1].split("\n### ", 1)[0]
    return [block.splitlines() for block in re.findall(r"^```text\n(.*?)^```$", section, re.S | re.M)]


def _pytest(*arguments: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {key: value for key, value in os.environ.items() if not key.startswith(("LISTING_", "CI", "PYTEST_"))}
    path = os.pathsep.join(
        folder for folder in base.get("PATH", "").split(os.pathsep) if not (Path(folder) / "pgbouncer").exists()
    )
    return subprocess.run(  # noqa: S603 - this interpreter, fixed arguments
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *arguments],
        cwd=ROOT,
        env={**base, "PATH": path, "COLUMNS": "80", **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_a_missing_tool_stops_the_run_before_its_first_test_with_the_fix() -> None:
    done = _pytest(PGBOUNCER_TESTS, **ON_PGBOUNCER)
    assert done.returncode == 4, done.stdout + done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR:")]
    assert len(errors) == 1, done.stderr
    assert "sqlalchemy:pgbouncer: pgbouncer is not installed" in errors[0]
    assert INSTALL in errors[0]
    assert "LISTING_ALLOW_SKIPS=1" in errors[0]
    assert "no tests ran" in done.stdout
    assert _readme_samples()[0] == errors


def test_allowed_skips_are_counted_by_reason_and_pass() -> None:
    done = _pytest(
        PGBOUNCER_TESTS, LISTING_BACKENDS="sqlalchemy", LISTING_DATABASES="pgbouncer", LISTING_ALLOW_SKIPS="1"
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # The module has two tests, each run once on the one selected target.
    assert "2 of 2 tests skipped, by reason" in done.stdout
    assert "2 skipped for a missing server or tool: allowed by LISTING_ALLOW_SKIPS=1" in done.stdout
    assert "LISTING_ALLOW_SKIPS=1, tests will skip: sqlalchemy:pgbouncer: pgbouncer is not installed" in done.stdout


def test_under_ci_a_missing_tool_fails_even_when_skips_are_allowed() -> None:
    done = _pytest(
        PGBOUNCER_TESTS,
        LISTING_BACKENDS="sqlalchemy",
        LISTING_DATABASES="pgbouncer",
        LISTING_ALLOW_SKIPS="1",
        CI="true",
    )
    assert done.returncode == 4, done.stdout + done.stderr
    assert "(CI=true: a missing server or tool is a failure)" in done.stderr
    assert INSTALL in done.stderr


def test_a_server_found_missing_by_a_test_skips_it_and_fails_the_run() -> None:
    # tests/plugin is not a folder of the PostgreSQL targets, so the check before the first test lets it
    # through; its test then finds the server missing.
    nowhere = f"postgresql://postgres@127.0.0.1:{free_port()}/test"
    done = _pytest(
        "tests/plugin/test_startup_checks.py",
        "-k",
        "postgresql_engine",
        LISTING_BACKENDS="piccolo",
        LISTING_DATABASES="postgresql",
        LISTING_POSTGRES_URL=nowhere,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 of 1 tests skipped, by reason" in done.stdout
    assert f"1  unavailable: PostgreSQL at {nowhere} is not usable" in done.stdout
    assert "1 skipped for a missing server or tool: exit status 1" in done.stdout
    assert "1 skipped" in done.stdout.splitlines()[-1]
