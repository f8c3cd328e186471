"""SQLite under Piccolo: the case-folding connection, its statement guard, and the read pool of a file.

Everything the Piccolo backend does differently on SQLite is here; the SQL it compiles for SQLite
is the compiler's.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from typing import Any

from piccolo.engine.base import Engine
from piccolo.engine.sqlite import dict_factory

from litestar_listing.backends._sqlite import (
    DEFAULT_STATEMENT_TIMEOUT,
    FOLD_FUNCTION,
    ReadPool,
    StatementGuard,
    fold_value,
)
from litestar_listing.core.errors import ConfigurationError

__all__ = ("FoldingConnection", "prepare_engine", "read_pool")


class FoldingConnection(sqlite3.Connection):
    """A SQLite connection with the case-folding function and a statement time limit.

    SQLite's own ``lower()`` and ``LIKE`` fold ASCII only, and Piccolo's ``ilike`` is a plain ``LIKE``
    on SQLite; ``listing_fold`` gives the per-character Unicode lowercase of the other databases.
    A ``StatementGuard`` aborts any statement running longer than ``statement_timeout`` seconds
    (SQLite has no statement timeout, and a cancelled request cannot stop its thread).
    """

    statement_timeout: float | None = DEFAULT_STATEMENT_TIMEOUT

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.create_function(FOLD_FUNCTION, 1, fold_value, deterministic=True)
        StatementGuard(self.statement_timeout).install(self)


def prepare_engine(engine: Engine[Any], *, statement_timeout: float | None = DEFAULT_STATEMENT_TIMEOUT) -> None:
    """Make ``engine`` ready for listing: on SQLite, the case-folding function and a statement limit.

    Piccolo's ``SQLiteEngine`` opens a connection per statement or transaction; this sets the
    connection ``factory`` it passes to ``sqlite3.connect`` (a ``FoldingConnection`` whose
    statements stop after ``statement_timeout`` seconds; None: no limit). Idempotent: the first
    call's limit stays.

    Raises:
        ConfigurationError: The engine already has another connection factory.
    """
    if engine.engine_type != "sqlite":
        return
    kwargs: dict[str, Any] = engine.connection_kwargs  # type: ignore[attr-defined]
    if "factory" not in kwargs:
        limit = statement_timeout
        kwargs["factory"] = (
            FoldingConnection
            if limit == FoldingConnection.statement_timeout
            else type("FoldingConnection", (FoldingConnection,), {"statement_timeout": limit})
        )
    factory = kwargs["factory"]
    if not (isinstance(factory, type) and issubclass(factory, FoldingConnection)):
        msg = f"the SQLite engine's connection factory {factory!r} must subclass {FoldingConnection.__qualname__}"
        raise ConfigurationError(msg)


_READ_POOLS: OrderedDict[int, tuple[Engine[Any], ReadPool]] = OrderedDict()
_MOST_READ_POOLS = 32


def read_pool(engine: Engine[Any]) -> ReadPool:
    """The pool of read connections of a SQLite ``engine``, made on first use (``ReadPool``).

    Its connections are opened with the engine's own ``connection_kwargs`` (so with Piccolo's
    type converters and the ``FoldingConnection`` factory of ``prepare_engine``) and Piccolo's rows
    as dicts. The pools of the 32 engines used last are kept; an older one closes its connections.
    """
    key = id(engine)
    held = _READ_POOLS.get(key)
    if held is not None and held[0] is engine:
        _READ_POOLS.move_to_end(key)
        return held[1]
    kwargs: dict[str, Any] = {**engine.connection_kwargs, "check_same_thread": False}  # type: ignore[attr-defined]

    def connect() -> sqlite3.Connection:
        connection: sqlite3.Connection = sqlite3.connect(**kwargs)
        connection.row_factory = dict_factory
        return connection

    database = str(kwargs.get("database", ""))
    file = None if kwargs.get("uri") or database in {"", ":memory:"} else database
    pool = ReadPool(connect, file)
    if held is not None:
        held[1].close()
    _READ_POOLS[key] = (engine, pool)
    while len(_READ_POOLS) > _MOST_READ_POOLS:
        _READ_POOLS.popitem(last=False)[1][1].close()
    return pool
