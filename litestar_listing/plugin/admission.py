"""Admission control: at most N list actions in the store at once, in two lanes by cost; the others wait their turn.

Without it, a burst of requests queues for the database's connection pool, and the time spent
queueing eats into each list's ``timeout``: under a load above the store's capacity most requests
fail with 503 although each statement alone is fast. With it, waiting happens here, bounded by its
own ``queue_timeout``, and a list's ``timeout`` starts when it is admitted, so it bounds the store's
work only (docs: load, "Findings").

Lists priced at ``expensive_cost`` or more (``core.cost``) take one of the few places of the
expensive lane as well, so the others always keep places of their own: a cheap list never waits
for expensive ones to finish. One client may hold or wait for at most ``client_share`` places of
that lane; its further expensive lists wait for its own to end, behind no one else's (docs:
admission, "Lanes").
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Literal

from litestar_listing.core.errors import ConfigurationError, UnavailableError

__all__ = ("Admission", "Admitted", "Lane", "lane_of")

Lane = Literal["cheap", "expensive"]
"""The lane a list was admitted in."""


@dataclass(frozen=True, slots=True)
class Admitted:
    """How a list was admitted.

    Attributes:
        lane: ``"cheap"`` or ``"expensive"``.
        waited: Seconds it waited for its places.
    """

    lane: Lane
    waited: float


def lane_of(cost: float, expensive_cost: float) -> Lane:
    """``"expensive"`` for a list of ``cost`` units at ``expensive_cost`` or more, else ``"cheap"``."""
    return "expensive" if cost >= expensive_cost else "cheap"


class _Places:
    """One event loop's semaphores: the places of all lists, of the expensive lane, of each client in it."""

    __slots__ = ("all", "clients", "expensive")

    def __init__(self, limit: int, expensive: int) -> None:
        self.all = asyncio.Semaphore(limit)
        self.expensive = asyncio.Semaphore(expensive)
        self.clients: dict[str, tuple[asyncio.Semaphore, int]] = {}
        """Each client with expensive lists admitted or waiting: its semaphore and how many use it."""


class Admission:
    """The places of the list actions of one ``ListingPlugin``'s resources in one application.

    Args:
        limit: Most list actions in the store at once, e.g. the size of the database pool.
        queue_timeout: Seconds a list action may wait for its turn; past it, ``UnavailableError``
            with ``reason="busy"`` (a 503 with ``Retry-After``).
        expensive_limit: Most lists costing ``expensive_cost`` or more in the store at once; the
            other ``limit - expensive_limit`` places are always left to cheaper lists. Default:
            a quarter of ``limit``, at least 1.
        expensive_cost: The cost (``core.cost.Cost.total``, in cost units) from which a list is expensive.
        client_share: Most expensive lists one client may have admitted or waiting at once; its others
            wait for them, not in the lane's queue.

    Raises:
        ConfigurationError: ``limit`` is below 1, ``queue_timeout`` or ``expensive_cost`` not
            positive, ``expensive_limit`` not between 1 and ``limit``, or ``client_share`` below 1.
    """

    __slots__ = ("_places", "client_share", "expensive_cost", "expensive_limit", "limit", "queue_timeout")

    def __init__(
        self,
        limit: int,
        queue_timeout: float = 30.0,
        *,
        expensive_limit: int | None = None,
        expensive_cost: float = 15.0,
        client_share: int = 1,
    ) -> None:
        expensive = max(1, limit // 4) if expensive_limit is None else expensive_limit
        if limit < 1 or queue_timeout <= 0:
            msg = f"max_concurrent_lists must be >= 1 and queue_timeout > 0, not {limit} and {queue_timeout}"
            raise ConfigurationError(msg)
        if not 1 <= expensive <= limit or expensive_cost <= 0 or client_share < 1:
            msg = (
                f"max_expensive_lists must be between 1 and max_concurrent_lists ({limit}), expensive_cost > 0 "
                f"and client_share >= 1, not {expensive}, {expensive_cost} and {client_share}"
            )
            raise ConfigurationError(msg)
        self.limit = limit
        self.queue_timeout = queue_timeout
        self.expensive_limit = expensive
        self.expensive_cost = expensive_cost
        self.client_share = client_share
        # One set of semaphores per event loop: an application may be served by several (tests, portals).
        self._places: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Places] = weakref.WeakKeyDictionary()

    def lane(self, cost: float) -> Lane:
        """The lane of a list of ``cost`` units (``lane_of``)."""
        return lane_of(cost, self.expensive_cost)

    @contextlib.asynccontextmanager
    async def admitted(self, what: str = "a list", *, cost: float = 0.0, client: str = "") -> AsyncIterator[Admitted]:
        """Hold the places of a list of ``cost`` for ``client`` for the duration of the block, waiting in order.

        Args:
            what: What waits, for the error's message, e.g. ``"listing flights"``.
            cost: The list's cost (``core.cost``); it decides the lane.
            client: Who asks (``plugin.clients``), for the expensive lane's shares.

        Yields:
            How the list was admitted: its lane and the seconds it waited.

        Raises:
            UnavailableError: Its places did not come free within ``queue_timeout`` seconds (``reason="busy"``).
        """
        loop = asyncio.get_running_loop()
        places = self._places.get(loop)
        if places is None:
            places = self._places[loop] = _Places(self.limit, self.expensive_limit)
        lane = self.lane(cost)
        started = time.monotonic()
        deadline = started + self.queue_timeout
        async with contextlib.AsyncExitStack() as held:
            if lane == "expensive":
                held.enter_context(self._client_share(places, client))
                await held.enter_async_context(_place(places.clients[client][0], deadline, what, self.queue_timeout))
                await held.enter_async_context(_place(places.expensive, deadline, what, self.queue_timeout))
            await held.enter_async_context(_place(places.all, deadline, what, self.queue_timeout))
            yield Admitted(lane, time.monotonic() - started)

    @contextlib.contextmanager
    def _client_share(self, places: _Places, client: str) -> Iterator[None]:
        """Count ``client``'s expensive list in ``places.clients`` for the block (its semaphore made on first use)."""
        semaphore, users = places.clients.get(client) or (asyncio.Semaphore(self.client_share), 0)
        places.clients[client] = (semaphore, users + 1)
        try:
            yield
        finally:
            semaphore, users = places.clients[client]
            if users == 1:
                del places.clients[client]  # nothing is kept for a client with no expensive list
            else:
                places.clients[client] = (semaphore, users - 1)


@contextlib.asynccontextmanager
async def _place(semaphore: asyncio.Semaphore, deadline: float, what: str, queue_timeout: float) -> AsyncIterator[None]:
    """Hold a place of ``semaphore``, waited for until ``deadline`` (``time.monotonic()``)."""
    try:
        await asyncio.wait_for(semaphore.acquire(), max(0.0, deadline - time.monotonic()))
    except asyncio.TimeoutError:
        msg = (
            f"{what} is not possible now: no list could start within {queue_timeout:g} s: the server is busy; try again"
        )
        raise UnavailableError(msg, reason="busy") from None
    try:
        yield
    finally:
        semaphore.release()
