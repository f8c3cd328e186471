"""Row policies on the plugin: the start-up check, the explicit opt-out, and the requests that leaked without them.

The leaks: another tenant's rows read from the side through a relation path in a filter, the search
or the order (docs: scoping, "Row policies").

The data set is the conformance fixture (``tests/conformance/fixture.py``) on the memory backend; the
compilers' share of the rules is in the conformance table (``policy:*`` cases, every backend).
Hand counts: Frank (user 6, no company) owns things 9, 25 (Acme) and 10 (Globex); Acme's users are
1, 2, 3, 8.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest
from litestar import Litestar
from litestar.testing import TestClient
from sqlalchemy import func, select

from litestar_listing import (
    Computed,
    EnrichContext,
    ListingPlugin,
    MemoryBackend,
    Resource,
    RowPolicy,
    list_resource,
    request_policies,
    tenant_scope,
)
from litestar_listing.backends.base import Capabilities
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend, model_graph
from litestar_listing.core.errors import ConfigurationError
from tests.apps import user_from_header
from tests.conformance.fixture import memory_rows
from tests.conformance.models import Company, Part, Thing, User


@dataclass
class Member:
    id: int
    company_id: int | None
    is_platform_admin: bool = False


MEMBERS = {"acme": Member(1, 1), "globex": Member(4, 2), "admin": Member(9, None, is_platform_admin=True)}


def things(**options: Any) -> Resource:
    return Resource("things", MemoryBackend(model_graph(Thing), memory_rows()), default_order=("id",), **options)


def users(backend: Any = None) -> Resource:
    backend = backend or MemoryBackend(model_graph(User), [])
    return Resource("users", backend, scopes=(tenant_scope("company_id"),))


def app(resources: list[Resource], policies: list[RowPolicy] | None = None) -> Litestar:
    return Litestar(plugins=[ListingPlugin(resources, policies=policies or [])], middleware=[user_from_header(MEMBERS)])


UNSAFE: dict[str, dict[str, Any]] = {
    "filter": {"filter_fields": ("*", "owner__name")},
    "search": {"search_fields": ("name", "owner__name")},
    "order": {"order_fields": ("*", "owner__name")},
    "load": {"load": ("owner",)},
}


@pytest.mark.parametrize("kind", UNSAFE)
def test_a_path_to_a_scoped_model_without_a_policy_stops_the_app(kind: str) -> None:
    path = "owner" if kind == "load" else "owner__name"
    expected = rf"resource 'things': the {kind} path '{path}' reaches User, whose rows resource 'users' scopes"
    with pytest.raises(ConfigurationError, match=expected):
        app([things(**UNSAFE[kind]), users()])


@pytest.mark.parametrize("kind", UNSAFE)
def test_a_path_declared_public_is_accepted(kind: str) -> None:
    public = ("owner",) if kind == "load" else ("owner__name",)
    with TestClient(app([things(**UNSAFE[kind], public_paths=public), users()])) as client:
        assert client.get("/api/v1/things/", headers={"x-user": "acme"}).status_code == 200


def counted_things(**options: Any) -> Resource:
    """``things`` on SQLAlchemy with ``part_count``, a ``Computed`` value reading Part."""
    part_count = Computed(
        lambda allowed: select(func.count(Part.id)).where(Part.thing_id == Thing.id, allowed(Part)).scalar_subquery(),
        reads=(Part,),
    )
    return Resource("things", SQLAlchemyBackend(Thing, computed={"part_count": part_count}), **options)


def parts() -> Resource:
    return Resource("parts", MemoryBackend(model_graph(Part), []), scopes=(tenant_scope("supplier_id"),))


def test_a_computed_value_reading_a_scoped_model_without_a_policy_stops_the_app() -> None:
    expected = r"resource 'things': the computed value 'part_count' reaches Part, whose rows resource 'parts' scopes"
    with pytest.raises(ConfigurationError, match=expected):
        app([counted_things(), parts()])


def test_a_computed_value_declared_public_or_under_a_policy_is_accepted() -> None:
    app([counted_things(public_paths=("part_count",)), parts()])
    app([counted_things(), parts()], [RowPolicy(Part, tenant_scope("supplier_id"))])


def test_a_computed_value_may_only_read_the_models_it_names() -> None:
    sneaky = Computed(
        lambda allowed: select(func.count(User.id)).where(User.id == Thing.owner_id, allowed(User)).scalar_subquery(),
        reads=(Part,),
    )
    with pytest.raises(ConfigurationError, match=r"the computed value 'owners' reads User: name it in Computed"):
        SQLAlchemyBackend(Thing, computed={"owners": sneaky})


def test_a_relation_prefix_declares_every_path_through_it_public() -> None:
    options = {"filter_fields": ("*", "owner__name", "owner__manager__name"), "public_paths": ("owner",)}
    app([things(**options), users()])


def test_a_soft_deleting_base_statement_scopes_its_model() -> None:
    live = SQLAlchemyBackend(User, statement=lambda statement: statement.where(User.email.is_not(None)))
    with pytest.raises(ConfigurationError, match=r"the filter path 'owner__name' reaches User.*resource 'people'"):
        app([things(filter_fields=("*", "owner__name")), Resource("people", live)])


def test_a_policy_answers_for_every_path() -> None:
    options: dict[str, Any] = {**UNSAFE["filter"], **UNSAFE["search"], **UNSAFE["order"]}
    policies = [RowPolicy(User, tenant_scope("company_id")), RowPolicy("Thing", tenant_scope("company_id"))]
    with TestClient(app([things(**options), users()], policies)) as client:

        def total(query: str, user: str) -> int:
            response = client.get(f"/api/v1/things/?{query}", headers={"x-user": user})
            assert response.status_code == 200, response.text
            return int(response.json()["pagination"]["total"])

        # The leak requests: another tenant's (or nobody's) user cannot be found through a path.
        assert total("owner__name=Frank", "acme") == 0
        assert total("search=frank", "acme") == 0
        assert total("owner__name=Frank", "globex") == 0
        assert total("owner__name=Frank", "admin") == 3
        assert total("search=frank", "admin") == 3
        ordered = client.get("/api/v1/things/?order_by=-owner__name&count=3", headers={"x-user": "acme"}).json()
        assert [item["id"] for item in ordered["data"]] == [21, 3, 18]  # alice, Carol, Carol
        # The listed model's policy refuses an anonymous request, as a resource's scopes do.
        assert client.get("/api/v1/things/").status_code == 401


def test_an_anonymous_request_reaches_no_row_of_a_denying_policy() -> None:
    policies = [RowPolicy(User, tenant_scope("company_id"))]
    with TestClient(app([things(**UNSAFE["filter"]), users()], policies)) as client:
        anonymous = client.get("/api/v1/things/?owner__name__isnull=false").json()
        assert anonymous["pagination"]["total"] == 0
        everyone = client.get("/api/v1/things/?owner__name__isnull=false", headers={"x-user": "admin"}).json()
        assert everyone["pagination"]["total"] == 26  # 31 things, 5 without an owner (13, 14, 17, 19, 30)
        # Every owner reads as a missing one: isnull=true, ne and nin (which match NULL) match every thing.
        for query in ("owner__name__isnull=true", "owner__name__ne=Frank", "owner__name__nin=Alice,Frank"):
            assert client.get(f"/api/v1/things/?{query}").json()["pagination"]["total"] == 31, query


def test_ne_and_nin_match_a_thing_whose_owner_is_hidden() -> None:
    # Frank (no company) owns 9 and 25 among Acme's 14 things: hidden from Acme, they read as ownerless.
    policies = [RowPolicy(User, tenant_scope("company_id")), RowPolicy("Thing", tenant_scope("company_id"))]
    with TestClient(app([things(**UNSAFE["filter"]), users()], policies)) as client:

        def ids(query: str) -> list[int]:
            response = client.get(f"/api/v1/things/?{query}&count=50", headers={"x-user": "acme"})
            return [item["id"] for item in response.json()["data"]]

        assert ids("owner__name__ne=Frank") == [1, 2, 3, 7, 8, 9, 13, 14, 17, 18, 21, 25, 28, 29]
        assert ids("owner__name__nin=Alice,Bob") == [3, 9, 13, 14, 17, 18, 21, 25]
        assert ids("owner__name=Frank") == []
        assert ids("owner__name__isnull=true") == [9, 13, 14, 17, 25]


def test_a_policy_needs_a_backend_that_applies_it() -> None:
    blind = type("Blind", (MemoryBackend,), {"capabilities": Capabilities(keyset=True)})
    resource = Resource("things", blind(model_graph(Thing), memory_rows()))
    with pytest.raises(ConfigurationError, match=r"resource 'things': Blind does not apply row policies.*User"):
        app([resource], [RowPolicy(User, tenant_scope("company_id"))])


def test_a_policy_must_name_a_reached_model_and_its_own_fields() -> None:
    with pytest.raises(ConfigurationError, match=r"no resource reaches a model named 'Usr'.*User"):
        app([things()], [RowPolicy("Usr", tenant_scope("company_id"))])
    with pytest.raises(ConfigurationError, match=r"User has no field 'company'.*company_id"):
        app([things()], [RowPolicy(User, tenant_scope("company"))])


def test_two_policies_for_one_model_are_refused() -> None:
    with pytest.raises(ConfigurationError, match="two row policies for the model User"):
        ListingPlugin([things()], policies=[RowPolicy(User, tenant_scope("company_id"))] * 2)


def test_a_null_policy_hides_soft_deleted_rows_for_everybody() -> None:
    # Things 29, 30, 31 are soft-deleted; Thing's policy has no rule, only null=("deleted_at",).
    live = [RowPolicy("Thing", null=("deleted_at",))]
    with TestClient(app([things(filter_fields=("*",))], live)) as client:
        for user in ("admin", "acme"):
            body = client.get("/api/v1/things/?count=50", headers={"x-user": user}).json()
            assert body["pagination"]["total"] == 28
            assert {29, 30, 31}.isdisjoint(item["id"] for item in body["data"])
            found = client.get("/api/v1/things/?deleted_at__isnull=false", headers={"x-user": user}).json()
            assert found["pagination"]["total"] == 0


def test_an_enrichment_reads_every_policy_of_the_request() -> None:
    seen: dict[str, Any] = {}

    def remember(items: list[dict[str, Any]], context: EnrichContext) -> None:
        seen.update(request_policies(context))

    policies = [RowPolicy(User, tenant_scope("company_id")), RowPolicy(Company, tenant_scope("id"))]
    resource = Resource("users", MemoryBackend(model_graph(User), [{"id": 4, "company_id": 2}]), enrich=remember)
    with TestClient(app([resource, things()], policies)) as client:
        client.get("/api/v1/users/", headers={"x-user": "globex"})
        assert {name: [(item.path.name, item.value) for item in policy.filters] for name, policy in seen.items()} == {
            "User": [("company_id", 2)],
            "Company": [("id", 2)],
        }
        seen.clear()
        client.get("/api/v1/users/", headers={"x-user": "admin"})
        assert seen == {}


def test_a_load_given_per_call_is_checked_like_the_declared_ones() -> None:
    resource = things()
    served = app([resource, users()])
    with pytest.raises(ConfigurationError, match=r"the load path 'owner' reaches User, whose rows resource 'users'"):
        asyncio.run(list_resource(resource, None, [], app=served, load=("owner",)))
    public = things(public_paths=("owner",))
    served = app([public, users()])
    envelope = asyncio.run(list_resource(public, None, [("id", "9")], app=served, load=("owner",))).envelope
    assert [item["owner"]["name"] for item in envelope.data] == ["Frank"]  # type: ignore[attr-defined]


def test_keyset_pages_under_policies_walk_the_hand_counted_order() -> None:
    policies = [RowPolicy(User, tenant_scope("company_id")), RowPolicy(Thing, tenant_scope("company_id"))]
    resource = things(order_fields=("*", "owner__name"), keyset=True)
    with TestClient(app([resource, users()], policies)) as client:
        seen: list[int] = []
        url = "/api/v1/things/?order_by=owner__name&count=3"
        while True:
            response = client.get(url, headers={"x-user": "acme"})
            assert response.status_code == 200, response.text
            seen += [item["id"] for item in response.json()["data"]]
            cursor = response.headers.get("x-next-cursor")
            if cursor is None:
                break
            url = f"/api/v1/things/?order_by=owner__name&count=3&cursor={cursor}"
        # Acme's things by owner name (Alice, Bob, Carol, alice), then those whose owner is hidden or missing.
        assert seen == [1, 7, 28, 2, 8, 29, 3, 18, 21, 9, 13, 14, 17, 25]


# ---------------------------------------------------------------- policies that follow relations
def _by_company(**options: Any) -> list[RowPolicy]:
    return [RowPolicy(Company, tenant_scope("id")), RowPolicy(User, through="company", **options)]


def test_a_policy_may_follow_relations_in_a_chain() -> None:
    policies = [*_by_company(), RowPolicy(Thing, through=("owner",))]
    with TestClient(app([things(filter_fields=("*", "owner__name")), users()], policies)) as client:
        listed = client.get("/api/v1/things/?order_by=id&count=50", headers={"x-user": "acme"}).json()
        # Things whose owner is one of Acme's users (1, 2, 3, 8), whatever company the thing is in.
        assert [item["id"] for item in listed["data"]] == [1, 2, 3, 7, 8, 11, 16, 18, 21, 22, 23, 27, 28, 29]
        everything = client.get("/api/v1/things/?count=1", headers={"x-user": "admin"}).json()
        assert everything["pagination"]["total"] == 31  # nothing to inherit: the orphans stay


@pytest.mark.parametrize(
    ("policies", "message"),
    [
        ([RowPolicy(User, through="compnay")], r"through='compnay' is no to-one relation of User \(did you mean"),
        ([RowPolicy(Thing, through="tags")], r"through='tags' is no to-one relation of Thing"),
        ([RowPolicy(User, through="company")], r"through='company' reaches Company, which has no RowPolicy"),
        (
            [RowPolicy(User, through="manager")],
            r"row policies follow each other in a circle: User -> User",
        ),
    ],
)
def test_a_policy_following_nothing_it_can_inherit_stops_the_app(policies: list[RowPolicy], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        app([things(filter_fields=("*", "owner__name")), users()], policies)


class _NoInheritance(MemoryBackend):
    capabilities = Capabilities(row_policies=True)


def test_a_backend_that_cannot_follow_relations_is_refused_at_start() -> None:
    resource = Resource("things", _NoInheritance(model_graph(Thing), memory_rows()), filter_fields=("*", "owner__name"))
    with pytest.raises(ConfigurationError, match=r"does not apply row policies that follow a relation.*User has one"):
        app([resource, users()], _by_company())


def test_the_condition_of_a_followed_policy_needs_the_others() -> None:
    from litestar_listing.backends.sqlalchemy import policy_condition
    from litestar_listing.core.query import Policy

    followed = Policy("User", through=("company",))
    with pytest.raises(ConfigurationError, match=r"User follows company: pass policies=request_policies"):
        policy_condition(User, followed, "sqlite")
    company = Policy("Company", visible=False)
    assert policy_condition(User, followed, "sqlite", policies={"Company": company}) is not None
