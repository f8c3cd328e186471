"""The facet endpoint over HTTP on the memory backend: route, answer, errors, HEAD, limits, OpenAPI (docs: facets).

The counts themselves are the case table's (``tests/conformance/cases.py``, ``facet:*``), on every
backend; the isolation of the counts is the non-interference property's
(``tests/hostile/test_noninterference.py``). Here: what the plugin adds around them.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest
from litestar import Litestar
from litestar.connection import ASGIConnection
from litestar.exceptions import PermissionDeniedException
from litestar.testing import TestClient

from litestar_listing import (
    ListingPlugin,
    MemoryBackend,
    Resource,
    RouteOptions,
    RowPolicy,
    count_facets,
    tenant_scope,
)
from litestar_listing.backends.base import Capabilities
from litestar_listing.core.errors import ConfigurationError
from litestar_listing.plugin.prepared import prepare
from tests.apps import user_from_header
from tests.conformance.fixture import THINGS, USERS, memory_rows
from tests.conformance.targets import memory_target
from tests.schema_check import problems

THINGS_RESOURCE = memory_target().resources["things"]
URL = "/api/v1/things/facets/"


def client(*resources: Resource, **options: Any) -> TestClient[Litestar]:
    return TestClient(Litestar(plugins=[ListingPlugin(list(resources), **options)]))


def statuses(company: int | None = None) -> dict[str | None, int]:
    """Hand count over the fixture: things per status (of one company's things)."""
    counted: dict[str | None, int] = {}
    for row in THINGS:
        if company in (None, row[13]):
            counted[row[2]] = counted.get(row[2], 0) + 1
    return counted


def test_the_facet_route_answers_the_envelope() -> None:
    with client(THINGS_RESOURCE) as http:
        response = http.get(URL, params={"facet": "status", "company_id": "2"})
    assert response.status_code == 200, response.text
    body = response.json()
    expected = statuses(2)
    assert body["total"] == sum(expected.values())
    (entry,) = body["data"]
    assert entry["facet"] == "status"
    assert {item["value"]: item["count"] for item in entry["values"]} == expected
    assert entry["distinct"] == len(expected)
    assert body["message"] == "Counted things."
    assert body["status"] == "success"


def test_head_is_the_get_without_its_body() -> None:
    with client(THINGS_RESOURCE) as http:
        got = http.get(URL, params={"facet": "status"})
        headed = http.head(URL, params={"facet": "status"})
        refused = http.head(URL, params={"facet": "nope"})
    assert headed.status_code == 200
    assert headed.content == b""
    assert headed.headers["content-length"] == str(len(got.content))
    assert refused.status_code == 400


def test_every_bad_parameter_is_a_400_in_the_list_error_shape() -> None:
    with client(THINGS_RESOURCE) as http:
        response = http.get(URL, params={"facet": "nope", "facet_limit": "0", "quantity": "x"})
    assert response.status_code == 400
    assert [item["key"] for item in response.json()["extra"]] == ["facet", "facet_limit", "quantity"]


def test_a_resource_without_facets_has_no_facet_route() -> None:
    plain = replace(THINGS_RESOURCE, name="plain", facet_fields=())
    with client(plain) as http:
        assert http.get("/api/v1/plain/facets/", params={"facet": "status"}).status_code == 404
        assert http.get("/api/v1/plain/").status_code == 200


def test_a_backend_that_counts_no_facets_stops_the_start() -> None:
    class Uncounted(MemoryBackend):
        capabilities = Capabilities(keyset=True, row_policies=True, inherited_policies=True)

    memory = THINGS_RESOURCE.backend
    assert isinstance(memory, MemoryBackend)
    backend = Uncounted(memory.model_graph(), memory_rows())
    with pytest.raises(ConfigurationError, match="facet_fields needs a backend that counts facets"):
        prepare(Resource("things", backend, facet_fields=("status",)))


def test_a_resource_routed_where_another_counts_its_facets_stops_the_start() -> None:
    other = replace(THINGS_RESOURCE, name="other", facet_fields=())
    with pytest.raises(ConfigurationError, match="both routed at /api/v1/things/facets/"):
        ListingPlugin([THINGS_RESOURCE, other], routes={"other": RouteOptions(path="things/facets")})


def test_the_route_options_apply_to_the_facet_route() -> None:
    def refuse(connection: ASGIConnection[Any, Any, Any, Any], handler: Any) -> None:
        raise PermissionDeniedException("no")

    routes = {"things": RouteOptions(path="items", guards=[refuse], operation_id="items")}
    with client(THINGS_RESOURCE, routes=routes) as http:
        assert http.get("/api/v1/items/facets/", params={"facet": "status"}).status_code == 403
        assert http.get("/api/v1/items/", params={"facet": "status"}).status_code == 403


def user_named(name: str) -> Mapping[str, Any] | None:
    """The user of an ``x-user`` header: a company's id; none without the header."""
    return {"company_id": int(name)} if name else None


def test_scopes_and_row_policies_narrow_every_count() -> None:
    scoped = replace(THINGS_RESOURCE, scopes=(tenant_scope("company_id"),))
    app = Litestar(
        plugins=[ListingPlugin([scoped], policies=[RowPolicy("User", tenant_scope("company_id"))])],
        middleware=[user_from_header(user_named)],
    )
    with TestClient(app) as http:
        response = http.get(URL, params={"facet": "status,owner__name"}, headers={"x-user": "1"})
        anonymous = http.get(URL, params={"facet": "status"})
    assert response.status_code == 200, response.text
    status, owners = response.json()["data"]
    assert {item["value"]: item["count"] for item in status["values"]} == statuses(1)
    # Company 1's things whose owner is in company 1; the others' owners are hidden: under null.
    owned = {user: name for user, _, name in _users()}
    expected: dict[str | None, int] = {}
    for row in THINGS:
        if row[13] == 1:
            name = owned.get(row[11]) if row[11] is not None else None
            expected[name] = expected.get(name, 0) + 1
    assert {item["value"]: item["count"] for item in owners["values"]} == expected
    assert anonymous.status_code == 401


def _users() -> list[tuple[int, int, str]]:
    """(id, company, name) of company 1's users."""
    return [(user[0], user[3], user[1]) for user in USERS if user[3] == 1]


class Records(logging.Handler):
    """The messages logged while it is attached."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_cost_headers_and_the_admission_log() -> None:
    priced = replace(THINGS_RESOURCE, cost_headers=True)
    logger = logging.getLogger("litestar_listing.admission")
    records, level = Records(), logger.level
    logger.addHandler(records)
    logger.setLevel(logging.DEBUG)
    try:
        with client(priced, max_concurrent_lists=2) as http:
            response = http.get(URL, params={"facet": "status,tags__name"})
    finally:
        logger.removeHandler(records)
        logger.setLevel(level)
    assert response.status_code == 200
    # base 1; status 8; tags__name 8 and its semi-join 6.
    assert response.headers["x-listing-cost"] == "23.0"
    assert response.headers["x-listing-lane"] == "expensive"
    assert any(message.startswith("counting facets of things for ") for message in records.messages)


def test_the_ceiling_names_the_facets() -> None:
    capped = replace(THINGS_RESOURCE, max_cost=15.0)  # status 1 + 8; company__name adds 8 and its join 3
    with client(capped) as http:
        fine = http.get(URL, params={"facet": "status"})
        refused = http.get(URL, params={"facet": "status,company__name"})
    assert fine.status_code == 200
    assert refused.status_code == 400
    assert [item["key"] for item in refused.json()["extra"]] == ["facet"]


def test_count_facets_answers_code_without_a_request() -> None:
    plain = replace(THINGS_RESOURCE, name="plain", facet_fields=())
    app = Litestar(plugins=[ListingPlugin([], unmounted=[THINGS_RESOURCE, plain])])
    result = asyncio.run(count_facets(THINGS_RESOURCE, None, [("facet", "status")], app=app))
    assert result.page.total == len(THINGS)
    assert {count.value: count.count for count in result.page.facets[0].values} == statuses()
    with pytest.raises(ConfigurationError, match="has no facet_fields"):
        asyncio.run(count_facets(plain, None, [("facet", "status")], app=app))


def test_the_operation_documents_the_facets() -> None:
    with client(THINGS_RESOURCE) as http:
        schema = http.get("/schema/openapi.json").json()
        body = http.get(URL, params={"facet": "status,active,owner__name", "facet_limit": "2"}).json()
    operation = schema["paths"]["/api/v1/things/facets"]["get"]
    answer = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert problems(schema, answer, body) == []
    assert problems(schema, answer, {**body, "data": [{**body["data"][0], "facet": "note"}]}) != []
    assert operation["operationId"] == "list_things_facets"
    parameters = {parameter["name"]: parameter for parameter in operation["parameters"]}
    assert list(parameters)[:4] == ["facet", "facet_limit", "facet_mode", "search"]
    assert parameters["facet"]["required"] is True
    assert parameters["facet"]["schema"]["items"]["enum"] == list(THINGS_RESOURCE.facet_fields)
    assert "filters" in parameters
    assert "page" not in parameters
    assert set(operation["responses"]) >= {"200", "400", "503"}
