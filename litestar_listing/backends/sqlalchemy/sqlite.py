"""SQLite under SQLAlchemy: the case-folding function, the statement guard, and the read engine of a file.

Everything the SQLAlchemy backend does differently on SQLite is here; the SQL it compiles for
SQLite is the compiler's (``SQLiteStatementCompiler``).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.ext.asyncio import AsyncEngine

try:
    from sqlalchemy.util.concurrency import await_
except ImportError:  # SQLAlchemy 2.0
    from sqlalchemy.util.concurrency import await_only as await_  # type: ignore[attr-defined,no-redef,unused-ignore]

from litestar_listing.backends._sqlite import (
    CHECK_EVERY,
    DEFAULT_STATEMENT_TIMEOUT,
    FOLD_FUNCTION,
    StatementGuard,
    fold_value,
)

__all__ = ("prepare_engine", "read_engine")


class _SQLitePreparer:
    """The ``connect`` listener of one engine: the fold function and the statement guard."""

    def __init__(self, statement_timeout: float | None) -> None:
        self.statement_timeout = statement_timeout

    def __call__(self, dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.create_function(FOLD_FUNCTION, 1, fold_value, deterministic=True)
        if self.statement_timeout is None:
            return
        # aiosqlite runs these in the thread that owns the sqlite3 connection.
        guard = StatementGuard(self.statement_timeout)
        driver = dbapi_connection.driver_connection
        await_(driver.set_trace_callback(guard.statement_started))
        await_(driver.set_progress_handler(guard.over_time, CHECK_EVERY))


_PREPARERS: weakref.WeakKeyDictionary[Engine, _SQLitePreparer] = weakref.WeakKeyDictionary()


def prepare_engine(engine: AsyncEngine, *, statement_timeout: float | None = DEFAULT_STATEMENT_TIMEOUT) -> None:
    """Make ``engine`` ready for listing: on SQLite, the case-folding function and a statement limit.

    SQLite has no statement timeout, and a cancelled request cannot stop a statement running in
    aiosqlite's thread: each connection gets a ``StatementGuard`` that aborts any statement running
    longer than ``statement_timeout`` seconds (None: no limit), answered with a 503. Idempotent:
    the first call's limit stays. Call it before the engine opens its first connection (the plugin
    does, when the application is built); connections opened earlier lack both.
    """
    sync_engine = engine.sync_engine
    if sync_engine.dialect.name == "sqlite" and sync_engine not in _PREPARERS:
        preparer = _PREPARERS[sync_engine] = _SQLitePreparer(statement_timeout)
        event.listen(sync_engine, "connect", preparer)


_READ_ENGINES: weakref.WeakKeyDictionary[Engine, Engine | None] = weakref.WeakKeyDictionary()

_OWN_CONNECTIONS = frozenset({"mode", "uri", "check_same_thread"})
"""URL parameters under which a database may be private to a connection, or a connection to its thread."""


def read_engine(
    bind: Engine,
    *,
    json_serializer: Callable[[Any], str] | None = None,
    json_deserializer: Callable[[str], Any] | None = None,
) -> Engine | None:
    """A synchronous engine over the SQLite file of ``bind``, for lists that need nothing of a request's session.

    aiosqlite sends every cursor call to its connection's thread (a cursor, the statement, its rows,
    the cursor's close: four hops a statement, and a rollback or two when the session ends), and
    each hop waits for the event loop and the GIL. A list whose session holds no transaction and no
    pending writes sees exactly what another connection to the file sees, so it runs whole (its
    statements, the entity loading, the count) in one call of the loop's default executor, on this
    engine's pooled ``sqlite3`` connections, which carry the same fold function and statement guard
    (``prepare_engine``'s limit) and the given JSON codecs (SQLAlchemy's own by default).

    Listeners added to ``bind`` (connect-time set-up, statement hooks) do not run on these
    connections: SQLAlchemy has no public API that lists an engine's listeners, so the read engine
    cannot repeat them. A backend whose engine needs them lists on the session instead
    (``SQLAlchemyBackend(local_reads=False)``; docs: backends, "Lists on SQLite run on
    connections of their own").

    Made once per ``bind`` (the codecs of the first call stay), and disposed with it. None, and
    lists keep to the request's session, when ``bind`` is not an aiosqlite engine over a file (an
    in-memory database is private to its connection).
    """
    if bind in _READ_ENGINES:
        return _READ_ENGINES[bind]
    engine = _make_read_engine(bind, json_serializer, json_deserializer)
    _READ_ENGINES[bind] = engine
    return engine


def _make_read_engine(
    bind: Engine, json_serializer: Callable[[Any], str] | None, json_deserializer: Callable[[str], Any] | None
) -> Engine | None:
    url = bind.url
    database = url.database or ""
    if bind.dialect.driver != "aiosqlite" or database in {"", ":memory:"} or set(url.query) & _OWN_CONNECTIONS:
        return None
    preparer = _PREPARERS.get(bind)
    limit = DEFAULT_STATEMENT_TIMEOUT if preparer is None else preparer.statement_timeout
    codecs = {
        name: codec
        for name, codec in (("json_serializer", json_serializer), ("json_deserializer", json_deserializer))
        if codec is not None
    }
    engine = create_engine(url.set(drivername="sqlite+pysqlite"), **codecs)

    def prepare(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.create_function(FOLD_FUNCTION, 1, fold_value, deterministic=True)
        StatementGuard(limit).install(dbapi_connection)

    event.listen(engine, "connect", prepare)

    def dispose(_bind: Engine) -> None:
        engine.dispose()  # its connections close with the async engine's (e.g. at the app's shutdown)

    event.listen(bind, "engine_disposed", dispose)
    return engine
