"""A statement time limit for SQLite, which has none of its own (a SQLite "statement_timeout").

A cancelled request cannot stop a statement already running in aiosqlite's thread: it would run on,
holding its connection, until it ends. The guard aborts it from inside SQLite instead.
"""

from __future__ import annotations

import time
from typing import Any

from litestar_listing.core.text import fold_case

__all__ = ("CHECK_EVERY", "DEFAULT_STATEMENT_TIMEOUT", "FOLD_FUNCTION", "StatementGuard", "fold_value", "is_ascii_sql")

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
