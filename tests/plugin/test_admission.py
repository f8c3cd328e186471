"""Admission control (``max_concurrent_lists``): lists wait their turn; the timeout starts at admission."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from litestar import Litestar

from litestar_listing import (
    ConfigurationError,
    ListContext,
    ListingPlugin,
    ListQuery,
    MemoryBackend,
    Page,
    Resource,
    list_resource,
)
from litestar_listing.core.errors import UnavailableError
from litestar_listing.plugin.exceptions import as_http
from tests.unit.graph import GRAPH

ROWS = [{"id": i, "name": f"thing {i}", "small": 1, "owner_id": 1, "owner": None} for i in range(1, 4)]


class SlowBackend(MemoryBackend):
    """The memory backend, taking ``delay`` seconds per list and recording how many run at once."""

    def __init__(self, delay: float) -> None:
        super().__init__(GRAPH, ROWS)
        self.delay = delay
        self.running = 0
        self.most = 0

    async def fetch(self, query: ListQuery, context: ListContext) -> Page:
        self.running += 1
        self.most = max(self.most, self.running)
        try:
            await asyncio.sleep(self.delay)
            return await super().fetch(query, context)
        finally:
            self.running -= 1


class Listed:
    """A resource served by an application whose plugin admits ``limit`` lists at once."""

    def __init__(self, backend: SlowBackend, *, limit: int | None, queue_timeout: float, timeout: float) -> None:
        self.resource = Resource("things", backend, default_order=("id",), timeout=timeout)
        plugin = ListingPlugin([self.resource], max_concurrent_lists=limit, queue_timeout=queue_timeout)
        self.app = Litestar(plugins=[plugin])

    async def list(self) -> Any:
        return (await list_resource(self.resource, None, [], app=self.app)).envelope


def resource(backend: SlowBackend, *, limit: int | None, queue_timeout: float = 30.0, timeout: float = 0.5) -> Listed:
    return Listed(backend, limit=limit, queue_timeout=queue_timeout, timeout=timeout)


async def test_lists_wait_for_their_turn_and_their_timeout_starts_at_admission() -> None:
    backend = SlowBackend(delay=0.2)
    things = resource(backend, limit=2, timeout=0.5)
    started = time.monotonic()
    # Six lists of 0.2 s, two at a time: the last waits 0.4 s, past what a 0.5 s timeout counting the
    # wait would allow (0.6 s in all), and still succeeds.
    answers = await asyncio.gather(*(things.list() for _ in range(6)))
    elapsed = time.monotonic() - started
    assert [[item["id"] for item in answer.data] for answer in answers] == [[1, 2, 3]] * 6
    assert backend.most == 2
    assert 0.55 < elapsed < 2.0


async def test_without_a_limit_every_list_runs_at_once() -> None:
    backend = SlowBackend(delay=0.05)
    things = resource(backend, limit=None)
    await asyncio.gather(*(things.list() for _ in range(5)))
    assert backend.most == 5


async def test_a_list_that_cannot_start_within_the_queue_timeout_is_a_503() -> None:
    backend = SlowBackend(delay=0.4)
    things = resource(backend, limit=1, queue_timeout=0.1, timeout=5.0)
    outcomes = await asyncio.gather(*(things.list() for _ in range(2)), return_exceptions=True)
    refused = [as_http(outcome) for outcome in outcomes if isinstance(outcome, UnavailableError)]
    assert len(refused) == 1
    assert refused[0].headers == {"Retry-After": "1"}
    assert "busy" in refused[0].detail
    # The place is given back: the next list is admitted.
    assert [item["id"] for item in (await things.list()).data] == [1, 2, 3]


async def test_the_store_timeout_still_applies_once_admitted() -> None:
    things = resource(SlowBackend(delay=1.0), limit=1, timeout=0.1)
    with pytest.raises(UnavailableError, match=r"longer than 0\.1 s"):
        await things.list()


@pytest.mark.parametrize(("limit", "queue_timeout"), [(0, 1.0), (2, 0.0)])
def test_bad_limits_fail_at_configuration(limit: int, queue_timeout: float) -> None:
    with pytest.raises(ConfigurationError, match="max_concurrent_lists"):
        ListingPlugin([], max_concurrent_lists=limit, queue_timeout=queue_timeout)
