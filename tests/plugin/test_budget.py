"""Cost budgets (docs: admission, "Fair shares"): each client's lists charged their cost in a Litestar store.

The resource's lists cost 10.05 units without parameters (base 1, a sort by the unindexed ``id`` 8 + 1,
ten rows 0.05) and 13.05 with ``search`` (a searched field, 3): hand-priced from ``CostModel``'s defaults.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from litestar import Litestar
from litestar.stores.base import Store
from litestar.stores.memory import MemoryStore
from litestar.stores.registry import StoreRegistry
from litestar.testing import TestClient

from litestar_listing import ListingPlugin, MemoryBackend, Resource
from litestar_listing.core.errors import ConfigurationError
from litestar_listing.plugin.budget import CostBudget, client_of
from tests.conftest import unavailable
from tests.matrix import selected
from tests.unit.graph import GRAPH

ROWS = [{"id": i, "name": f"thing {i}", "small": 1, "owner_id": 1, "owner": None} for i in range(1, 4)]


def app(budget: CostBudget, store: Store | None = None) -> Litestar:
    things = Resource("things", MemoryBackend(GRAPH, ROWS), default_order=("id",), search_fields=("name",))
    stores = StoreRegistry({budget.store: store}) if store is not None else None
    return Litestar(plugins=[ListingPlugin([things], budget=budget, client=_by_header)], stores=stores)


def _by_header(connection: Any) -> str:
    return str(connection.headers.get("x-client", ""))


def test_a_client_over_its_budget_gets_a_429_with_retry_after_and_another_client_does_not() -> None:
    with TestClient(app(CostBudget(units=30.0, window="minute"))) as client:
        first = client.get("/api/v1/things/?search=a", headers={"x-client": "a"})
        assert first.status_code == 200
        assert first.headers["ratelimit-policy"] == "30; w=60"
        assert first.headers["ratelimit-limit"] == "30"
        assert first.headers["ratelimit-remaining"] == "16"  # 30 - 13.05, rounded down
        assert 0 < int(first.headers["ratelimit-reset"]) <= 60
        second = client.get("/api/v1/things/", headers={"x-client": "a"})  # 13.05 + 10.05 = 23.1: within 30
        assert second.status_code == 200
        assert second.headers["ratelimit-remaining"] == "6"
        over = client.get("/api/v1/things/?search=a", headers={"x-client": "a"})  # 23.1 + 13.05 > 30
        assert over.status_code == 429
        assert 1 <= int(over.headers["retry-after"]) <= 60
        assert over.headers["ratelimit-remaining"] == "6"  # a refused list is not charged
        assert "spent 23.1 of its 30 cost units per minute" in over.json()["detail"]
        other = client.get("/api/v1/things/?search=a", headers={"x-client": "b"})
        assert other.status_code == 200
        assert other.headers["ratelimit-remaining"] == "16"


def test_a_list_costlier_than_the_whole_budget_passes_once_per_window() -> None:
    with TestClient(app(CostBudget(units=6.0, window="hour"))) as client:
        assert client.get("/api/v1/things/?search=a", headers={"x-client": "a"}).status_code == 200
        assert client.get("/api/v1/things/", headers={"x-client": "a"}).status_code == 429


def test_two_applications_sharing_a_store_share_the_budget() -> None:
    # Two workers are two applications; their budget is one when their store is one.
    shared = MemoryStore()
    budget = CostBudget(units=10.0)
    with TestClient(app(budget, shared)) as one, TestClient(app(budget, shared)) as two:
        assert one.get("/api/v1/things/?search=a", headers={"x-client": "a"}).status_code == 200
        assert two.get("/api/v1/things/?search=a", headers={"x-client": "a"}).status_code == 429
    with TestClient(app(budget)) as alone:  # a store of its own: a budget of its own
        assert alone.get("/api/v1/things/?search=a", headers={"x-client": "a"}).status_code == 200


@pytest.mark.skipif(not selected(database="postgresql"), reason="with the server targets: Redis runs beside them")
def test_workers_sharing_a_redis_store_share_the_budget() -> None:
    from litestar.stores.redis import RedisStore
    from redis.exceptions import ConnectionError as RedisConnectionError

    namespace = f"listing-test-{uuid.uuid4().hex}"
    budget = CostBudget(units=10.0)
    with (
        TestClient(app(budget, RedisStore.with_client(url="redis://127.0.0.1:6379", namespace=namespace))) as one,
        TestClient(app(budget, RedisStore.with_client(url="redis://127.0.0.1:6379", namespace=namespace))) as two,
    ):
        try:
            first = one.get("/api/v1/things/?search=a", headers={"x-client": "a"})
        except RedisConnectionError:
            unavailable("Redis at 127.0.0.1:6379 is not running: apt-get install -y redis-server")
        assert first.status_code == 200
        assert two.get("/api/v1/things/?search=a", headers={"x-client": "a"}).status_code == 429
        assert two.get("/api/v1/things/?search=a", headers={"x-client": "b"}).status_code == 200


@pytest.mark.parametrize(("units", "window"), [(0.0, "minute"), (5.0, "fortnight")])
def test_bad_budgets_fail_at_configuration(units: float, window: Any) -> None:
    with pytest.raises(ConfigurationError, match="CostBudget needs units > 0"):
        CostBudget(units=units, window=window)


class _User:
    def __init__(self, **attributes: object) -> None:
        self.__dict__.update(attributes)


@pytest.mark.parametrize(
    ("user", "client"),
    [
        (None, "address:10.1.2.3"),
        (_User(id=7, username="ann"), "user:7"),
        (_User(username="ann"), "user:ann"),
        (_User(sub="auth0|1"), "user:auth0|1"),
        ("ann", "user:ann"),
        (_User(), "address:10.1.2.3"),  # nothing names it: the address
    ],
)
def test_a_client_is_the_signed_in_user_or_else_the_address(user: object, client: str) -> None:
    class Connection:
        scope: dict[str, Any] = {"user": user, "client": ("10.1.2.3", 5000)}

    assert client_of(Connection()) == client  # type: ignore[arg-type]
