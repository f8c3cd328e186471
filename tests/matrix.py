"""The one registry of test targets (backend x database), read by every test module and by nox.

Adding a target is one entry of ``TARGETS``; a new backend also gives ``tests/conformance/targets.py``
its opener. ``LISTING_BACKENDS`` (default: every backend) and ``LISTING_DATABASES`` (default
``sqlite,postgresql,mongomock``, plus ``mongodb`` when ``MONGODB_URL`` is set) select among them;
nox sets both per session. Standard library only: ``noxfile.py`` imports this module.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = (
    "BACKENDS",
    "DATABASES",
    "SELECTED",
    "SHARED_PATHS",
    "TARGETS",
    "Store",
    "TestTarget",
    "backends_of",
    "databases_of",
    "selected",
)


class Store(str, enum.Enum):
    """The kind of store a target lists from, which decides the test folders of its nox session."""

    MEMORY = "memory"
    SQL = "sql"
    NODE = "node"
    DOCUMENT = "document"

    @property
    def paths(self) -> tuple[str, ...]:
        """The test folders a session of this kind runs: its own, then ``SHARED_PATHS``.

        The node targets (pgbouncer, standby) run the conformance table but not ``tests/hostile``: they
        are the PostgreSQL targets' statements through another connection path, and the hostile tests
        run on those targets already.
        """
        shared = ("tests/conformance",) if self is Store.NODE else SHARED_PATHS
        return (*_STORE_PATHS[self], *shared)


# The engine and plugin tests, the docs' examples (SQLite in memory) and the benchmarks' pure parts need no
# database server.
_STORE_PATHS = {
    Store.MEMORY: ("tests/unit", "tests/plugin", "tests/docs", "tests/benchmarks"),
    Store.SQL: ("tests/backends", "tests/demo", "tests/differential"),
    # PostgreSQL behind the tests' own nodes (tests/nodes.py): pooling and replicas.
    Store.NODE: ("tests/scaling",),
    Store.DOCUMENT: ("tests/document_store", "tests/demo"),
}
SHARED_PATHS = ("tests/conformance", "tests/hostile")
"""Run in every session (the node targets: the conformance table only, see ``Store.paths``)."""


@dataclass(frozen=True)
class TestTarget:
    """One backend on one database.

    Attributes:
        backend: ``memory``, ``sqlalchemy``, ``piccolo`` or ``beanie``.
        database: ``sqlite``, ``postgresql``, ``mariadb``, ``pgbouncer`` (PostgreSQL through pgbouncer in
            transaction mode), ``mongomock``, ``mongodb``; empty for the memory backend.
        store: The kind of store.
        needs_env: An environment variable that must be set for the target to be selected by default
            and to join its backend's nox session (a server the machine may not have); empty: none.
    """

    __test__ = False  # a registry entry, not a pytest test class

    backend: str
    database: str
    store: Store
    needs_env: str = ""

    @property
    def id(self) -> str:
        """``backend:database`` (``memory`` alone): the pytest id and the spelling of the docs."""
        return f"{self.backend}:{self.database}" if self.database else self.backend

    @property
    def server(self) -> str:
        """The database server this target's session uses: ``postgresql`` (the machine's, on 5432),
        ``mariadb`` (the machine's, on 3306), ``nodes`` (the tests' own primary, standby and pgbouncer,
        on fixed ports), empty for none.

        Two sessions of one server never run at once (``.ci/lanes.py``): they share its databases or ports.
        """
        if self.store is Store.NODE:
            return "nodes"
        return self.database if self.database in {"postgresql", "mariadb"} else ""

    @property
    def session(self) -> str:
        """The nox session id, ``backend-database`` (``memory`` alone)."""
        return self.id.replace(":", "-")

    def __str__(self) -> str:
        return self.id


TARGETS = (
    TestTarget("memory", "", Store.MEMORY),
    TestTarget("sqlalchemy", "sqlite", Store.SQL),
    TestTarget("sqlalchemy", "postgresql", Store.SQL),
    TestTarget("piccolo", "sqlite", Store.SQL),
    TestTarget("piccolo", "postgresql", Store.SQL),
    # Piccolo has no MySQL engine.
    TestTarget("sqlalchemy", "mariadb", Store.SQL),
    # PostgreSQL through pgbouncer in transaction pooling mode (tests/nodes.py).
    TestTarget("sqlalchemy", "pgbouncer", Store.NODE),
    TestTarget("piccolo", "pgbouncer", Store.NODE),
    # Written on the tests' primary, listed on its hot standby (read replicas, tests/nodes.py).
    TestTarget("sqlalchemy", "standby", Store.NODE),
    TestTarget("piccolo", "standby", Store.NODE),
    TestTarget("beanie", "mongomock", Store.DOCUMENT),
    # The MongoDB server at MONGODB_URL: runs in the beanie-mongomock session when that is set.
    TestTarget("beanie", "mongodb", Store.DOCUMENT, needs_env="MONGODB_URL"),
)


def _listed(variable: str, default: Iterable[str]) -> tuple[str, ...]:
    value = os.environ.get(variable)
    return tuple(dict.fromkeys(default)) if value is None else tuple(filter(None, value.split(",")))


BACKENDS = _listed("LISTING_BACKENDS", (target.backend for target in TARGETS))
DATABASES = _listed(
    "LISTING_DATABASES",
    (
        target.database
        for target in TARGETS
        if target.database and (not target.needs_env or os.environ.get(target.needs_env))
    ),
)
SELECTED = tuple(
    target for target in TARGETS if target.backend in BACKENDS and (not target.database or target.database in DATABASES)
)
"""The targets of this run, in ``TARGETS`` order."""


def selected(
    *, store: Store | None = None, backend: str | None = None, database: str | None = None
) -> tuple[TestTarget, ...]:
    """The selected targets of a kind of store, a backend and/or a database (None: any)."""
    return tuple(
        target
        for target in SELECTED
        if (store is None or target.store is store)
        and (backend is None or target.backend == backend)
        and (database is None or target.database == database)
    )


def backends_of(targets: Iterable[TestTarget]) -> list[str]:
    """The distinct backends of ``targets``, in order."""
    return list(dict.fromkeys(target.backend for target in targets))


def databases_of(targets: Iterable[TestTarget]) -> list[str]:
    """The distinct databases of ``targets``, in order."""
    return list(dict.fromkeys(target.database for target in targets))
