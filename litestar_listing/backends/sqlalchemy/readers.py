"""How a SQLAlchemy list holds its connection: the request's session, or a SQLite read connection.

The route and the total rules are the shared execution's (``relational.execution``); this module
only says how statements run on an ``AsyncSession`` and on the synchronous read engine of a SQLite
file (``sqlite.read_engine``), and how SQLAlchemy's errors map to ``UnavailableError``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Dialect, Engine, Row, Select, exc, literal_column, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncSession, async_sessionmaker
from sqlalchemy.orm import Session
from sqlalchemy.pool import QueuePool

from litestar_listing.backends.base import ListContext, driver_unavailable
from litestar_listing.backends.relational.databases import MARIADB, Database, database, local_settings_sql
from litestar_listing.backends.relational.execution import Reader
from litestar_listing.backends.relational.replicas import LAG_QUERY
from litestar_listing.backends.relational.totals import may_count_apart, planner_rows
from litestar_listing.backends.sqlalchemy.compiler import STATEMENT_COMPILERS
from litestar_listing.core.errors import ConfigurationError, UnavailableError

if TYPE_CHECKING:
    from litestar_listing.backends.sqlalchemy.rows import RowPlan
    from litestar_listing.core.query import ListQuery

_SET_LOCAL = text(local_settings_sql(":names", ":values"))

__all__ = (
    "MARIADB_MINIMUM",
    "EngineReader",
    "SessionReader",
    "Statements",
    "dialect_database",
    "has_writes",
    "replica_lag",
    "unavailable",
)


@dataclass(frozen=True, slots=True)
class Statements:
    """The statements of one query shape (``SQLAlchemyBackend.build``)."""

    page: Select[Any]
    total: Select[Any]
    labels: tuple[str, ...]
    """The names of the page's labelled columns that go into each item (the keyset's values do not)."""
    plan: RowPlan | None
    """How plain rows of ``page`` become items; None: ``page`` loads ORM instances."""
    apart: bool = False
    """Load ``page``'s instances into an identity map of their own, not the request's session's (``_load_apart``)."""
    unique: bool = False
    """The page loads ORM instances with eager loads: its rows are made unique (SQLAlchemy requires it)."""
    total_at: int | None = None
    """Where each row of ``page`` holds the total, when the page statement counts its rows."""

    def last_key(self, row: Row[Any], key_count: int) -> tuple[object, ...]:
        """The ordering values the page selects last for the keyset (``execution.Statements``)."""
        if self.plan is not None:
            return self.plan.key_values(row, key_count)
        return tuple(row[len(row) - key_count :])

    def total_in(self, row: Row[Any]) -> int:
        """The total ``row`` holds (``execution.Statements``)."""
        if self.total_at is None:
            msg = "this page statement does not count its rows"
            raise ValueError(msg)
        return int(row[self.total_at])


def unavailable(error: BaseException) -> UnavailableError | None:
    """The ``UnavailableError`` that ``error`` amounts to, or None for any other error.

    A pool checkout that timed out, a connection SQLAlchemy invalidated, and whatever the driver's
    own exception amounts to (``driver_unavailable``).
    """
    if isinstance(error, exc.TimeoutError):
        return UnavailableError("no database connection became free in time", reason="busy")
    if not isinstance(error, exc.DBAPIError) or error.orig is None:
        return driver_unavailable(error)
    mapped = driver_unavailable(error.orig)
    if mapped is None and error.connection_invalidated:
        mapped = UnavailableError(f"the database connection failed ({type(error.orig).__name__})")
    return mapped


MARIADB_MINIMUM = (10, 10)
"""The oldest MariaDB the backend runs on: the first with the Unicode 14 collations (``FOLD_COLLATION``)."""


def dialect_database(dialect: Dialect) -> Database:
    """The supported database a SQLAlchemy ``dialect`` is connected to (``relational.databases``).

    SQLAlchemy's MySQL dialect serves MariaDB too; which server it is, and its version, are known once
    the engine has connected.

    Raises:
        ConfigurationError: The dialect is no supported database's, or the server is MySQL or a MariaDB
            older than ``MARIADB_MINIMUM`` (docs: backends, "MariaDB").
    """
    found = database(dialect.name, "SQLAlchemyBackend", STATEMENT_COMPILERS)
    version = dialect.server_version_info
    if found is MARIADB and version is not None:
        if not getattr(dialect, "is_mariadb", False):
            msg = "SQLAlchemyBackend runs on MariaDB, not on MySQL servers (see the backends guide, MariaDB)"
            raise ConfigurationError(msg)
        if tuple(version[:2]) < MARIADB_MINIMUM:
            shown = ".".join(map(str, version[:3]))
            msg = f"SQLAlchemyBackend runs on MariaDB {'.'.join(map(str, MARIADB_MINIMUM))} or later, not {shown}"
            raise ConfigurationError(msg)
    return found


def has_writes(session: AsyncSession) -> bool:
    """Whether ``session`` holds changes not yet flushed (a flush would begin a transaction)."""
    return bool(session.new or session.dirty or session.deleted)


class SessionReader(Reader[Statements]):
    """A list on an ``AsyncSession``: the request's, or a replica's of the list's own.

    Args:
        session: The session.
        context: The list's call.
        apart: The session held nothing before the list (no transaction, no writes), so its count
            may run on another connection beside the page (``count_apart``).
    """

    def __init__(self, session: AsyncSession, context: ListContext, *, apart: bool) -> None:
        self.session = session
        self.context = context
        self.apart = apart
        self.database = dialect_database(session.get_bind().dialect)
        self._execute: Callable[..., Any] = session.execute

    async def count_apart(
        self, statements: Statements, values: Mapping[str, object]
    ) -> Coroutine[Any, Any, int] | None:
        """The count on a second pooled connection of the session's engine (``Reader.count_apart``).

        It runs under the list's time limit (``_limit``).
        """
        engine = self.session.bind
        if not (self.apart and self.database.counts_apart) or not isinstance(engine, AsyncEngine):
            return None
        pool = engine.sync_engine.pool
        if not isinstance(pool, QueuePool) or not may_count_apart(pool.checkedout(), pool.size()):
            return None
        # The checkout claims its connection before anything can yield to another task.
        connection = await engine.connect().start()
        context = self.context

        async def count() -> int:
            try:
                async with _set(connection, self.database, _limit(context, self.database) or {}, closing=True):
                    return int((await connection.execute(statements.total, values)).scalar_one())
            finally:
                await connection.close()

        return count()

    @asynccontextmanager
    async def limited(self) -> AsyncIterator[object]:
        """The list's settings on the session's connection, reset after: its deadline and its hold to one core.

        ``Database.timeout_setting`` (PostgreSQL's ``statement_timeout``, MariaDB's
        ``max_statement_time``), the time left, measured once the pooled connection is the list's
        (waiting for it counts); and, for a list held to one core (``ListContext.parallel``),
        ``Database.parallel_setting`` at 0; for a list that reads by key (``ListContext.by_key``),
        ``Database.key_settings``. Where settings end with the transaction
        (``Database.local_settings``), a list that fails leaves the reset to the rollback (of its
        transaction or its SAVEPOINT); elsewhere they are reset whether it failed or not.
        """
        database = self.database
        if not (database.server_timeout or database.parallel_setting or database.key_settings):
            yield None
            return
        connection = await self.session.connection()
        settings = _limit(self.context, database) or {}
        if database.parallel_setting and not self.context.parallel:
            settings[database.parallel_setting] = "0"
        if self.context.by_key:
            settings.update(database.key_settings)
        async with _set(connection, database, settings):
            yield None

    async def page(
        self, statements: Statements, values: Mapping[str, object], *, count_too: Callable[[int], bool]
    ) -> tuple[Sequence[Row[Any]], int | None]:
        """The page's rows; its count is left to ``count`` (``Reader.page``)."""
        session = self.session
        outside = statements.plan is not None or statements.apart
        if outside and session.sync_session.autoflush and has_writes(session):
            # Not through the session: its pending writes go first, as its autoflush would have sent them.
            await session.flush()
        if statements.apart:
            return await session.run_sync(_load_apart, statements.page, values), None
        if statements.plan is not None:  # plain SQL on the session's connection
            self._execute = (await session.connection()).execute
        result = await self._execute(statements.page, values)
        return (result.unique().all() if statements.unique else result.all()), None

    async def count(self, statements: Statements, values: Mapping[str, object]) -> int:
        """The count on the connection the page ran on."""
        return int((await self._execute(statements.total, values)).scalar_one())

    async def rows(self, statement: Select[Any], values: Mapping[str, object]) -> list[tuple[Any, ...]]:
        """The rows of a plain statement (a facet's) on the session's connection, its pending writes sent first."""
        session = self.session
        if session.sync_session.autoflush and has_writes(session):
            await session.flush()
        connection = await session.connection()
        return [tuple(row) for row in await connection.execute(statement, values)]

    async def estimate(self, statements: Statements, values: Mapping[str, object], query: ListQuery) -> int | None:
        """PostgreSQL's estimate of the rows the total counts, or None if it cannot be had.

        ``EXPLAIN`` plans without running: ``SELECT 1`` over the count's FROM and WHERE, its values
        rendered by the dialect's own literal processors (which escape text as the server's
        ``standard_conforming_strings`` requires). A value without a literal form gives None, and the
        caller counts exactly.
        """
        rows_statement: Select[Any] = statements.total.with_only_columns(
            literal_column("1"), maintain_column_froms=False
        ).params(values)
        dialect = self.session.get_bind().dialect
        try:
            sql = str(rows_statement.compile(dialect=dialect, compile_kwargs={"literal_binds": True}))
        except (exc.CompileError, NotImplementedError, TypeError, ValueError):
            return None
        connection = await self.session.connection()

        async def explain(statement: str) -> object:
            return (await connection.exec_driver_sql(statement)).scalar_one()

        return await planner_rows(explain, sql)


class EngineReader(Reader[Statements]):
    """A list on a SQLite file's read engine (``sqlite.read_engine``): the page and its count in one worker call.

    aiosqlite sends every cursor call to its connection's thread (a cursor, the statement, its rows,
    the cursor's close: four hops a statement), each waiting for the event loop and the GIL; here the
    statements, the entity loading and the count run in one call of the loop's default executor.
    """

    def __init__(self, engine: Engine, context: ListContext) -> None:
        self.engine = engine
        self.context = context
        self.database = dialect_database(engine.dialect)

    async def page(
        self, statements: Statements, values: Mapping[str, object], *, count_too: Callable[[int], bool]
    ) -> tuple[Sequence[Row[Any]], int | None]:
        """The page's rows and, when ``count_too`` says the page does not tell the total, the count."""
        plain = statements.plan is not None

        def run() -> tuple[list[Row[Any]], int | None]:
            with self.engine.connect() if plain else Session(self.engine) as runner:
                result = runner.execute(statements.page, values)
                rows = list(result.unique().all() if statements.unique else result.all())
                counted = int(runner.execute(statements.total, values).scalar_one()) if count_too(len(rows)) else None
            return rows, counted

        return await asyncio.get_running_loop().run_in_executor(None, run)

    async def count(self, statements: Statements, values: Mapping[str, object]) -> int:
        """The count in a worker call of its own (``page`` counts in its call whenever a count is needed)."""

        def run() -> int:
            with self.engine.connect() as connection:
                return int(connection.execute(statements.total, values).scalar_one())

        return await asyncio.get_running_loop().run_in_executor(None, run)

    async def rows(self, statement: Select[Any], values: Mapping[str, object]) -> list[tuple[Any, ...]]:
        """The rows of a plain statement in a worker call of its own."""
        found, _ = await self.facet_rows([statement], values, None)
        return found[0]

    async def facet_rows(
        self, statements: Sequence[Select[Any]], values: Mapping[str, object], counted: Statements | None
    ) -> tuple[list[list[tuple[Any, ...]]], int | None]:
        """Each facet statement's rows, then ``counted``'s count: one worker call, one connection."""

        def run() -> tuple[list[list[tuple[Any, ...]]], int | None]:
            with self.engine.connect() as connection:
                found = [[tuple(row) for row in connection.execute(statement, values)] for statement in statements]
                total = None if counted is None else int(connection.execute(counted.total, values).scalar_one())
            return found, total

        return await asyncio.get_running_loop().run_in_executor(None, run)


def _load_apart(session: Session, statement: Select[Any], values: Mapping[str, object]) -> list[Row[Any]]:
    """The rows of ``statement``, its instances loaded by a session of their own on ``session``'s connection.

    An eager load under row policies must not meet the instances the request's session holds: a
    relation loaded there earlier (unrestricted, or under other policies) would be kept as it is,
    and the restricted one loaded here would stay on the session's instances after the list. Nor
    can ``populate_existing`` make the loads overwrite them: a select-in load is a statement of its
    own, and with that option it would populate again the instances the page statement loaded,
    resetting the relations it does not load itself to their lazy loader (``lazy="raise"`` raises).
    Within one list every model has one row policy, so a row loaded along two paths loads alike.

    The session joins the connection's transaction (the request's, or its SAVEPOINT) and never ends
    it (``join_transaction_mode="rollback_only"``); its instances are detached when it closes, their
    loaded attributes kept.
    """
    with Session(bind=session.connection(), join_transaction_mode="rollback_only") as own:
        return list(own.execute(statement, values).unique().all())


@asynccontextmanager
async def _set(
    connection: AsyncConnection, database: Database, settings: Mapping[str, str], *, closing: bool = False
) -> AsyncIterator[None]:
    """``settings`` on ``connection`` for the block, then their values before.

    Where settings end with the transaction (``Database.local_settings``), a block that fails leaves
    the reset to the rollback, and a connection ``closing`` after the block (its transaction rolled
    back) needs none; elsewhere they are put back whether the block failed or not, unless the
    connection broke.
    """
    if not settings:
        yield
        return
    previous = await _configure(connection, database, settings)
    if database.local_settings:
        yield
        if not closing:
            await _configure(connection, database, previous)
        return
    try:
        yield
    finally:
        if not connection.invalidated:
            await _configure(connection, database, previous, before=False)


async def _configure(
    connection: AsyncConnection, database: Database, settings: Mapping[str, str], *, before: bool = True
) -> dict[str, str]:
    """Set ``settings`` (name -> value) on the connection; their values before (``before``; else none).

    For its transaction where settings are local (``Database.local_settings``: PostgreSQL), else for
    its session (MariaDB). The names are ``Database``'s own, the values numbers.
    """
    if database.local_settings:
        rows = await connection.execute(_SET_LOCAL, {"names": list(settings), "values": list(settings.values())})
        return {str(name): str(value) for name, value, _ in rows}
    names = list(settings)
    previous: dict[str, str] = {}
    if before:
        row = (await connection.exec_driver_sql(f"SELECT {', '.join(f'@@SESSION.{name}' for name in names)}")).one()
        previous = {name: str(value) for name, value in zip(names, row, strict=True)}
    assigned = ", ".join(f"SESSION {name} = {float(settings[name])!r}" for name in names)
    await connection.exec_driver_sql(f"SET {assigned}")
    return previous


def _limit(context: ListContext, database: Database) -> dict[str, str] | None:
    """The statement limit of a list: ``Database.timeout_setting`` at the time left; None for none.

    The server stops a statement past it itself (a 503): cancelling from asyncio instead would make
    SQLAlchemy discard the connection as if it had broken.
    """
    remaining = context.remaining()
    if remaining is None or database.timeout_setting is None:
        return None
    return {database.timeout_setting: database.timeout_value(remaining)}


async def replica_lag(sessions: async_sessionmaker[AsyncSession]) -> float | None:
    """The replay lag of the replica behind ``sessions`` in seconds (``LAG_QUERY``)."""
    async with sessions() as session:
        lag = (await session.execute(text(LAG_QUERY))).scalar_one()
    return None if lag is None else float(lag)
