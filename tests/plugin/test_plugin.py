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
from tests.apps import user_from_header
from tests.openapi_parameters import resolved, sent_parameters
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
    users: dict[str, object] = {
        "u1": User(1, company_id=1),
        "admin": User(9, company_id=0, is_platform_admin=True),
        "no-company": {"id": 7},
    }

    options: dict[str, Any] = {"search_fields": ("name",), "default_order": ("id",)}
    options.update(resource_options)
    things = Resource("things", MemoryBackend(GRAPH, ROWS), **options)
    return Litestar(plugins=[ListingPlugin([things])], middleware=[user_from_header(users)])


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
    app = make_app(scopes=(tenant_scope("owner_id"),))
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


def _openapi_parameters(client: TestClient[Litestar]) -> dict[str, dict[str, Any]]:
    """The list operation's parameters by the names a client sends, their schemas resolved."""
    document = client.get("/schema/openapi.json").json()
    return sent_parameters(document, document["paths"]["/api/v1/things"]["get"])


def test_openapi_documents_every_parameter(client: TestClient[Litestar]) -> None:
    schema = client.get("/schema/openapi.json").json()
    operation = schema["paths"]["/api/v1/things"]["get"]
    parameters = _openapi_parameters(client)
    assert parameters["count"]["schema"] == {"type": "integer", "default": 10, "maximum": 100, "minimum": 1}
    assert parameters["page"]["schema"]["minimum"] == 1
    assert parameters["search"]["schema"]["maxLength"] == 256
    # order_by: an array of terms, OpenAPI's default style (a repeated parameter), with enum member names.
    assert "explode" not in parameters["order_by"]
    terms = parameters["order_by"]["schema"]["items"]["enum"]
    assert {"small", "-small", "name", "-name"} <= set(terms)
    assert "nope" not in terms
    names = dict(zip(terms, parameters["order_by"]["schema"]["items"]["x-enum-varnames"], strict=True))
    assert (names["-small"], names["owner_id"]) == ("SMALL_DESC", "OWNER_ID")
    assert parameters["small__gte"]["schema"] == {
        "type": "integer",
        "maximum": 32767,
        "minimum": -32768,
        "description": "an integer from -32768 to 32767",
    }
    # The filters are the properties of one object per relation, each sent as a parameter of its own.
    objects = {parameter["name"]: parameter for parameter in operation["parameters"] if "style" in parameter}
    assert set(objects) == {"filters"}  # own fields only: no relation path is exposed
    assert (objects["filters"]["style"], objects["filters"]["explode"], objects["filters"]["example"]) == (
        "form",
        True,
        {},
    )
    assert objects["filters"]["schema"]["additionalProperties"] is False  # an unknown name is a 400
    assert parameters["small__gte"]["object"] == "filters"
    assert "__gte: greater than or equal to" in operation["description"]
    assert "__isnull: is NULL (true) or not (false)" in operation["description"]
    assert parameters["name__in"]["schema"]["type"] == "string"  # comma-separated
    assert parameters["color"]["schema"]["enum"] == ["red", "blue"]
    assert "owner__password_hash" not in parameters
    assert "active__gt" not in parameters
    assert {"200", "400"} <= set(operation["responses"])
    # Value schemas are shared components: every 16-bit integer parameter refers to one.
    assert parameters["small__gt"]["declared"] == {"$ref": "#/components/schemas/Int16"}
    item = schema["components"]["schemas"]["Thing"]  # the model's name, singular
    assert item["properties"]["label"] == {"type": "string"}  # declared through enrich_fields
    assert "password_hash" not in item["properties"]


def test_names_generators_keep_apart() -> None:
    # owner_id and owner__id are one identifier once runs of "_" are merged, as generators merge them:
    # the filters are in one object per relation, the order terms have enum member names of their own.
    resource_options = {"filter_fields": ("*", "owner__*"), "order_fields": ("*", "owner__id", "owner__name")}
    with TestClient(make_app(**resource_options)) as client:
        parameters = _openapi_parameters(client)
    assert (parameters["owner_id__gte"]["object"], parameters["owner__id__gte"]["object"]) == (
        "filters",
        "owner_filters",
    )
    assert "owner__password_hash" not in parameters
    items = parameters["order_by"]["schema"]["items"]
    names = dict(zip(items["enum"], items["x-enum-varnames"], strict=True))
    assert (names["owner_id"], names["owner__id"], names["-owner__name"]) == (
        "OWNER_ID",
        "ID_OF_OWNER",
        "NAME_OF_OWNER_DESC",
    )
    assert len(set(names.values())) == len(names)


@pytest.mark.parametrize(
    ("key", "value", "valid"),
    [
        ("at__gte", "2024-05-01", True),
        ("at__gte", "2024-05-01 12:30", True),
        ("at__gte", "2024-05-01T12:30:45.123456+0530", True),
        ("at__gte", "2024-05-01T12:30:45z", True),
        ("at__gte", "2024-13-01", False),
        ("at__gte", "2024-05-01T24:00", False),
        ("at__gte", "0000-01-01", False),
        ("at__gte", "2024-05-01t12:30Z", False),  # RFC 3339 allows a lowercase t; the engine does not
        ("at__gte", "2024-02-29", True),
        ("at__gte", "2000-02-29T00:00", True),
        ("at__gte", "2023-02-29", False),
        ("at__gte", "2100-02-29", False),
        ("at__gte", "2024-09-31", False),
        ("day", "2024-02-29", True),
        ("day", "2023-02-29", False),
        ("day", "0000-01-01", False),  # RFC 3339 has a year 0; Python does not
        ("naive_at__in", "2024-05-01T12:30", True),
        ("name", "", True),
        ("name", "nul\x00", False),
        ("name__ilike", "50%", True),
        ("name__like", "a\\%b_", True),
        ("name__like", "ends with \\", False),
        ("search", "nul\x00", False),
        ("price", "1.5e3", True),
        ("price", "1e99999", False),
        ("price", "\u0663", False),  # a Unicode digit: \d would admit it
        ("order_by", "-name,small", True),
        ("order_by", "nope", False),
    ],
)
def test_openapi_patterns_agree_with_the_engine(
    client: TestClient[Litestar], key: str, value: str, valid: bool
) -> None:
    # The schema calls a value valid exactly when the engine accepts it (a 200), so a client
    # generated from the OpenAPI, or a fuzzer, never meets a surprise 400 or a surprise 200.
    import re

    schema = _openapi_parameters(client)[key]["schema"]
    if key == "order_by":  # an array of terms, sent repeated or comma-separated
        assert all(term in schema["items"]["enum"] for term in value.split(",")) is valid
    else:
        assert (re.search(schema["pattern"], value) is not None) is valid
    assert client.get("/api/v1/things/", params={key: value}).status_code == (200 if valid else 400)


def test_every_example_of_the_document_is_a_value_the_engine_accepts(client: TestClient[Litestar]) -> None:
    # Value schemas with a pattern carry an example (Swagger UI would otherwise build a sample from each
    # pattern on every change of its page): each must be valid by its schema and answered with a 200.
    import re
    from urllib.parse import quote

    parameters = _openapi_parameters(client)
    examples = {
        name: item["schema"]["examples"][0] for name, item in parameters.items() if "examples" in item["schema"]
    }
    assert {"name", "name__in", "name__like", "at", "at__between", "day__in", "price", "color__in"} <= set(examples)
    for name, example in examples.items():
        assert re.search(parameters[name]["schema"]["pattern"], example), (name, example)
        response = client.get(f"/api/v1/things/?{name}={quote(example)}")
        assert response.status_code == 200, (name, example, response.text)


def test_openapi_empty_values_lists_and_bounds(client: TestClient[Litestar]) -> None:
    import re
    import sys

    parameters = _openapi_parameters(client)
    # An empty value: the default order, no search, an empty text; never a number.
    assert parameters["order_by"]["allowEmptyValue"] is True
    assert parameters["search"]["allowEmptyValue"] is True
    assert re.search(parameters["name"]["schema"]["pattern"], "")
    assert re.search(parameters["name__like"]["schema"]["pattern"], "")
    assert parameters["small"]["schema"]["type"] == "integer"
    # OpenAPI's default is false: the document leaves false defaults out.
    assert "allowEmptyValue" not in parameters["page"]
    for query in ("order_by=", "search=", "name=", "name__in="):
        assert client.get(f"/api/v1/things/?{query}").status_code == 200, query
    assert client.get("/api/v1/things/?small=").status_code == 400
    # Lists: comma-separated in one property (a client generator sends a property's array as JSON or
    # not at all); a repeated parameter is read as one list too. At most 500 values.
    small_in = parameters["small__in"]["schema"]
    assert small_in["type"] == "string"
    assert "at most 500" in small_in["description"]
    assert re.search(small_in["pattern"], "1,-2,+3")
    assert not re.search(small_in["pattern"], "")
    assert not re.search(small_in["pattern"], "1,,2")
    assert client.get("/api/v1/things/?small__in=1,-2,%2B3").status_code == 200
    assert client.get("/api/v1/things/?small__in=1&small__in=2").status_code == 200
    assert client.get("/api/v1/things/?small__in=").status_code == 400
    assert client.get("/api/v1/things/?small__in=" + ",".join(["1"] * 501)).status_code == 400
    assert client.get("/api/v1/things/?" + "&".join(["small__in=1"] * 501)).status_code == 400
    small_between = parameters["small__between"]["schema"]
    assert re.search(small_between["pattern"], "1,2")
    assert not re.search(small_between["pattern"], "1,2,3")
    assert not re.search(small_between["pattern"], "1")
    # page: a signed 64-bit integer, and (page - 1) x count a 64-bit offset.
    assert parameters["page"]["schema"]["maximum"] == 2**63 - 1
    assert client.get(f"/api/v1/things/?page={2**63 - 1}&count=1").status_code == 200
    assert client.get(f"/api/v1/things/?page={2**63}&count=1").status_code == 400
    weight = parameters["weight"]["schema"]
    assert weight["type"] == "number"
    assert weight["maximum"] == -weight["minimum"] == sys.float_info.max
    assert client.get("/api/v1/things/?weight=1e309").status_code == 400  # infinity
    assert parameters["small__isnull"]["schema"] == {"type": "boolean"}
    # Dates and datetimes carry their format, for client generators' date types.
    assert (parameters["day"]["schema"]["format"], parameters["at"]["schema"]["format"]) == ("date", "date-time")


def test_openapi_documents_every_error_response() -> None:
    scoped = make_app(scopes=(tenant_scope("owner_id"),))
    with TestClient(scoped) as client:
        document = client.get("/schema/openapi.json").json()
        operation = document["paths"]["/api/v1/things"]["get"]
        assert set(operation["responses"]) == {"200", "400", "401", "403", "503"}
        assert "At most 50 filter parameters" in operation["description"]
        parameters = _openapi_parameters(client)
        # Error bodies are shared components; the 503 declares its Retry-After header.
        names = (
            ("400", "ListingInvalidQuery"),
            ("401", "ListingAuthenticationRequired"),
            ("403", "ListingPermissionDenied"),
        )
        for status, name in names:
            body = operation["responses"][status]["content"]["application/json"]["schema"]
            assert body == {"$ref": f"#/components/schemas/{name}"}
        assert operation["responses"]["503"]["headers"]["Retry-After"]["schema"] == {"type": "integer", "minimum": 0}
        # The forced field's equality is dropped unread for a scoped user: any text may get a 200.
        assert parameters["owner_id"]["schema"]["type"] == "string"
        assert "pattern" not in parameters["owner_id"]["schema"]
        assert client.get("/api/v1/things/?owner_id=x", headers={"x-user": "u1"}).status_code == 200
        assert parameters["owner_id__ne"]["schema"]["type"] == "integer"  # still read, still checked

        bad = client.get("/api/v1/things/?small=x", headers={"x-user": "u1"})
        body_400 = resolved(document, operation["responses"]["400"]["content"]["application/json"]["schema"])
        assert body_400["required"] == ["status_code", "detail", "extra"]
        assert body_400["properties"]["status_code"]["const"] == 400
        entry = body_400["properties"]["extra"]["items"]
        assert entry["required"] == ["key", "message", "source"]
        assert entry["properties"]["source"]["const"] == "query"
        assert bad.status_code == 400
        assert set(bad.json()) == set(body_400["properties"])
        assert [set(item) for item in bad.json()["extra"]] == [set(entry["properties"])]

        denied = client.get("/api/v1/things/")
        body_401 = resolved(document, operation["responses"]["401"]["content"]["application/json"]["schema"])
        assert denied.status_code == 401
        assert body_401["properties"]["status_code"]["const"] == 401
        assert set(body_401["required"]) <= set(denied.json()) <= set(body_401["properties"])

        refused = client.get("/api/v1/things/", headers={"x-user": "no-company"})  # a user without company_id
        body_403 = resolved(document, operation["responses"]["403"]["content"]["application/json"]["schema"])
        assert refused.status_code == 403
        assert body_403["properties"]["status_code"]["const"] == 403
        assert set(body_403["required"]) <= set(refused.json()) <= set(body_403["properties"])
    with TestClient(make_app()) as client:
        operation = client.get("/schema/openapi.json").json()["paths"]["/api/v1/things"]["get"]
        assert set(operation["responses"]) == {"200", "400", "503"}  # no forced filter, no 401
