"""Route options, several plugins in one app, and the documented error shapes, on the memory backend."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import pytest
from litestar import Litestar
from litestar.connection import ASGIConnection
from litestar.exceptions import HTTPException, ValidationException
from litestar.plugins.problem_details import ProblemDetailsConfig, ProblemDetailsException, ProblemDetailsPlugin
from litestar.testing import TestClient

from litestar_listing import ListingPlugin, MemoryBackend, Resource, RouteOptions, RowPolicy, ScopeRule, tenant_scope
from litestar_listing.core.errors import ConfigurationError
from litestar_listing.plugin.problems import ErrorShapes
from tests.schema_check import problems
from tests.unit.graph import GRAPH

ROWS = [{"id": i, "name": f"thing {i}", "small": i % 3, "owner_id": 1, "owner": {"id": 1, "name": "o"}} for i in (1, 2)]


def things(name: str = "things", **options: Any) -> Resource:
    return Resource(name, MemoryBackend(GRAPH, ROWS), default_order=("id",), **options)


def document(app: Litestar) -> dict[str, Any]:
    with TestClient(app) as client:
        response = client.get("/schema/openapi.json")
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result


def refs(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        if "$ref" in value:
            yield value["$ref"]
        for child in value.values():
            yield from refs(child)
    elif isinstance(value, list):
        for child in value:
            yield from refs(child)


def operation_ids(schema: dict[str, Any]) -> dict[str, str]:
    return {path: item["get"]["operationId"] for path, item in schema["paths"].items()}


# ---------------------------------------------------------------- several plugins
def test_two_plugins_keep_both_components_and_get_distinct_ids() -> None:
    # v2 exposes a text filter only it has, so it names a shared schema v1 does not.
    v1 = ListingPlugin([things(filter_fields=("id",))])
    v2 = ListingPlugin([things(filter_fields=("id", "name"), keyset=True)], path_prefix="/api/v2")
    schema = document(Litestar(plugins=[v1, v2]))
    assert operation_ids(schema) == {"/api/v1/things": "list_things", "/api/v2/things": "list_things_api_v2"}
    names = set(schema["components"]["schemas"])
    assert {"Int64", "Text", "LikePattern"} <= names
    for ref in refs(schema["paths"]):  # nothing the first plugin named was dropped by the second
        assert ref.removeprefix("#/components/schemas/") in names, ref


def test_the_first_plugin_keeps_its_ids_and_later_ones_are_numbered() -> None:
    plugins = [ListingPlugin([things()], path_prefix=prefix) for prefix in ("/api", "/", "/v-2", "/v_2")]
    assert operation_ids(document(Litestar(plugins=plugins))) == {
        "/api/things": "list_things",
        "/things": "list_things_2",  # no slug in "/"
        "/v-2/things": "list_things_v_2",
        "/v_2/things": "list_things_v_2_2",  # the same slug as the one before
    }


def test_explicit_operation_ids_are_reserved_first() -> None:
    v1 = ListingPlugin([things()])
    v2 = ListingPlugin([things()], path_prefix="/api/v2", routes={"things": RouteOptions(operation_id="list_things")})
    assert operation_ids(document(Litestar(plugins=[v1, v2]))) == {
        "/api/v1/things": "list_things_api_v1",
        "/api/v2/things": "list_things",
    }
    clash = ListingPlugin(
        [things()], path_prefix="/api/v3", routes={"things": RouteOptions(operation_id="list_things")}
    )
    with pytest.raises(ConfigurationError, match="operation_id 'list_things' is declared for both"):
        Litestar(plugins=[v1, v2, clash])


def test_route_options_on_one_plugin() -> None:
    def refuse(connection: ASGIConnection[Any, Any, Any, Any], handler: Any) -> None:
        if handler.opt.get("closed"):
            raise HTTPException(status_code=403, detail="closed")

    plugin = ListingPlugin(
        [things(), things("others")],
        routes={
            "things": RouteOptions(path="/reports/things/", operation_id="getThings", tags=("reports",)),
            "others": RouteOptions(guards=[refuse], opt={"closed": True}),
        },
    )
    app = Litestar(plugins=[plugin])
    schema = document(app)
    assert operation_ids(schema) == {"/api/v1/reports/things": "getThings", "/api/v1/others": "list_others"}
    assert schema["paths"]["/api/v1/reports/things"]["get"]["tags"] == ["reports"]
    assert "403" in schema["paths"]["/api/v1/others"]["get"]["responses"]  # guards may refuse
    assert "403" not in schema["paths"]["/api/v1/reports/things"]["get"]["responses"]
    with TestClient(app) as client:
        assert client.get("/api/v1/reports/things/").status_code == 200
        assert client.head("/api/v1/reports/things/").status_code == 200
        assert client.get("/api/v1/things/").status_code == 404
        assert client.get("/api/v1/others/").status_code == 403
        assert app.route_reverse("listing:getThings") == "/api/v1/reports/things"
        assert app.route_reverse("listing:getThings:head") == "/api/v1/reports/things"


def test_route_declarations_are_checked_when_the_plugin_is_made() -> None:
    with pytest.raises(ConfigurationError, match=r"routes names 'thing', .* \(did you mean things\?\)"):
        ListingPlugin([things()], routes={"thing": RouteOptions()})
    with pytest.raises(ConfigurationError, match="must be a RouteOptions"):
        ListingPlugin([things()], routes={"things": {"path": "x"}})  # type: ignore[dict-item]
    with pytest.raises(ConfigurationError, match="has a path parameter"):
        ListingPlugin([things()], routes={"things": RouteOptions(path="things/{id:int}")})
    with pytest.raises(ConfigurationError, match="'things' and 'others' are both routed at /api/v1/things/"):
        ListingPlugin([things(), things("others")], routes={"others": RouteOptions(path="things")})


def test_a_resource_shared_by_plugins_with_policies_or_admission_is_refused() -> None:
    shared = things()
    Litestar(plugins=[ListingPlugin([shared]), ListingPlugin([shared], path_prefix="/api/v2")])  # fine
    limited = ListingPlugin([shared], path_prefix="/api/v2", max_concurrent_lists=2)
    with pytest.raises(ConfigurationError, match=r"resource 'things' is served by two ListingPlugins.*replace"):
        Litestar(plugins=[ListingPlugin([shared]), limited])
    Litestar(
        plugins=[ListingPlugin([shared]), ListingPlugin([replace(shared)], path_prefix="/v2", max_concurrent_lists=2)]
    )


# ---------------------------------------------------------------- error shapes
def _as_problem(error: ValidationException) -> ProblemDetailsException:
    return ProblemDetailsException(status_code=error.status_code, detail=error.detail, type_="urn:bad-query")


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (None, {}),
        (ProblemDetailsConfig(), {}),  # converts its own exception only
        (
            ProblemDetailsConfig(enable_for_all_http_exceptions=True),
            dict.fromkeys((400, 401, 403, 429, 503), "problem"),
        ),
        (ProblemDetailsConfig(exception_to_problem_detail_map={ValidationException: _as_problem}), {400: "mapped"}),
        (
            ProblemDetailsConfig(
                enable_for_all_http_exceptions=True, exception_to_problem_detail_map={HTTPException: _as_problem}
            ),
            dict.fromkeys((400, 401, 403, 429, 503), "mapped"),
        ),
    ],
    ids=["none", "default", "all", "mapped-400", "mapped-all"],
)
def test_error_shapes_follow_the_problem_details_plugin(
    config: ProblemDetailsConfig | None, expected: Mapping[int, str]
) -> None:
    plugins: list[object] = [object()] if config is None else [object(), ProblemDetailsPlugin(config)]
    assert dict(ErrorShapes.detect(plugins).formats) == expected


def test_mapped_problem_details_are_documented_loosely_and_match() -> None:
    mapped = ProblemDetailsConfig(exception_to_problem_detail_map={ValidationException: _as_problem})
    app = Litestar(plugins=[ProblemDetailsPlugin(mapped), ListingPlugin([things()])])  # either order
    schema = document(app)
    responses = schema["paths"]["/api/v1/things"]["get"]["responses"]
    assert set(responses["400"]["content"]) == {"application/problem+json"}
    assert set(responses["503"]["content"]) == {"application/json"}  # not converted
    body_schema = responses["400"]["content"]["application/problem+json"]["schema"]
    assert body_schema == {"$ref": "#/components/schemas/ListingProblemDetails"}
    with TestClient(app) as client:
        response = client.get("/api/v1/things/?small=x")
        assert response.status_code == 400
        assert response.headers["content-type"] == "application/problem+json"
        assert response.json()["type"] == "urn:bad-query"
        assert problems(schema, body_schema, response.json()) == []


def _user_header(connection: ASGIConnection[Any, Any, Any, Any]) -> object:
    name = connection.headers.get("x-user")
    return None if name is None else {"company_id": 1} if name == "acme" else {}


@pytest.mark.parametrize(
    ("policies", "expected"),
    [
        ([], {"200", "400", "503"}),
        ([RowPolicy("Thing", tenant_scope("owner_id", company_attribute="company_id", user=_user_header))], None),
        ([RowPolicy("User", tenant_scope("id", user=_user_header))], {"200", "400", "403", "503"}),
        ([RowPolicy("Thing", None, null=("name",))], {"200", "400", "503"}),  # no rule: no refusal
    ],
    ids=["none", "listed-model", "reached-model", "no-rule"],
)
def test_row_policies_document_the_refusals_they_can_answer(
    policies: list[RowPolicy], expected: set[str] | None
) -> None:
    schema = document(Litestar(plugins=[ListingPlugin([things()], policies=policies)]))
    responses = set(schema["paths"]["/api/v1/things"]["get"]["responses"])
    assert responses == (expected or {"200", "400", "401", "403", "503"})


def test_a_custom_scope_rule_documents_401_and_403() -> None:
    rule = ScopeRule(("owner_id",), lambda connection: {"owner_id": 1})
    schema = document(Litestar(plugins=[ListingPlugin([things(scopes=(rule,))])]))
    assert {"401", "403"} <= set(schema["paths"]["/api/v1/things"]["get"]["responses"])
