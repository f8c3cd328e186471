"""A resource's list behind the application's own handlers, and resources that were never prepared."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Controller, Litestar, Request, Router, get
from litestar.di import NamedDependency
from litestar.testing import TestClient

from litestar_listing import (
    ConfigurationError,
    ListingPlugin,
    ListQuery,
    ListResult,
    MemoryBackend,
    Resource,
    list_resource,
    listing_route,
    provide_page,
    provide_query,
)
from tests.unit.graph import GRAPH

ROWS = [{"id": i, "name": f"thing {i:02d}", "small": i % 3, "owner_id": 1, "owner": None} for i in range(1, 8)]


def things(name: str = "things") -> Resource:
    return Resource(name, MemoryBackend(GRAPH, ROWS), default_order=("id",))


def test_a_route_of_a_resource_given_to_no_plugin_stops_the_start() -> None:
    orphan = things("orphan")
    with pytest.raises(ConfigurationError, match=r"ListingPlugin\(\[\.\.\.\], unmounted=\[orphan\]\)"):
        Litestar(route_handlers=[listing_route(orphan, "/orphans")], plugins=[ListingPlugin([things()])])
    with pytest.raises(ConfigurationError, match="the application's ListingPlugin was not given it"):
        Litestar(route_handlers=[listing_route(things("alone"), "/alone")])  # no plugin at all


@pytest.mark.parametrize("plugins", [[], [ListingPlugin([things()])]], ids=["no plugin", "another resource's"])
def test_a_handler_listing_a_resource_no_plugin_serves_says_how_to_give_it(plugins: list[ListingPlugin]) -> None:
    orphan = things("orphan")

    @get("/orphans")
    async def handler(request: Request[Any, Any, Any]) -> Any:
        return (await list_resource(orphan, request)).envelope

    # Found at the first list, not at start: an error of the application (500) whose message says what to do.
    with TestClient(Litestar([handler], plugins=plugins, debug=True)) as client:
        response = client.get("/orphans?search=x", headers={"accept": "application/json"})
    assert response.status_code == 500
    assert "never prepared" in response.text
    assert "ListingPlugin([...], unmounted=[orphan])" in response.text


def test_a_dependency_of_a_resource_given_to_no_plugin_stops_the_start() -> None:
    orphan = things("orphan")

    class Orphans(Controller):
        path = "/orphans"
        dependencies = {"result": provide_page(orphan)}

        @get("/")
        async def handler(self, result: NamedDependency[ListResult]) -> int:
            return result.pagination.total

    with pytest.raises(ConfigurationError, match=r"resource 'orphan' is listed by .*unmounted=\[orphan\]"):
        Litestar(route_handlers=[Orphans], plugins=[ListingPlugin([])])
    # Registered, the same controller starts and answers.
    with TestClient(Litestar(route_handlers=[Orphans], plugins=[ListingPlugin([], unmounted=[orphan])])) as client:
        assert client.get("/orphans?small=1").json() == 3
        assert client.get("/api/v1/orphan/").status_code == 404  # not mounted


def test_without_a_plugin_a_dependency_fails_at_its_first_use_saying_what_to_do() -> None:
    @get("/count", dependencies={"result": provide_page(things("lonely"))})
    async def count(result: NamedDependency[ListResult]) -> int:
        return result.pagination.total

    with TestClient(Litestar(route_handlers=[count], debug=True)) as client:
        response = client.get("/count")
    assert response.status_code == 500
    assert "ListingPlugin([...], unmounted=[lonely])" in response.text


def test_a_validated_query_annotation_stops_the_start() -> None:
    resource = things()

    @get("/query", dependencies={"list_query": provide_query(resource)})
    async def query(list_query: NamedDependency[ListQuery]) -> int:
        return list_query.window.page

    with pytest.raises(ConfigurationError, match=r"list_query: SkipValidation\[ListQuery\]"):
        Litestar(route_handlers=[query], plugins=[ListingPlugin([], unmounted=[resource])])


def test_an_unused_dependency_documents_nothing() -> None:
    resource = things()

    @get("/plain", dependencies={"result": provide_page(resource)})
    async def plain() -> int:
        return 1

    app = Litestar(route_handlers=[plain], plugins=[ListingPlugin([], unmounted=[resource])])
    with TestClient(app) as client:
        operation: dict[str, Any] = client.get("/schema/openapi.json").json()["paths"]["/plain"]["get"]
    assert "parameters" not in operation
    assert set(operation["responses"]) == {"200"}


def test_a_controller_attribute_takes_the_controller() -> None:
    resource = things()

    class Things(Controller):
        path = "/mine"
        listed = listing_route(resource, "/", load=("owner",))

    app = Litestar(route_handlers=[Things], plugins=[ListingPlugin([], unmounted=[resource])])
    with TestClient(app) as client:
        body = client.get("/mine?count=2").json()
    assert [item["id"] for item in body["data"]] == [1, 2]
    assert body["data"][0]["owner"] is None  # load=("owner",) for this route


PLACES = {"app": ("plain", "method"), "router": ("plain", "method"), "controller": ("method",), "method": ("method",)}
PLACES["handler"] = ("plain",)


def _placed(where: str) -> Litestar:
    """An application whose handlers take ``provide_page``'s result, the dependency declared at ``where``."""
    listed = things()
    dependency = {"result": provide_page(listed)}

    def declared(layer: str) -> dict[str, Any] | None:
        return dependency if layer == where else None

    @get("/", dependencies=declared("handler"))
    async def plain(result: NamedDependency[ListResult]) -> int:
        return result.pagination.total

    class Things(Controller):
        path = "/controller"
        dependencies = declared("controller")

        @get("/", dependencies=declared("method"))
        async def method(self, result: NamedDependency[ListResult]) -> int:
            return result.pagination.total

    handlers = [handler for name, handler in (("plain", plain), ("method", Things)) if name in PLACES[where]]
    router = Router("/router", route_handlers=handlers, dependencies=declared("router"))
    plugin = ListingPlugin([], unmounted=[listed])
    return Litestar([router], plugins=[plugin], dependencies=declared("app"))


@pytest.mark.parametrize("where", list(PLACES))
def test_provide_page_wherever_litestar_takes_a_dependency(where: str) -> None:
    urls = {"plain": "/router/?small=1", "method": "/router/controller/?small=1"}
    with TestClient(_placed(where)) as client:
        assert [client.get(urls[name]).json() for name in PLACES[where]] == [3] * len(PLACES[where])
