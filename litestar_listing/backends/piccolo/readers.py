"""How a Piccolo list holds its connection: asyncpg, the caller's SQLite transaction, or a SQLite read snapshot.

The route and the total rules are the shared execution's (``relational.execution``); this module
only says how a compiled statement runs on each kind of connection.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from piccolo.engine.sqlite import dict_factory

from litestar_listing.backends.piccolo.compiler import engine_database
from litestar_listing.backends.relational.compiler import KEY_LABEL, TOTAL_LABEL
from litestar_listing.backends.relational.databases import local_settings_sql
from litestar_listing.backends.relational.execution import Reader
from litestar_listing.backends.relational.replicas import LAG_QUERY
from litestar_listing.backends.relational.totals import may_count_apart, planner_rows

if TYPE_CHECKING:
    from piccolo.engine.base import Engine
    from piccolo.querystring import QueryString

    from litestar_listing.backends._sqlite import ReadSnapshot
    from litestar_listing.backends.base import ListContext
    from litestar_listing.backends.piccolo.compiler import Compiled, QueryCompiler
    from litestar_listing.backends.piccolo.loading import Guard, Node
    from litestar_listing.core.query import ListQuery

__all__ = (
    "TRANSACTION_READERS",
    "AsyncpgReader",
    "PiccoloReader",
    "SnapshotReader",
    "Statements",
    "TransactionReader",
    "replica_lag",
)

_SET_LOCAL = local_settings_sql("$1", "$2")


@dataclass(frozen=True, slots=True)
class Statements:
    """What one query shape compiles to: its page, total and rows statements, and how rows become items."""

    page: Compiled
    total: Compiled
    compiler: QueryCompiler
    """The compiler of the shape, for the statement the planner estimates (``AsyncpgReader.estimate``)."""
    node: Node
    extras: list[tuple[str, str]]
    """``(computed name, column alias)`` pairs of the page's select list."""
    guard: Guard | None

    def last_key(self, row: Mapping[str, Any], key_count: int) -> tuple[object, ...]:
        """The ordering values the page selects under ``KEY_LABEL`` names (``execution.Statements``)."""
        return tuple(row[f"{KEY_LABEL}{index}"] for index in range(key_count))

    def total_in(self, row: Mapping[str, Any]) -> int:
        """The total the page statement selects under ``TOTAL_LABEL`` (``execution.Statements``)."""
        return int(row[TOTAL_LABEL])


class PiccoloReader(Reader[Statements]):
    """A list on one connection of ``engine``; subclasses run a compiled statement on their kind of connection."""

    def __init__(self, engine: Engine[Any], context: ListContext) -> None:
        self.engine = engine
        self.context = context
        self.database = engine_database(engine.engine_type)

    @abstractmethod
    async def fetch(self, compiled: tuple[str, list[Any]]) -> list[dict[str, Any]]:
        """The rows of ``(sql, arguments)`` as dicts."""

    async def run(self, statement: QueryString) -> list[dict[str, Any]]:
        """The rows of ``statement`` (the eager loads' statements)."""
        return await self.fetch(statement.compile_string(engine_type=self.engine.engine_type))

    async def page(
        self, statements: Statements, values: Mapping[str, object], *, count_too: Callable[[int], bool]
    ) -> tuple[Sequence[Mapping[str, Any]], int | None]:
        """The page's rows; its count is left to ``count`` (``Reader.page``)."""
        return await self.fetch(statements.page.bound(values)), None

    async def count(self, statements: Statements, values: Mapping[str, object]) -> int:
        """The count on this connection, after the page."""
        return int((await self.fetch(statements.total.bound(values)))[0]["total"])

    async def rows(self, statement: Compiled, values: Mapping[str, object]) -> list[tuple[Any, ...]]:
        """The rows of a compiled statement (a facet's), each its values in the order selected."""
        return [tuple(row.values()) for row in await self.fetch(statement.bound(values))]


class AsyncpgReader(PiccoloReader):
    """A list on an asyncpg connection: pooled, of the list's own, or the caller's transaction's.

    Each statement gets asyncpg's ``timeout``, the list's time left when it starts (measured after
    the wait for the pooled connection): asyncpg asks PostgreSQL to cancel it and keeps the
    connection, and nothing is set on the session, so no limit outlives the list.

    Args:
        engine: The engine the connection is of (its rows become dicts as Piccolo makes them).
        connection: The asyncpg connection.
        context: The list's call.
        pool: The asyncpg pool ``connection`` came from, if any: the count may then run on a second
            connection of it beside the page (``count_apart``).
    """

    def __init__(self, engine: Engine[Any], connection: Any, context: ListContext, pool: Any = None) -> None:
        super().__init__(engine, context)
        self.connection = connection
        self.pool = pool

    async def fetch(self, compiled: tuple[str, list[Any]]) -> list[dict[str, Any]]:  # noqa: D102
        sql, arguments = compiled
        rows = await self.connection.fetch(sql, *arguments, timeout=self.context.remaining())
        return self.engine.transform_response_to_dicts(rows)

    @asynccontextmanager
    async def limited(self) -> AsyncIterator[object]:
        """For a list held to one core (``ListContext.parallel``), ``Database.parallel_setting`` at 0.

        For a list that reads by key (``ListContext.by_key``), ``Database.key_settings`` too.

        Set for the transaction only (``local_settings_sql``): on the caller's transaction, and
        reset after; otherwise in a read-only transaction of the list's own around its statements,
        so that nothing stays on a pooled connection or, behind a pooler, on another client's.
        """
        setting = self.database.parallel_setting
        settings = {} if self.context.parallel or setting is None else {setting: "0"}
        if self.context.by_key:
            settings.update(self.database.key_settings)
        if not settings:
            yield None
            return
        connection = self.connection
        if connection.is_in_transaction():
            before = await self._configure(settings)
            yield None
            await self._configure(before)
            return
        async with connection.transaction(readonly=True):
            await self._configure(settings)
            yield None

    async def _configure(self, settings: Mapping[str, str]) -> dict[str, str]:
        rows = await self.connection.fetch(
            _SET_LOCAL, list(settings), list(settings.values()), timeout=self.context.remaining()
        )
        return {str(row[0]): str(row[1]) for row in rows}

    async def count_apart(
        self, statements: Statements, values: Mapping[str, object]
    ) -> Coroutine[Any, Any, int] | None:
        """The count on a second connection of the pool (``Reader.count_apart``), with the list's time left.

        The page's connection is among those in use: a free place in the pool's queue is taken
        without waiting, before another task can.
        """
        pool = self.pool
        if pool is None or not self.database.counts_apart:
            return None
        in_use = pool.get_size() - pool.get_idle_size()  # the page's connection among them
        if not may_count_apart(in_use - 1, pool.get_max_size()):
            return None
        other = await pool.acquire()
        sql, arguments = statements.total.bound(values)
        context = self.context

        async def count() -> int:
            try:
                # fetch, not fetchval: asyncpg's fetchval (a one-row limit) keeps PostgreSQL's parallel workers out.
                return int((await other.fetch(sql, *arguments, timeout=context.remaining()))[0][0])
            finally:
                await pool.release(other)

        return count()

    async def estimate(self, statements: Statements, values: Mapping[str, object], query: ListQuery) -> int | None:
        """PostgreSQL's estimate of the rows the total counts (``EXPLAIN`` of ``SELECT 1`` over them)."""
        sql, arguments = statements.compiler.rows_statement(query).compile_string(engine_type=self.engine.engine_type)

        async def explain(statement: str) -> object:
            return await self.connection.fetchval(statement, *arguments, timeout=self.context.remaining())

        return await planner_rows(explain, sql)


class TransactionReader(PiccoloReader):
    """A list on the aiosqlite connection of the caller's SQLite transaction, its rows as Piccolo makes them.

    The connection's own ``StatementGuard`` limits each statement (``sqlite.FoldingConnection``).
    """

    def __init__(self, engine: Engine[Any], connection: Any, context: ListContext) -> None:
        super().__init__(engine, context)
        self.connection = connection

    async def fetch(self, compiled: tuple[str, list[Any]]) -> list[dict[str, Any]]:  # noqa: D102
        sql, arguments = compiled
        self.connection.row_factory = dict_factory
        async with self.connection.execute(sql, arguments) as cursor:
            return list(await cursor.fetchall())


class SnapshotReader(PiccoloReader):
    """A list on a SQLite file's read snapshot (``sqlite.read_pool``): the page and its count in one thread hop."""

    def __init__(self, engine: Engine[Any], snapshot: ReadSnapshot, context: ListContext) -> None:
        super().__init__(engine, context)
        self.snapshot = snapshot

    async def fetch(self, compiled: tuple[str, list[Any]]) -> list[dict[str, Any]]:  # noqa: D102
        sql, arguments = compiled
        return await self.snapshot.fetch(sql, arguments)

    async def page(
        self, statements: Statements, values: Mapping[str, object], *, count_too: Callable[[int], bool]
    ) -> tuple[Sequence[Mapping[str, Any]], int | None]:
        """The page, then its total when ``count_too`` says the page does not tell it, in one thread hop."""
        rows, counted = await self.snapshot.fetch_page(
            statements.page.bound(values), statements.total.bound(values), count_too
        )
        return rows, None if counted is None else int(counted[0]["total"])

    async def facet_rows(
        self, statements: Sequence[Compiled], values: Mapping[str, object], counted: Statements | None
    ) -> tuple[list[list[tuple[Any, ...]]], int | None]:
        """Each facet statement's rows, then ``counted``'s count, in one thread hop (``Reader.facet_rows``)."""
        bound = [statement.bound(values) for statement in statements]
        if counted is not None:
            bound.append(counted.total.bound(values))
        found = [[tuple(row.values()) for row in rows] for rows in await self.snapshot.fetch_all(bound)]
        if counted is None:
            return found, None
        return found[:-1], int(found[-1][0][0])


TRANSACTION_READERS: Mapping[str, Callable[[Engine[Any], Any, ListContext], PiccoloReader]] = MappingProxyType(
    {"sqlite": TransactionReader, "postgresql": AsyncpgReader}
)
"""The reader of a connection of the caller's transaction, by database (aiosqlite on SQLite, asyncpg on PostgreSQL)."""


async def replica_lag(engine: Engine[Any]) -> float | None:
    """The replay lag of the replica ``engine`` in seconds (``LAG_QUERY``)."""
    pool = getattr(engine, "pool", None)
    if pool is not None:
        async with pool.acquire() as connection:
            lag = await connection.fetchval(LAG_QUERY)
    else:
        connection = await engine.get_new_connection()  # type: ignore[attr-defined]
        try:
            lag = await connection.fetchval(LAG_QUERY)
        finally:
            await connection.close()
    return None if lag is None else float(lag)
