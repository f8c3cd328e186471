"""The plugin through Litestar's test client, on the memory backend: envelope, errors, OpenAPI."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from litestar_listing import EnrichContext, ListingPlugin, MemoryBackend, Resource, tenant_scope
from litestar_listing.core.errors import ConfigurationError
from tests.unit.graph import GRAPH

ROWS = [
    {
        "id": i,
        "name": f"thing {i:02d}",
        "small": i % 3,
        "owner_id": 1 + i % 2,
        "owner": {"id": 1 + i % 2, "name": "o"},
    }
    for i in range(1, 26)
]


@dataclass
class User:
    id: int
    company_id: int
    is_platform_admin: bool = False


def add_label(items: list[dict[str, Any]], context: EnrichContext) -> None:
    for item in items:
        item["label"] = item["name"].upper()


def make_app(**resource_options: Any) -> Litestar:
    users = {"u1": User(1, company_id=1), "admin": User(9, company_id=0, is_platform_admin=True)}

    async def set_user(scope: Any, receive: Any, send: Any, app: Any) -> None:
        headers = dict(scope["headers"])
        scope["user"] = users.get(headers.get(b"x-user", b"").decode())
        await app(scope, receive, send)

    def middleware(app: Any) -> Any:
        async def wrapped(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                await set_user(scope, receive, send, app)
            else:
                await app(scope, receive, send)

        return wrapped

    options: dict[str, Any] = {"search_fields": ("name",), "default_order": ("id",)}
    options.update(resource_options)
    things = Resource("things", MemoryBackend(GRAPH, ROWS), **options)
    return Litestar(plugins=[ListingPlugin([things])], middleware=[middleware])


@pytest.fixture
def client() -> Iterator[TestClient[Litestar]]:
    with TestClient(make_app(enrich=add_label, enrich_fields={"label": str})) as test_client:
        yield test_client


def test_envelope(client: TestClient[Litestar]) -> None:
    response = client.get("/api/v1/things/", params={"count": 10, "page": 3})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"data", "pagination", "message", "status"}
    assert body["status"] == "success"
    assert isinstance(body["message"], str)
    assert body["pagination"] == {"page": 3, "count": 10, "total": 25, "total_pages": 3}
    assert [item["id"] for item in body["data"]] == [21, 22, 23, 24, 25]
    assert body["data"][0]["label"] == "THING 21"


def test_defaults_and_past_the_end(client: TestClient[Litestar]) -> None:
    body = client.get("/api/v1/things/").json()
    assert body["pagination"] == {"page": 1, "count": 10, "total": 25, "total_pages": 3}
    body = client.get("/api/v1/things/?page=9&small=0").json()
    assert body["data"] == []
    assert body["pagination"] == {"page": 9, "count": 10, "total": 8, "total_pages": 1}
    body = client.get("/api/v1/things/?name=nothing").json()
    assert body["pagination"] == {"page": 1, "count": 10, "total": 0, "total_pages": 0}


def test_errors_use_litestar_shape_and_list_every_parameter(client: TestClient[Litestar]) -> None:
    response = client.get("/api/v1/things/?count=101&page=0&bogus=1&small=x&order_by=nope")
    assert response.status_code == 400
    body = response.json()
    assert body["status_code"] == 400
    assert isinstance(body["detail"], str)
    assert [(entry["key"], entry["source"]) for entry in body["extra"]] == [
        ("count", "query"),
        ("page", "query"),
        ("bogus", "query"),
        ("small", "query"),
        ("order_by", "query"),
    ]
    assert all(entry["message"] for entry in body["extra"])


def test_forced_tenant_filter_cannot_be_bypassed() -> None:
    app = make_app(forced_filters=(tenant_scope("owner_id"),))
    with TestClient(app) as client:
        assert client.get("/api/v1/things/").status_code == 401
        mine = client.get("/api/v1/things/?owner_id=2&count=100", headers={"x-user": "u1"}).json()
        assert {item["owner_id"] for item in mine["data"]} == {1}
        assert mine["pagination"]["total"] == 12  # the even ids of 1..25
        narrowed = client.get("/api/v1/things/?owner_id__ne=1", headers={"x-user": "u1"}).json()
        assert narrowed["pagination"]["total"] == 0
        everything = client.get("/api/v1/things/", headers={"x-user": "admin"}).json()
        assert everything["pagination"]["total"] == 25


def test_or_combination() -> None:
    with TestClient(make_app(combine="or")) as client:
        body = client.get("/api/v1/things/?id=1&id__gt=24&count=100").json()
        assert [item["id"] for item in body["data"]] == [1, 25]


def test_enrichment_may_not_drop_items() -> None:
    def drop(items: list[dict[str, Any]], context: EnrichContext) -> None:
        items.pop()

    with TestClient(make_app(enrich=drop), raise_server_exceptions=False) as client:
        assert client.get("/api/v1/things/").status_code == 500


def test_bad_declaration_stops_the_app() -> None:
    with pytest.raises(ConfigurationError, match=r"things.*nope"):
        make_app(filter_fields=("nope",))


def test_openapi_documents_every_parameter(client: TestClient[Litestar]) -> None:
    schema = client.get("/schema/openapi.json").json()
    operation = schema["paths"]["/api/v1/things"]["get"]
    parameters = {parameter["name"]: parameter for parameter in operation["parameters"]}
    assert parameters["count"]["schema"] == {"type": "integer", "default": 10, "maximum": 100, "minimum": 1}
    assert parameters["page"]["schema"]["minimum"] == 1
    assert parameters["search"]["schema"]["maxLength"] == 256
    assert "small" in parameters["order_by"]["description"]
    assert parameters["order_by"]["schema"]["pattern"].startswith("^-?(active|at|")
    assert parameters["small__gte"]["schema"] == {"type": "integer", "maximum": 32767, "minimum": -32768}
    assert parameters["name__in"]["schema"]["type"] == "array"
    assert parameters["color"]["schema"]["enum"] == ["red", "blue"]
    assert "owner__password_hash" not in parameters
    assert "active__gt" not in parameters
    assert {"200", "400"} <= set(operation["responses"])
    item = schema["components"]["schemas"]["Things"]
    assert item["properties"]["label"] == {"type": "string"}  # declared through enrich_fields
    assert "password_hash" not in item["properties"]
