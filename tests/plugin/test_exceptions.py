"""The plugin layer split by responsibility, on the memory backend (docs: design, "Binding").

The declaration is frozen and prepared once; the list action raises the library's errors only; the
plugin's exception handlers answer them as the route answers Litestar's own 400 and 503, so the
application's handlers and ``ProblemDetailsPlugin`` shape them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import pytest
from litestar import Litestar, Request, Response, Router, get
from litestar.exceptions import HTTPException, ServiceUnavailableException, ValidationException
from litestar.plugins import InitPlugin, InitPluginProtocol
from litestar.plugins.problem_details import ProblemDetailsConfig, ProblemDetailsPlugin
from litestar.testing import TestClient

from litestar_listing import (
    ConfigurationError,
    InvalidQueryError,
    ListingPlugin,
    MemoryBackend,
    Resource,
    UnavailableError,
    list_resource,
)
from litestar_listing.plugin.binding import binding_of
from litestar_listing.plugin.exceptions import as_http
from litestar_listing.plugin.prepared import prepare
from tests.plugin.test_admission import SlowBackend
from tests.unit.graph import GRAPH

ROWS = [{"id": i, "name": f"thing {i}", "small": i % 3, "owner_id": 1, "owner": None} for i in (1, 2, 3)]
BAD = "/api/v1/things/?small=x&nope=1&page=0"
BAD_KEYS = ["small", "nope", "page"]  # in request order, as the parser reports them


def things(**options: Any) -> Resource:
    return Resource("things", MemoryBackend(GRAPH, ROWS), default_order=("id",), **options)


def slow() -> Resource:
    return Resource("things", SlowBackend(delay=1.0), default_order=("id",), timeout=0.05)


# ---------------------------------------------------------------- the declaration
def test_the_declaration_is_frozen_and_prepared_once() -> None:
    resource = things()
    with pytest.raises(dataclasses.FrozenInstanceError):
        resource.timeout = 1.0  # type: ignore[misc]
    assert prepare(resource) is prepare(resource) is prepare(resource)
    assert prepare(resource).message == "Listed things."
    copy = dataclasses.replace(resource, message="Things.")
    assert copy is not resource
    assert prepare(copy) is not prepare(resource)
    assert prepare(copy).message == "Things."
    assert prepare(copy).envelope is not prepare(resource).envelope


def test_the_plugin_binds_without_writing_to_the_declaration() -> None:
    resource = things()
    before = dict(vars(resource))
    plugin = ListingPlugin([resource], max_concurrent_lists=2)
    first, second = Litestar(plugins=[plugin]), Litestar(plugins=[plugin])
    bindings = [binding_of(resource, None, app, used_by="a test") for app in (first, second)]
    assert bindings[0] is not bindings[1]  # each application derives its own
    assert all(binding.admission is not None for binding in bindings)
    assert bindings[0].admission is not bindings[1].admission
    assert bindings[0].policies is not bindings[1].policies
    assert {key: value for key, value in vars(resource).items() if key in before} == before


def test_the_plugin_is_an_init_plugin_not_the_deprecated_protocol() -> None:
    assert isinstance(ListingPlugin([things()]), InitPlugin)
    assert InitPluginProtocol not in ListingPlugin.__bases__
    Litestar(plugins=[ListingPlugin([things()])])  # filterwarnings=error: no DeprecationWarning


# ---------------------------------------------------------------- the list action: the library's errors only
async def test_a_bad_query_raises_the_library_error_with_every_key() -> None:
    resource = things()
    served = Litestar(plugins=[ListingPlugin([resource])])
    with pytest.raises(InvalidQueryError) as raised:
        await list_resource(resource, None, [("small", "x"), ("nope", "1"), ("page", "0")], app=served)
    assert [error.key for error in raised.value.errors] == BAD_KEYS


async def test_a_slow_store_raises_the_library_error() -> None:
    resource = slow()
    served = Litestar(plugins=[ListingPlugin([resource])])
    with pytest.raises(UnavailableError, match=r"listing things took longer than 0\.05 s") as raised:
        await list_resource(resource, None, [], app=served)
    assert raised.value.reason == "timeout"


# ---------------------------------------------------------------- over HTTP
def test_the_plugin_answers_them_in_litestars_shape() -> None:
    with TestClient(Litestar(plugins=[ListingPlugin([things()])])) as client:
        response = client.get(BAD)
        assert response.status_code == 400
        body = response.json()
        assert set(body) == {"status_code", "detail", "extra"}
        assert body["status_code"] == 400
        assert [item["key"] for item in body["extra"]] == BAD_KEYS
        assert {item["source"] for item in body["extra"]} == {"query"}
        head = client.head(BAD)
        assert (head.status_code, head.content) == (400, b"")
    with TestClient(Litestar(plugins=[ListingPlugin([slow()])])) as client:
        response = client.get("/api/v1/things/")
        assert response.status_code == 503
        assert response.headers["retry-after"] == "1"
        assert response.json() == {
            "status_code": 503,
            "detail": "listing things took longer than 0.05 s; narrow the filters or try again",
        }


def test_a_handler_of_ones_own_gets_the_same_answers() -> None:
    resource = things()

    @get("/mine")
    async def mine(request: Request[Any, Any, Any]) -> Any:
        return (await list_resource(resource, request)).envelope

    app = Litestar([mine], plugins=[ListingPlugin([], unmounted=[resource])])
    with TestClient(app) as client:
        response = client.get("/mine?small=x&nope=1&page=0")
        assert response.status_code == 400
        assert [item["key"] for item in response.json()["extra"]] == BAD_KEYS


def test_problem_details_shape_them_when_installed() -> None:
    config = ProblemDetailsConfig(enable_for_all_http_exceptions=True)
    for resource, path, status in ((things(), BAD, 400), (slow(), "/api/v1/things/", 503)):
        app = Litestar(plugins=[ListingPlugin([resource]), ProblemDetailsPlugin(config)])
        with TestClient(app) as client:
            response = client.get(path)
            assert response.status_code == status
            assert response.headers["content-type"] == "application/problem+json"
            assert response.json()["status"] == status


def _own_400(request: Request[Any, Any, Any], error: ValidationException) -> Response[Any]:
    extra = cast("list[dict[str, str]]", error.extra)
    return Response({"bad": [item["key"] for item in extra]}, status_code=422)


def _own_503(request: Request[Any, Any, Any], error: HTTPException) -> Response[Any]:
    return Response({"later": error.detail}, status_code=503, headers=error.headers)


def test_the_applications_handlers_for_litestars_exceptions_apply() -> None:
    app = Litestar(
        plugins=[ListingPlugin([things()])],
        exception_handlers={ValidationException: _own_400},
    )
    with TestClient(app) as client:
        response = client.get(BAD)
        assert (response.status_code, response.json()) == (422, {"bad": BAD_KEYS})
    # A router's handler, by status code, for the routes under it.
    resource = slow()

    @get("/slow")
    async def listed(request: Request[Any, Any, Any]) -> Any:
        return (await list_resource(resource, request)).envelope

    router = Router("/v2", route_handlers=[listed], exception_handlers={503: _own_503})
    app = Litestar([router], plugins=[ListingPlugin([], unmounted=[resource])])
    with TestClient(app) as client:
        response = client.get("/v2/slow")
        assert response.status_code == 503
        assert response.json() == {"later": "listing things took longer than 0.05 s; narrow the filters or try again"}
        assert response.headers["retry-after"] == "1"


def test_an_applications_handler_for_the_library_error_wins() -> None:
    def mine(request: Request[Any, Any, Any], error: InvalidQueryError) -> Response[Any]:
        return Response({"keys": [item.key for item in error.errors]}, status_code=400)

    app = Litestar(plugins=[ListingPlugin([things()])], exception_handlers={InvalidQueryError: mine})
    with TestClient(app) as client:
        assert client.get(BAD).json() == {"keys": BAD_KEYS}


def test_as_http_refuses_an_application_bug() -> None:
    assert isinstance(as_http(UnavailableError("down")), ServiceUnavailableException)
    with pytest.raises(TypeError, match="ConfigurationError is not an HTTP answer"):
        as_http(ConfigurationError("wrong"))
