"""Admission (``max_concurrent_lists``): lists wait their turn in their lane; the timeout starts at admission."""

from __future__ import annotations

import asyncio
import time
from typing import Any, cast

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

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


# ---------------------------------------------------------------- lanes and shares (docs: admission, "Lanes")
class GatedBackend(MemoryBackend):
    """The memory backend; a list with a search (an expensive one here) waits for ``gate``, noting its client first."""

    def __init__(self) -> None:
        super().__init__(GRAPH, ROWS)
        self.gate = asyncio.Event()
        self.started: list[str] = []

    async def fetch(self, query: ListQuery, context: ListContext) -> Page:
        if query.search is not None:
            assert context.request is not None
            self.started.append(context.request.headers["x-client"])
            await self.gate.wait()
        return await super().fetch(query, context)


EXPENSIVE = "search=thing"
"""Priced 13.05: 10.05 as a list without parameters (base 1, a sort by the unindexed id 8 + 1, ten rows
0.05), and a searched field 3; over the 12 units these tests call expensive."""


def lanes(backend: GatedBackend, **options: Any) -> httpx.AsyncClient:
    """A client of an application of ``backend``'s resource whose clients are their ``x-client`` header.

    The application runs in the test's event loop (Litestar's ``AsyncTestClient`` runs it in a thread
    of its own, where the test's gate cannot hold a list).
    """
    things = Resource("things", backend, default_order=("id",), search_fields=("name",), cost_headers=True)
    settings: dict[str, Any] = {"max_concurrent_lists": 2, "expensive_cost": 12.0, "client": _by_header}
    settings.update(options)
    app = Litestar(plugins=[ListingPlugin([things], **settings)])
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=cast("Any", app)), base_url="http://testserver")


def _by_header(connection: Any) -> str:
    return str(connection.headers.get("x-client", ""))


async def _until(condition: Any) -> None:
    for _ in range(200):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the condition never held")


async def test_a_cheap_list_is_admitted_while_the_expensive_lane_is_full() -> None:
    backend = GatedBackend()
    async with lanes(backend, max_expensive_lists=1) as client:
        first = asyncio.ensure_future(client.get(f"/api/v1/things/?{EXPENSIVE}", headers={"x-client": "a"}))
        second = asyncio.ensure_future(client.get(f"/api/v1/things/?{EXPENSIVE}", headers={"x-client": "b"}))
        await _until(lambda: backend.started == ["a"])
        # One of the two places is free, but the lane's one place is taken: b waits; a cheap list does not.
        cheap = await asyncio.wait_for(client.get("/api/v1/things/", headers={"x-client": "c"}), 2.0)
        assert cheap.status_code == 200
        assert cheap.headers["x-listing-lane"] == "cheap"
        assert backend.started == ["a"]
        backend.gate.set()
        answers = await asyncio.gather(first, second)
    assert [answer.status_code for answer in answers] == [200, 200]
    assert backend.started == ["a", "b"]
    assert {answer.headers["x-listing-lane"] for answer in answers} == {"expensive"}
    assert float(answers[1].headers["x-listing-wait"]) > 0


async def test_a_client_waits_for_its_own_expensive_lists_not_for_others() -> None:
    backend = GatedBackend()
    async with lanes(backend, max_concurrent_lists=4, max_expensive_lists=2, client_share=1) as client:
        sent = [
            asyncio.ensure_future(client.get(f"/api/v1/things/?{EXPENSIVE}", headers={"x-client": who}))
            for who in ("a", "a", "b")
        ]
        # The lane has two places; a's second list waits for a's first, so b's takes the other place.
        await _until(lambda: len(backend.started) == 2)
        await asyncio.sleep(0.05)
        assert backend.started == ["a", "b"]
        backend.gate.set()
        answers = await asyncio.gather(*sent)
    assert [answer.status_code for answer in answers] == [200, 200, 200]
    assert backend.started == ["a", "b", "a"]


async def test_a_client_over_its_share_gets_a_503_with_retry_after_and_another_client_does_not() -> None:
    backend = GatedBackend()
    async with lanes(backend, max_expensive_lists=2, client_share=1, queue_timeout=0.2) as client:
        held = asyncio.ensure_future(client.get(f"/api/v1/things/?{EXPENSIVE}", headers={"x-client": "a"}))
        await _until(lambda: backend.started == ["a"])
        over = await client.get(f"/api/v1/things/?{EXPENSIVE}", headers={"x-client": "a"})
        other = asyncio.ensure_future(client.get(f"/api/v1/things/?{EXPENSIVE}", headers={"x-client": "b"}))
        await _until(lambda: backend.started == ["a", "b"])
        backend.gate.set()
        answers = await asyncio.gather(held, other)
    assert over.status_code == 503
    assert over.headers["retry-after"] == "1"
    assert [answer.status_code for answer in answers] == [200, 200]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_expensive_lists": 0}, "max_expensive_lists must be between 1"),
        ({"max_expensive_lists": 3}, "max_expensive_lists must be between 1"),
        ({"expensive_cost": 0.0}, "expensive_cost must be > 0"),
        ({"client_share": 0}, "client_share >= 1"),
    ],
)
def test_bad_lanes_fail_at_configuration(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        ListingPlugin([], max_concurrent_lists=2, **options)


def test_without_admission_a_list_still_has_the_lane_of_its_cost() -> None:
    things = Resource("things", MemoryBackend(GRAPH, ROWS), search_fields=("name",), cost_headers=True)
    app = Litestar(plugins=[ListingPlugin([things], expensive_cost=12.0)])
    with TestClient(app) as client:
        assert client.get("/api/v1/things/").headers["x-listing-lane"] == "cheap"  # 10.05
        searched = client.get(f"/api/v1/things/?{EXPENSIVE}")  # 13.05
        assert (searched.headers["x-listing-lane"], searched.headers["x-listing-wait"]) == ("expensive", "0.000")
    with pytest.raises(ConfigurationError, match="expensive_cost must be > 0"):
        ListingPlugin([], expensive_cost=-1.0)


class RecordingBackend(MemoryBackend):
    """The memory backend, noting whether each list may run on several cores (``ListContext.parallel``)."""

    def __init__(self) -> None:
        super().__init__(GRAPH, ROWS)
        self.parallel: list[bool] = []

    async def fetch(self, query: ListQuery, context: ListContext) -> Page:
        self.parallel.append(context.parallel)
        return await super().fetch(query, context)


@pytest.mark.parametrize("limit", [None, 2], ids=["without admission", "with admission"])
def test_an_expensive_list_is_held_to_one_core_of_the_database(limit: int | None) -> None:
    backend = RecordingBackend()
    things = Resource("things", backend, search_fields=("name",))
    app = Litestar(plugins=[ListingPlugin([things], max_concurrent_lists=limit, expensive_cost=12.0)])
    with TestClient(app) as client:
        assert client.get("/api/v1/things/").status_code == 200  # 10.05: cheap
        assert client.get(f"/api/v1/things/?{EXPENSIVE}").status_code == 200  # 13.05: expensive
    assert backend.parallel == [True, False]
