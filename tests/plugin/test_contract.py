"""The backend contract is checked when the application starts; what slips through is a 400, not a 500."""

from __future__ import annotations

from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from litestar_listing import ListingPlugin, MemoryBackend, Resource, list_resource
from litestar_listing.backends.base import Capabilities
from litestar_listing.core.errors import ConfigurationError
from litestar_listing.core.operators import OPERATORS
from tests.openapi_parameters import sent_parameters
from tests.plugin.test_plugin import ROWS
from tests.unit.graph import GRAPH

WITHOUT_ILIKE = frozenset(OPERATORS) - {"ilike"}


class ClaimsIlike(MemoryBackend):
    """Declares every operator but cannot compile ``ilike``."""

    op_ilike = None  # type: ignore[assignment]


class OffersNoIlike(ClaimsIlike):
    """Leaves ``ilike`` out of what it declares."""

    capabilities = Capabilities(operators=WITHOUT_ILIKE, keyset=True)


def app(backend: Any, **options: Any) -> Litestar:
    return Litestar(plugins=[ListingPlugin([Resource("things", backend, **options)])])


def test_an_operator_declared_but_not_compiled_stops_the_app() -> None:
    with pytest.raises(ConfigurationError, match=r"ClaimsIlike declares operators it does not compile: ilike"):
        app(ClaimsIlike(GRAPH, ROWS))


@pytest.mark.parametrize(
    ("operators", "message"),
    [
        (frozenset({"eq", "in", "regex"}), r"NoSuchOperator declares operators the registry does not have: regex"),
        (frozenset({"in"}), r"NoSuchOperator does not declare the operator 'eq', which a filter name without"),
        (frozenset({"eq", "ne", "in"}), r"NoSuchOperator does not declare the operator 'nin', which a repeated 'ne'"),
    ],
)
def test_declared_operators_must_be_registered_and_closed_under_repetition(
    operators: frozenset[str], message: str
) -> None:
    backend_type = type("NoSuchOperator", (MemoryBackend,), {"capabilities": Capabilities(operators=operators)})
    with pytest.raises(ConfigurationError, match=message):
        app(backend_type(GRAPH, ROWS))


def test_declared_date_parts_must_be_registered() -> None:
    claims = Capabilities(parts=frozenset({"year", "era"}))
    backend_type = type("NoSuchPart", (MemoryBackend,), {"capabilities": claims})
    with pytest.raises(ConfigurationError, match=r"NoSuchPart declares date parts the registry does not have: era"):
        app(backend_type(GRAPH, ROWS))


def test_a_backend_without_date_parts_offers_none() -> None:
    backend_type = type("NoParts", (MemoryBackend,), {"capabilities": Capabilities(parts=frozenset())})
    with TestClient(app(backend_type(GRAPH, ROWS))) as client:
        answer = client.get("/api/v1/things", params={"at__year": "2024"})
        assert answer.status_code == 400
        assert answer.json()["extra"][0]["key"] == "at__year"
        properties = client.get("/schema/openapi.json").json()["paths"]["/api/v1/things"]["get"]["parameters"][-1]
        assert "at__year" not in properties["schema"]["properties"]
        assert "at__gte" in properties["schema"]["properties"]


def test_an_object_without_the_protocol_stops_the_app() -> None:
    class HalfBackend:
        capabilities = Capabilities()

        def model_graph(self) -> Any:
            return GRAPH

    lacks = (
        r"HalfBackend is not a ListingBackend: it lacks visitor, type_encoders, narrows_rows, computed_fields, "
        r"fetch, prepare"
    )
    with pytest.raises(ConfigurationError, match=lacks):
        app(HalfBackend())


def test_parser_and_openapi_offer_exactly_the_backends_operators() -> None:
    with TestClient(app(OffersNoIlike(GRAPH, ROWS), search_fields=("name",))) as client:
        document = client.get("/schema/openapi.json").json()
        names = set(sent_parameters(document, document["paths"]["/api/v1/things"]["get"]))
        assert "name__istartswith" in names
        assert "name__ilike" not in names
        response = client.get("/api/v1/things/", params={"name__ilike": "thing"})
        assert response.status_code == 400
        assert response.json()["extra"] == [
            {"key": "name__ilike", "message": "is not a filter of this resource.", "source": "query"}
        ]
        # Every other operator still answers, computed by hand over ROWS: names "thing 01".."thing 25".
        response = client.get("/api/v1/things/", params={"name__istartswith": "THING 2", "count": 100})
        assert response.status_code == 200
        assert [item["id"] for item in response.json()["data"]] == [20, 21, 22, 23, 24, 25]


def test_an_operator_the_store_cannot_compile_after_all_is_a_400_naming_the_parameter() -> None:
    backend = MemoryBackend(GRAPH, ROWS)
    with TestClient(app(backend)) as client:
        backend.op_ilike = None  # type: ignore[method-assign,assignment]  # lost after the start-up check
        response = client.get("/api/v1/things/", params={"name__ilike": "thing"})
    assert response.status_code == 400
    body = response.json()
    assert [entry["key"] for entry in body["extra"]] == ["name__ilike"]
    assert "cannot compile op 'ilike'" in body["extra"][0]["message"]


@pytest.mark.parametrize(
    ("load", "message"),
    [
        (("ownr",), r"things.*load 'ownr': Thing has no relation 'ownr'; did you mean 'owner'\?"),
        (("owner__nope",), r"load 'owner__nope': User has no relation 'nope'; it has \['boss', 'things'\]"),
    ],
)
def test_load_names_are_checked_at_start(load: tuple[str, ...], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        app(MemoryBackend(GRAPH, ROWS), load=load)


async def test_a_load_given_per_call_is_checked_too() -> None:
    resource = Resource("things", MemoryBackend(GRAPH, ROWS))
    served = Litestar(plugins=[ListingPlugin([resource])])
    with pytest.raises(ConfigurationError, match=r"load 'tgas': Thing has no relation 'tgas'; did you mean 'tags'\?"):
        await list_resource(resource, None, [], app=served, load=("tgas",))
    envelope: Any = (await list_resource(resource, None, [("id", "3")], app=served, load=("owner",))).envelope
    assert [(item["id"], item["owner"]["id"]) for item in envelope.data] == [(3, 2)]
