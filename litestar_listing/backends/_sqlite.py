"""A statement time limit for SQLite, which has none of its own (a SQLite "statement_timeout").

A cancelled request cannot stop a statement already running in aiosqlite's thread: it would run on,
holding its connection, until it ends. The guard aborts it from inside SQLite instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from litestar_listing.core.text import fold_case

__all__ = (
    "CHECK_EVERY",
    "DEFAULT_STATEMENT_TIMEOUT",
    "FOLD_FUNCTION",
    "FileId",
    "ReadPool",
    "ReadSnapshot",
    "StatementGuard",
    "fold_value",
    "is_ascii_sql",
)

DEFAULT_STATEMENT_TIMEOUT = 5.0
"""Seconds a SQLite statement may run before it is aborted; the default of ``Resource.timeout``."""

FOLD_FUNCTION = "listing_fold"
"""The SQLite function registered on each connection for Unicode case-insensitivity."""


def fold_value(value: Any) -> Any:
    """The body of ``FOLD_FUNCTION``: text case-folded as on every other database (``fold_case``), else as is."""
    return fold_case(value) if isinstance(value, str) else value


def is_ascii_sql(expression: str) -> str:
    """SQL that is true when the text ``expression`` is all ASCII: as many bytes as characters.

    Case-insensitive matching folds text with a Python function on SQLite, a call into Python per row
    (SQLite folds ASCII only). On ASCII text SQLite's own ``LIKE``, which ignores the case of ASCII
    letters, already gives the answer, several times faster; the backends call the function only for
    other text. ``LIKE`` folds case unless ``PRAGMA case_sensitive_like`` is on, which nothing here
    turns on (case-sensitive matching uses ``GLOB``).
    """
    return f"length(CAST({expression} AS BLOB)) = length({expression})"


FileId = tuple[int, int] | None
"""A database file's (device, inode), None for a database that is not a file of its own."""

CHECK_EVERY = 10_000
"""SQLite virtual-machine instructions between two checks of the clock (microseconds of work)."""


class StatementGuard:
    """Aborts any statement of one SQLite connection that runs longer than ``limit`` seconds.

    The statement fails with ``sqlite3.OperationalError: interrupted``, which the backends answer
    with a 503. Install it in the thread that owns the connection (``install``), or hand its two
    callbacks to aiosqlite, which calls them there.

    Args:
        limit: Seconds per statement; None disables the guard.
    """

    __slots__ = ("limit", "started")

    def __init__(self, limit: float | None = DEFAULT_STATEMENT_TIMEOUT) -> None:
        self.limit = limit
        self.started = time.monotonic()

    def statement_started(self, _sql: str) -> None:
        """Trace callback: SQLite calls it as each statement starts."""
        self.started = time.monotonic()

    def over_time(self) -> int:
        """Progress handler: non-zero aborts the running statement."""
        return int(self.limit is not None and time.monotonic() - self.started > self.limit)

    def install(self, connection: Any) -> None:
        """Install on a ``sqlite3.Connection``, from the thread that owns it."""
        if self.limit is None:
            return
        connection.set_trace_callback(self.statement_started)
        connection.set_progress_handler(self.over_time, CHECK_EVERY)


class ReadPool:
    """Idle SQLite connections kept for lists, each lent to one list at a time.

    Piccolo's ``SQLiteEngine`` opens a connection, and aiosqlite a thread, for every transaction,
    and sends each cursor call to that thread: about ten thread hops and a new thread per list.
    Here a list borrows an open connection and runs its statements in calls of the event loop's
    default executor: the page and its total in one (``ReadSnapshot.fetch_page``), each eager load
    in one; the first also opens the read transaction (``BEGIN``) that gives them one snapshot.
    ``check_same_thread=False`` lets the executor's threads take turns on a connection; a list is its
    only user while it holds it.

    A connection comes back to the pool only after a list that ended normally. One whose list
    failed is closed, and one whose statement was still running when its list was cancelled is
    closed as soon as the statement ends (the ``StatementGuard`` of the connection factory bounds
    that). A connection is also dropped when the database file it opened is no longer the file at
    ``path`` (deleted, or replaced by another).

    Args:
        connect: Opens a connection (in a worker thread), e.g. ``sqlite3.connect(**kwargs)``; it
            must pass ``check_same_thread=False``.
        path: The database file, to notice a replaced file; None for in-memory or URI databases.
        max_idle: Connections kept open between lists; more are opened under load and closed after.
    """

    __slots__ = ("_closed", "_connect", "_idle", "_path", "max_idle")

    def __init__(self, connect: Callable[[], sqlite3.Connection], path: str | None, *, max_idle: int = 4) -> None:
        self._connect = connect
        self._path = None if path is None else Path(path)
        self.max_idle = max_idle
        self._idle: list[tuple[sqlite3.Connection, FileId]] = []
        self._closed = False

    def file(self) -> FileId:
        """The identity (device, inode) of the file at ``path`` now, None without one."""
        if self._path is None:
            return None
        try:
            status = self._path.stat()
        except OSError:
            return None
        return status.st_dev, status.st_ino

    def connect(self) -> tuple[sqlite3.Connection, FileId]:
        """A new connection and the file it opened; call it in a worker thread."""
        file = self.file()
        return self._connect(), file

    @contextlib.asynccontextmanager
    async def snapshot(self) -> AsyncIterator[ReadSnapshot]:
        """A block whose statements (``ReadSnapshot.fetch``) run on one connection, in one read transaction."""
        snapshot = ReadSnapshot(self, self._take())
        try:
            yield snapshot
        except BaseException:
            snapshot.discard()
            raise
        held = snapshot.held
        if held is not None:
            connection, file = held
            if connection.in_transaction:
                connection.execute("COMMIT")  # a read transaction: releases its lock, never waits
            self._give_back(connection, file)

    def _take(self) -> tuple[sqlite3.Connection, FileId] | None:
        file = self.file()
        while self._idle:
            connection, opened = self._idle.pop()
            if file is not None and opened == file:
                return connection, opened
            connection.close()
        return None

    def _give_back(self, connection: sqlite3.Connection, opened: FileId) -> None:
        if self._closed or len(self._idle) >= self.max_idle or opened is None or opened != self.file():
            connection.close()
        else:
            self._idle.append((connection, opened))

    def close(self) -> None:
        """Close the idle connections; connections lent out are closed when they come back."""
        self._closed = True
        while self._idle:
            self._idle.pop()[0].close()


Ran = TypeVar("Ran")


class ReadSnapshot:
    """One list's borrowed connection and read transaction (``ReadPool.snapshot``)."""

    __slots__ = ("_pool", "_running", "held")

    def __init__(self, pool: ReadPool, held: tuple[sqlite3.Connection, FileId] | None) -> None:
        self._pool = pool
        self.held = held
        self._running: asyncio.Future[Any] | None = None

    def _run(self, statements: Callable[[sqlite3.Connection], Ran]) -> Ran:
        """In a worker thread: open the connection and the transaction if need be, then run ``statements``."""
        if self.held is None:
            self.held = self._pool.connect()
        connection = self.held[0]
        if not connection.in_transaction:
            connection.execute("BEGIN")
        return statements(connection)

    async def _call(self, statements: Callable[[sqlite3.Connection], Ran]) -> Ran:
        running = asyncio.get_running_loop().run_in_executor(None, self._run, statements)
        self._running = running
        # Shielded: a cancelled list leaves ``running`` to tell when its thread is done with the connection.
        ran = await asyncio.shield(running)
        self._running = None
        return ran

    async def fetch(self, sql: str, arguments: Sequence[Any] = ()) -> list[Any]:
        """The rows of ``sql`` with ``arguments`` (qmark parameters), in the snapshot's transaction."""

        def rows(connection: sqlite3.Connection) -> list[Any]:
            return connection.execute(sql, arguments).fetchall()

        return await self._call(rows)

    async def fetch_all(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[Any]]:
        """The rows of each of ``statements`` (``(sql, qmark parameters)``) in turn: one thread hop."""

        def rows(connection: sqlite3.Connection) -> list[list[Any]]:
            return [connection.execute(*statement).fetchall() for statement in statements]

        return await self._call(rows)

    async def fetch_page(
        self, page: tuple[str, Sequence[Any]], total: tuple[str, Sequence[Any]], counts: Callable[[int], bool]
    ) -> tuple[list[Any], list[Any] | None]:
        """The rows of the ``page`` statement and, when ``counts(<its row count>)``, of ``total``: one thread hop.

        Each statement is ``(sql, qmark parameters)``; None for a total not run.
        """

        def rows(connection: sqlite3.Connection) -> tuple[list[Any], list[Any] | None]:
            page_rows = connection.execute(*page).fetchall()
            return page_rows, connection.execute(*total).fetchall() if counts(len(page_rows)) else None

        return await self._call(rows)

    def discard(self) -> None:
        """Close the connection after a failed or cancelled list: at once, or when its statement ends."""
        running, self._running = self._running, None
        if running is not None and not running.done():
            running.add_done_callback(self._discard_after)
            return
        if self.held is not None:
            self.held[0].close()

    def _discard_after(self, running: asyncio.Future[Any]) -> None:
        if not running.cancelled():
            running.exception()  # retrieved: the list that ran it is gone
        self.discard()
