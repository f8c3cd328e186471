"""The total of a relational list: told by a partial page, estimated by the planner, or counted.

Shared by the SQL backends so that the rules of totals and of estimated totals hold alike
(docs: design, "Totals"; design, "Estimated totals").
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from litestar_listing.backends.base import ListContext
    from litestar_listing.core.query import ListQuery

__all__ = ("count_beside", "may_count_apart", "planner_rows", "total_of")


async def total_of(
    query: ListQuery,
    found: int,
    context: ListContext,
    *,
    count: Callable[[], Awaitable[int]],
    estimate: Callable[[], Awaitable[int | None]] | None,
) -> tuple[int, bool]:
    """The total of a list whose page holds ``found`` rows, and whether it is an estimate.

    A partial page (or an empty first page) is the last one, so the total is known without
    counting (``ListQuery.total_from_page``; never after a keyset cursor, whose page number the
    client wrote). Otherwise, with ``context.total_mode == "estimated"`` and an ``estimate`` (PostgreSQL), the
    planner's estimate stands when it is at least ``context.exact_total_below``, raised to the rows
    before and on this page, which exist whatever the planner thinks; else ``count`` counts.

    Args:
        query: The listed query (its window and keyset position).
        found: Rows on the page (at most ``window.count``).
        context: The call's context (``total``, ``exact_total_below``).
        count: Runs the exact count.
        estimate: Asks the planner for its estimate (None where the store has none to give, or
            the estimate cannot be had).

    Returns:
        ``(total, estimated)``.
    """
    known = query.total_from_page(found)
    if known is not None:
        return known, False
    if context.total_mode == "estimated" and estimate is not None:
        estimated = await estimate()
        if estimated is not None and estimated >= context.exact_total_below:
            return max(estimated, (query.rows_before() or 0) + found), True
    return await count(), False


async def planner_rows(explain: Callable[[str], Awaitable[object]], sql: str) -> int:
    """PostgreSQL's estimate of the rows ``sql`` yields: ``EXPLAIN`` plans it without running it.

    Args:
        explain: Runs a statement and returns the single value of its single row.
        sql: The statement, its parameters left to ``explain``.
    """
    plan = await explain("EXPLAIN (FORMAT JSON) " + sql)
    if isinstance(plan, str):
        plan = json.loads(plan)
    return int(plan[0]["Plan"]["Plan Rows"])  # type: ignore[index]


def may_count_apart(in_use: int, size: int) -> bool:
    """Whether a list may take a second pooled connection to count beside its page (``count_beside``).

    Only while the pool is mostly idle: with the list's two connections taken, at most half of the
    pool's ``size`` is in use (``in_use``: connections lent now, the list's own not yet among them).
    Under load the count runs after the page on the list's own connection: PostgreSQL is busy then
    and a parallel count buys little, while a second connection per list empties the pool for the
    requests that arrive meanwhile, and on SQLAlchemy's ``QueuePool`` pushes them into overflow
    connections, each a new PostgreSQL backend, closed again when it is returned.
    """
    return 2 * (in_use + 2) <= size


@contextlib.asynccontextmanager
async def count_beside(count: Coroutine[Any, Any, int] | None) -> AsyncIterator[asyncio.Task[int] | None]:
    """Run ``count`` (on a second connection) as a task beside the page, for the block's duration.

    The list awaits the task when the page does not tell the total. Either way the block ends only
    once the count has ended (its error, if the list did not need it, dropped): its connection is
    back in the pool before the list returns, and never left to an event loop that closes.
    Yields None for a None ``count``: the list counts after the page.
    """
    task = None if count is None else asyncio.create_task(count)
    try:
        if task is not None:
            await asyncio.sleep(0)  # the count sends its first statement before the page's
        yield task
    finally:
        if task is not None:
            with contextlib.suppress(Exception):
                await task
