"""``HEAD`` is ``GET`` without the body, for the same caller, behind Litestar's own authentication.

Litestar's ``JWTAuth`` and ``SessionAuth`` skip ``HEAD`` (and ``OPTIONS``) by default
(``exclude_http_methods``). Here both run at those defaults, in front of every kind of resource:
scoped (a tenant scope, with keyset continuation: ``X-Next-Cursor`` tells the top row), under a row
policy, behind authentication alone, behind a route guard that reads ``connection.user``, and scoped
by a getter of the token's claims (``connection.auth``). Without credentials, with bad ones and with
good ones (a tenant's user, an administrator), for a valid and an invalid query, ``HEAD`` answers
exactly what ``GET`` answers (status and every header, ``Content-Length`` included), minus the body.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from litestar import Litestar, Request, post
from litestar.connection import ASGIConnection
from litestar.exceptions import PermissionDeniedException
from litestar.handlers import BaseRouteHandler
from litestar.middleware.session.server_side import ServerSideSessionBackend, ServerSideSessionConfig
from litestar.security.jwt import JWTAuth, Token
from litestar.security.session_auth import SessionAuth
from litestar.testing import TestClient

from litestar_listing import ListingPlugin, MemoryBackend, Resource, RouteOptions, RowPolicy, tenant_scope
from litestar_listing.backends.sqlalchemy import model_graph
from tests.conformance.fixture import memory_rows
from tests.conformance.models import Thing

USERS: dict[str, dict[str, Any]] = {
    "acme": {"id": 1, "company_id": 1},
    "globex": {"id": 4, "company_id": 2},
    "admin": {"id": 9, "company_id": None, "is_platform_admin": True},
}
QUERIES = ("order_by=-price&count=1", "order_by=-price&count=2&status=active", "count=0&nope=1")
SECRET = "a test secret, long enough for HS256 and nothing else"  # noqa: S105


def _things(name: str, **options: Any) -> Resource:
    return Resource(
        name, MemoryBackend(model_graph(Thing), memory_rows()), default_order=("id",), keyset=True, **options
    )


def _admins_only(connection: ASGIConnection[Any, Any, Any, Any], _: BaseRouteHandler) -> None:
    if not connection.user.get("is_platform_admin"):
        raise PermissionDeniedException("administrators only")


def _claims(connection: ASGIConnection[Any, Any, Any, Any]) -> object:
    auth = connection.auth
    return auth.extras if isinstance(auth, Token) else auth


KINDS: dict[str, Callable[[], ListingPlugin]] = {
    "scoped": lambda: ListingPlugin([_things("things", scopes=(tenant_scope("company_id"),))]),
    "policed": lambda: ListingPlugin(
        [_things("things")], policies=[RowPolicy(Thing, tenant_scope("company_id", anonymous="unscoped"))]
    ),
    "authenticated": lambda: ListingPlugin([_things("things")]),
    "guarded": lambda: ListingPlugin([_things("things")], routes={"things": RouteOptions(guards=[_admins_only])}),
    "claims": lambda: ListingPlugin([_things("things", scopes=(tenant_scope("company_id", user=_claims),))]),
}


@dataclass
class Client:
    """A test client of one application and how it presents each kind of credentials."""

    http: TestClient[Litestar]
    present: Callable[[str | None], dict[str, str]]


def _jwt(plugin: ListingPlugin) -> Iterator[Client]:
    async def retrieve_user(token: Token, connection: ASGIConnection[Any, Any, Any, Any]) -> dict[str, Any] | None:
        return USERS.get(token.sub)

    auth = JWTAuth[dict[str, Any]](retrieve_user_handler=retrieve_user, token_secret=SECRET, exclude=["/schema"])

    def present(who: str | None) -> dict[str, str]:
        if who is None:
            return {}
        if who == "forged":
            return {"Authorization": "Bearer not.a.token"}
        claims = {key: value for key, value in USERS[who].items() if key != "id"}
        return {"Authorization": f"Bearer {auth.create_token(identifier=who, token_extras=claims)}"}

    with TestClient(Litestar(plugins=[plugin], on_app_init=[auth.on_app_init])) as http:
        yield Client(http, present)


def _session(plugin: ListingPlugin) -> Iterator[Client]:
    async def retrieve_user(
        session: dict[str, Any], connection: ASGIConnection[Any, Any, Any, Any]
    ) -> dict[str, Any] | None:
        return USERS.get(session.get("who", ""))

    @post("/login", status_code=204)
    async def login(request: Request[Any, Any, Any]) -> None:
        who = request.query_params["who"]
        request.set_session({"who": who, **USERS[who]})

    auth = SessionAuth[dict[str, Any], ServerSideSessionBackend](
        retrieve_user_handler=retrieve_user,
        session_backend_config=ServerSideSessionConfig(),
        exclude=["/login", "/schema"],
    )
    app = Litestar(route_handlers=[login], plugins=[plugin], on_app_init=[auth.on_app_init])
    sessions: dict[str, str] = {}
    with TestClient(app) as http:
        for who in USERS:
            http.cookies.clear()
            assert http.post(f"/login?who={who}").status_code == 204
            sessions[who] = http.cookies["session"]
        http.cookies.clear()

        def present(who: str | None) -> dict[str, str]:
            if who is None:
                return {}
            return {"Cookie": f"session={'forged' if who == 'forged' else sessions[who]}"}

        yield Client(http, present)


AUTHS = {"jwt": _jwt, "session": _session}


@pytest.fixture(params=[(auth, kind) for auth in AUTHS for kind in KINDS], ids=lambda param: f"{param[0]}-{param[1]}")
def client(request: pytest.FixtureRequest) -> Iterator[Client]:
    auth, kind = request.param
    yield from AUTHS[auth](KINDS[kind]())


def _headers(response: Any) -> list[tuple[str, str]]:
    """Every header, in order; a deleted session cookie's ``expires`` (the clock's second when it was sent) left out."""
    return sorted((name, _EXPIRES.sub("", value)) for name, value in response.headers.multi_items())


_EXPIRES = re.compile(r"expires=[^;]*; ")


@pytest.mark.parametrize("who", [None, "forged", "acme", "globex", "admin"])
def test_head_answers_what_get_answers_without_the_body(client: Client, who: str | None) -> None:
    answered: set[int] = set()
    for query in QUERIES:
        url = f"/api/v1/things/?{query}"
        got = client.http.get(url, headers=client.present(who))
        headed = client.http.head(url, headers=client.present(who))
        where = f"{url} as {who}"
        assert headed.status_code == got.status_code, where
        assert _headers(headed) == _headers(got), where
        assert headed.content == b"", where
        assert got.headers.get("content-length") == str(len(got.content)), where
        answered.add(got.status_code)
    assert answered <= {200, 400, 401, 403}
    if who in {None, "forged"}:
        assert answered == {401}  # the authentication middleware refused both methods


def test_the_top_row_is_not_readable_through_head_without_a_token() -> None:
    """The tester's request: a keyset resource behind the middleware alone, HEAD without a token."""
    client = next(_jwt(KINDS["authenticated"]()))
    url = "/api/v1/things/?order_by=-price&count=1"
    headed = client.http.head(url)
    assert headed.status_code == 401
    assert "x-next-cursor" not in headed.headers
    assert client.http.head(url, headers=client.present("acme")).headers["x-next-cursor"]
