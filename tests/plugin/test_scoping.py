"""The scoping presets read the user however Litestar gives it: objects, mappings, getters.

The presets: (docs: scoping, "The presets").

On the memory backend: ``ROWS`` of ``tests/plugin/test_plugin.py`` has owner 1 on the 12 even ids
of 1..25 and owner 2 on the 13 odd ones; ``owner_id`` stands for the tenant and for the owner.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from litestar import Litestar, get
from litestar.exceptions import NotAuthorizedException
from litestar.testing import TestClient

from litestar_listing import (
    ListingPlugin,
    MemoryBackend,
    Resource,
    ScopeRule,
    bearer_challenge,
    owner_scope,
    tenant_scope,
)
from litestar_listing.core.errors import ConfigurationError
from tests.apps import user_from_header
from tests.plugin.test_plugin import ROWS
from tests.unit.graph import GRAPH

EVEN = [i for i in range(1, 26) if i % 2 == 0]  # owner 1
ODD = [i for i in range(1, 26) if i % 2 == 1]  # owner 2


@dataclass
class Member:
    id: int
    company_id: int


@dataclass
class Guest:
    """An authenticated user object without a company or an admin flag."""

    name: str


USERS: dict[str, object] = {
    "object": Member(id=2, company_id=1),
    "mapping": {"id": 1, "company_id": 2},
    "admin": {"id": 7, "company_id": 1, "is_platform_admin": True},
    "not-admin": {"id": 1, "company_id": 1, "is_platform_admin": False},
    "no-company": {"id": 1},
    "guest": Guest("g"),
}


def client_for(*scopes: ScopeRule) -> TestClient[Litestar]:
    """An app whose middleware sets ``scope["user"]`` from ``x-user`` and ``scope["auth"]`` from ``x-tenant``."""

    def auth_from_header(app: Any) -> Any:
        async def wrapped(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                tenant = dict(scope["headers"]).get(b"x-tenant")
                scope["auth"] = None if tenant is None else {"tenant": int(tenant)}
            await app(scope, receive, send)

        return wrapped

    things = Resource("things", MemoryBackend(GRAPH, ROWS), default_order=("id",), scopes=scopes)
    middleware = [user_from_header(USERS), auth_from_header]
    return TestClient(Litestar(plugins=[ListingPlugin([things])], middleware=middleware))


def listed(client: TestClient[Litestar], status: int = 200, **headers: str) -> Any:
    sent = {name.replace("_", "-"): value for name, value in headers.items()}
    response = client.get("/api/v1/things/?count=100", headers=sent)
    assert response.status_code == status, response.text
    body = response.json()
    return [item["id"] for item in body["data"]] if status == 200 else body


@pytest.mark.parametrize(("user", "expected"), [("object", EVEN), ("mapping", ODD), ("not-admin", EVEN)])
def test_tenant_scope_reads_attributes_and_keys(user: str, expected: list[int]) -> None:
    with client_for(tenant_scope("owner_id")) as client:
        assert listed(client, x_user=user) == expected


def test_admin_bypass_on_both_presets() -> None:
    for rule in (tenant_scope("owner_id"), owner_scope("owner_id")):
        with client_for(rule) as client:
            assert listed(client, x_user="admin") == list(range(1, 26))
    with client_for(owner_scope("owner_id", admin_attribute=None)) as client:
        assert listed(client, x_user="admin") == []  # id 7 owns nothing: no bypass


@pytest.mark.parametrize(("user", "expected"), [("object", ODD), ("mapping", EVEN), ("no-company", EVEN)])
def test_owner_scope_reads_attributes_and_keys(user: str, expected: list[int]) -> None:
    with client_for(owner_scope("owner_id")) as client:
        assert listed(client, x_user=user) == expected


def test_user_from_auth_or_a_getter() -> None:
    with client_for(tenant_scope("owner_id", user="auth", company_attribute="tenant")) as client:
        assert listed(client, x_tenant="2") == ODD
        assert listed(client, 401)["status_code"] == 401  # no auth: anonymous

    def claims(connection: Any) -> object:
        return connection.scope.get("auth")

    getter: Callable[[Any], object] = claims
    with client_for(owner_scope("owner_id", user=getter, user_attribute="tenant")) as client:
        assert listed(client, x_tenant="1") == EVEN
        assert listed(client, 401)["status_code"] == 401


@pytest.mark.parametrize(
    ("rule", "user", "name"),
    [
        (tenant_scope("owner_id"), "no-company", "company_id"),  # a mapping without the key
        (tenant_scope("owner_id"), "guest", "company_id"),  # an object without the attribute
        (owner_scope("owner_id"), "guest", "id"),
        (tenant_scope("owner_id", company_attribute="tenant"), "mapping", "tenant"),
    ],
)
def test_a_missing_attribute_or_key_is_a_403(rule: ScopeRule, user: str, name: str) -> None:
    with client_for(rule) as client:
        body = listed(client, 403, x_user=user)
        assert body == {"status_code": 403, "detail": f"the authenticated user has no {name!r} to scope this list by"}


def test_anonymous_requests() -> None:
    with client_for(tenant_scope("owner_id")) as client:
        assert listed(client, 401)["detail"] == "authentication is required to list this resource"
    with client_for(owner_scope("owner_id")) as client:
        assert listed(client, 401)["status_code"] == 401
    with client_for(tenant_scope("owner_id", anonymous="unscoped")) as client:
        assert listed(client) == list(range(1, 26))


def test_an_empty_membership_matches_nothing_and_an_empty_mapping_restricts_nothing() -> None:
    # A user of no companies sees no row; the administrator bypass (an empty mapping) sees every row.
    def companies(connection: Any) -> dict[str, object]:
        user = connection.scope.get("user")
        return {} if user == USERS["admin"] else {"owner_id": []}

    with client_for(ScopeRule(("owner_id",), companies)) as client:
        assert listed(client, x_user="mapping") == []
        assert listed(client, x_user="admin") == list(range(1, 26))


def test_bad_declarations_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match="field must be"):
        tenant_scope("")
    with pytest.raises(ConfigurationError, match="company_attribute must be"):
        tenant_scope("owner_id", company_attribute="")
    with pytest.raises(ConfigurationError, match="admin_attribute must be"):
        owner_scope("owner_id", admin_attribute="")
    with pytest.raises(ConfigurationError, match="user= must be"):
        owner_scope("owner_id", user="session")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="anonymous must be"):
        tenant_scope("owner_id", anonymous="maybe")  # type: ignore[arg-type]


@pytest.mark.parametrize("realm", ["", 'say "hi"', "back\\slash", "new\nline"])
def test_a_challenge_realm_that_cannot_be_a_quoted_string_is_refused(realm: str) -> None:
    with pytest.raises(ConfigurationError, match="bearer_challenge needs a realm"):
        bearer_challenge(realm)


def test_a_challenge_keeps_the_exceptions_own_headers() -> None:
    def refuse() -> None:
        raise NotAuthorizedException("no", headers={"WWW-Authenticate": 'Basic realm="x"', "X-Why": "test"})

    app = Litestar(
        route_handlers=[get("/refused", sync_to_thread=False)(refuse)],
        exception_handlers={NotAuthorizedException: bearer_challenge("api")},
    )
    with TestClient(app) as client:
        answer = client.get("/refused")
    assert answer.status_code == 401
    assert (answer.headers["www-authenticate"], answer.headers["x-why"]) == ('Basic realm="x"', "test")
    assert answer.json() == {"status_code": 401, "detail": "no"}
