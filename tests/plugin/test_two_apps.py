"""Two applications in one process share resource objects; each answers with its own policies, routes and limits.

A ``Resource`` is a declaration: what an application derives from it (row policies, admission, the
OpenAPI operation) is that application's ``Binding`` (docs: design, "Binding"). The data set is the
conformance fixture on the memory backend: Acme (company 1) has 14 of the 31 things.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from litestar import Litestar, get
from litestar.di import NamedDependency
from litestar.testing import TestClient

from litestar_listing import (
    ListingPlugin,
    ListResult,
    MemoryBackend,
    Resource,
    RouteOptions,
    RowPolicy,
    provide_page,
    tenant_scope,
)
from litestar_listing.backends.sqlalchemy import model_graph
from litestar_listing.plugin.binding import binding_of
from tests.apps import user_from_header
from tests.conformance.fixture import memory_rows
from tests.conformance.models import Thing
from tests.plugin.test_policies import MEMBERS

THINGS = Resource("things", MemoryBackend(model_graph(Thing), memory_rows()), default_order=("id",))
ACME = {"x-user": "acme"}


@get("/reports/things", dependencies={"result": provide_page(THINGS)})
async def report(result: NamedDependency[ListResult]) -> dict[str, int]:
    """A module-level handler both applications register: each lists through its own binding."""
    return {"total": result.pagination.total}


def policed() -> Litestar:
    plugin = ListingPlugin(
        [THINGS],
        policies=[RowPolicy(Thing, tenant_scope("company_id"))],
        max_concurrent_lists=1,
        routes={"things": RouteOptions(path="items")},
    )
    return Litestar(route_handlers=[report], plugins=[plugin], middleware=[user_from_header(MEMBERS)])


def open_() -> Litestar:
    return Litestar(route_handlers=[report], plugins=[ListingPlugin([THINGS], path_prefix="/api/v2")])


@pytest.fixture(params=["policed first", "open first"])
def clients(request: pytest.FixtureRequest) -> Iterator[tuple[TestClient[Litestar], TestClient[Litestar]]]:
    apps = [policed(), open_()] if request.param == "policed first" else list(reversed([open_(), policed()]))
    with TestClient(apps[0]) as first, TestClient(apps[1]) as second:
        yield first, second


def total(client: TestClient[Litestar], url: str, **headers: str) -> Any:
    response = client.get(url, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()["pagination"]["total"]


def test_each_application_answers_with_its_own_policies_and_routes(
    clients: tuple[TestClient[Litestar], TestClient[Litestar]],
) -> None:
    policed_client, open_client = clients
    for _ in range(2):  # interleaved: neither application's answers depend on the other's requests
        assert total(policed_client, "/api/v1/items/", **ACME) == 14
        assert total(open_client, "/api/v2/things/", **ACME) == 31
        assert policed_client.get("/reports/things", headers=ACME).json() == {"total": 14}
        assert open_client.get("/reports/things", headers=ACME).json() == {"total": 31}
    assert policed_client.get("/api/v1/items/").status_code == 401  # its policy denies anonymous requests
    assert total(open_client, "/api/v2/things/") == 31
    assert policed_client.get("/api/v2/things/").status_code == 404
    assert open_client.get("/api/v1/items/").status_code == 404


def test_each_application_has_its_own_limits_and_documents_its_own_refusals(
    clients: tuple[TestClient[Litestar], TestClient[Litestar]],
) -> None:
    policed_client, open_client = clients
    policed_app, open_app = policed_client.app, open_client.app
    admission = binding_of(THINGS, None, policed_app, used_by="a test").admission
    assert admission is not None
    assert admission.limit == 1
    assert binding_of(THINGS, None, open_app, used_by="a test").admission is None
    policed_paths = policed_client.get("/schema/openapi.json").json()["paths"]
    open_paths = open_client.get("/schema/openapi.json").json()["paths"]
    assert "401" in policed_paths["/api/v1/items"]["get"]["responses"]
    assert "401" not in open_paths["/api/v2/things"]["get"]["responses"]
    assert "401" in policed_paths["/reports/things"]["get"]["responses"]
    assert "401" not in open_paths["/reports/things"]["get"]["responses"]
