"""The variants the benchmark compares: what each runs for one list request, in-process and as a Litestar app.

Every variant answers ``GET /api/v1/flights/`` with the envelope of the spec (``data``, ``pagination``,
``message``, ``status``; each flight with its ``airline`` nested, as the demo's resource loads it):

- ``floor``: hand-written SQL through the raw driver, encoded with msgspec; deep pages (offset 1,000
  and more) by a deferred join (the ids of the page first, then its rows). PostgreSQL: the page and
  the exact ``COUNT(*)`` at once on two connections of an asyncpg pool. SQLite: sqlite3 on the event
  loop's thread, the page then the count (skipped when the page itself tells the total). MariaDB:
  as on PostgreSQL, the page and the ``COUNT(*)`` at once on two connections of an asyncmy pool
  (autocommit: each statement reads its own snapshot); the deep page's keys through a derived
  table (MariaDB takes no ``LIMIT`` in an ``IN`` subquery).
- ``ours-sqlalchemy`` / ``ours-piccolo``: the plugin with the demo's flights resource, on each backend
  (MariaDB: SQLAlchemy only; Piccolo has no MySQL engine).
- ``aa``: advanced-alchemy's Litestar filter providers (paging, order) and its repository's
  ``list_and_count`` with its default window count; the filters the providers cannot express
  (relation filter, range filter, search over relation paths) are added in the handler by hand.
- ``piccolo-crud``: piccolo_api's ``PiccoloCRUD`` mounted in Litestar (its own response shape;
  the total is its ``/count/`` endpoint, a second request).

The servers are made by ``make_app`` from ``BENCH_VARIANT`` and ``BENCH_URL`` (``uvicorn --factory``).
No ``from __future__ import annotations``: Litestar reads the handlers' annotations.
"""

import asyncio
import dataclasses
import math
import os
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import urlsplit

import asyncmy
import asyncpg
import msgspec
from advanced_alchemy.extensions.litestar import SQLAlchemyAsyncConfig, SQLAlchemyPlugin
from advanced_alchemy.extensions.litestar.providers import create_filter_dependencies
from advanced_alchemy.filters import FilterTypes, LimitOffset, OrderBy
from advanced_alchemy.repository import SQLAlchemyAsyncRepository
from litestar import Litestar, Request, Response, asgi, get
from litestar.params import Dependency
from litestar.types import Receive, Scope, Send
from sqlalchemy import ColumnElement, Select, and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased, joinedload

from litestar_listing import ListingPlugin, Resource
from litestar_listing.demo import piccolo_tables
from litestar_listing.demo.app import DemoBackends, piccolo_backends, resources, sqlalchemy_backends
from litestar_listing.demo.models import Airline, Airport, DemoBase, Flight

PATH = "/api/v1/flights/"
FLIGHT_COLUMNS = tuple(Flight.__table__.columns.keys())  # the demo's flights columns, in table order
MESSAGE = "Listed flights."
DEFERRED_OFFSET = 1000
"""From this offset on, the floor's page query is a deferred join."""


@dataclass(frozen=True)
class Ask:
    """One list request in terms every variant can translate."""

    page: int = 1
    count: int = 10
    tzone: str | None = None  # origin_airport__tzone
    dep_delay_gte: int | None = None
    search: str | None = None
    order: str = "-time_hour"  # one term, "-" for descending
    cursor: str | None = None  # keyset continuation (ours only)

    def params(self) -> list[tuple[str, str]]:
        """The plugin's query parameters (the floor's server reads the same)."""
        params: list[tuple[str, str]] = []
        if self.tzone is not None:
            params.append(("origin_airport__tzone", self.tzone))
        if self.dep_delay_gte is not None:
            params.append(("dep_delay__gte", str(self.dep_delay_gte)))
        if self.search is not None:
            params.append(("search", self.search))
        if self.order != "-time_hour":
            params.append(("order_by", self.order))
        if self.cursor is not None:
            params.append(("cursor", self.cursor))
        elif self.page != 1:
            params.append(("page", str(self.page)))
        if self.count != 10:
            params.append(("count", str(self.count)))
        return params

    def aa_params(self) -> list[tuple[str, str]]:
        """advanced-alchemy's providers' parameters (camelCase), plus the handler's own."""
        field, descending = self.order.lstrip("-"), self.order.startswith("-")
        params = [
            ("currentPage", str(self.page)),
            ("pageSize", str(self.count)),
            ("orderBy", field),
            ("sortOrder", "desc" if descending else "asc"),
        ]
        if self.tzone is not None:
            params.append(("origin_airport__tzone", self.tzone))
        if self.dep_delay_gte is not None:
            params.append(("dep_delay__gte", str(self.dep_delay_gte)))
        if self.search is not None:
            params.append(("search", self.search))
        return params

    def piccolo_crud_params(self) -> list[tuple[str, str]] | None:
        """PiccoloCRUD's parameters, None when it cannot express the request.

        It filters own columns only (no relation path), and matches one column per parameter (no
        search OR-ed over several columns).
        """
        if self.tzone is not None or self.search is not None or self.cursor is not None:
            return None
        params = [("__page", str(self.page)), ("__page_size", str(self.count)), ("__order", self.order)]
        if self.dep_delay_gte is not None:
            params += [("dep_delay", str(self.dep_delay_gte)), ("dep_delay__operator", "gte")]
        return params


def ask_from(query: Mapping[str, str]) -> Ask:
    """The floor server's reading of the plugin's parameters (only those the benchmark sends)."""
    delay = query.get("dep_delay__gte")
    return Ask(
        page=int(query.get("page", "1")),
        count=int(query.get("count", "10")),
        tzone=query.get("origin_airport__tzone"),
        dep_delay_gte=None if delay is None else int(delay),
        search=query.get("search"),
        order=query.get("order_by", "-time_hour"),
    )


def envelope(items: list[Any], ask: Ask, total: int) -> dict[str, Any]:
    """The spec's envelope."""
    pagination = {
        "page": ask.page,
        "count": ask.count,
        "total": total,
        "total_pages": math.ceil(total / ask.count),
    }
    return {"data": items, "pagination": pagination, "message": MESSAGE, "status": "success"}


# ------------------------------------------------------------------------------------------ floor

_ORDERABLE = {"time_hour": False, "dep_delay": True, "id": False}  # name -> nullable


def floor_sql(ask: Ask, dialect: str) -> tuple[str, str, list[Any]]:
    """(page SQL, count SQL, arguments) for ``ask`` on ``dialect`` (``postgresql``, ``sqlite``, ``mariadb``).

    Numbered marks (``$n``, ``?n``) as a value may be used twice; MariaDB's driver takes ``%s``
    only, so there a value used twice is passed twice. The last two arguments are the page's
    ``LIMIT`` and ``OFFSET`` (the count takes the others).
    """
    arguments: list[Any] = []

    def mark(value: Any) -> str:
        arguments.append(value)
        if dialect == "mariadb":
            return "%s"
        return f"${len(arguments)}" if dialect == "postgresql" else f"?{len(arguments)}"

    joins, where = [], []
    if ask.tzone is not None:
        where.append(f"oa.tzone = {mark(ask.tzone)}")
    if ask.dep_delay_gte is not None:
        where.append(f"f.dep_delay >= {mark(ask.dep_delay_gte)}")
    if ask.search is not None:
        # SQLite's LIKE ignores ASCII case by itself; PostgreSQL's ILIKE does the same; MariaDB's
        # LIKE ignores case in the server's default collation (utf8mb4_general_ci), that of the
        # bench databases, as a hand-written query on such a database relies on.
        like = "ILIKE" if dialect == "postgresql" else "LIKE"
        searched = ("f.tailnum", "al.name", "oa.name", "da.name")
        if dialect == "mariadb":
            terms = [f"{column} LIKE {mark(f'%{ask.search}%')}" for column in searched]
        else:
            pattern = mark(f"%{ask.search}%")
            terms = [f"{column} {like} {pattern}" for column in searched]
        where.append("(" + " OR ".join(terms) + ")")
        joins += ["JOIN airlines al ON al.carrier = f.carrier", "LEFT JOIN airports da ON da.faa = f.dest"]
    if ask.tzone is not None or ask.search is not None:
        joins.insert(0, "JOIN airports oa ON oa.faa = f.origin")
    field = ask.order.lstrip("-")
    direction = " DESC" if ask.order.startswith("-") else ""
    nulls = " NULLS LAST" if _ORDERABLE[field] else ""
    order = f"f.{field}{direction}{nulls}" + (", f.id" if field != "id" else "")
    if dialect == "mariadb" and _ORDERABLE[field]:
        # No NULLS LAST in MariaDB: NULLs sort first, so last when descending; ascending, a first term.
        order = (f"f.{field} IS NULL, " if not direction else "") + f"f.{field}{direction}, f.id"
    clause = (" WHERE " + " AND ".join(where)) if where else ""
    from_ = "flights f " + " ".join(joins)
    # MariaDB reorders the joins by its row estimates: it reads the 16 airlines first, then their
    # flights by the carrier index, and sorts them all (EXPLAIN: "Using temporary; Using filesort"),
    # seconds for a first page. Written by hand for MariaDB, the flights come first, read in the
    # order's index until the page is full: STRAIGHT_JOIN keeps the tables in the written order.
    select_ = "SELECT STRAIGHT_JOIN" if dialect == "mariadb" else "SELECT"
    count_sql = f"{select_} count(*) FROM {from_}{clause}"
    limit, offset = mark(ask.count), mark((ask.page - 1) * ask.count)
    columns = ", ".join(f"f.{name}" for name in FLIGHT_COLUMNS)
    if (ask.page - 1) * ask.count >= DEFERRED_OFFSET:
        # A deferred join, as one would write it by hand for a deep page: the skipped rows are walked
        # for their ids alone, and only the page's rows are read whole.
        keys = f"{select_} f.id FROM {from_}{clause} ORDER BY {order} LIMIT {limit} OFFSET {offset}"
        if dialect == "mariadb":
            # MariaDB refuses a LIMIT in an IN subquery: the keys are a derived table joined to.
            page_sql = (
                f"{select_} {columns}, a.name AS airline_name FROM ({keys}) k JOIN flights f ON f.id = k.id"
                f" JOIN airlines a ON a.carrier = f.carrier ORDER BY {order}"
            )
        else:
            page_sql = (
                f"SELECT {columns}, a.name AS airline_name FROM flights f JOIN airlines a ON a.carrier = f.carrier"  # noqa: S608
                f" WHERE f.id IN ({keys}) ORDER BY {order}"
            )
    else:
        page_sql = (
            f"{select_} {columns}, a.name AS airline_name FROM {from_} JOIN airlines a ON a.carrier = f.carrier"
            f"{clause} ORDER BY {order} LIMIT {limit} OFFSET {offset}"
        )
    return page_sql, count_sql, arguments


def _floor_items(rows: Sequence[Sequence[Any]]) -> list[dict[str, Any]]:
    width = len(FLIGHT_COLUMNS)
    items = []
    for row in rows:
        item = dict(zip(FLIGHT_COLUMNS, row[:width], strict=True))
        item["airline"] = {"carrier": item["carrier"], "name": row[width]}
        items.append(item)
    return items


def _floor_total(ask: Ask, found: int) -> int | None:
    # The last page (partial, or the empty first page) tells the total: no COUNT to run.
    if (found and found < ask.count) or (not found and ask.page == 1):
        return (ask.page - 1) * ask.count + found
    return None


async def floor_postgresql(pool: asyncpg.Pool, ask: Ask) -> dict[str, Any]:
    """The floor's list on PostgreSQL: the page and the COUNT at once, on two pooled connections."""
    page_sql, count_sql, arguments = floor_sql(ask, "postgresql")

    async def page() -> list[Any]:
        async with pool.acquire() as connection:
            rows: list[Any] = await connection.fetch(page_sql, *arguments)
            return rows

    async def count() -> int:
        async with pool.acquire() as connection:
            # fetch, not fetchval: asyncpg's fetchval/fetchrow keep PostgreSQL's parallel workers out.
            return int((await connection.fetch(count_sql, *arguments[:-2]))[0][0])

    rows, total = await asyncio.gather(page(), count())
    return envelope(_floor_items(rows), ask, total)


async def mariadb_pool(url: str, *, minsize: int, maxsize: int) -> Any:
    """An asyncmy pool on the database of a ``mysql+asyncmy://`` URL, autocommit.

    Autocommit: each statement reads a snapshot of its own, so a page and its count may run on two
    connections; and no transaction stays open on a pooled connection between requests.
    """
    parts = urlsplit(url)
    return await asyncmy.create_pool(
        minsize=minsize,
        maxsize=maxsize,
        host=parts.hostname or "127.0.0.1",
        port=parts.port or 3306,
        user=parts.username or "root",
        password=parts.password or "",
        database=parts.path.lstrip("/"),
        autocommit=True,
    )


async def floor_mariadb(pool: Any, ask: Ask) -> dict[str, Any]:
    """The floor's list on MariaDB: the page and the COUNT at once, on two pooled asyncmy connections."""
    page_sql, count_sql, arguments = floor_sql(ask, "mariadb")

    async def run(statement: str, values: list[Any]) -> list[Any]:
        async with pool.acquire() as connection, connection.cursor() as cursor:
            await cursor.execute(statement, values)
            rows: list[Any] = list(await cursor.fetchall())
            return rows

    rows, counted = await asyncio.gather(run(page_sql, arguments), run(count_sql, arguments[:-2]))
    return envelope(_floor_items(rows), ask, int(counted[0][0]))


def floor_sqlite(connection: sqlite3.Connection, ask: Ask) -> dict[str, Any]:
    """The floor's list on SQLite: page, then COUNT when needed."""
    page_sql, count_sql, arguments = floor_sql(ask, "sqlite")
    rows = connection.execute(page_sql, arguments).fetchall()
    total = _floor_total(ask, len(rows))
    if total is None:
        total = connection.execute(count_sql, arguments[:-2]).fetchone()[0]
    return envelope(_floor_items(rows), ask, total)


# ------------------------------------------------------------------------------------------ facets


@dataclass(frozen=True)
class FacetAsk:
    """One facet request of the demo's flights (docs: facets) in terms the floor and ours translate.

    Three facets, ``carrier``, ``origin`` and the month of ``time_hour``; optionally filtered by origin and
    a range of departure delays. Disjunctive: the ``origin`` facet leaves out the filter on ``origin``.
    """

    origin: str | None = None
    dep_delay_gte: int | None = None
    limit: int = 10

    FACETS = ("carrier", "origin", "time_hour__month")

    def params(self) -> list[tuple[str, str]]:
        """The plugin's query parameters."""
        params = [("facet", ",".join(self.FACETS))]
        if self.origin is not None:
            params.append(("origin", self.origin))
        if self.dep_delay_gte is not None:
            params.append(("dep_delay__gte", str(self.dep_delay_gte)))
        if self.limit != 10:
            params.append(("facet_limit", str(self.limit)))
        return params


_MONTH = {
    "postgresql": "EXTRACT(MONTH FROM f.time_hour AT TIME ZONE 'UTC')::int",
    "sqlite": "CAST(strftime('%m', f.time_hour) AS INTEGER)",
    "mariadb": "MONTH(f.time_hour)",
}
"""The month of a flight's departure hour in UTC, written by hand per database."""


def floor_facet_sql(ask: FacetAsk, dialect: str) -> tuple[list[tuple[str, str, list[Any]]], str, list[Any]]:
    """(per facet: its name, its grouped SQL and arguments; the count's SQL and arguments) for ``ask``.

    As one would write it by hand: one ``GROUP BY`` per facet with the number of groups as a window
    count, ranked by count then value (NULL last), and one ``COUNT(*)``.
    """
    mark = "%s" if dialect == "mariadb" else ("$" if dialect == "postgresql" else "?")

    def where(*, origin: bool) -> tuple[str, list[Any]]:
        conditions: list[str] = []
        arguments: list[Any] = []
        for column, value in (("f.origin", ask.origin if origin else None), ("f.dep_delay", ask.dep_delay_gte)):
            if value is None:
                continue
            arguments.append(value)
            written = f"{mark}{len(arguments)}" if mark != "%s" else mark
            conditions.append(f"{column} {'>=' if column == 'f.dep_delay' else '='} {written}")
        return (" WHERE " + " AND ".join(conditions) if conditions else ""), arguments

    grouped: list[tuple[str, str, list[Any]]] = []
    # NULLs last: PostgreSQL names an output column in ORDER BY only alone, MariaDB has no NULLS LAST.
    nulls_last = "v IS NULL, v" if dialect == "mariadb" else "v NULLS LAST"
    for name, expression in (("carrier", "f.carrier"), ("origin", "f.origin"), ("time_hour__month", _MONTH[dialect])):
        clause, arguments = where(origin=name != "origin")
        sql = (
            f"SELECT {expression} AS v, count(*) AS n, count(*) OVER () AS d FROM flights f{clause} "  # noqa: S608
            f"GROUP BY {expression} ORDER BY n DESC, {nulls_last} LIMIT {ask.limit}"
        )
        grouped.append((name, sql, arguments))
    clause, arguments = where(origin=True)
    return grouped, f"SELECT count(*) FROM flights f{clause}", arguments  # noqa: S608


def _facet_answer(name: str, rows: Sequence[Sequence[Any]]) -> dict[str, Any]:
    values = [{"value": row[0], "count": int(row[1])} for row in rows]
    return {"facet": name, "values": values, "distinct": int(rows[0][2]) if rows else 0}


def _facet_envelope(data: list[dict[str, Any]], total: int) -> dict[str, Any]:
    return {"data": data, "total": total, "message": "Counted flights.", "status": "success"}


async def floor_facets_postgresql(pool: asyncpg.Pool, ask: FacetAsk) -> dict[str, Any]:
    """The floor's facet request on PostgreSQL: each ``GROUP BY`` and the count in turn, on one pooled connection."""
    grouped, count_sql, count_arguments = floor_facet_sql(ask, "postgresql")
    async with pool.acquire() as connection:
        data = [_facet_answer(name, await connection.fetch(sql, *arguments)) for name, sql, arguments in grouped]
        # fetch, not fetchval: asyncpg's fetchval/fetchrow keep PostgreSQL's parallel workers out.
        total = int((await connection.fetch(count_sql, *count_arguments))[0][0])
    return _facet_envelope(data, total)


async def floor_facets_mariadb(pool: Any, ask: FacetAsk) -> dict[str, Any]:
    """The floor's facet request on MariaDB: each ``GROUP BY`` and the count in turn, on one asyncmy connection."""
    grouped, count_sql, count_arguments = floor_facet_sql(ask, "mariadb")
    async with pool.acquire() as connection, connection.cursor() as cursor:
        data = []
        for name, sql, arguments in grouped:
            await cursor.execute(sql, arguments)
            data.append(_facet_answer(name, list(await cursor.fetchall())))
        await cursor.execute(count_sql, count_arguments)
        total = int((await cursor.fetchone())[0])
    return _facet_envelope(data, total)


def floor_facets_sqlite(connection: sqlite3.Connection, ask: FacetAsk) -> dict[str, Any]:
    """The floor's facet request on SQLite: each ``GROUP BY`` and the count in turn."""
    grouped, count_sql, count_arguments = floor_facet_sql(ask, "sqlite")
    data = [_facet_answer(name, connection.execute(sql, arguments).fetchall()) for name, sql, arguments in grouped]
    return _facet_envelope(data, int(connection.execute(count_sql, count_arguments).fetchone()[0]))


def sqlite_path(url: str) -> str:
    """The file of a ``sqlite+aiosqlite:///path`` URL."""
    return url.split(":///", 1)[1]


def floor_app(url: str) -> Litestar:
    """The floor as a Litestar app."""
    encoder = msgspec.json.Encoder()
    state: dict[str, Any] = {}

    async def start() -> None:
        if url.startswith("sqlite"):
            state["sqlite"] = sqlite3.connect(sqlite_path(url), check_same_thread=False)
        elif url.startswith(("mysql", "mariadb")):
            state["mariadb"] = await mariadb_pool(url, minsize=4, maxsize=10)
        else:
            state["pool"] = await asyncpg.create_pool(url.replace("+asyncpg", ""), min_size=4, max_size=10)

    async def stop() -> None:
        if "pool" in state:
            await state["pool"].close()
        if "mariadb" in state:
            state["mariadb"].close()
            await state["mariadb"].wait_closed()
        if "sqlite" in state:
            state["sqlite"].close()

    @get(PATH)
    async def list_flights(request: Request[Any, Any, Any]) -> Response[bytes]:
        ask = ask_from(request.query_params)
        if "pool" in state:
            body = await floor_postgresql(state["pool"], ask)
        elif "mariadb" in state:
            body = await floor_mariadb(state["mariadb"], ask)
        else:
            body = floor_sqlite(state["sqlite"], ask)
        return Response(encoder.encode(body), media_type="application/json")

    return Litestar([list_flights], on_startup=[start], on_shutdown=[stop])


# ------------------------------------------------------------------------------------------ ours


def flights_resource(backends: DemoBackends, **options: Any) -> Resource:
    """The demo's flights resource, without its tenant scope (anonymous requests are unscoped anyway).

    Nor its ceiling (``max_cost``): the deep pages of the 10M table cost more than the demo allows,
    and the benchmark measures them as the floor serves them. ``options`` are further ``Resource``
    fields (``total_mode``, ``keyset``...).
    """
    flights = next(resource for resource in resources(backends) if resource.name == "flights")
    return dataclasses.replace(flights, scopes=(), max_cost=None, **options)


def ours_app(url: str, backend: str, **options: Any) -> Litestar:
    """The plugin serving the demo's flights resource on ``backend``."""
    backends = sqlalchemy_backends(url) if backend == "sqlalchemy" else piccolo_backends(url)
    return Litestar(
        plugins=[*backends.plugins, ListingPlugin([flights_resource(backends, **options)])],
        on_startup=list(backends.on_startup),
        on_shutdown=list(backends.on_shutdown),
    )


# ------------------------------------------------------------------------------------------ advanced-alchemy


class FlightRepository(SQLAlchemyAsyncRepository[Flight]):
    """advanced-alchemy's repository of flights (its defaults: the window count)."""

    model_type = Flight


_ORIGIN = aliased(Airport, name="origin_airport")
_DEST = aliased(Airport, name="dest_airport")
_SEARCH_AIRLINE = aliased(Airline, name="search_airline")


def aa_statement(tzone: str | None, dep_delay_gte: int | None, search: str | None) -> tuple[Select[Any], list[Any]]:
    """The base statement and the extra conditions a handler adds for what the providers cannot express."""
    statement = select(Flight)
    conditions: list[ColumnElement[bool]] = []
    if tzone is not None or search is not None:
        statement = statement.join(_ORIGIN, Flight.origin == _ORIGIN.faa)
    if tzone is not None:
        conditions.append(_ORIGIN.tzone == tzone)
    if dep_delay_gte is not None:
        conditions.append(Flight.dep_delay >= dep_delay_gte)
    if search is not None:
        statement = statement.join(_SEARCH_AIRLINE, Flight.carrier == _SEARCH_AIRLINE.carrier).outerjoin(
            _DEST, Flight.dest == _DEST.faa
        )
        pattern = f"%{search}%"
        columns = (Flight.tailnum, _SEARCH_AIRLINE.name, _ORIGIN.name, _DEST.name)
        conditions.append(or_(*(column.ilike(pattern) for column in columns)))
    return statement, ([and_(*conditions)] if conditions else [])


def _aa_item(flight: Flight) -> dict[str, Any]:
    item = {name: getattr(flight, name) for name in FLIGHT_COLUMNS}
    item["airline"] = {"carrier": flight.airline.carrier, "name": flight.airline.name}
    return item


async def aa_list(session: AsyncSession, filters: Sequence[FilterTypes], ask: Ask) -> dict[str, Any]:
    """advanced-alchemy's list: the providers' filters plus the handler's, ``list_and_count``."""
    statement, conditions = aa_statement(ask.tzone, ask.dep_delay_gte, ask.search)
    repository = FlightRepository(session=session)
    flights, total = await repository.list_and_count(
        *filters, *conditions, statement=statement, load=[joinedload(Flight.airline)]
    )
    return envelope([_aa_item(flight) for flight in flights], ask, total)


def aa_filters(ask: Ask) -> list[FilterTypes]:
    """The filters the providers make of ``ask`` (for the in-process loop)."""
    field, descending = ask.order.lstrip("-"), ask.order.startswith("-")
    return [
        LimitOffset(limit=ask.count, offset=(ask.page - 1) * ask.count),
        OrderBy(field_name=field, sort_order="desc" if descending else "asc"),
    ]


def aa_app(url: str) -> Litestar:
    """advanced-alchemy's providers and repository as a Litestar app."""
    config = SQLAlchemyAsyncConfig(connection_string=url, metadata=DemoBase.metadata, create_all=False)
    dependencies = create_filter_dependencies(
        {
            "pagination_type": "limit_offset",
            "pagination_size": 10,
            "sort_field": "time_hour",
            "sort_order": "desc",
        }
    )

    @get(PATH, dependencies=dependencies)
    async def list_flights(
        db_session: AsyncSession,
        filters: Annotated[list[FilterTypes], Dependency(skip_validation=True)],
        request: Request[Any, Any, Any],
    ) -> dict[str, Any]:
        query = request.query_params
        limit = next(item for item in filters if isinstance(item, LimitOffset))
        order = next(item for item in filters if isinstance(item, OrderBy))
        delay = query.get("dep_delay__gte")
        ask = Ask(
            page=limit.offset // limit.limit + 1,
            count=limit.limit,
            tzone=query.get("origin_airport__tzone"),
            dep_delay_gte=None if delay is None else int(delay),
            search=query.get("search"),
            order=("-" if order.sort_order == "desc" else "") + str(order.field_name),
        )
        return await aa_list(db_session, filters, ask)

    return Litestar([list_flights], plugins=[SQLAlchemyPlugin(config=config)])


# ------------------------------------------------------------------------------------------ piccolo_api


def piccolo_crud_app(url: str) -> Litestar:
    """piccolo_api's PiccoloCRUD of flights, mounted at ``/api/v1/flights``."""
    from piccolo.engine.postgres import PostgresEngine
    from piccolo_api.crud.endpoints import PiccoloCRUD

    from litestar_listing.demo.app import piccolo_engine

    engine = piccolo_engine(url)
    for table in (piccolo_tables.Flight, piccolo_tables.Airline, piccolo_tables.Airport, piccolo_tables.Plane):
        table._meta.db = engine  # noqa: SLF001 - Piccolo's documented way to bind a table to an engine
    crud = PiccoloCRUD(piccolo_tables.Flight, read_only=True, page_size=10)

    @asgi("/api/v1/flights", is_mount=True, copy_scope=True)
    async def flights(scope: Scope, receive: Receive, send: Send) -> None:
        await crud(scope, receive, send)  # type: ignore[arg-type]

    async def start() -> None:
        if isinstance(engine, PostgresEngine):
            await engine.start_connection_pool()

    async def stop() -> None:
        if isinstance(engine, PostgresEngine):
            await engine.close_connection_pool()

    return Litestar([flights], on_startup=[start], on_shutdown=[stop])


# ------------------------------------------------------------------------------------------ factory


def make_app() -> Litestar:
    """The app of ``BENCH_VARIANT`` on ``BENCH_URL`` (``BENCH_OPTIONS``: JSON ``Resource`` options)."""
    variant, url = os.environ["BENCH_VARIANT"], os.environ["BENCH_URL"]
    options = msgspec.json.decode(os.environ.get("BENCH_OPTIONS", "{}"))
    if variant == "floor":
        return floor_app(url)
    if variant == "ours-sqlalchemy":
        return ours_app(url, "sqlalchemy", **options)
    if variant == "ours-piccolo":
        return ours_app(url, "piccolo", **options)
    if variant == "aa":
        return aa_app(url)
    if variant == "piccolo-crud":
        return piccolo_crud_app(url)
    msg = f"unknown variant {variant!r}"
    raise ValueError(msg)
