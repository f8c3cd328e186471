"""Admission control: at most N list actions in the store at once; the others wait their turn.

Without it, a burst of requests queues for the database's connection pool, and the time spent
queueing eats into each list's ``timeout``: under a load above the store's capacity most requests
fail with 503 although each statement alone is fast. With it, waiting happens here, bounded by its
own ``queue_timeout``, and a list's ``timeout`` starts when it is admitted, so it bounds the store's
work only (docs: load, "Findings").
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator

from litestar_listing.core.errors import ConfigurationError, UnavailableError

__all__ = ("Admission",)


class Admission:
    """A limit of concurrent list actions, shared by the resources of one ``ListingPlugin``.

    Args:
        limit: Most list actions in the store at once, e.g. the size of the database pool.
        queue_timeout: Seconds a list action may wait for its turn; past it, ``UnavailableError``
            with ``reason="busy"`` (a 503 with ``Retry-After``).

    Raises:
        ConfigurationError: ``limit`` is below 1 or ``queue_timeout`` is not positive.
    """

    __slots__ = ("_semaphores", "limit", "queue_timeout")

    def __init__(self, limit: int, queue_timeout: float = 30.0) -> None:
        if limit < 1 or queue_timeout <= 0:
            msg = f"max_concurrent_lists must be >= 1 and queue_timeout > 0, not {limit} and {queue_timeout}"
            raise ConfigurationError(msg)
        self.limit = limit
        self.queue_timeout = queue_timeout
        # One semaphore per event loop: an application may be served by several (tests, portals).
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    @contextlib.asynccontextmanager
    async def admitted(self, what: str = "a list") -> AsyncIterator[None]:
        """Hold one of the ``limit`` places for the duration of the block, waiting for it in order.

        Args:
            what: What waits, for the error's message, e.g. ``"listing flights"``.

        Raises:
            UnavailableError: No place came free within ``queue_timeout`` seconds (``reason="busy"``).
        """
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            semaphore = self._semaphores[loop] = asyncio.Semaphore(self.limit)
        try:
            await asyncio.wait_for(semaphore.acquire(), self.queue_timeout)
        except asyncio.TimeoutError:
            msg = (
                f"{what} is not possible now: no list could start within {self.queue_timeout:g} s: "
                "the server is busy; try again"
            )
            raise UnavailableError(msg, reason="busy") from None
        try:
            yield
        finally:
            semaphore.release()
