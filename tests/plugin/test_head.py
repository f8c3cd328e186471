"""``HEAD`` on a list route answers what ``GET`` would, without a body (docs: design, "HEAD")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from litestar_listing import ListingPlugin, MemoryBackend, Resource
from tests.unit.graph import GRAPH

ROWS = [{"id": i, "name": f"thing {i:02d}", "small": i % 3, "owner_id": 1, "owner": None} for i in range(1, 8)]
EXTENSION_HEADERS = ("x-next-cursor", "link", "x-total-mode", "content-type")


@pytest.fixture
def client() -> Iterator[TestClient[Litestar]]:
    things = Resource("things", MemoryBackend(GRAPH, ROWS), default_order=("id",), keyset=True)
    with TestClient(Litestar(plugins=[ListingPlugin([things])])) as test_client:
        yield test_client


@pytest.mark.parametrize("query", ["count=3", "count=3&order_by=-small", "count=10"])
def test_head_has_the_status_and_headers_of_get_and_no_body(client: TestClient[Litestar], query: str) -> None:
    got = client.get(f"/api/v1/things/?{query}")
    headed = client.head(f"/api/v1/things/?{query}")
    assert (got.status_code, headed.status_code) == (200, 200)
    assert headed.content == b""
    assert {name: headed.headers.get(name) for name in EXTENSION_HEADERS} == {
        name: got.headers.get(name) for name in EXTENSION_HEADERS
    }
    assert ("x-next-cursor" in headed.headers) == (query != "count=10")  # 7 rows: a next page unless all fit


@pytest.mark.parametrize(("query", "status"), [("count=0", 400), ("nope=1", 400), ("cursor=forged", 400)])
def test_head_answers_the_errors_of_get(client: TestClient[Litestar], query: str, status: int) -> None:
    assert client.get(f"/api/v1/things/?{query}").status_code == status
    assert client.head(f"/api/v1/things/?{query}").status_code == status


def test_head_is_not_a_second_operation_in_openapi(client: TestClient[Litestar]) -> None:
    assert set(client.get("/schema/openapi.json").json()["paths"]["/api/v1/things"]) == {"get"}
